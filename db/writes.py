"""Ingest a validated result document into the database: all or nothing, idempotent.

The same bytes twice add nothing (sources.content_sha256 is unique); a run whose run_id is
already stored (say, an exported file imported back), or whose measurement another source already holds
(`db.same_measurement`), is counted as a duplicate and skipped.
Everything a file adds commits in one transaction, with the trust grades of its runs and the
aggregates of the configurations they belong to (`db.grading`); the files of one user action (an
archive, a folder, an upload, the inbox) commit together in one transaction (`Batch`), so a stopped
import adds nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

import duckdb
import numpy as np
import pyarrow as pa

import db.columns as columns
import db.labels as labels
import db.requests as requests
import db.same_measurement as same_measurement
from db.connection import damaged, first_row, id_set, in_ids, interrupted
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
    with id_set(con, values) as ids:
        rows = con.execute(f"SELECT {column} FROM {table} WHERE {in_ids(ids, column)}").fetchall()
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
    """Add a validated document to the database in one transaction (a batch of one file).

    `loaded.supplied`: labels that did not come from the file's content (import flags, a folder
    name); each is recorded in `run_labels` for the added runs that carry its value.
    """
    with Batch(con) as batch:
        report = batch.add(loaded, source_kind=source_kind, file_format=file_format)
        batch.commit()
    return report


# Errors a file's own values cause at ingest (not the database's fault): the file is refused.
DATA_ERRORS = (duckdb.ConversionException, duckdb.ConstraintException, duckdb.InvalidInputException,
               duckdb.OutOfRangeException, duckdb.TypeMismatchException)


class Batch:
    """The files of one user action (an archive, a folder, an upload, the inbox) written in ONE transaction:
    all of them commit together at `commit()`, or none does (an exception, Ctrl-C, a kill or a time limit
    before the commit leaves the database as it was). The runs are graded once, at the commit, not once per
    file. DuckDB has no savepoints: when `add` raises, the transaction is spoiled (`spoiled`) and only a
    rollback is left; the caller starts again without that file.

        with Batch(store.con, store.path) as batch:
            reports = [batch.add(loaded, source_kind="upload", file_format=fmt) for loaded, fmt in files]
            batch.commit()

    With `db_path`, DuckDB's errors come out as the store's: a file's value the database cannot hold as
    ResultFileError naming the file, anything else as DatabaseError naming the database.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, db_path: Path | None = None, *, buffered: bool = True) -> None:
        self.con, self.db_path = con, db_path
        self.run_ids: list[str] = []
        self.spoiled = self.done = False
        self._rows = _Rows(con, buffered)

    def __enter__(self) -> Batch:
        self._sql("BEGIN TRANSACTION")
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.done:
            with contextlib.suppress(duckdb.Error):  # a damaged file may refuse the rollback too
                self.con.execute("ROLLBACK")
            self.done = True

    def add(self, loaded: LoadedResultFile, *, source_kind: str, file_format: str = FORMAT_NAME) -> IngestReport:
        """Write one validated document into the open transaction (not yet committed)."""
        self._check_open()
        try:
            report = _write(self._rows, loaded, source_kind=source_kind, file_format=file_format)
        except BaseException as e:
            self.spoiled = True
            self._raise(e, loaded.name)
        self.run_ids.extend(report.run_ids)
        if len(self._rows.files) >= FLUSH_FILES:
            self._flush()
        return report

    def commit(self) -> None:
        """Grade the batch's runs (and the configurations they join), then commit everything at once."""
        self._check_open()
        self._flush()
        try:
            grade_runs(self.con, self.run_ids)  # every path that adds runs grades them here
            self.con.execute("COMMIT")
        except BaseException as e:
            self.spoiled = True
            self._raise(e)
        self.done = True

    def _flush(self) -> None:
        files = list(self._rows.files)
        try:
            self._rows.flush()
        except BaseException as e:
            self.spoiled = True
            if isinstance(e, DATA_ERRORS) and len(files) > 1:
                raise MixedBatchError(files) from e
            self._raise(e, files[0] if files else None)

    def fail(self, e: BaseException, file_name: str | None = None) -> NoReturn:
        """Spoil the batch for an error met beside it in its transaction (a file's device names being
        recorded), raised as `add` raises its own."""
        self.spoiled = True
        self._raise(e, file_name)

    def _check_open(self) -> None:
        if self.spoiled or self.done:
            raise RuntimeError("this batch was rolled back or committed; start a new one")

    def _sql(self, sql: str) -> None:
        try:
            self.con.execute(sql)
        except duckdb.Error as e:
            self._raise(e)

    def _raise(self, e: BaseException, file_name: str | None = None) -> NoReturn:
        if interrupted(e):  # a Ctrl-C that reached DuckDB: rolled back as any Ctrl-C
            raise KeyboardInterrupt from e
        if self.db_path is None or not isinstance(e, duckdb.Error):
            raise e
        if file_name is not None and isinstance(e, DATA_ERRORS):
            raise ResultFileError(file_name, [f"a value cannot be stored: {str(e).splitlines()[0][:300]}"]) from e
        raise damaged(self.db_path, e) from e


FLUSH_FILES = 200  # files whose rows a batch appends together (one append per table, not one per file and table)


class MixedBatchError(Exception):
    """A value in one of several files appended together broke a database rule; the batch is spoiled.
    Begin it again with `buffered=False` (each file's rows appended as it comes) to know which file."""

    def __init__(self, files: list[str]) -> None:
        super().__init__(f"a value in one of {len(files)} files cannot be stored")
        self.files = files


class _Rows:
    """Where a batch's rows go: appended together at `flush()` (buffered), or at once. DuckDB commits a
    transaction of many small appends in time that grows with their square (3,000 files: 48 s), so a
    large import appends every FLUSH_FILES files' rows to each table in one go. The keys and content
    hashes of rows not yet appended are kept here, so a later file in the batch sees them as stored."""

    ORDER = ("sources", "environments", "runs", "power_traces", "power_samples", "step_times", "requests",
             "request_sets", "findings")

    def __init__(self, con: duckdb.DuckDBPyConnection, buffered: bool) -> None:
        self.con, self.buffered = con, buffered
        self.tables: dict[str, list[pa.Table]] = {}
        self.keys: dict[str, set[str]] = {"runs": set(), "environments": set(), "findings": set()}
        self.sources: dict[str, int] = {}  # content hash -> source id, of the batch's files
        self.files: list[str] = []  # names of the files whose rows wait

    def add(self, table: str, data: pa.Table) -> None:
        if data.num_rows == 0:
            return
        if self.buffered:
            self.tables.setdefault(table, []).append(data)
        else:
            self._insert(table, data)

    def existing(self, table: str, column: str, values: list[str]) -> set[str]:
        return _existing(self.con, table, column, values) | (self.keys[table] & set(values))

    def flush(self) -> None:
        for table in self.ORDER:
            parts = self.tables.pop(table, [])
            if parts:
                self._insert(table, pa.concat_tables(parts))
        self.files.clear()

    def _insert(self, table: str, data: pa.Table) -> None:
        try:
            _insert(self.con, table, data)
        except duckdb.ConstraintException as e:
            if table in _BROKEN_RULE and (not self.buffered or len(self.files) == 1):  # one file's rows: named
                raise ResultFileError(self.files[-1], [f"{_BROKEN_RULE[table]}: {e}"]) from e
            raise


_BROKEN_RULE = {"runs": "runs: a value breaks a database rule",
                "power_traces": "power_traces: a run lists the same domain twice"}


def _write(rows: _Rows, loaded: LoadedResultFile, *, source_kind: str, file_format: str) -> IngestReport:
    """One document's rows, inside the caller's transaction; its runs are graded by the caller."""
    if source_kind not in SOURCE_KINDS:
        raise ValueError(f"source_kind must be one of {SOURCE_KINDS}")
    con = rows.con
    name, doc = loaded.name, loaded.document
    report = IngestReport(name, loaded.content_sha256, "imported")
    row = first_row(con, "SELECT source_id FROM sources WHERE content_sha256 = ?", [loaded.content_sha256])
    if row or loaded.content_sha256 in rows.sources:  # imported before, or earlier in this batch
        report.status = "already_imported"
        report.source_id = row[0] if row else rows.sources[loaded.content_sha256]
        report.message = "this exact file was imported before; nothing added"
        return report

    imported_at = datetime.now(UTC)
    producer = doc.get("producer") or {}
    runs, findings = doc.get("runs", []), doc.get("findings", [])
    stored_runs = rows.existing("runs", "run_id", [r["run_id"] for r in runs])
    # a JouleBench result file's runs carry the runner's own ids (checked above); other tools' files do not
    elsewhere = {} if file_format == FORMAT_NAME else same_measurement.already_stored(
        con, [r for r in runs if r["run_id"] not in stored_runs], loaded.content_sha256)
    stored_runs |= set(elsewhere)
    stored_findings = rows.existing("findings", "finding_id", [f["finding_id"] for f in findings])
    # the counts go in with the row (ids repeat neither in a file, by validation, nor in the database)
    duplicates = sum(1 for r in runs if r["run_id"] in stored_runs)
    new_findings = sum(1 for f in findings if f["finding_id"] not in stored_findings)
    source_id = int(first_row(con, "SELECT nextval('source_id_seq')")[0])  # type: ignore[index]
    rows.add("sources", pa.Table.from_pylist([{
        "source_id": source_id, "kind": source_kind, "file_name": name, "format": file_format,
        "tool": producer.get("tool"), "tool_version": producer.get("version"),
        "content_sha256": loaded.content_sha256, "imported_at": imported_at, "run_count": len(runs) - duplicates,
        "duplicate_run_count": duplicates, "finding_count": new_findings}], schema=_SOURCE_SCHEMA))
    rows.sources[loaded.content_sha256] = source_id
    rows.files.append(name)
    report.source_id = source_id
    if elsewhere:
        places = sorted(set(elsewhere.values()))
        report.message = (f"{len(elsewhere)} of its {len(runs)} runs are already stored from {', '.join(places)}: "
                          "the same device, settings and figures, so they were not added twice")
    report.devices_added = _add_devices(con, doc, name)
    _add_runs(rows, doc, name, report, source_id, source_kind, file_format, producer, imported_at, stored_runs)
    _record_supplied(con, doc, report, loaded.supplied, imported_at)
    report.findings_added = _add_findings(rows, doc, source_id, stored_findings)
    return report


_SOURCE_SCHEMA = pa.schema([
    ("source_id", pa.int32()), ("kind", pa.string()), ("file_name", pa.string()), ("format", pa.string()),
    ("tool", pa.string()), ("tool_version", pa.string()), ("content_sha256", pa.string()),
    ("imported_at", pa.timestamp("us", tz="UTC")), ("run_count", pa.int32()), ("duplicate_run_count", pa.int32()),
    ("finding_count", pa.int32())])


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


def _add_runs(rows: _Rows, doc: dict[str, Any], name: str, report: IngestReport,
              source_id: int, source_kind: str, file_format: str, producer: dict[str, Any],
              imported_at: datetime, stored: set[str]) -> None:
    runs = doc.get("runs", [])
    tdps = _catalog_tdps(rows.con, runs)
    run_rows: list[dict[str, Any]] = []
    env_rows: dict[str, dict[str, Any]] = {}
    traces: list[dict[str, Any]] = []
    sample_parts: list[tuple[str, str, Any, Any]] = []  # run_id, domain, t_s, power_w
    step_parts: list[pa.Table] = []
    request_parts: list[pa.Table] = []
    set_parts: list[pa.Table] = []
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
        request_rows = requests.run_tables(run)  # every request kept, in the run's transaction (issue 38)
        if request_rows is not None:
            request_parts.append(request_rows[0])
            set_parts.append(request_rows[1])
        report.run_ids.append(run_id)
    report.runs_added = len(run_rows)

    stored_envs = rows.existing("environments", "env_id", list(env_rows))
    new_envs = [e for k, e in env_rows.items() if k not in stored_envs]
    env_schema = pa.schema([("env_id", pa.string()), *columns.environment_fields().items()])
    rows.add("environments", pa.Table.from_pylist(new_envs, schema=env_schema))
    rows.add("runs", pa.Table.from_pylist(run_rows, schema=columns.run_arrow_schema()))
    trace_schema = pa.schema([("run_id", pa.string()), ("domain", pa.string()), ("boundary", pa.string()),
                              ("method", pa.string()), ("sample_count", pa.int64())])
    rows.add("power_traces", pa.Table.from_pylist(traces, schema=trace_schema))
    if sample_parts:
        rows.add("power_samples", _samples_table(sample_parts))
    if step_parts:
        rows.add("step_times", pa.concat_tables(step_parts))
    if request_parts:
        rows.add("requests", pa.concat_tables(request_parts))
        rows.add("request_sets", pa.concat_tables(set_parts))
    rows.keys["runs"].update(r["run_id"] for r in run_rows)
    rows.keys["environments"].update(e["env_id"] for e in new_envs)


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


def _add_findings(rows: _Rows, doc: dict[str, Any], source_id: int, stored: set[str]) -> int:
    findings = doc.get("findings", [])
    fields = columns.finding_fields()
    new = [{**{k: f.get(k) for k in fields}, "source_id": source_id} for f in findings if f["finding_id"] not in stored]
    schema = pa.schema([*fields.items(), ("source_id", pa.int32())])
    rows.add("findings", pa.Table.from_pylist(new, schema=schema))
    rows.keys["findings"].update(f["finding_id"] for f in new)
    return len(new)
