"""Ingest a validated result document into the database: all or nothing, idempotent.

The same bytes twice add nothing (sources.content_sha256 is unique); a run whose run_id is
already stored (say, an exported file imported back) is counted as a duplicate and skipped.
Everything a file adds commits in one transaction, with the trust grades of its runs and the
aggregates of the configurations they belong to (`db.grading`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

import db.columns as columns
import db.labels as labels
from db.connection import first_row
from db.grading import grade_runs
from energy.figures import FLAG_POWER_IMPLAUSIBLE, implausible_power_reason
from joulebench.errors import ResultFileError
from joulebench.labels import SuppliedLabel, run_label_value
from joulebench.resultfile import FORMAT_NAME, LoadedResultFile

SOURCE_KINDS = ("local", "upload", "reference")
ENERGY_FIGURES = ("energy_j", "j_per_sample", "j_per_iteration", "avg_power_w")


@dataclass
class IngestReport:
    """What one file did to the database."""

    file_name: str
    content_sha256: str
    status: str  # imported | already_imported | queued | rejected
    source_id: int | None = None
    runs_added: int = 0
    runs_duplicate: int = 0
    findings_added: int = 0
    devices_added: int = 0
    run_ids: list[str] = field(default_factory=list)
    message: str = ""


def _parse_time(value: str | None, where: str, name: str) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as e:
        raise ResultFileError(
            name, [f"{where}: {value!r} is not an ISO 8601 time; write e.g. 2026-01-31T12:00:00Z"]) from e
    if parsed.tzinfo is None:
        raise ResultFileError(name, [f"{where}: {value!r} has no time zone; add Z or +HH:MM"])
    return parsed.astimezone(UTC)


def environment_id(env: dict[str, Any]) -> str | None:
    present = {k: v for k, v in env.items() if v is not None}
    if not present:
        return None
    return hashlib.sha256(json.dumps(present, sort_keys=True).encode()).hexdigest()[:32]


def _existing(con: duckdb.DuckDBPyConnection, table: str, column: str, values: list[str]) -> set[str]:
    if not values:
        return set()
    rows = con.execute(
        f"SELECT {column} FROM {table} WHERE {column} IN (SELECT unnest(?::VARCHAR[]))", [values]
    ).fetchall()
    return {r[0] for r in rows}


def _insert(con: duckdb.DuckDBPyConnection, table: str, data: pa.Table) -> None:
    if data.num_rows == 0:
        return
    con.register("_ingest_rows", data)
    try:
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _ingest_rows")
    finally:
        try:
            con.unregister("_ingest_rows")
        except duckdb.TransactionException:
            pass  # the failed insert aborted the transaction; the caller rolls back


def ingest_loaded(con: duckdb.DuckDBPyConnection, loaded: LoadedResultFile, *, source_kind: str,
                  file_format: str = FORMAT_NAME) -> IngestReport:
    """Add a validated document to the database in one transaction.

    `loaded.supplied`: labels that did not come from the file's content (import flags, a folder
    name); each is recorded in `run_labels` for the added runs that carry its value.
    """
    if source_kind not in SOURCE_KINDS:
        raise ValueError(f"source_kind must be one of {SOURCE_KINDS}")
    name, doc = loaded.name, loaded.document
    report = IngestReport(name, loaded.content_sha256, "imported")
    row = first_row(con, "SELECT source_id FROM sources WHERE content_sha256 = ?", [loaded.content_sha256])
    if row:
        report.status, report.source_id = "already_imported", row[0]
        report.message = "this exact file was imported before; nothing added"
        return report

    imported_at = datetime.now(UTC)
    producer = doc.get("producer") or {}
    con.execute("BEGIN TRANSACTION")
    try:
        source_id = first_row(
            con,
            "INSERT INTO sources (kind, file_name, format, tool, tool_version, content_sha256,"
            " imported_at, run_count, duplicate_run_count, finding_count)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0, 0) RETURNING source_id",
            [source_kind, name, file_format, producer.get("tool"), producer.get("version"),
             loaded.content_sha256, imported_at],
        )[0]  # type: ignore[index]
        report.source_id = source_id
        report.devices_added = _add_devices(con, doc, name)
        _add_runs(con, doc, name, report, source_id, source_kind, file_format, producer, imported_at)
        _record_supplied(con, doc, report, loaded.supplied, imported_at)
        report.findings_added = _add_findings(con, doc, source_id)
        grade_runs(con, report.run_ids)  # every path that adds runs grades them here
        con.execute(
            "UPDATE sources SET run_count = ?, duplicate_run_count = ?, finding_count = ? WHERE source_id = ?",
            [report.runs_added, report.runs_duplicate, report.findings_added, source_id],
        )
        con.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.Error):  # a damaged file may refuse the rollback too
            con.execute("ROLLBACK")
        raise
    return report


def _device_rows(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Catalog entries from `devices`, then the minimal entries runs carry."""
    found: dict[str, dict[str, Any]] = {}
    for entry in doc.get("devices", []):
        found.setdefault(entry["name"], entry)
    for run in doc.get("runs", []):
        if run["device"] is not None:  # a device the file does not state has no catalog entry
            found.setdefault(run["device"]["name"], run["device"])
    return found


def _catalog_tdps(con: duckdb.DuckDBPyConnection, runs: Sequence[dict[str, Any]]) -> dict[str, float]:
    """The catalog TDP of every device these runs name, in one query."""
    names = sorted({r["device"]["name"] for r in runs if r.get("device") and r["device"].get("name")})
    if not names:
        return {}
    rows = con.execute("SELECT device_name, tdp_w FROM devices WHERE tdp_w IS NOT NULL AND device_name = ANY(?)",
                       [names]).fetchall()
    return {name: float(tdp) for name, tdp in rows}


def _check_power(tdps: dict[str, float], run: dict[str, Any], row: dict[str, Any]) -> None:
    """An average power above the device's plausible maximum (its TDP from the file, else the
    catalog) is stored as missing with the reason; the energy figures stay."""
    device = run.get("device") or {}
    tdp = device.get("tdp_w") or tdps.get(row.get("device_name") or "")
    reason = implausible_power_reason(row.get("avg_power_w"), tdp_w=tdp, gpu_count=row.get("gpu_count"),
                                      boundary=row.get("energy_boundary"))
    if reason:
        row["avg_power_w"] = None
        row["avg_power_missing_reason"] = reason
        row["flags"] = [*(row.get("flags") or []), FLAG_POWER_IMPLAUSIBLE]


def _add_devices(con: duckdb.DuckDBPyConnection, doc: dict[str, Any], name: str) -> int:
    """Add devices the catalog lacks; never overwrite a catalog entry (user edits persist)."""
    entries = _device_rows(doc)
    new = [n for n in entries if n not in _existing(con, "devices", "device_name", list(entries))]
    fields = columns.catalog_device_fields()
    rows = []
    for device_name in new:
        entry = entries[device_name]
        rows.append({("device_name" if k == "name" else k): entry.get(k) for k in fields})
    schema = pa.schema([("device_name" if k == "name" else k, t) for k, t in fields.items()])
    _insert(con, "devices", pa.Table.from_pylist(rows, schema=schema))
    return len(rows)


def _add_runs(con: duckdb.DuckDBPyConnection, doc: dict[str, Any], name: str, report: IngestReport,
              source_id: int, source_kind: str, file_format: str, producer: dict[str, Any],
              imported_at: datetime) -> None:
    runs = doc.get("runs", [])
    stored = _existing(con, "runs", "run_id", [r["run_id"] for r in runs])
    tdps = _catalog_tdps(con, runs)
    run_rows: list[dict[str, Any]] = []
    env_rows: dict[str, dict[str, Any]] = {}
    traces: list[dict[str, Any]] = []
    sample_parts: list[tuple[str, str, Any, Any]] = []  # run_id, domain, t_s, power_w
    step_parts: list[pa.Table] = []
    for i, run in enumerate(runs):
        run_id = run["run_id"]
        if run_id in stored:
            report.runs_duplicate += 1
            continue
        env = run.get("environment") or {}
        env_id = environment_id(env)
        if env_id:
            env_rows[env_id] = {"env_id": env_id, **env}
        row: dict[str, Any] = {
            "run_id": run_id, "source_id": source_id,
            "device_name": run["device"]["name"] if run["device"] is not None else None,
            "env_id": env_id, "status": run["status"], "error": run.get("error"),
            "started_at": _parse_time(run.get("started_at"), f"runs[{i}].started_at", name),
            "ended_at": _parse_time(run.get("ended_at"), f"runs[{i}].ended_at", name),
            "flags": run.get("flags") or None, "notes": run.get("notes"),
        }
        row.update(run["config"])
        row.update(run.get("metrics") or {})
        _check_power(tdps, run, row)
        if all(row.get(k) is None for k in ENERGY_FIGURES) and not row.get("energy_missing_reason"):
            row["energy_missing_reason"] = f"no energy figure in the {file_format} file this run came from"
        prov = run.get("provenance") or {
            "source_kind": source_kind, "file_name": name, "format": file_format,
            "tool": producer.get("tool"), "tool_version": producer.get("version"),
            "content_sha256": report.content_sha256, "imported_at": imported_at.isoformat(),
        }
        for key, column in columns.PROVENANCE_COLUMNS.items():
            value = prov.get(key)
            if key == "imported_at":
                value = _parse_time(value, f"runs[{i}].provenance.imported_at", name)
            row[column] = value
        if row["origin_kind"] is None:
            row["origin_kind"] = source_kind
        run_rows.append(row)
        for trace in run.get("power_traces", []):
            n = len(trace["t_s"])
            traces.append({"run_id": run_id, "domain": trace["domain"], "boundary": trace.get("boundary"),
                           "method": trace.get("method"), "sample_count": n})
            sample_parts.append((run_id, trace["domain"], trace["t_s"], trace["power_w"]))
        steps = run.get("step_times_ms") or []
        if steps:
            step_parts.append(pa.table({
                "run_id": pa.array([run_id] * len(steps), pa.string()),
                "step_index": pa.array(range(len(steps)), pa.int64()),
                "duration_ms": pa.array(steps, pa.float64()),
            }))
        report.run_ids.append(run_id)
    report.runs_added = len(run_rows)

    new_envs = [e for k, e in env_rows.items() if k not in _existing(con, "environments", "env_id", list(env_rows))]
    env_schema = pa.schema([("env_id", pa.string()), *columns.environment_fields().items()])
    _insert(con, "environments", pa.Table.from_pylist(new_envs, schema=env_schema))
    try:
        _insert(con, "runs", pa.Table.from_pylist(run_rows, schema=columns.run_arrow_schema()))
    except duckdb.ConstraintException as e:
        raise ResultFileError(name, [f"runs: a value breaks a database rule: {e}"]) from e
    trace_schema = pa.schema([("run_id", pa.string()), ("domain", pa.string()), ("boundary", pa.string()),
                              ("method", pa.string()), ("sample_count", pa.int64())])
    try:
        _insert(con, "power_traces", pa.Table.from_pylist(traces, schema=trace_schema))
    except duckdb.ConstraintException as e:
        raise ResultFileError(name, [f"power_traces: a run lists the same domain twice: {e}"]) from e
    if sample_parts:
        _insert(con, "power_samples", _samples_table(sample_parts))
    if step_parts:
        _insert(con, "step_times", pa.concat_tables(step_parts))


def _record_supplied(con: duckdb.DuckDBPyConnection, doc: dict[str, Any], report: IngestReport,
                     supplied: Sequence[SuppliedLabel], at: datetime) -> None:
    if not supplied:
        return
    added = set(report.run_ids)
    runs = [r for r in doc.get("runs", []) if r["run_id"] in added]
    for label in supplied:
        carrying = [r["run_id"] for r in runs if run_label_value(r, label.label) == label.value]
        labels.record(con, carrying, [label], at)


def _samples_table(parts: list[tuple[str, str, Any, Any]]) -> pa.Table:
    """All traces' samples in one table; run_id and domain dictionary-encoded (one string per
    trace, not per sample), which keeps ingest of long traces fast."""
    lengths = np.fromiter((len(p[2]) for p in parts), dtype=np.int64, count=len(parts))
    trace_of_sample = pa.array(np.repeat(np.arange(len(parts), dtype=np.int32), lengths))
    return pa.table({
        "run_id": pa.DictionaryArray.from_arrays(trace_of_sample, pa.array([p[0] for p in parts], pa.string())),
        "domain": pa.DictionaryArray.from_arrays(trace_of_sample, pa.array([p[1] for p in parts], pa.string())),
        "t_s": pa.concat_arrays([pa.array(p[2], pa.float64()) for p in parts]),
        "power_w": pa.concat_arrays([pa.array(p[3], pa.float64()) for p in parts]),
    })


def _add_findings(con: duckdb.DuckDBPyConnection, doc: dict[str, Any], source_id: int) -> int:
    findings = doc.get("findings", [])
    stored = _existing(con, "findings", "finding_id", [f["finding_id"] for f in findings])
    fields = columns.finding_fields()
    rows = [{**{k: f.get(k) for k in fields}, "source_id": source_id}
            for f in findings if f["finding_id"] not in stored]
    schema = pa.schema([*fields.items(), ("source_id", pa.int32())])
    _insert(con, "findings", pa.Table.from_pylist(rows, schema=schema))
    return len(rows)
