"""Export a selection of runs: a result file (the exchange format) or flat CSV / Parquet tables."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

import db.columns as columns
import db.queries as queries
import db.requests as requests
from db.connection import damaged
from db.grading import derived_damage, rebuild_derived
from db.location import as_team_store
from db.store import Store
from joulebench import __version__
from joulebench.resultfile import dump_document, new_document


@dataclass(frozen=True)
class Selection:
    """Which runs to export; empty fields select everything."""

    run_ids: tuple[str, ...] = ()
    device_names: tuple[str, ...] = ()
    workloads: tuple[str, ...] = ()
    source_kinds: tuple[str, ...] = ()

    def where(self) -> tuple[str, list[Any]]:
        clauses, params = [], []
        for column, values in (("r.run_id", self.run_ids), ("r.device_name", self.device_names),
                               ("r.workload", self.workloads), ("s.shown_kind", self.source_kinds)):
            if values:
                clauses.append(f"{column} IN (SELECT unnest(?::VARCHAR[]))")
                params.append(list(values))
        return (" AND ".join(clauses) or "TRUE"), params


def runs_table(store: Store, selection: Selection = Selection()) -> pl.DataFrame:
    """One flat row per run: run columns, device kind and the environment."""
    where, params = selection.where()
    env_cols = ", ".join(f"e.{c}" for c in columns.environment_fields())
    return store.query(
        f"SELECT r.*, d.kind AS device_kind, s.shown_kind AS source_kind, s.file_name AS source_file, {env_cols} "
        "FROM runs r JOIN store_sources s USING (source_id) LEFT JOIN devices d USING (device_name) "
        f"LEFT JOIN environments e USING (env_id) WHERE {where} ORDER BY r.run_id",
        params,
    )


def _samples(store: Store, run_ids: list[str]) -> pl.DataFrame:
    return store.query(
        "SELECT run_id, domain, t_s, power_w FROM power_samples "
        "WHERE run_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY run_id, domain, t_s", [run_ids])


def _steps(store: Store, run_ids: list[str]) -> pl.DataFrame:
    return store.query(
        "SELECT run_id, step_index, duration_ms FROM step_times "
        "WHERE run_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY run_id, step_index", [run_ids])


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value is not None else None


def _present(row: dict[str, Any], keys: Any) -> dict[str, Any]:
    return {k: row[k] for k in keys if row.get(k) is not None}


def build_document(store: Store, selection: Selection = Selection()) -> dict[str, Any]:
    """A result document holding the selected runs, their catalog devices and findings."""
    table = runs_table(store, selection)
    run_ids = table["run_id"].to_list()
    traces = store.query(
        "SELECT run_id, domain, boundary, method FROM power_traces "
        "WHERE run_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY run_id, domain", [run_ids])
    samples = _samples(store, run_ids).partition_by(["run_id", "domain"], as_dict=True)
    steps = _steps(store, run_ids).partition_by("run_id", as_dict=True)
    traces_by_run = traces.partition_by("run_id", as_dict=True)
    run_requests, request_totals = requests.export_items(store, run_ids)  # exports carry every kept request

    runs = []
    for row in table.iter_rows(named=True):
        run: dict[str, Any] = {
            "run_id": row["run_id"], "status": row["status"],
            **_present({"error": row["error"], "started_at": _iso(row["started_at"]),
                        "ended_at": _iso(row["ended_at"])}, ("error", "started_at", "ended_at")),
            "device": ({"name": row["device_name"], "kind": row["device_kind"]} if row["device_name"] is not None
                       else None),  # not stated by the file it came from
        }
        env = _present(row, columns.environment_fields())
        if env:
            run["environment"] = env
        run["config"] = {"mode": None, **_present(row, columns.config_fields())}  # mode: null when not stated
        metrics = _present(row, columns.metric_fields())
        if metrics:
            run["metrics"] = metrics
        if row["flags"]:
            run["flags"] = list(row["flags"])
        run_traces = traces_by_run.get((row["run_id"],))
        if run_traces is not None:
            run["power_traces"] = []
            for t in run_traces.iter_rows(named=True):
                s = samples[(row["run_id"], t["domain"])]
                run["power_traces"].append({
                    "domain": t["domain"], **_present(t, ("boundary", "method")),
                    "t_s": s["t_s"].to_list(), "power_w": s["power_w"].to_list()})
        run_steps = steps.get((row["run_id"],))
        if run_steps is not None:
            run["step_times_ms"] = run_steps["duration_ms"].to_list()
        if row["run_id"] in run_requests:
            run["requests"] = run_requests[row["run_id"]]
            total = request_totals.get(row["run_id"], len(run["requests"]))
            if total != len(run["requests"]):
                run["requests_total"] = total
        prov = {key: row[col] for key, col in columns.PROVENANCE_COLUMNS.items()}
        prov["imported_at"] = _iso(prov["imported_at"])
        run["provenance"] = {k: v for k, v in prov.items() if v is not None}
        if row["notes"] is not None:
            run["notes"] = row["notes"]
        runs.append(run)

    devices = store.query(
        "SELECT * FROM devices WHERE device_name IN (SELECT unnest(?::VARCHAR[])) ORDER BY device_name",
        [sorted(set(table["device_name"].drop_nulls().to_list()))])
    catalog = [{("name" if k == "device_name" else k): v for k, v in d.items() if v is not None}
               for d in devices.iter_rows(named=True)]
    findings = _findings(store, selection, run_ids)
    return new_document(runs, producer_version=__version__, created_at=datetime.now(UTC).isoformat(),
                        devices=catalog, findings=findings)


def _findings(store: Store, selection: Selection, run_ids: list[str]) -> list[dict[str, Any]]:
    if selection == Selection():
        frame = store.query("SELECT * FROM findings ORDER BY finding_id")
    else:
        frame = store.query(
            "SELECT * FROM findings WHERE subject_run_id IN (SELECT unnest(?::VARCHAR[])) "
            "OR baseline_run_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY finding_id", [run_ids, run_ids])
    keys = columns.finding_fields()
    return [_present(row, keys) for row in frame.iter_rows(named=True)]


def write_result_file(store: Store, path: Path, selection: Selection = Selection()) -> int:
    document = build_document(store, selection)
    dump_document(document, path)
    return len(document["runs"])


def configurations_table(store: Store, selection: Selection = Selection()) -> pl.DataFrame:
    """One row per configuration in the selection: what it is, n, mean, sd, CoV and 95 % interval
    of each figure over its repeats, its trust grade and reasons."""
    where, params = selection.where()
    if as_team_store(store.location) is None and _derived_damaged(store):
        # the stored aggregates are damaged (a read-write open rebuilds them; this store was opened
        # read-only): recomputed from the runs, for this connection only
        try:
            rebuild_derived(store.con, temporary=True)
        except duckdb.Error as e:
            raise damaged(store.location.shown, e) from e
    return queries.configurations(store, where, params)


def _derived_damaged(store: Store) -> bool:
    try:
        return derived_damage(store.con) is not None
    except duckdb.Error:
        return False  # not damage of the derived tables: the query says what it is


def _flat(frame: pl.DataFrame) -> pl.DataFrame:
    """List columns as text a CSV can hold: flags and run ids joined by ';', reasons by ' | '."""
    lists = {name: " | " if "reasons" in name else ";" for name, dtype in frame.schema.items()
             if isinstance(dtype, pl.List)}
    return frame.with_columns([pl.col(name).list.join(sep) for name, sep in lists.items()])


def write_tables(store: Store, path: Path, selection: Selection = Selection()) -> list[Path]:
    """Flat tables as .csv or .parquet: <stem>_runs (with each run's trust grade and reasons),
    <stem>_configurations (the aggregate of each configuration's repeats: n, mean, sd, CoV, 95 %
    interval per figure, grade and reasons), <stem>_power_samples, <stem>_step_times and <stem>_requests (every
    kept request; its inter-token gaps as ';'-separated text)."""
    table = _flat(runs_table(store, selection))
    run_ids = table["run_id"].to_list()
    frames = {"runs": table, "configurations": _flat(configurations_table(store, selection)),
              "power_samples": _samples(store, run_ids), "step_times": _steps(store, run_ids),
              "requests": requests.flat(store, run_ids)}
    written = []
    for name, frame in frames.items():
        target = path.with_name(f"{path.stem}_{name}{path.suffix}")
        if path.suffix == ".parquet":
            frame.write_parquet(target)
        else:
            defuse_formulas(frame).write_csv(target)
        written.append(target)
    return written


FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def defuse_formulas(frame: pl.DataFrame) -> pl.DataFrame:
    """Text cells a spreadsheet would run as a formula (=cmd|..., +, -, @, tab, CR) get a leading
    apostrophe, so a device name or note from someone else's file stays text (OWASP CSV injection)."""
    text = [c for c, t in frame.schema.items() if t == pl.String]
    if not text:
        return frame
    risky = pl.col(text).str.starts_with(FORMULA_PREFIXES[0])
    for prefix in FORMULA_PREFIXES[1:]:
        risky = risky | pl.col(text).str.starts_with(prefix)
    return frame.with_columns(pl.when(risky).then(pl.lit("'") + pl.col(text)).otherwise(pl.col(text)).name.keep())
