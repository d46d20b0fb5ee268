"""Labels a file did not state: which runs lack them, and filling them for a whole source.

The rules of "not stated" are `joulebench.labels` (for documents), written here once more in
SQL for stored runs. Filling a label sets it on every run of the source that does not state it,
and replaces a label a person (or a folder name) supplied before; a value the file states is
never overwritten. Each label set is recorded in `run_labels` with who supplied it, when and how;
everything a call changes commits in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa

from db.connection import first_row
from db.grading import grade_runs
from joulebench.errors import LabelError
from joulebench.labels import LABEL_TITLES, LABELS, SuppliedLabel
from joulebench.ranges import RangeError, check_text
from joulebench.text import shown

# label -> the runs column it fills
COLUMN = {"device": "device_name", "mode": "mode", "precision": "precision", "batch_size": "batch_size",
          "energy_boundary": "energy_boundary"}
# label -> SQL condition (on runs r) for "the run does not state it"
NOT_STATED_SQL = {
    "device": "r.device_name IS NULL",
    "mode": "r.mode IS NULL",
    "precision": "r.precision IS NULL AND r.mode IS DISTINCT FROM 'idle'",
    "batch_size": "r.batch_size IS NULL AND r.mode IS DISTINCT FROM 'idle'",
    "energy_boundary": "r.energy_boundary IS NULL AND (r.energy_j IS NOT NULL OR r.j_per_sample IS NOT NULL "
                       "OR r.j_per_iteration IS NOT NULL OR r.avg_power_w IS NOT NULL)",
}


@dataclass(frozen=True)
class SourceRef:
    """A source as `joulebench db info` lists it."""

    source_id: int
    file_name: str
    kind: str
    format: str
    runs: int


@dataclass
class LabelReport:
    """What one call to `apply_labels` changed."""

    source: SourceRef
    filled: dict[str, int] = field(default_factory=dict)  # label -> runs that did not state it and now do
    replaced: dict[str, int] = field(default_factory=dict)  # label -> runs whose supplied label changed
    device_added: bool = False  # the device was not in the catalog; added with the given kind
    notes: list[str] = field(default_factory=list)
    still_not_stated: dict[str, int] = field(default_factory=dict)


def resolve_source(con: duckdb.DuckDBPyConnection, key: str) -> SourceRef:
    """A source by its id or its file name (as `joulebench db info` lists them; a bare file name
    matches a stored path ending in it). LabelError when none or several match."""
    key = key.strip()
    cols = "source_id, file_name, kind, format, run_count"
    if key.isdigit():
        rows = con.execute(f"SELECT {cols} FROM sources WHERE source_id = ?", [int(key)]).fetchall()
    else:
        rows = con.execute(f"SELECT {cols} FROM sources WHERE file_name = ? ORDER BY source_id", [key]).fetchall()
        if not rows:
            rows = con.execute(f"SELECT {cols} FROM sources WHERE suffix(rtrim(file_name, '/'), '/' || ?) "
                               "ORDER BY source_id", [key.rstrip("/")]).fetchall()
    if not rows:
        raise LabelError(f"no source '{shown(key, 80)}' in the database; `joulebench db info` lists the sources "
                         "with their ids")
    if len(rows) > 1:
        listed = "; ".join(f"id {r[0]}: {r[1]} ({r[3]})" for r in rows)
        raise LabelError(f"'{shown(key, 80)}' names {len(rows)} sources ({listed}); give the source id instead")
    r = rows[0]
    return SourceRef(int(r[0]), r[1], r[2], r[3], int(r[4]))


def not_stated_counts(con: duckdb.DuckDBPyConnection, source_ids: Iterable[int] | None = None) -> pl.DataFrame:
    """Per source: source_id, runs, and one column per label with the runs that do not state it."""
    sums = ", ".join(f"count(*) FILTER (WHERE {cond}) AS {label}" for label, cond in NOT_STATED_SQL.items())
    where, params = "", []
    if source_ids is not None:
        where, params = "WHERE r.source_id IN (SELECT unnest(?::INTEGER[]))", [list(source_ids)]
    frame: pl.DataFrame = con.sql(
        f"SELECT r.source_id, count(*) AS runs, {sums} FROM runs r {where} GROUP BY 1 ORDER BY 1",
        params=params or None).pl()
    return frame


def gaps(con: duckdb.DuckDBPyConnection, source_id: int) -> dict[str, int]:
    """Label -> runs of the source that do not state it (only labels some run lacks)."""
    frame = not_stated_counts(con, [source_id])
    if frame.is_empty():
        return {}
    row = frame.row(0, named=True)
    return {label: int(row[label]) for label in LABELS if row[label]}


def describe_gaps(counts: Mapping[str, int]) -> str:
    """'device 3, mode 3' (runs not stating each label), or '' when nothing is missing."""
    return ", ".join(f"{LABEL_TITLES[k]} {v}" for k, v in counts.items() if v)


def supplied_for_run(con: duckdb.DuckDBPyConnection, run_id: str) -> pl.DataFrame:
    """The labels of one run that did not come from its file: label, value, origin, who, when, how."""
    frame: pl.DataFrame = con.sql(
        "SELECT label, value, origin, supplied_by, supplied_at, via FROM run_labels WHERE run_id = ? ORDER BY label",
        params=[run_id]).pl()
    return frame


def record(con: duckdb.DuckDBPyConnection, run_ids: list[str], labels: Iterable[SuppliedLabel],
           at: datetime | None = None) -> None:
    """Record labels supplied for these runs (within the caller's transaction); replaces older ones."""
    at = at or datetime.now(UTC)
    rows = [{"run_id": run_id, "label": s.label, "value": s.value, "origin": s.origin,
             "supplied_by": s.supplied_by, "supplied_at": at, "via": s.via}
            for s in labels for run_id in run_ids]
    if not rows:
        return
    schema = pa.schema([("run_id", pa.string()), ("label", pa.string()), ("value", pa.string()),
                        ("origin", pa.string()), ("supplied_by", pa.string()),
                        ("supplied_at", pa.timestamp("us", tz="UTC")), ("via", pa.string())])
    con.register("_labels", pa.Table.from_pylist(rows, schema=schema))
    try:
        con.execute("INSERT OR REPLACE INTO run_labels BY NAME SELECT * FROM _labels")
    finally:
        try:
            con.unregister("_labels")
        except duckdb.TransactionException:
            pass  # the failed insert aborted the transaction; the caller rolls back


def _targets(con: duckdb.DuckDBPyConnection, source_id: int, label: str) -> tuple[list[str], list[str]]:
    """(runs not stating the label, runs whose label was supplied before) of the source."""
    empty = con.execute(f"SELECT run_id FROM runs r WHERE r.source_id = ? AND {NOT_STATED_SQL[label]} ORDER BY 1",
                        [source_id]).fetchall()
    supplied = con.execute(
        f"SELECT r.run_id FROM runs r JOIN run_labels l ON l.run_id = r.run_id AND l.label = ? "
        f"WHERE r.source_id = ? AND NOT ({NOT_STATED_SQL[label]}) ORDER BY 1", [label, source_id]).fetchall()
    return [r[0] for r in empty], [r[0] for r in supplied]


def apply_labels(con: duckdb.DuckDBPyConnection, source: SourceRef, values: Mapping[str, Any], *,
                 device_kind: str | None, supplied_by: str, via: str) -> LabelReport:
    """Fill the given labels on the runs of `source` that do not state them (and replace labels
    supplied before), in one transaction. `values` maps LABELS to valid values (checked by the
    caller); `device_kind` is the kind a new catalog entry gets when `device` is not in it."""
    unknown = set(values) - set(LABELS)
    if unknown:
        raise LabelError(f"not a label: {', '.join(sorted(unknown))}; labels are {', '.join(LABELS)}")
    if isinstance(values.get("device"), str):  # every caller's value is one line of at most 200 characters
        try:
            check_text(values["device"], "device")
        except RangeError as e:
            raise LabelError(e.format_message()) from e
    report = LabelReport(source)
    at = datetime.now(UTC)
    con.execute("BEGIN TRANSACTION")
    try:
        for label in LABELS:  # device and mode first: idle runs take no precision or batch size
            if values.get(label) is None:
                continue
            value = values[label]
            empty, supplied = _targets(con, source.source_id, label)
            if isinstance(value, (list, tuple)):  # one value per run, in the file's order
                _apply_per_run(con, source, label, list(value), empty + supplied, supplied_by, via, at)
                report.filled[label] = len(empty)
                report.replaced[label] = len(supplied)
                continue
            if label == "device" and (empty or supplied):
                report.device_added = _ensure_device(con, str(value), device_kind, report)
            targets = empty + [r for r in supplied if r not in empty]
            if targets:
                con.execute(f"UPDATE runs SET {COLUMN[label]} = ? WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
                            [value, targets])
                if label == "energy_boundary":
                    con.execute("UPDATE power_traces SET boundary = ? WHERE boundary IS NULL "
                                "AND run_id IN (SELECT unnest(?::VARCHAR[]))", [value, targets])
                record(con, targets, [SuppliedLabel(label, str(value), "user", supplied_by, via)], at)
            report.filled[label] = len(empty)
            report.replaced[label] = len(supplied)
        changed = [r[0] for r in con.execute("SELECT run_id FROM run_labels WHERE supplied_at = ? AND run_id IN "
                                             "(SELECT run_id FROM runs WHERE source_id = ?)",
                                             [at, source.source_id]).fetchall()]
        if changed:  # a label is part of the configuration and of the grade's reasons
            grade_runs(con, sorted(set(changed)))
        con.execute("COMMIT")
    except duckdb.ConstraintException as e:
        con.execute("ROLLBACK")
        raise LabelError(f"{source.file_name}: a label breaks a database rule: {e}") from e
    except BaseException:
        con.execute("ROLLBACK")
        raise
    report.still_not_stated = gaps(con, source.source_id)
    return report


def _apply_per_run(con: duckdb.DuckDBPyConnection, source: SourceRef, label: str, values: list[Any],
                   targets: list[str], supplied_by: str, via: str, at: datetime) -> None:
    """values[i] for the i-th run of the source in the file's order (insertion order), on the runs
    in `targets` only: a value the file states is never overwritten."""
    order = [r[0] for r in con.execute("SELECT run_id FROM runs WHERE source_id = ? ORDER BY rowid",
                                       [source.source_id]).fetchall()]
    if len(values) != len(order):
        raise LabelError(f"{source.file_name} has {len(order)} runs; give one {LABEL_TITLES[label]} per run "
                         f"({len(values)} given) or one for all")
    wanted = set(targets)
    pairs = [(value, run_id) for run_id, value in zip(order, values) if run_id in wanted]
    if pairs:
        con.executemany(f"UPDATE runs SET {COLUMN[label]} = ? WHERE run_id = ?", pairs)
        for value, run_id in pairs:
            record(con, [run_id], [SuppliedLabel(label, str(value), "user", supplied_by, via)], at)


def _ensure_device(con: duckdb.DuckDBPyConnection, name: str, kind: str | None, report: LabelReport) -> bool:
    row = first_row(con, "SELECT kind FROM devices WHERE device_name = ?", [name])
    if row:
        if kind and row[0] != kind:
            report.notes.append(f"{name!r} is a {row[0]} in the device catalog; the catalog entry is kept")
        return False
    if not kind:
        raise LabelError(f"{name!r} is not in the device catalog; give its kind (gpu, jetson or cpu)")
    con.execute("INSERT INTO devices (device_name, kind) VALUES (?, ?)", [name, kind])
    return True
