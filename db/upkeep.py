"""`joulebench db upkeep`: the team store's maintenance that DuckLake documents, as one command.

1. Merge small files: each push writes a few small Parquet files per table; `ducklake_merge_adjacent_files`
   rewrites them into fewer, larger ones (time travel to every snapshot keeps working).
2. Expire old snapshots, only with a retention the team sets (`keep_snapshots_days`; none by default: every
   snapshot stays readable with `--as-of`). DuckLake never expires the newest one.
3. Remove the files no snapshot needs any more (merged away, or only in expired snapshots:
   `ducklake_cleanup_old_files`), and the files no snapshot references at all, the Parquet files a killed or
   failed push wrote before its commit (`ducklake_delete_orphaned_files`).

A push never races the orphan sweep: before it lists unreferenced files, upkeep commits the same lock row
every push transaction rewrites (db.push), so a push in flight at that moment loses its commit to DuckLake's
conflict check and retries with new files; only files written before that commit are candidates. A merge
cannot hold the lock (DuckLake refuses a transaction that both compacts and changes rows): DuckLake's own
conflict check orders it against pushes. Files are removed only once they are older than `grace_minutes`
(default 60) too: that covers what the lock cannot (another upkeep's merge in flight, a reader still scanning
a merged-away file, clocks of a shared folder a little apart), so a file merged or expired today is removed
by the next upkeep after that.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import PurePosixPath
from typing import TypeVar

import duckdb

from db.lake import LAKE_NAME, TeamStore, connect, refusal, retryable, rollback
from joulebench.errors import DatabaseError

DEFAULT_GRACE_MINUTES = 60
ATTEMPTS = 30
T = TypeVar("T")


@dataclass
class DataFiles:
    """The Parquet files under the store's data path: how many, their bytes, and each one's size by name."""

    count: int = 0
    bytes: int = 0
    sizes: dict[str, int] = field(default_factory=dict)  # file name (a DuckLake file name is a UUID) -> bytes


@dataclass
class UpkeepReport:
    dry_run: bool
    files_before: DataFiles
    files_after: DataFiles
    files_merged: int = 0  # small files rewritten into larger ones (removed by a later step or upkeep)
    files_written: int = 0  # the larger files written by the merge
    snapshots_expired: list[int] = field(default_factory=list)
    old_files_removed: list[str] = field(default_factory=list)  # merged away or only in expired snapshots
    orphans_removed: list[str] = field(default_factory=list)  # in no snapshot: a failed or killed push's
    bytes_freed: int = 0  # the size of the files removed (in a dry run: that would be removed)
    snapshots_left: tuple[int, int] | None = None  # the oldest and newest snapshot the store still holds
    retries: int = 0
    seconds: float = 0.0


def data_files(con: duckdb.DuckDBPyConnection, lake: TeamStore) -> DataFiles:
    """The Parquet files on disk (or in the bucket) under the data path, referenced or not."""
    rows = con.execute("SELECT filename, size FROM read_blob(?)", [lake.data_path + "**/*.parquet"]).fetchall()
    sizes = {PurePosixPath(name).name: int(size) for name, size in rows}
    return DataFiles(len(rows), sum(sizes.values()), sizes)


def referenced_files(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The names of every Parquet file the catalog knows: data and delete files of any snapshot, and those
    scheduled for removal."""
    meta = f"__ducklake_metadata_{LAKE_NAME}"
    rows = con.execute(f"SELECT path FROM {meta}.ducklake_data_file UNION ALL SELECT path FROM "
                       f"{meta}.ducklake_delete_file UNION ALL SELECT path FROM "
                       f"{meta}.ducklake_files_scheduled_for_deletion").fetchall()
    return {PurePosixPath(r[0]).name for r in rows}


def snapshot_range(con: duckdb.DuckDBPyConnection) -> tuple[int, int] | None:
    rows = con.execute(f"SELECT min(snapshot_id), max(snapshot_id) FROM {LAKE_NAME}.snapshots()").fetchall()
    return (int(rows[0][0]), int(rows[0][1])) if rows and rows[0][0] is not None else None


def upkeep(lake: TeamStore, *, keep_snapshots_days: float | None = None, grace_minutes: float = DEFAULT_GRACE_MINUTES,
           dry_run: bool = False, machine: str | None = None) -> UpkeepReport:
    """Merge, expire (only with `keep_snapshots_days`), remove old and unreferenced files; see the module's
    docstring for why a push in flight is safe. A dry run changes nothing and says what would go."""
    if keep_snapshots_days is not None and keep_snapshots_days < 0:
        raise DatabaseError(f"--keep-snapshots-days {keep_snapshots_days:g}: give 0 or more days")
    if grace_minutes < 0:
        raise DatabaseError(f"--grace-minutes {grace_minutes:g}: give 0 or more minutes")
    start = time.monotonic()
    who = f"upkeep on {machine or socket.gethostname()}"
    con = connect(lake)
    try:
        report = UpkeepReport(dry_run, DataFiles(), DataFiles())
        try:  # every step retried while a SQLite catalog is locked by a push's commit, or a commit conflicts
            if not _retried(con, report, lambda: con.execute(
                    "SELECT count(*) FROM duckdb_tables() WHERE database_name = ? AND table_name = 'push_lock'",
                    [LAKE_NAME]).fetchall()[0][0]):
                raise DatabaseError(lake.schema_problem(0) or "")
            report.files_before = data_files(con, lake)
            _steps(con, lake, report, keep_snapshots_days, timedelta(minutes=grace_minutes), who)
            report.files_after = data_files(con, lake)
            report.snapshots_left = _retried(con, report, lambda: snapshot_range(con))
        except duckdb.Error as e:
            raise refusal(e, lake, "upkeep") from e
    finally:
        con.close()
    report.seconds = time.monotonic() - start
    return report


def _steps(con: duckdb.DuckDBPyConnection, lake: TeamStore, report: UpkeepReport, keep_days: float | None,
           grace: timedelta, who: str) -> None:
    dry = report.dry_run
    if not dry:  # first, so what it replaces is scheduled for removal (after the grace)
        # fetchall: a result left unread (fetchone) leaves the merge uncommitted, and its new files orphaned
        merged = _retried(con, report, lambda: con.execute(
            f"SELECT files_processed, files_created FROM ducklake_merge_adjacent_files('{LAKE_NAME}')").fetchall())
        report.files_merged = sum(int(r[0]) for r in merged)
        report.files_written = sum(int(r[1]) for r in merged)

    expire_before = None if keep_days is None else datetime.now(UTC) - timedelta(days=keep_days)

    def locked() -> tuple[datetime, list[int]]:
        """The push lock taken and committed (with the snapshots expired): a push in flight now loses its commit."""
        taken = datetime.now(UTC)  # before the transaction's snapshot: files older than this are candidates
        con.execute("BEGIN TRANSACTION")
        try:
            expired: list[int] = []
            if expire_before is not None:
                # by id, not older_than: DuckLake compares that as text with a SQLite catalog's times, and
                # 'YYYY-MM-DD HH:MM' sorts before 'YYYY-MM-DDT...' (a whole day of snapshots would go too early)
                old = [r[0] for r in con.execute(
                    f"SELECT snapshot_id FROM {LAKE_NAME}.snapshots() WHERE snapshot_time < ? AND snapshot_id < "
                    f"(SELECT max(snapshot_id) FROM {LAKE_NAME}.snapshots())", [expire_before]).fetchall()]
                if old:
                    expired = [r[0] for r in con.execute(
                        f"SELECT snapshot_id FROM ducklake_expire_snapshots('{LAKE_NAME}', dry_run => ?, "
                        "versions => ?::UBIGINT[])", [dry, old]).fetchall()]
            if dry:
                con.execute("ROLLBACK")
                return taken, expired
            con.execute("DELETE FROM push_lock")
            con.execute("INSERT INTO push_lock VALUES (?, now())", [who])
            con.execute(f"CALL {LAKE_NAME}.set_commit_message(?, ?)",
                        [who, "upkeep" + (f": {len(expired)} snapshot(s) expired" if expired else "")])
            con.execute("COMMIT")
            return taken, expired
        except BaseException:
            rollback(con)
            raise

    taken, report.snapshots_expired = _retried(con, report, locked)
    cutoff = datetime.now(UTC) - grace
    report.old_files_removed = _retried(con, report, lambda: _cleanup_old_files(con, lake, cutoff, dry))
    report.orphans_removed = _retried(con, report, lambda: [r[0] for r in con.execute(
        f"SELECT path FROM ducklake_delete_orphaned_files('{LAKE_NAME}', dry_run => ?, older_than => ?)",
        [dry, taken - grace]).fetchall()])
    sizes = report.files_before.sizes
    report.bytes_freed = sum(sizes.get(PurePosixPath(p).name, 0)
                             for p in report.old_files_removed + report.orphans_removed)


def _cleanup_old_files(con: duckdb.DuckDBPyConnection, lake: TeamStore, cutoff: datetime, dry: bool) -> list[str]:
    """`ducklake_cleanup_old_files` for the files scheduled for removal before `cutoff`. A SQLite catalog keeps
    that time as text, which DuckLake compares as text with its 'YYYY-MM-DDTHH:MM' literal: every file of the
    cutoff's day would pass. So: all of them when all are due (checked here with real times), else, on SQLite,
    those scheduled before the cutoff's day (the rest wait for the next upkeep)."""
    meta = f"__ducklake_metadata_{LAKE_NAME}"
    con.execute("BEGIN TRANSACTION")  # the look and the removal in one transaction
    try:
        row = con.execute(f"SELECT count(*) FILTER (WHERE schedule_start::TIMESTAMPTZ >= ?) FROM "
                          f"{meta}.ducklake_files_scheduled_for_deletion", [cutoff]).fetchall()
        if not row[0][0]:
            selection, values = "cleanup_all => true", []
        elif lake.catalog == "sqlite":
            day_before = datetime.combine(cutoff.date(), datetime.min.time(), UTC) - timedelta(days=1)
            selection, values = "older_than => ?", [day_before]  # as text: before the cutoff's day
        else:
            selection, values = "older_than => ?", [cutoff]
        removed = [r[0] for r in con.execute(f"SELECT path FROM ducklake_cleanup_old_files('{LAKE_NAME}', "
                                             f"dry_run => ?, {selection})", [dry, *values]).fetchall()]
        con.execute("COMMIT")  # a file already gone is skipped by the next upkeep's removal, should this fail
    except BaseException:
        rollback(con)
        raise
    return removed


def _retried(con: duckdb.DuckDBPyConnection, report: UpkeepReport, step: Callable[[], T]) -> T:
    """One step, retried while another machine's commit wins DuckLake's conflict check."""
    for attempt in range(ATTEMPTS):
        try:
            return step()
        except duckdb.Error as e:
            if not retryable(e) or attempt + 1 == ATTEMPTS:
                raise
            report.retries += 1
            time.sleep(min(0.05 * (attempt + 1), 1.0))
    raise AssertionError("unreachable")
