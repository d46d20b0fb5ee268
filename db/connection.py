"""Opening the DuckDB file: its lock error becomes DatabaseBusyError, every other failure a
DatabaseError that names the file and what to do (never a DuckDB traceback)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import duckdb

from joulebench.errors import DatabaseBusyError, DatabaseError, os_reason

READ_ONLY_WAIT_S = 2.0  # a reader waits this long for a writer's short transaction to end


def connect(db_path: Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    if read_only and not db_path.exists():
        raise DatabaseError(f"{db_path}: no database here; run any joulebench command without --read-only to create it")
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DatabaseError(f"{db_path.parent}: cannot create the database folder ({os_reason(e)})") from e
    deadline = time.monotonic() + (READ_ONLY_WAIT_S if read_only else 0.0)
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


# What DuckDB says when the file itself is not a readable database (truncated, overwritten, a
# checksum that does not match); anything else is not evidence of damage and is not called so.
_DAMAGE_WORDS = ("not a valid duckdb", "corrupt", "checksum", "could not read enough bytes", "magic bytes",
                 "invalid database", "failed to read database header", "serialization", "deserializ")
_FULL_WORDS = ("no space left on device", "disk full", "not enough space", "enospc")
_DENIED_WORDS = ("permission denied", "read-only file system", "operation not permitted", "eacces", "erofs")


def damaged(db_path: Path, e: BaseException) -> DatabaseError:
    """The error for a database operation that failed, naming its real cause: a full disk or a
    permission (fix those, nothing is lost), a file DuckDB cannot read (truncated, overwritten:
    move it away), or another failure (not called damage)."""
    text = _first_line(e)
    low = str(e).lower()
    if any(w in low for w in _FULL_WORDS):
        return DatabaseError(f"{db_path}: the disk is full ({text}). Free space on the disk that holds it and try "
                             "again; the database keeps what it held, and result files wait in the inbox")
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


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:300] if text else type(e).__name__


def _holder(message: str) -> str:
    marker = "PID"
    at = message.find(marker)
    return message[at:].split(")")[0].strip() if at >= 0 else "see the process list"


