"""The team store: a DuckLake (issue 20) that several runners push to and one explorer reads.

A store URL is either a DuckDB file path (the default, unchanged) or a DuckLake:

    ducklake:sqlite:/srv/joulebench/catalog.sqlite         one machine (the catalog in SQLite)
    ducklake:postgres:dbname=lake host=db.lab port=5432    a team (the catalog in PostgreSQL)

with the Parquet files under a data path (`--data-path`, JOULEBENCH_LAKE_DATA, or for SQLite a
folder beside the catalog). A PostgreSQL password is never part of the URL: libpq reads it from
PGPASSWORD or ~/.pgpass, and the URL shown anywhere is `public_url`, without any `password=`.

The extensions come from PyPI packages that carry the binaries (`duckdb-extension-ducklake`,
`-postgres-scanner`, `-sqlite-scanner`, the same version as duckdb) and are loaded from the
package's folder: nothing is downloaded.

The lake holds the local store's tables with the same columns, made from the migrated schema
(`schema_columns`), without what DuckLake cannot hold (primary keys, unique and check constraints,
sequences): the local DuckDB file stays where every check happens, and a run reaches the lake only
through `db.push`, already validated, graded and with its provenance. A newer JouleBench adds its
columns to the lake (`ensure_schema`); a future migration that rewrites stored values (as 0006 did for
the reference data) needs the same rewrite here, in `_ensure_schema`, for the lake's rows.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb

from db.migrate import apply_migrations, latest_version
from joulebench.errors import DatabaseError

LAKE_PREFIX = "ducklake:"
STORE_ENV_VAR = "JOULEBENCH_STORE"
DATA_ENV_VAR = "JOULEBENCH_LAKE_DATA"
AS_OF_ENV_VAR = "JOULEBENCH_STORE_AS_OF"  # the explorer reads the team store at this snapshot (`app --as-of`)
_CATALOGS = {"sqlite": "sqlite_scanner", "postgres": "postgres_scanner", "duckdb": None}
_PASSWORD = re.compile(r"(?i)\bpassword\s*=\s*\S+")
LAKE_NAME = "lake"


def is_lake(url: str | None) -> bool:
    return bool(url) and str(url).startswith(LAKE_PREFIX)


READ_ONLY_MESSAGE = ("the team store is read-only in the explorer: runs, uploads, labels and catalog edits go into a "
                     "runner machine's own database, then `joulebench push` sends them")


def refuse_write(store: str) -> None:
    """DatabaseError when `store` is a team store: nothing writes to it but `joulebench push`."""
    if is_lake(store):
        raise DatabaseError(READ_ONLY_MESSAGE)


def lake_data_path(given: str | None) -> str | None:
    """--data-path, else $JOULEBENCH_LAKE_DATA, else None (the catalog's default)."""
    return given or os.environ.get(DATA_ENV_VAR) or None


@dataclass(frozen=True)
class LakeUrl:
    url: str
    catalog: str  # sqlite | postgres | duckdb
    data_path: str

    @property
    def remote(self) -> bool:
        """The Parquet files are in S3-compatible object storage (s3://bucket/prefix/)."""
        return self.data_path.startswith("s3://")

    @property
    def public_url(self) -> str:
        """The URL as it may be shown: any password removed."""
        return _PASSWORD.sub("password=***", self.url)

    @classmethod
    def parse(cls, url: str, data_path: str | None = None) -> LakeUrl:
        rest = url[len(LAKE_PREFIX):]
        catalog, _, target = rest.partition(":")
        if catalog not in _CATALOGS or not target:
            raise DatabaseError(f"store {_PASSWORD.sub('password=***', url)!r}: expected ducklake:sqlite:PATH, "
                                "ducklake:postgres:'dbname=... host=...' or ducklake:duckdb:PATH")
        if _PASSWORD.search(url):
            raise DatabaseError("the store URL holds a password: put it in PGPASSWORD or ~/.pgpass instead, so it "
                                "is never shown or logged")
        if data_path is None:
            if catalog == "postgres":
                raise DatabaseError("a PostgreSQL catalog needs a data path for the Parquet files: --data-path or "
                                    "JOULEBENCH_LAKE_DATA (a shared folder or an s3:// prefix)")
            data_path = str(Path(target).with_suffix("")) + ".files/"
        return cls(url, catalog, data_path if data_path.endswith("/") else data_path + "/")


def extension_path(name: str) -> Path:
    """The extension binary a `duckdb-extension-*` package carries for this duckdb version."""
    package = f"duckdb_extension_{name}"
    spec = importlib.util.find_spec(package)
    wanted = f"duckdb-extension-{name.replace('_', '-')}=={duckdb.__version__}"
    if spec is None or not spec.submodule_search_locations:
        raise DatabaseError(f"the {name} extension is not installed: pip install '{wanted}'")
    path = Path(list(spec.submodule_search_locations)[0]) / "extensions" / f"v{duckdb.__version__}" / \
        f"{name}.duckdb_extension"
    if not path.is_file():
        raise DatabaseError(f"the installed {name} extension does not match duckdb {duckdb.__version__}: "
                            f"pip install '{wanted}'")
    return path


def connect(lake: LakeUrl, *, read_only: bool = False, as_of: int | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the lake attached as `lake` and in use; with `as_of`, read-only at that
    snapshot (DuckLake's time travel)."""
    con = duckdb.connect()
    try:
        for name in ("ducklake", _CATALOGS[lake.catalog]):
            if name:
                con.execute(f"LOAD '{extension_path(name)}'")
        if lake.remote:
            _object_store_secret(con, lake)
        options = [f"DATA_PATH {sql_literal(lake.data_path)}"]
        if read_only or as_of is not None:
            options.append("READ_ONLY")
        if as_of is not None:
            options.append(f"SNAPSHOT_VERSION {int(as_of)}")
        for attempt in range(SCHEMA_ATTEMPTS):  # another machine may be creating the catalog right now
            try:
                con.execute(f"ATTACH {sql_literal(lake.url)} AS {LAKE_NAME} ({', '.join(options)})")
                break
            except duckdb.Error as e:
                if attempt + 1 == SCHEMA_ATTEMPTS or not (retryable(e) or "already exists" in str(e)):
                    raise
                time.sleep(0.05 * (attempt + 1))
        con.execute(f"USE {LAKE_NAME}")
    except duckdb.Error as e:
        con.close()
        if as_of is not None and "no snapshot found" in str(e).lower():
            raise DatabaseError(f"store {lake.public_url}: it has no snapshot {as_of}; `joulebench db snapshots "
                                "--store ...` lists them") from e
        raise DatabaseError(f"store {lake.public_url}: cannot open the lake ({e})") from e
    except BaseException:
        con.close()
        raise
    return con


S3_ENV = {"KEY_ID": "AWS_ACCESS_KEY_ID", "SECRET": "AWS_SECRET_ACCESS_KEY", "SESSION_TOKEN": "AWS_SESSION_TOKEN",
          "REGION": "AWS_REGION"}
S3_ENDPOINT_ENV = "AWS_ENDPOINT_URL"  # an S3-compatible server (MinIO, Ceph, a lab's own): http(s)://host:port


def _object_store_secret(con: duckdb.DuckDBPyConnection, lake: LakeUrl) -> None:
    """httpfs loaded and an S3 secret made from the standard AWS variables (never from the URL): the keys,
    an optional session token and region, and for an S3-compatible server its endpoint (path-style URLs,
    TLS as its scheme says)."""
    con.execute(f"LOAD '{extension_path('httpfs')}'")
    given = {k: os.environ[v] for k, v in S3_ENV.items() if os.environ.get(v)}
    if "REGION" not in given and os.environ.get("AWS_DEFAULT_REGION"):
        given["REGION"] = os.environ["AWS_DEFAULT_REGION"]
    if not {"KEY_ID", "SECRET"} <= set(given):
        raise DatabaseError(f"data path {lake.data_path}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and "
                            f"{S3_ENDPOINT_ENV} for an S3-compatible server) in the environment")
    endpoint = os.environ.get(S3_ENDPOINT_ENV, "")
    if endpoint:
        scheme, _, host = endpoint.rpartition("://")
        given["ENDPOINT"] = host.rstrip("/")
        given["URL_STYLE"] = "path"
        given["USE_SSL"] = "false" if scheme == "http" else "true"
    options = ", ".join(f"{k} {v}" if k == "USE_SSL" else f"{k} {sql_literal(v)}" for k, v in given.items())
    con.execute(f"CREATE OR REPLACE TEMPORARY SECRET joulebench_s3 (TYPE s3, {options})")


def sql_literal(text: str) -> str:
    """A SQL string literal (ATTACH and CREATE SECRET take no parameters)."""
    return "'" + text.replace("'", "''") + "'"


def current_snapshot(con: duckdb.DuckDBPyConnection) -> int:
    """The snapshot an attached lake is read at: its newest, or the one `as_of` pinned."""
    row = con.execute(f"SELECT id FROM {LAKE_NAME}.current_snapshot()").fetchone()
    return int(row[0]) if row else 0


@functools.cache
def schema_columns() -> dict[str, list[tuple[str, str]]]:
    """Every table of the migrated local schema and its columns (name, type), in order (once per process:
    the migrations are this JouleBench's)."""
    con = duckdb.connect()
    try:
        apply_migrations(con)
        rows = con.execute("SELECT c.table_name, c.column_name, c.data_type FROM duckdb_columns() c "
                           "JOIN duckdb_tables() t USING (database_name, schema_name, table_name) "
                           "WHERE c.database_name = current_database() AND c.schema_name = 'main' "
                           "ORDER BY c.table_name, c.column_index").fetchall()
    finally:
        con.close()
    out: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in rows:
        out.setdefault(table, []).append((column, kind))
    return out


SCHEMA_ATTEMPTS = 20
# The lake's own tables: which machine pushed each source, and when; and the one row every push deletes and
# re-inserts (db.push), so that two pushes' commits conflict and take turns.
TEAM_TABLES = {
    "pushes": [("content_sha256", "VARCHAR NOT NULL"), ("machine", "VARCHAR NOT NULL"),
               ("pushed_at", "TIMESTAMPTZ NOT NULL"), ("run_count", "INTEGER NOT NULL")],
    "push_lock": [("machine", "VARCHAR"), ("locked_at", "TIMESTAMPTZ")],
}


def retryable(e: BaseException) -> bool:
    """A commit another writer got in first: DuckLake's conflict, or a SQLite catalog locked by another
    process at that moment. Anything else is a real error."""
    text = str(e).lower()
    if "permission denied" in text or "read-only" in text or "read only" in text:
        return False  # no retry makes a role allowed to write
    return isinstance(e, duckdb.TransactionException) or (isinstance(e, duckdb.Error) and "database is locked" in text)


def ensure_schema(con: duckdb.DuckDBPyConnection) -> int:
    """Create the lake's tables, or add the columns newer migrations added; return the schema version.
    Two machines creating a new lake at once: the second's commit conflicts, and it retries (then the
    tables are there). A lake made by a newer JouleBench is refused."""
    for attempt in range(SCHEMA_ATTEMPTS):
        try:
            return _ensure_schema(con)
        except duckdb.Error as e:  # another machine created or altered a table meanwhile: look again
            if not (retryable(e) or (isinstance(e, duckdb.CatalogException) and "already exists" in str(e))):
                raise
            time.sleep(0.05 * (attempt + 1))
    raise DatabaseError(f"the team store's schema could not be set up after {SCHEMA_ATTEMPTS} attempts")


def _ensure_schema(con: duckdb.DuckDBPyConnection) -> int:
    have: dict[str, set[str]] = {}
    for table, column in con.execute(
            "SELECT c.table_name, c.column_name FROM duckdb_columns() c JOIN duckdb_tables() t "
            "USING (database_name, schema_name, table_name) WHERE c.database_name = ?", [LAKE_NAME]).fetchall():
        have.setdefault(table, set()).add(column)
    version = latest_version()
    stored = None
    if "schema_migrations" in have:
        row = con.execute("SELECT max(version) FROM schema_migrations").fetchone()
        stored = row[0] if row else None
    if stored is not None and stored > version:
        raise DatabaseError(f"the team store has schema version {stored}, newer than this JouleBench knows "
                            f"({version}); upgrade JouleBench")
    tables = {**schema_columns(), **TEAM_TABLES}
    missing = {t: [(c, kind) for c, kind in cols if c not in have.get(t, ())] for t, cols in tables.items()}
    if stored == version and not any(missing.values()):
        return version  # as this JouleBench makes it: nothing to commit
    con.execute("BEGIN TRANSACTION")
    try:
        for table, columns in missing.items():
            if table not in have:
                body = ", ".join(f'"{c}" {kind}' for c, kind in columns)
                con.execute(f'CREATE TABLE "{table}" ({body})')
                continue
            for c, kind in columns:
                con.execute(f'ALTER TABLE "{table}" ADD COLUMN "{c}" {kind}')
        if stored is None or stored < version:
            con.execute("DELETE FROM schema_migrations")
            con.execute("INSERT INTO schema_migrations SELECT version, name, now() FROM "
                        "(SELECT unnest(?::INTEGER[]) AS version, 'lake' AS name)", [list(range(1, version + 1))])
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise
    return version


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass  # the failed commit already ended the transaction
