"""Opening the DuckDB file, translating its lock error into DatabaseBusyError."""

from __future__ import annotations

from pathlib import Path

import duckdb

from joulebench.errors import DatabaseBusyError, DatabaseError


def connect(db_path: Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    if read_only and not db_path.exists():
        raise DatabaseError(f"{db_path}: no database here; run any joulebench command without --read-only to create it")
    db_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        con = duckdb.connect(str(db_path), read_only=read_only)
    except duckdb.IOException as e:
        if "lock" in str(e).lower():
            raise DatabaseBusyError(
                f"{db_path} is held by another process ({_holder(str(e))}). Close that process "
                "(the app, or another joulebench command) and try again; result files are queued, not lost."
            ) from e
        raise DatabaseError(f"{db_path}: cannot open the database: {e}") from e
    except duckdb.Error as e:
        raise DatabaseError(f"{db_path}: not a usable DuckDB database: {e}") from e
    con.execute("SET TimeZone = 'UTC'")
    return con


def first_row(con: duckdb.DuckDBPyConnection, sql: str, params: list[object] | None = None) -> tuple | None:
    """The first row of a query, reading the result to its end (DuckDB 2 refuses new work on a
    connection whose last result was not read to the end)."""
    rows = con.execute(sql, params or []).fetchall()
    return rows[0] if rows else None


def _holder(message: str) -> str:
    marker = "PID"
    at = message.find(marker)
    return message[at:].split(")")[0].strip() if at >= 0 else "see the process list"
