"""What every store location is (`StoreLocation`), whichever kind: the interface `db.location.LocalFile` and
`db.lake.TeamStore` implement, and the kind words. Apart from `db.location` so that the team store's module
can implement it without importing the module that chooses between the kinds."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar

import duckdb

from joulebench.errors import DatabaseError

LOCAL, TEAM = "local", "team"  # the kind words: a store's, and its runners' own runs' as every page shows them
QUERY_LIMIT_ENV = "JOULEBENCH_STORE_QUERY_LIMIT_S"  # seconds a query on a team store may take
DEFAULT_QUERY_LIMIT_S = 120.0


class StoreLocation(ABC):
    """A store's location: a `LocalFile` or a `TeamStore`; `locate` makes one."""

    kind: ClassVar[str]  # LOCAL or TEAM
    read_only_reason: ClassVar[str | None] = None  # why only `joulebench push` writes it (None: it may be written)
    # who pushed each source (content_sha256, machine, pushed_at): the view `source_pushes`
    pushes_sql: ClassVar[str] = ("SELECT NULL::VARCHAR AS content_sha256, NULL::VARCHAR AS machine, "
                                 "NULL::TIMESTAMPTZ AS pushed_at WHERE false")

    @property
    @abstractmethod
    def shown(self) -> str:
        """The location as it may be shown and logged: the file's path, or the URL without any password."""

    @property
    def file(self) -> Path:
        """The DuckDB file (DatabaseError for a team store, which has none on this machine)."""
        raise DatabaseError(f"{self.shown}: a {self.kind} store has no database file on this machine")

    def refuse_write(self) -> None:
        """DatabaseError when nothing but `joulebench push` may write this store."""
        if self.read_only_reason:
            raise DatabaseError(self.read_only_reason)

    def query_limit_s(self) -> float | None:
        """How long one query may run (None: as long as it takes)."""
        return None

    @abstractmethod
    def connect_reading(self, as_of: int | None = None) -> tuple[duckdb.DuckDBPyConnection, int | None]:
        """A read-only connection, and the snapshot it reads (None for a store without snapshots)."""

    @abstractmethod
    def schema_problem(self, version: int) -> str | None:
        """What is wrong with a store at schema `version` for this JouleBench, and what to do (None: nothing)."""

    def describe(self) -> str:
        """'local file PATH' / 'team store URL': the kind word first, as every command and page says it."""
        return f"{self.kind} {'file' if self.kind == LOCAL else 'store'} {self.shown}"
