"""Versioned schema migrations: db/migrations/NNNN_name.sql, applied in order.

Each migration and the row that records it commit in one transaction, so a failing migration
leaves nothing behind and applying twice changes nothing; each is checkpointed into the file as
soon as it commits. A new database is migrated in a temporary file (`db.connection.create_whole`).
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

from joulebench.errors import DatabaseError

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def available_migrations() -> list[Migration]:
    found = []
    for path in sorted(MIGRATIONS_DIR.glob("*.sql")):
        m = _NAME.match(path.name)
        if not m:
            raise DatabaseError(f"migration file {path.name} is not named NNNN_name.sql")
        found.append(Migration(int(m.group(1)), m.group(2), path.read_text()))
    return found


def latest_version() -> int:
    return max(m.version for m in available_migrations())


def applied_versions(con: duckdb.DuckDBPyConnection) -> set[int]:
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL)"
    )
    return {row[0] for row in con.execute("SELECT version FROM schema_migrations").fetchall()}


def apply_migrations(con: duckdb.DuckDBPyConnection) -> list[int]:
    """Apply every migration not yet applied; return the versions applied now."""
    done = applied_versions(con)
    newest = latest_version()
    if done and max(done) > newest:
        raise DatabaseError(
            f"the database has schema version {max(done)}, newer than this JouleBench knows ({newest}); "
            "upgrade JouleBench"
        )
    applied = []
    for migration in available_migrations():
        if migration.version in done:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(migration.sql)
            con.execute(
                "INSERT INTO schema_migrations VALUES (?, ?, now())", [migration.version, migration.name]
            )
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
        # into the file now, not left in the write-ahead log: DuckDB 1.5 cannot replay a logged ALTER of a
        # table whose column default calls a function (sources, intake_log), so a kill here would leave a
        # database that does not open
        with contextlib.suppress(duckdb.TransactionException):  # another connection's transaction: at close
            con.execute("CHECKPOINT")
        applied.append(migration.version)
    return applied
