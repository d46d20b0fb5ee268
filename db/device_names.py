"""The stored device-name mapping (migration 0019): which catalog entry each device string a file stated
is stored under, how that was decided (rule, added, ambiguous, user) and when, and which runs stated each
string. `ingest.device_names` decides; the import service records here in the import's transaction;
`change` re-points the runs of one string when a person chooses another entry (Devices page,
`joulebench device-name`), and regrades the configurations they leave and join."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import duckdb
import polars as pl
import pyarrow as pa

from db.connection import damaged, first_row
from db.grading import grade_runs, refresh_configurations
from db.store import Store
from joulebench.errors import InvalidEditError

HOW = ("rule", "added", "ambiguous", "user")


@dataclass(frozen=True)
class StoredName:
    source_name: str
    device_name: str
    decided_by: str
    candidates: tuple[str, ...]


# --- reads ----------------------------------------------------------------------------------------

def catalog(con: duckdb.DuckDBPyConnection) -> list[tuple[str, float | None, float | None]]:
    """Every catalog entry's name, TDP (W) and memory (GB)."""
    return [(str(n), t, m) for n, t, m in con.execute(
        "SELECT device_name, tdp_w, memory_gb FROM devices ORDER BY device_name").fetchall()]


def stored(con: duckdb.DuckDBPyConnection, names: Sequence[str]) -> dict[str, StoredName]:
    """The stored mapping of these strings."""
    if not names:
        return {}
    rows = con.execute("SELECT source_name, device_name, decided_by, candidates FROM device_names "
                       "WHERE source_name IN (SELECT unnest(?::VARCHAR[]))", [list(names)]).fetchall()
    return {r[0]: StoredName(r[0], r[1], r[2], tuple(r[3] or ())) for r in rows}


def mapping(store: Store) -> pl.DataFrame:
    """Every string met in imports, what it is stored under, how and when that was decided, what else it
    could be, and how many runs stated it; undecided (ambiguous) strings first."""
    return store.query(
        "SELECT n.source_name, n.device_name, n.decided_by, n.candidates, n.reason, n.decided_at, "
        "(SELECT count(*) FROM run_device_names r WHERE r.source_name = n.source_name) AS runs "
        "FROM device_names n ORDER BY n.decided_by <> 'ambiguous', n.source_name")


def waiting(store: Store, source_ids: Sequence[int]) -> pl.DataFrame:
    """The ambiguous strings (waiting for a person's choice) that runs of these sources stated, with the
    entries each could be."""
    return store.query(
        "SELECT n.source_name, n.candidates, n.reason, count(*) AS runs FROM device_names n "
        "JOIN run_device_names d USING (source_name) JOIN runs r USING (run_id) "
        "WHERE n.decided_by = 'ambiguous' AND r.source_id IN (SELECT unnest(?::INTEGER[])) "
        "GROUP BY ALL ORDER BY n.source_name", [list(source_ids)])


# --- writes (in the caller's transaction: the import's) -------------------------------------------

def record(con: duckdb.DuckDBPyConnection, source_name: str, device_name: str, decided_by: str,
           candidates: Sequence[str] = (), reason: str = "") -> None:
    """Store how a string was decided the first time an import met it."""
    con.execute("INSERT INTO device_names VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [source_name, device_name, decided_by, list(candidates) or None, reason or None, datetime.now(UTC)])


def record_runs(con: duckdb.DuckDBPyConnection, pairs: Sequence[tuple[str, str]]) -> None:
    """(run_id, the string its file stated) for runs stored under another name or awaiting a choice."""
    if not pairs:
        return
    run_ids, names = zip(*pairs, strict=True)  # one statement (executemany ran one per row: 30 ms an import)
    con.register("_run_device_names", pa.table({"run_id": pa.array(run_ids, pa.string()),
                                                "source_name": pa.array(names, pa.string())}))
    try:
        con.execute("INSERT INTO run_device_names SELECT DISTINCT run_id, source_name FROM _run_device_names "
                    "ON CONFLICT DO NOTHING")
    finally:
        con.unregister("_run_device_names")


# --- a person's choice -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Changed:
    source_name: str
    before: str
    after: str
    runs: int
    removed: bool  # the entry the runs left was one an import added and nothing else uses: removed


def change(store: Store, source_name: str, device_name: str) -> Changed:
    """Map `source_name` to the catalog entry `device_name` (decided by the user) and re-point the runs
    that stated it, in one transaction; the configurations they leave and join are regraded. A catalog entry
    that an import added for that string alone and that no run uses any more is removed. `device_name` must
    be in the catalog, or be `source_name` itself (keep it as its own entry). InvalidEditError otherwise."""
    con = store.con
    row = first_row(con, "SELECT device_name, decided_by FROM device_names WHERE source_name = ?", [source_name])
    if row is None:
        raise InvalidEditError([f"{source_name!r}: no import met this device name (the Devices page lists those "
                                "that did)"])
    known = first_row(con, "SELECT 1 FROM devices WHERE device_name = ?", [device_name])
    if known is None and device_name != source_name:
        raise InvalidEditError([f"{device_name!r} is not in the device catalog; give a catalog name (the Devices "
                                f"page lists them), or {source_name!r} itself to keep it as its own device"])
    before = str(row[0])
    try:
        con.execute("BEGIN TRANSACTION")
        if known is None:  # kept as its own entry: it needs one
            kind = first_row(con, "SELECT kind FROM devices WHERE device_name = ?", [before])
            con.execute("INSERT INTO devices (device_name, kind, notes) VALUES (?, ?, ?)",
                        [device_name, kind[0] if kind else "gpu", f"added from an import: {source_name!r}; "
                         "no specs but what the file stated"])
        run_ids = [r[0] for r in con.execute(
            "SELECT r.run_id FROM runs r JOIN run_device_names n USING (run_id) WHERE n.source_name = ?",
            [source_name]).fetchall()]
        old_keys = [r[0] for r in con.execute(
            "SELECT DISTINCT config_key FROM runs WHERE config_key IS NOT NULL AND run_id IN "
            "(SELECT unnest(?::VARCHAR[]))", [run_ids]).fetchall()]
        con.execute("UPDATE runs SET device_name = ? WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
                    [device_name, run_ids])
        con.execute("UPDATE device_names SET device_name = ?, decided_by = 'user', decided_at = ? "
                    "WHERE source_name = ?", [device_name, datetime.now(UTC), source_name])
        removed = _remove_if_unused(con, before, device_name, row[1] in ('added', 'ambiguous'))
        grade_runs(con, run_ids)
        refresh_configurations(con, old_keys)  # those the runs left lose them (or go)
        con.execute("COMMIT")
    except duckdb.Error as e:
        with contextlib.suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise damaged(store.path, e) from e
    return Changed(source_name, before, device_name, len(run_ids), removed)


def _remove_if_unused(con: duckdb.DuckDBPyConnection, before: str, after: str, was_added: bool) -> bool:
    """Remove the entry the runs left when an import added it (as its own entry, or under the string while
    a choice waited) and no run, mapping, price, power mode or edit refers to it any more."""
    if before == after or not was_added:
        return False
    row = first_row(con, (
        "SELECT (SELECT count(*) FROM runs WHERE device_name = ?) + (SELECT count(*) FROM device_names "
        "WHERE device_name = ?) + (SELECT count(*) FROM power_modes WHERE device_name = ?) + (SELECT count(*) "
        "FROM device_edits WHERE device_name = ?) + (SELECT count(*) FROM price_entries WHERE device_name = ?)"),
        [before] * 5)
    if not row or row[0]:
        return False
    con.execute("DELETE FROM devices WHERE device_name = ?", [before])
    return True


__all__ = ["HOW", "Changed", "StoredName", "catalog", "change", "mapping", "record", "record_runs", "stored", "waiting"]
