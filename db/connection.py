"""Opening the DuckDB file: its lock error becomes DatabaseBusyError, every other failure a
DatabaseError that names the file and what to do (never a DuckDB traceback).

A new database is born whole (`create_whole`): it is built in a temporary file beside the target,
checkpointed (no write-ahead log left) and closed, then linked into place under the target's
name only if that name is still free. A kill at any moment leaves no database or a complete one,
never a half-made file or a log that cannot be replayed; what a killed creation left is removed
by the next open (`remove_abandoned_births`)."""

from __future__ import annotations

import contextlib
import errno
import glob
import itertools
import os
import re
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import duckdb
import pyarrow as pa

from joulebench.errors import DatabaseBusyError, DatabaseError, os_reason
from joulebench.processes import alive, start_ticks

READ_ONLY_WAIT_S = 2.0  # a reader waits this long for a writer's short transaction to end
_BIRTH = ".creating-"  # .<name>.creating-<pid>-<start ticks>-<random>: a database being built


def connect(db_path: Path, *, read_only: bool = False, wait_s: float | None = None) -> duckdb.DuckDBPyConnection:
    """Open the file; a file another process holds is waited for `wait_s` seconds (default: a
    reader READ_ONLY_WAIT_S, a writer not at all), then DatabaseBusyError."""
    if read_only and not db_path.exists():
        raise DatabaseError(f"{db_path}: no database here; run any joulebench command without --read-only to create it")
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DatabaseError(f"{db_path.parent}: cannot create the database folder ({os_reason(e)})") from e
    if wait_s is None:
        wait_s = READ_ONLY_WAIT_S if read_only else 0.0
    deadline = time.monotonic() + wait_s
    while True:
        try:
            con = duckdb.connect(str(db_path), read_only=read_only)
            break
        except duckdb.IOException as e:
            # 'Could not set lock on file': another process holds it ('block' in a checksum error is not a lock)
            if re.search(r"\block\b", str(e).lower()):
                if time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                raise DatabaseBusyError(
                    f"{db_path} is held by another process ({_holder(str(e))}). Close that process "
                    "(the app, or another joulebench command) and try again; result files are queued, not lost."
                ) from e
            raise damaged(db_path, e) from e
        except duckdb.Error as e:
            raise damaged(db_path, e) from e
        except OSError as e:
            raise DatabaseError(f"{db_path}: cannot open the database ({os_reason(e)})") from e
    try:
        con.execute("SET TimeZone = 'UTC'")
    except duckdb.Error as e:
        con.close()
        raise damaged(db_path, e) from e
    return con


def wal_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".wal")


def _birth_files(db_path: Path) -> list[Path]:
    return [Path(p) for p in glob.glob(os.path.join(glob.escape(str(db_path.parent)),
                                                    glob.escape(f".{db_path.name}{_BIRTH}") + "*"))]


def remove_abandoned_births(db_path: Path) -> int:
    """Remove the temporary files (and their logs) of creations whose process is gone (killed);
    those of a creation still running are left alone. Returns how many files were removed."""
    removed = 0
    for path in _birth_files(db_path):
        parts = path.name.rsplit(_BIRTH, 1)[-1].split(".")[0].split("-")
        try:
            owner: dict[str, object] = {"pid": int(parts[0]), "start_ticks": int(parts[1]) if parts[1] else None}
        except (IndexError, ValueError):
            owner = {}
        if alive(owner):
            continue
        with contextlib.suppress(OSError):  # gone already, or a folder we may not write: left as it is
            path.unlink()
            removed += 1
    return removed


@contextlib.contextmanager
def deferred_interrupt() -> Iterator[Callable[[], None]]:
    """Within: a Ctrl-C (SIGINT) is noted, not raised wherever the process happens to be (inside a query,
    which DuckDB then reports as 'Query interrupted', or inside a module a library imports lazily, which
    is left half-imported and breaks what follows); the `check` it gives raises KeyboardInterrupt at the
    safe points between steps. Only in the main thread with Python's own handler (else `check` does nothing
    and SIGINT behaves as before)."""
    received: list[int] = []

    def check() -> None:
        if received:
            raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield check
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield check
    finally:
        signal.signal(signal.SIGINT, previous)
    check()  # one that came after the last safe point: raised now


def create_whole(db_path: Path, build: Callable[[duckdb.DuckDBPyConnection, Callable[[], None]], None]) -> bool:
    """Create the database at `db_path` whole: `build` (migrate, seed) runs on a fresh temporary file
    beside it, which is checkpointed, closed and then linked into place only if `db_path` is still
    free. True when this call's file became the database; False when another process's was there
    first (this call's is removed; open theirs). On any error or interrupt nothing is left behind: a
    Ctrl-C raises KeyboardInterrupt at the next step between `build`'s steps (the `check` it is given)."""
    with deferred_interrupt() as check:
        return _create_whole(db_path, build, check)


def _create_whole(db_path: Path, build: Callable[[duckdb.DuckDBPyConnection, Callable[[], None]], None],
                  check: Callable[[], None]) -> bool:
    ticks = start_ticks(os.getpid())
    tmp = db_path.with_name(f".{db_path.name}{_BIRTH}{os.getpid()}-{ticks if ticks is not None else ''}-"
                            f"{uuid.uuid4().hex[:8]}")
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DatabaseError(f"{db_path.parent}: cannot create the database folder ({os_reason(e)})") from e
    try:
        con = duckdb.connect(str(tmp))
        try:
            con.execute("SET TimeZone = 'UTC'")
            build(con, check)
            check()
            con.execute("CHECKPOINT")  # everything into the file: no log is left to replay (or to rename)
        finally:
            con.close()
        check()  # the last moment a Ctrl-C leaves no database
        if wal_path(tmp).exists():
            raise DatabaseError(f"{db_path}: the new database could not be checkpointed; try again")
        return _link_into_place(tmp, db_path)
    except OSError as e:
        raise DatabaseError(f"{db_path}: cannot create the database ({os_reason(e)})") from e
    finally:
        for leftover in (tmp, wal_path(tmp)):
            with contextlib.suppress(OSError):
                leftover.unlink()


def _link_into_place(tmp: Path, db_path: Path) -> bool:
    """Give the finished file the database's name unless another process's already has it."""
    wal = wal_path(db_path)
    if not db_path.exists() and wal.exists():
        # a log whose database was moved away (DuckDB would replay it onto the new file): set it aside
        wal.rename(wal.with_name(f"{wal.name}.orphaned-{int(time.time())}"))
    try:
        os.link(tmp, db_path)  # atomic, and never replaces: the name is taken by one process only
    except FileExistsError:
        return False
    except OSError as e:
        if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS):
            raise
        if db_path.exists():  # a file system without hard links: check, then rename (not atomic, as close)
            return False
        os.replace(tmp, db_path)
    with contextlib.suppress(OSError):  # the new name survives a power cut
        folder = os.open(db_path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
    return True


def interrupted(e: BaseException) -> bool:
    """DuckDB's own report of a Ctrl-C that reached it during a query ('Query interrupted')."""
    return isinstance(e, duckdb.InterruptException) or (isinstance(e, RuntimeError)
                                                         and "query interrupted" in str(e).lower())


# What DuckDB says when the file itself is not a readable database (truncated, overwritten, a
# checksum that does not match); anything else is not evidence of damage and is not called so.
_DAMAGE_WORDS = ("not a valid duckdb", "corrupt", "checksum", "could not read enough bytes", "magic bytes",
                 "invalid database", "failed to read database header", "serialization", "deserializ")
_FULL_WORDS = ("no space left on device", "disk full", "not enough space", "enospc")
_DENIED_WORDS = ("permission denied", "read-only file system", "operation not permitted", "eacces", "erofs")


def damaged(db_path: Path | str, e: BaseException) -> DatabaseError:
    """The error for a database operation that failed, naming its real cause: a full disk or a
    permission (fix those, nothing is lost), a file DuckDB cannot read (truncated, overwritten:
    move it away), or another failure (not called damage)."""
    text = _first_line(e)
    low = str(e).lower()
    if any(w in low for w in _FULL_WORDS):
        return DatabaseError(f"{db_path}: the disk is full ({text}). Free space on the disk that holds it and try "
                             "again; nothing of this was stored (the database keeps what it held)")
    if any(w in low for w in _DENIED_WORDS):
        return DatabaseError(f"{db_path}: permission denied ({text}). Give the user running JouleBench write "
                             "access to the file and its folder (chmod/chown), or choose another file with --db")
    if isinstance(e, duckdb.OutOfMemoryException) or "out of memory" in low:
        return DatabaseError(f"{db_path}: out of memory while working on the database ({text}); close other "
                             "programs and try again")
    if isinstance(e, duckdb.SerializationException) or any(w in low for w in _DAMAGE_WORDS):
        return DatabaseError(f"{db_path}: the database file is damaged or unreadable ({text}). Move it away "
                             "(JouleBench creates a new one) and import your result files again "
                             "(`joulebench import results/`)")
    return DatabaseError(f"{db_path}: the database could not complete this ({text}). The file is not known to "
                         "be damaged; try again, and report the message if it repeats")


def data_version(db_path: Path) -> str:
    """A cheap token that changes whenever the database file (or its write-ahead log) changes;
    read without opening the database, so the explorer can key its caches on it every rerun."""
    parts = []
    for path in (db_path, db_path.with_name(db_path.name + ".wal")):
        try:
            st = path.stat()
            parts.append(f"{st.st_mtime_ns}:{st.st_size}")
        except OSError:
            parts.append("-")
    return "/".join(parts)


def first_row(con: duckdb.DuckDBPyConnection, sql: str, params: list[object] | None = None) -> tuple | None:
    """The first row of a query, reading the result to its end (DuckDB 2 refuses new work on a
    connection whose last result was not read to the end)."""
    rows = con.execute(sql, params or []).fetchall()
    return rows[0] if rows else None


_ID_SETS = itertools.count()


@contextlib.contextmanager
def id_set(con: duckdb.DuckDBPyConnection, ids: Sequence[str] | None) -> Iterator[str]:
    """The name of a relation of `ids` (run ids, configuration keys, names), for `in_ids`; "" for None (every row).
    Registered as an Arrow table while the block runs: binding 100,000 ids as a list parameter (`unnest(?)`) takes
    DuckDB 0.3 s at each use."""
    if ids is None:
        yield ""
        return
    name = f"_ids_{next(_ID_SETS)}"
    con.register(name, pa.table({"id": pa.array(list(ids), pa.string())}))
    try:
        yield name
    finally:
        with contextlib.suppress(duckdb.TransactionException):  # a failed query aborted it: the caller rolls back
            con.unregister(name)


def in_ids(ids: str, column: str) -> str:
    """The condition that `column` is one of the ids of `id_set`'s relation `ids` (TRUE for every row)."""
    return f"{column} IN (SELECT id FROM {ids})" if ids else "TRUE"


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:300] if text else type(e).__name__


def _holder(message: str) -> str:
    marker = "PID"
    at = message.find(marker)
    return message[at:].split(")")[0].strip() if at >= 0 else "see the process list"


