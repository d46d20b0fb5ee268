"""The results store: the one API that reaches a store, a DuckDB file or a team store (its location and
kind: `db.location`). It stores and queries; the import service (`ingest`) converts, validates, queues and
drains above it.

A read-write open (a file only: a team store takes only `joulebench push`) creates the file if needed,
applies the migrations and seeds a new database with the reference data. A read-only open (`open_reading`:
the explorer's pages and the commands that read) does none of that and never blocks a writer for longer than
its query; on a team store every query has a time limit (`time_limited`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import duckdb
import polars as pl

import db.labels as labels
import db.regrade as regrade
import db.seed as seed
from db.connection import connect, create_whole, damaged, first_row, interrupted, remove_abandoned_births
from db.grading import derived_damage, grade_runs, rebuild_derived
from db.lake import LAKE_NAME
from db.location import LocalFile, locate, reading_views
from db.migrate import apply_migrations
from db.store_location import QUERY_LIMIT_ENV, StoreLocation
from db.writes import IngestReport, ingest_loaded
from joulebench.errors import DatabaseError, ResultFileError
from joulebench.labels import LABELS
from joulebench.paths import SAMPLE_DATA_DIR
from joulebench.resultfile import LoadedResultFile

T = TypeVar("T")

# Errors a file's own values cause at ingest (not the database's fault): the file is refused.
_DATA_ERRORS = (duckdb.ConversionException, duckdb.ConstraintException, duckdb.InvalidInputException,
                duckdb.OutOfRangeException, duckdb.TypeMismatchException)


def _raise_translated(path: Path | str, e: BaseException) -> NoReturn:
    """Raise what a failed database operation means: KeyboardInterrupt for a Ctrl-C that DuckDB reported
    as 'Query interrupted', a DatabaseError naming the file for DuckDB's errors, else the error itself."""
    if interrupted(e):
        raise KeyboardInterrupt from e
    if isinstance(e, duckdb.Error):
        raise damaged(path, e) from e
    raise e


def _translated(method: Callable[..., T]) -> Callable[..., T]:
    """DuckDB errors of a damaged file become a DatabaseError naming it (never a traceback); on a team store
    the call has the store's time limit."""
    @functools.wraps(method)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> T:
        with self.time_limited():
            try:
                return method(self, *args, **kwargs)
            except (duckdb.Error, RuntimeError) as e:
                _raise_translated(self.location.shown, e)
    return wrapper


@dataclass(frozen=True)
class DbInfo:
    location: StoreLocation
    schema_version: int
    runs: int
    devices: int
    findings: int
    sources: pl.DataFrame  # source_id, kind, file_name, format, runs, findings, not_stated, imported_at
    runs_by_source_kind: pl.DataFrame
    runs_by_device: pl.DataFrame
    intake: pl.DataFrame  # the import service's own actions, newest first

    @property
    def path(self) -> Path:
        """The DuckDB file (DatabaseError for a team store: it has none here)."""
        return self.location.file


GRADES_VERSION = 5  # the migration that added trust grades
SEEDED, NOT_SEEDED = "seeded", "not seeded"  # store_meta's reference_data: the reference data is complete / not wanted
BIRTH_WAIT_S = 15.0  # a process that lost the race to create a database waits this long for the winner's lock


class Store:
    """An open database. Use as a context manager; it holds DuckDB's file lock while open."""

    def __init__(self, con: duckdb.DuckDBPyConnection, location: StoreLocation | Path, *, read_only: bool = False,
                 snapshot_id: int | None = None) -> None:
        self.con = con
        self.location = location if isinstance(location, StoreLocation) else LocalFile(location)
        self.read_only = read_only
        self.snapshot_id = snapshot_id  # a team store's snapshot being read (None for a DuckDB file)
        self._limited = False  # a time limit is running (time_limited: the outermost call sets it)
        self.regrade_pending = False  # open(regrade_later=True) left every run's grade to the grader (db.regrade)

    @property
    def path(self) -> Path:
        """The DuckDB file (DatabaseError for a team store: it has none on this machine)."""
        return self.location.file

    @property
    def kind(self) -> str:
        """The store's kind word (db.location: 'local' or 'team'), the same on every command and page."""
        return self.location.kind

    @classmethod
    def open(cls, db: str | os.PathLike[str] | None = None, *, seed_reference: bool = True,
             sample_data: Path = SAMPLE_DATA_DIR, regrade_later: bool = False) -> Store:
        """Open read-write, creating and migrating the file if needed.

        A new database is born whole: created, migrated and seeded with the reference data (unless
        `seed_reference` is false) in a temporary file that takes the database's name only when
        complete (`db.connection.create_whole`), so a kill leaves no database or a complete one, and
        a Ctrl-C raises KeyboardInterrupt and leaves nothing. An existing database is never re-seeded,
        except one whose seeding never finished (made before databases were born whole): it gets the
        reference files it lacks.

        When every run must be graded again (a migration that changes grades, runs without a grade, a regrade
        recorded and not done) it is done here, unless `regrade_later` and at least REGRADE_LATER_AT runs:
        then the store records why (`db.regrade`: the caller starts the grader, `store.regrade_pending`) and
        opens at once. A regrade recorded while its grader is alive is left to the grader.
        """
        location = locate(db)
        location.refuse_write()  # a team store takes only `joulebench push`
        path = location.file
        try:
            remove_abandoned_births(path)
            lost = not path.exists() and not cls._create(path, seed_reference, sample_data)
        except BaseException as e:
            _raise_translated(path, e)
        # lost the race to create it: the winner holds it for its first command, wait for that
        con = connect(path, wait_s=BIRTH_WAIT_S if lost else None)
        store = cls(con, location)
        try:
            applied = apply_migrations(con)
            graded = store._regrade_if_needed(applied, regrade_later)
            if not graded and derived_damage(con) is not None:  # damaged derived tables: made again from the runs
                rebuild_derived(con)
            if seed_reference and store.reference_data() is None:
                store.seed(sample_data)  # a seeding cut off before databases were born whole
                store.mark_reference_data(SEEDED)
            reading_views(con, location)
        except BaseException as e:
            con.close()
            _raise_translated(path, e)
        return store

    @classmethod
    def _create(cls, path: Path, seed_reference: bool, sample_data: Path) -> bool:
        """Build a new database whole (migrated, seeded, marked); False when another process's was first."""
        def build(con: duckdb.DuckDBPyConnection, check: Callable[[], None]) -> None:
            apply_migrations(con)
            check()
            born = cls(con, path)
            if seed_reference:
                born.seed(sample_data, between=check)
            born.mark_reference_data(SEEDED if seed_reference else NOT_SEEDED)

        return create_whole(path, build)

    @classmethod
    def open_reading(cls, store: StoreLocation | str | os.PathLike[str] | None = None, *, as_of: int | None = None,
                     data_path: str | None = None) -> Store:
        """Open any store for reading only (`db.location.locate` reads its name; a team store at its newest
        snapshot or at `as_of`): no migration, no seed; DatabaseError when it is missing or its schema is not
        this JouleBench's, saying what to do (a file: open it read-write once, e.g. `joulebench db info`)."""
        location = locate(store, data_path)
        con, snapshot = location.connect_reading(as_of)
        opened = cls(con, location, read_only=True, snapshot_id=snapshot)
        try:
            problem = location.schema_problem(opened.schema_version())
            if problem:
                raise DatabaseError(problem)
            reading_views(con, location)
        except BaseException:
            con.close()
            raise
        return opened

    @classmethod
    def open_read_only(cls, db: str | os.PathLike[str] | None = None) -> Store:
        """open_reading: the pages' and the tests' name for it."""
        return cls.open_reading(db)

    @classmethod
    def open_team_store(cls, url: str, *, data_path: str | None = None, as_of: int | None = None) -> Store:
        """open_reading of a team store's URL (db.lake), at its newest snapshot or at snapshot `as_of`;
        `data_path` defaults to $JOULEBENCH_LAKE_DATA."""
        return cls.open_reading(url, as_of=as_of, data_path=data_path)

    @contextlib.contextmanager
    def time_limited(self) -> Iterator[None]:
        """Within, the store's queries stop after its time limit (db.location: a team store's, across a
        network), with a DatabaseError that names the store and what to do; a file's are not limited. A timer
        thread interrupts the connection (DuckDB's own way to stop a query); only the outermost call times."""
        limit = self.location.query_limit_s()
        if limit is None or self._limited:
            yield
            return
        guard = threading.Lock()
        state = {"running": True, "fired": False}

        def stop() -> None:
            with guard:  # never after the block ended: an interrupt would then hit the next caller's query
                if state["running"]:
                    state["fired"] = True
                    self.con.interrupt()

        timer = threading.Timer(limit, stop)
        timer.daemon = True
        self._limited = True
        timer.start()
        try:
            yield
        except BaseException as e:
            if state["fired"] and (interrupted(e) or isinstance(e, KeyboardInterrupt)):
                raise DatabaseError(
                    f"{self.location.describe()}: a query took longer than {limit:g} s and was stopped. The store's "
                    "catalog or data path may be slow or out of reach from this machine: check that it can reach "
                    f"them, or allow more time with ${QUERY_LIMIT_ENV} (seconds)") from e
            raise
        finally:
            with guard:
                state["running"] = False
            timer.cancel()
            self._limited = False

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing -------------------------------------------------------------------------
    def ingest(self, loaded: LoadedResultFile, source_kind: str, file_format: str | None = None) -> IngestReport:
        """Store a validated document (one transaction). A value the database cannot hold refuses the
        file (ResultFileError); a damaged database raises DatabaseError."""
        try:
            if file_format:
                return ingest_loaded(self.con, loaded, source_kind=source_kind, file_format=file_format)
            return ingest_loaded(self.con, loaded, source_kind=source_kind)
        except _DATA_ERRORS as e:
            raise ResultFileError(loaded.name, [f"a value cannot be stored: {str(e).splitlines()[0][:300]}"]) from e
        except (duckdb.Error, RuntimeError) as e:
            _raise_translated(self.path, e)

    def ungraded_runs(self) -> int:
        """Runs without a trust grade: none once grading has run (every ingest grades its runs)."""
        row = first_row(self.con, "SELECT count(*) FROM runs WHERE trust_grade IS NULL")
        return int(row[0]) if row else 0

    def _regrade_if_needed(self, applied: list[int], later: bool) -> bool:
        """Grade every run now, or record that it waits for the grader (see `open`); True when graded now (the
        derived tables made anew)."""
        recorded = regrade.marked(self.con)
        if recorded is not None and regrade.running(self.path):
            self.regrade_pending = True  # the grader writes it
            return False
        ungraded = self.ungraded_runs()
        if GRADES_VERSION in applied:
            reason = "the grading rules changed with this version"
        elif ungraded:
            reason = f"{ungraded:,} runs were stored without a grade"
        elif recorded is not None:
            reason = recorded[0]
        else:
            return False
        runs = first_row(self.con, "SELECT count(*) FROM runs")
        if later and runs and runs[0] >= regrade.REGRADE_LATER_AT:
            if recorded is None or recorded[0] != reason:
                regrade.mark(self.con, reason)
            self.regrade_pending = True
            return False
        # a database from before trust grades, or one whose grading was killed after its
        # migration committed (F6: every run stayed ungraded): grade what it holds now
        self.grade_all()
        return True

    def grade_all(self) -> int:
        """(Re)compute every run's trust grade and every configuration's aggregate, in one transaction (which
        also removes a regrade's marker, `db.regrade`)."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            graded = grade_runs(self.con, None)
            regrade.clear(self.con)
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        return graded

    @_translated
    def label_source(self, source: str | int, values: dict[str, Any], *, device_kind: str | None,
                     supplied_by: str, via: str) -> labels.LabelReport:
        """Fill labels the source's file did not state, for all its runs (see `db.labels`)."""
        ref = labels.resolve_source(self.con, str(source))
        return labels.apply_labels(self.con, ref, values, device_kind=device_kind, supplied_by=supplied_by,
                                   via=via)

    @_translated
    def seed(self, folder: Path, *, between: Callable[[], None] | None = None) -> list[IngestReport]:
        """Ingest the reference files this database does not hold yet (by file name: a reference file
        changed since is not added twice), and the power modes; `between` is called before each file."""
        held = {row[0] for row in self.con.execute("SELECT file_name FROM sources WHERE kind = 'reference'").fetchall()}
        reports = []
        for doc in seed.reference_documents(folder):
            if between is not None:
                between()
            if doc.name not in held:
                reports.append(self.ingest(doc, "reference", seed.REFERENCE_FORMAT))
        modes = folder / "power_modes.csv"
        if modes.exists():
            self.add_power_modes(seed.power_mode_rows(modes))
        return reports

    def reference_data(self) -> str | None:
        """SEEDED or NOT_SEEDED as recorded when the database was made; None when nothing was recorded
        (made before the record: its seeding may have been cut off)."""
        try:
            row = first_row(self.con, "SELECT value FROM store_meta WHERE key = 'reference_data'")
        except duckdb.CatalogException:
            return None
        return str(row[0]) if row else None

    def mark_reference_data(self, value: str) -> None:
        """Record that the reference data is complete (SEEDED) or was not wanted (NOT_SEEDED)."""
        self.con.execute("CREATE TABLE IF NOT EXISTS store_meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL, "
                         "set_at TIMESTAMPTZ NOT NULL)")
        self.con.execute("INSERT OR REPLACE INTO store_meta VALUES ('reference_data', ?, now())", [value])

    @_translated
    def add_power_modes(self, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        frame = pl.DataFrame(rows, infer_schema_length=None)
        self.con.register("_modes", frame.to_arrow())
        try:
            self.con.execute(
                "INSERT INTO power_modes BY NAME SELECT * FROM _modes "
                "WHERE (device_name, mode_id) NOT IN (SELECT (device_name, mode_id) FROM power_modes)"
            )
        finally:
            self.con.unregister("_modes")

    @_translated
    def log_intake(self, action: str, file_name: str, runs_added: int = 0, message: str | None = None) -> None:
        """Record what the import service did on its own (drained, rejected, recovered)."""
        self.con.execute("INSERT INTO intake_log (happened_at, action, file_name, runs_added, message) "
                         "VALUES (?, ?, ?, ?, ?)",
                         [datetime.now(UTC), action, file_name[:500], runs_added, (message or "")[:2000] or None])

    # --- reading -------------------------------------------------------------------------
    def _sources(self) -> pl.DataFrame:
        """The sources with what their runs do not state ('device 3, mode 3'; '' when complete)."""
        frame = self.query("SELECT source_id, shown_kind AS kind, file_name, format, run_count AS runs, "
                           "finding_count AS findings, imported_at FROM store_sources ORDER BY source_id")
        gaps = {row["source_id"]: labels.describe_gaps({k: row[k] for k in LABELS})
                for row in labels.not_stated_counts(self.con).iter_rows(named=True)}
        not_stated = pl.Series("not_stated", [gaps.get(i, "") for i in frame["source_id"].to_list()], dtype=pl.String)
        return frame.insert_column(6, not_stated)

    @_translated
    def schema_version(self) -> int:
        try:
            row = first_row(self.con, "SELECT max(version) FROM schema_migrations")
        except duckdb.CatalogException:
            return 0
        return int(row[0]) if row and row[0] is not None else 0

    @_translated
    def query(self, sql: str, params: list[Any] | None = None) -> pl.DataFrame:
        return self.con.sql(sql, params=params or None).pl()

    @_translated
    def snapshot_time(self) -> datetime | None:
        """When the team store's snapshot being read was committed (UTC); None for a DuckDB file."""
        if self.snapshot_id is None:
            return None
        row = first_row(self.con, f"SELECT snapshot_time FROM {LAKE_NAME}.snapshots() WHERE snapshot_id = ?",
                        [self.snapshot_id])
        return row[0].astimezone(UTC) if row and row[0] is not None else None

    @_translated
    def snapshots(self, limit: int = 50) -> pl.DataFrame:
        """A team store's snapshots, newest first: id, when, who committed it (the pushing machine) and
        what (the push's message and the tables it changed)."""
        return self.query("SELECT snapshot_id, snapshot_time, author, commit_message, changes "
                          f"FROM {LAKE_NAME}.snapshots() ORDER BY snapshot_id DESC LIMIT ?", [limit])

    @_translated
    def newest_source_id(self) -> int:
        row = first_row(self.con, "SELECT coalesce(max(source_id), 0) FROM sources")
        return int(row[0]) if row else 0

    @_translated
    def info(self) -> DbInfo:
        def count(table: str) -> int:
            row = first_row(self.con, f"SELECT count(*) FROM {table}")
            return int(row[0]) if row else 0

        return DbInfo(
            location=self.location,
            schema_version=self.schema_version(),
            runs=count("runs"),
            devices=count("devices"),
            findings=count("findings"),
            sources=self._sources(),
            runs_by_source_kind=self.query(
                "SELECT s.shown_kind AS source_kind, count(*) AS runs FROM runs r "
                "JOIN store_sources s USING (source_id) GROUP BY 1 ORDER BY 1"),
            runs_by_device=self.query(
                "SELECT coalesce(r.device_name, 'not stated') AS device_name, d.kind, count(*) AS runs "
                "FROM runs r LEFT JOIN devices d USING (device_name) GROUP BY 1, 2 ORDER BY runs DESC, 1"),
            intake=self.query(
                "SELECT happened_at, action, file_name, runs_added, message FROM intake_log "
                "ORDER BY event_id DESC LIMIT 20"),
        )
