"""`joulebench push`: a runner machine's results to the team store, one source at a time.

Each local source (a sweep's result file, an upload, the reference seed) goes in one lake
transaction, whole: its row, its runs, their power traces, samples, step times and labels, its
findings, the environments and catalog devices (with their power modes) its runs name that the
lake lacks, the grades and configuration aggregates of the configurations it touches (db.grading,
the rules ingest applies), and a `pushes` row saying which machine pushed it and when.

Idempotent: a source whose content hash the lake holds is skipped, and a run whose id the lake
holds is not added twice (the same runs can arrive in two files). Resumable: a push killed or cut
off loses at most the source in flight, which the next push sends again; nothing local is changed.
Concurrent: every push transaction deletes and re-inserts the one row of `push_lock`, so of two
machines pushing at once DuckLake aborts the later commit, which then retries from its hash check.
"""

from __future__ import annotations

import hashlib
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import duckdb

from db.catalog_sync import catalog_edits, label_edits
from db.grading import grade_runs
from db.lake import LAKE_NAME, TeamStore, connect, ensure_schema, refusal, retryable, rollback, sql_literal
from db.recipes import push_recipes
from joulebench.errors import DatabaseError
from joulebench.ranges import RangeError, check_text

MAX_ATTEMPTS = 30
T = TypeVar("T")
RUN_TABLES = ("power_traces", "power_samples", "step_times", "run_labels", "requests", "request_sets")


@dataclass
class PushReport:
    machine: str
    sources_pushed: int = 0
    sources_already_there: int = 0
    runs_pushed: int = 0
    runs_already_there: int = 0
    samples_pushed: int = 0
    catalog_edits_pushed: int = 0  # device fields, price entries and exchange rates changed in the lake
    runs_relabelled: int = 0  # runs in the lake whose labels this machine changed after pushing them
    recipes_pushed: int = 0  # mapping recipes (db.recipes) the lake lacked, or held an older one of for the shape
    retries: int = 0
    seconds: float = 0.0
    pushed: list[str] = field(default_factory=list)  # content hashes, in push order


def lake_source_id(sha256: str, taken: set[int]) -> int:
    """The lake's id of a source, from its content hash (DuckLake has no sequences): 31 bits of a hash
    of it, moved on past ids another source holds (the push lock makes this check and the insert one step)."""
    value = int(hashlib.sha256(sha256.encode()).hexdigest()[:8], 16) & 0x7FFFFFFF or 1
    while value in taken:
        value = value % 0x7FFFFFFF + 1
    return value


def machine_name(machine: str | None) -> str:
    """The name pushes carry: `machine` (checked as every name is: one line, at most 200
    characters, no control characters), else this host's name."""
    given = check_text(machine, "--machine")
    if given is not None:
        return given
    host = socket.gethostname()
    try:
        return check_text(host, "the host name") or "unnamed host"
    except RangeError as e:
        raise RangeError(f"{e.format_message()}; give the machine a name with --machine") from e


def push(local_db: Path, lake: TeamStore, *, machine: str | None = None,
         on_source: Callable[[str, int], None] | None = None) -> PushReport:
    """Push every local source the lake lacks; `on_source(sha, runs)` after each one commits.
    RangeError, before anything is read or written, for a machine name that is not one line of at
    most 200 characters (the snapshots and every viewer show it)."""
    report = PushReport(machine_name(machine))
    start = time.monotonic()
    con = connect(lake)
    try:
        ensure_schema(con)
        try:
            con.execute(f"ATTACH {sql_literal(str(local_db))} AS local (READ_ONLY)")
        except duckdb.Error as e:
            raise DatabaseError(f"{local_db}: cannot read the local store to push it ({e})") from e
        _push_catalog(con, report)
        _push_recipes(con, report)
        sources = con.execute("SELECT source_id, content_sha256 FROM local.sources ORDER BY source_id").fetchall()
        for source_id, sha in sources:
            done = _push_source(con, source_id, sha, report)
            if done is not None and on_source is not None:
                on_source(sha, done)
        _push_labels(con, report)
    except duckdb.Error as e:  # a refusal: the real cause named (data folder, catalog file, role), not retried
        raise refusal(e, lake, "push") from e
    finally:
        con.close()
    report.seconds = time.monotonic() - start
    return report


class _NothingToDo(Exception):
    """Raised inside a locked transaction whose work turned out to be done already: it is rolled back."""


def _in_turn(con: duckdb.DuckDBPyConnection, report: PushReport, what: str, work: Callable[[], T]) -> T | None:
    """`work()` in one lake transaction holding the push lock, committed; retried from the start when
    another machine's commit won (None when the work raised _NothingToDo)."""
    for attempt in range(MAX_ATTEMPTS):
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute("DELETE FROM push_lock")
            con.execute("INSERT INTO push_lock VALUES (?, now())", [report.machine])
            result = work()
            con.execute(f"CALL {LAKE_NAME}.set_commit_message(?, ?)", [report.machine, f"push: {what}"])
            con.execute("COMMIT")
            return result
        except _NothingToDo:
            rollback(con)
            return None
        except BaseException as e:
            rollback(con)
            if not retryable(e):
                raise  # push() names the cause (db.lake.refusal)
            report.retries += 1
            time.sleep(min(0.05 * (attempt + 1), 1.0))
    raise DatabaseError(f"push: {what} could not be committed after {MAX_ATTEMPTS} attempts (other machines "
                        "pushing at the same time); run `joulebench push` again, it resumes")


def _push_source(con: duckdb.DuckDBPyConnection, source_id: int, sha: str, report: PushReport) -> int | None:
    def there() -> bool:
        row = con.execute("SELECT count(*) FROM sources WHERE content_sha256 = ?", [sha]).fetchone()
        return bool(row and row[0])

    def work() -> tuple[int, int, int]:
        if there():  # another machine pushed it since the look below
            raise _NothingToDo
        return _copy(con, source_id, sha, report.machine)

    # a source in the lake stays there: one look without the lock skips it (a push repeated is cheap)
    done = None if there() else _in_turn(con, report, f"source {sha[:12]}", work)
    if done is None:
        report.sources_already_there += 1
        return None
    runs, duplicates, samples = done
    report.sources_pushed += 1
    report.runs_pushed += runs
    report.runs_already_there += duplicates
    report.samples_pushed += samples
    report.pushed.append(sha)
    return runs


def _push_catalog(con: duckdb.DuckDBPyConnection, report: PushReport) -> None:
    """The catalog: devices (with their power modes) the lake lacks, then this machine's edits newer than
    the lake's (db.catalog_sync), in one transaction."""
    def work() -> int:
        missing = "device_name NOT IN (SELECT device_name FROM devices)"
        con.execute(f"INSERT INTO power_modes BY NAME SELECT * FROM local.power_modes WHERE {missing}")
        con.execute(f"INSERT INTO devices BY NAME SELECT * FROM local.devices WHERE {missing}")
        return catalog_edits(con, report.machine)

    report.catalog_edits_pushed += _in_turn(con, report, "the catalog", work) or 0


def _push_recipes(con: duckdb.DuckDBPyConnection, report: PushReport) -> None:
    """The mapping recipes (db.recipes) the lake lacks or holds older ones of, in one transaction."""
    def work() -> int:
        pushed = push_recipes(con)
        if not pushed:
            raise _NothingToDo
        return pushed

    report.recipes_pushed += _in_turn(con, report, "mapping recipes", work) or 0


def _push_labels(con: duckdb.DuckDBPyConnection, report: PushReport) -> None:
    """Labels supplied here after their runs were pushed (db.catalog_sync), runs regraded."""
    def work() -> int:
        changed = label_edits(con)
        if not changed:
            raise _NothingToDo
        grade_runs(con, changed)
        return len(changed)

    report.runs_relabelled += _in_turn(con, report, "labels", work) or 0


def _copy(con: duckdb.DuckDBPyConnection, source_id: int, sha: str, machine: str) -> tuple[int, int, int]:
    """Copy one source and what hangs off it; (runs added, runs the lake already held, power samples)."""
    taken = {r[0] for r in con.execute("SELECT source_id FROM sources").fetchall()}
    new_id = lake_source_id(sha, taken)
    con.execute("INSERT INTO sources BY NAME SELECT * REPLACE (? AS source_id) FROM local.sources "
                "WHERE source_id = ?", [new_id, source_id])
    con.execute("CREATE OR REPLACE TEMP TABLE _new_runs AS SELECT run_id FROM local.runs WHERE source_id = ? "
                "AND run_id NOT IN (SELECT run_id FROM runs)", [source_id])
    total = con.execute("SELECT count(*) FROM local.runs WHERE source_id = ?", [source_id]).fetchone()
    added = con.execute("SELECT count(*) FROM _new_runs").fetchone()
    n_added = added[0] if added else 0
    con.execute("INSERT INTO runs BY NAME SELECT * REPLACE (? AS source_id) FROM local.runs "
                "WHERE run_id IN (SELECT run_id FROM _new_runs)", [new_id])
    for table in RUN_TABLES:
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM local.{table} "
                    "WHERE run_id IN (SELECT run_id FROM _new_runs)")
    con.execute("INSERT INTO findings BY NAME SELECT * REPLACE (? AS source_id) FROM local.findings "
                "WHERE source_id = ?", [new_id, source_id])
    con.execute("INSERT INTO environments BY NAME SELECT * FROM local.environments WHERE env_id IN "
                "(SELECT env_id FROM local.runs WHERE run_id IN (SELECT run_id FROM _new_runs)) "
                "AND env_id NOT IN (SELECT env_id FROM environments)")
    named = ("(SELECT device_name FROM local.runs WHERE run_id IN (SELECT run_id FROM _new_runs)) "
             "AND device_name NOT IN (SELECT device_name FROM devices)")
    con.execute(f"INSERT INTO power_modes BY NAME SELECT * FROM local.power_modes WHERE device_name IN {named}")
    con.execute(f"INSERT INTO devices BY NAME SELECT * FROM local.devices WHERE device_name IN {named}")
    samples = con.execute("SELECT count(*) FROM local.power_samples WHERE run_id IN (SELECT run_id FROM _new_runs)"
                          ).fetchone()
    con.execute("INSERT INTO pushes VALUES (?, ?, now(), ?)", [sha, machine, n_added])
    run_ids = [r[0] for r in con.execute("SELECT run_id FROM _new_runs").fetchall()]
    if run_ids:
        grade_runs(con, run_ids)
    return n_added, (total[0] if total else 0) - n_added, samples[0] if samples else 0
