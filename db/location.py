"""Where a store is, and so what kind it is: chosen once, from the name a person gave, by `locate`.

A store is a DuckDB file on this machine (`LocalFile`, kind 'local') or a team store, a DuckLake several
runners push to (`db.lake.TeamStore`, kind 'team'). Every command and page gets its store's type from
`locate` and asks it, never the name again: how to open it for reading, what it is called on screen, whether
anything but `joulebench push` may write it, how long a query may take. Both kinds are read through the same
queries: each reading connection gets the same two views (`reading_views`), whose definitions are the only
place the kinds differ:

- `store_sources`: the sources with `shown_kind`, the word every command and page shows for a source's kind;
  a runner's own runs ('local' where they were measured) read as the store's kind, so 'team' in a team store;
- `source_pushes`: which machine pushed each source and when (a file was pushed by no one: empty).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import duckdb

from db.connection import connect
from db.lake import TeamStore, is_lake, lake_data_path
from db.migrate import latest_version
from db.store_location import LOCAL, StoreLocation
from joulebench.errors import DatabaseError
from joulebench.paths import resolve_db_path


@dataclass(frozen=True)
class LocalFile(StoreLocation):
    """A DuckDB file on this machine."""

    path: Path
    kind: ClassVar[str] = LOCAL

    @property
    def shown(self) -> str:
        return str(self.path)

    @property
    def file(self) -> Path:
        return self.path

    def connect_reading(self, as_of: int | None = None) -> tuple[duckdb.DuckDBPyConnection, int | None]:
        if as_of is not None:
            raise DatabaseError(f"{self.path}: --as-of reads a team store's snapshot; a DuckDB file keeps none")
        return connect(self.path, read_only=True), None

    def schema_problem(self, version: int) -> str | None:
        if version == latest_version():
            return None
        return (f"{self.path}: schema version {version}, this JouleBench uses {latest_version()}; "
                "run `joulebench db info` (or restart the app) to migrate it")


def locate(store: str | os.PathLike[str] | StoreLocation | None, data_path: str | None = None) -> StoreLocation:
    """The one reading of a store's name: a team store's URL (ducklake:..., with `data_path`, default
    $JOULEBENCH_LAKE_DATA) parsed once into a TeamStore (DatabaseError for a password or a bad URL, naming
    neither), anything else a DuckDB file (None: $JOULEBENCH_DB or the per-user default)."""
    if isinstance(store, StoreLocation):
        return store
    text = os.fspath(store) if store is not None else None
    if is_lake(text):
        assert text is not None
        return TeamStore.parse(text, lake_data_path(data_path))
    return LocalFile(resolve_db_path(text))


def reading_views(con: duckdb.DuckDBPyConnection, location: StoreLocation) -> None:
    """The views every query reads the sources through (see the module's docstring); temporary, so a
    read-only connection gets them too and nothing is written."""
    con.execute("CREATE OR REPLACE TEMP VIEW store_sources AS SELECT *, CASE kind WHEN 'local' THEN "
                f"'{location.kind}' ELSE kind END AS shown_kind FROM sources")
    con.execute(f"CREATE OR REPLACE TEMP VIEW source_pushes AS {location.pushes_sql}")


def as_team_store(location: StoreLocation) -> TeamStore | None:
    """The location as a team store, or None for a file."""
    return location if isinstance(location, TeamStore) else None
