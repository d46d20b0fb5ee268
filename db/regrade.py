"""A regrade that never blocks the app: every run's grade recomputed in a child process while pages read on.

An open that must grade many runs (a migration that changes the grading, runs stored without a grade: an
older database, a grading that was killed) and is asked to (`Store.open(regrade_later=True)`: the explorer's
first rerun) records why in `store_meta` (key MARKER_KEY, its value the reason) and returns at once; the
caller starts the grader (`start`), a child process (`python -m db.regrade DB`) that

1. computes every grade and aggregate through a read-only connection (`db.grading.compute_all`), so the
   pages' reads go on meanwhile, showing the grades stored before (or 'not graded') with the marker's note;
2. opens the file read-write for the write alone (`db.grading.store_all`, a few seconds at 100,000 runs),
   in one transaction that also removes the marker. When the runs changed between the two (an import, a
   label), it computes again within that transaction instead.

Its identity (PID and start time) is kept in `<db>.regrade.json` while it runs, and why it failed, if it
does, in `<db>.regrade.log`; the marker then stays, the pages say so, and the next open grades. Any open
that is not asked to defer and finds the marker with no grader alive grades at once (`Store.open`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from db.connection import connect, first_row
from db.grading import compute_all, inputs_fingerprint, store_all
from joulebench.errors import DatabaseBusyError
from joulebench.processes import alive, identity

MARKER_KEY = "regrade"  # store_meta: why every run waits for a new grade (its value) and since when (set_at)
REGRADE_LATER_AT = 5_000  # runs: an open asked to defer hands a regrade of at least this many to the grader
BUSY_WAIT_S = 120.0  # the grader waits this long for another process's write to end, at each step
_REPO = Path(__file__).resolve().parent.parent
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}  # the graders this process started
_GRADER = "import sys; from db.regrade import main; sys.exit(main(sys.argv[1:]))"  # not -m: db imports this module


@dataclass(frozen=True)
class Pending:
    """A regrade recorded and not yet done."""

    reason: str
    since: datetime
    running: bool  # a grader process is alive for it
    failure: str | None  # the last line of the grader's log when it is not running and it left one

    def note(self) -> str:
        """What a page says while it waits (plain text: the caller makes it Markdown-literal)."""
        since = f"{self.since.astimezone(UTC):%H:%M:%S} UTC"
        if self.running:
            return (f"Trust grades are being recomputed ({self.reason}), since {since}: the grades shown are those "
                    "stored before, and runs without one show 'not graded', until it finishes. Reload the page "
                    "to see the new grades.")
        why = f" It stopped: {self.failure}." if self.failure else ""
        return (f"Trust grades wait to be recomputed ({self.reason}), since {since}, and no regrade is running.{why} "
                "The grades shown are those stored before ('not graded' where none is). Restart the app, or run "
                "`joulebench db info`, to recompute them.")


def owner_file(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".regrade.json")


def log_file(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".regrade.log")


def marked(con: duckdb.DuckDBPyConnection) -> tuple[str, datetime] | None:
    """The marker's reason and time, or None (also for a store without store_meta)."""
    try:
        row = first_row(con, "SELECT value, set_at FROM store_meta WHERE key = ?", [MARKER_KEY])
    except duckdb.CatalogException:
        return None
    return (str(row[0]), row[1]) if row else None


def mark(con: duckdb.DuckDBPyConnection, reason: str) -> None:
    con.execute("CREATE TABLE IF NOT EXISTS store_meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL, "
                "set_at TIMESTAMPTZ NOT NULL)")
    con.execute("INSERT OR REPLACE INTO store_meta VALUES (?, ?, now())", [MARKER_KEY, reason[:500]])


def clear(con: duckdb.DuckDBPyConnection) -> None:
    try:
        con.execute("DELETE FROM store_meta WHERE key = ?", [MARKER_KEY])
    except duckdb.CatalogException:
        pass


def running(db_path: Path) -> bool:
    """Whether a grader process for this database is alive."""
    for pid, child in list(_CHILDREN.items()):  # reaped: an ended child of this process is not alive
        if child.poll() is not None:
            del _CHILDREN[pid]
    try:
        owner = json.loads(owner_file(db_path).read_text())
    except (OSError, ValueError):
        return False
    return alive(owner if isinstance(owner, dict) else None)


def pending(con: duckdb.DuckDBPyConnection, db_path: Path) -> Pending | None:
    """The regrade this database waits for, if any, and whether a grader works on it."""
    return described(marked(con), db_path)


def described(found: tuple[str, datetime] | None, db_path: Path) -> Pending | None:
    """A marker (`marked`) with whether a grader works on it (no database access: the pages' marker is cached
    on the data version, which a grader that died without writing does not change)."""
    if found is None:
        return None
    is_running = running(db_path)
    failure = None
    if not is_running:
        try:
            lines = [line for line in log_file(db_path).read_text(errors="replace").splitlines() if line.strip()]
            failure = lines[-1][:300] if lines else None
        except OSError:
            pass
    return Pending(found[0], found[1], is_running, failure)


def start(db_path: Path) -> bool:
    """Start the grader for this database unless one runs; True when one runs now. It outlives nothing: it
    ends when the regrade is written (seconds), and a server stopped meanwhile leaves it to finish."""
    if running(db_path):
        return True
    with open(log_file(db_path), "wb") as log:
        child = subprocess.Popen([sys.executable, "-c", _GRADER, str(db_path)], cwd=_REPO,
                                 stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                 start_new_session=True)
    owner_file(db_path).write_text(json.dumps(identity(child.pid)))
    _CHILDREN[child.pid] = child  # reaped by `running` once it ends (no zombie)
    return True


def _connect(db_path: Path, *, read_only: bool, wait_s: float) -> duckdb.DuckDBPyConnection:
    """A connection, waiting (up to wait_s) while another process writes (or, to write, reads)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return connect(db_path, read_only=read_only, wait_s=min(5.0, max(0.0, deadline - time.monotonic())))
        except DatabaseBusyError:
            if time.monotonic() >= deadline:
                raise


def regrade(db_path: Path, *, busy_wait_s: float = BUSY_WAIT_S) -> int:
    """The grader's work (see the module's docstring): runs graded, 0 when nothing waited."""
    con = _connect(db_path, read_only=True, wait_s=busy_wait_s)
    try:
        if marked(con) is None:
            return 0
        computed = compute_all(con)
    finally:
        con.close()
    con = _connect(db_path, read_only=False, wait_s=busy_wait_s)
    try:
        con.execute("BEGIN TRANSACTION")
        try:
            if marked(con) is None:  # another open graded meanwhile
                con.execute("ROLLBACK")
                return 0
            if inputs_fingerprint(con) != computed.inputs:  # runs added or relabelled meanwhile: again, here
                computed = compute_all(con)
            graded = store_all(con, computed)
            clear(con)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    finally:
        con.close()
    return graded


def main(argv: list[str]) -> int:
    db_path = Path(argv[0])
    started = time.perf_counter()
    try:
        graded = regrade(db_path)
    except BaseException as e:  # the marker stays: the pages say it stopped, with this line
        traceback.print_exc()
        print(f"the regrade of {db_path} failed: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}",
              flush=True)
        return 1
    finally:
        try:
            owner = json.loads(owner_file(db_path).read_text())
            if isinstance(owner, dict) and owner.get("pid") == os.getpid():
                owner_file(db_path).unlink()
        except (OSError, ValueError):
            pass
    print(f"regraded {graded:,} runs of {db_path} in {time.perf_counter() - started:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
