"""The team store: a DuckLake (issue 20) that several runners push to and one explorer reads.

A store URL is either a DuckDB file path (the default, unchanged) or a DuckLake:

    ducklake:sqlite:/srv/joulebench/catalog.sqlite         one machine (the catalog in SQLite)
    ducklake:postgres:dbname=lake host=db.lab port=5432    a team (the catalog in PostgreSQL)

with the Parquet files under a data path (`--data-path`, JOULEBENCH_LAKE_DATA, or for SQLite a
folder beside the catalog). The PostgreSQL part may also be a URI (`ducklake:postgres:postgresql://user@host/lake`).
A password is never part of the URL: libpq reads it from PGPASSWORD or ~/.pgpass. `TeamStore.parse` (and
`check_store` for any store or database named) refuses a password in every form (`password=` with or without
quotes, `user:password@` or `?password=` in a URI, %-encoded or not) and credentials in the data path, with
a message that does not repeat them; `redact` removes secrets from any text that may echo a URL (DuckDB's and
libpq's errors), and the URL shown anywhere is `public_url`. A team store's location, `TeamStore`, is one of
the two kinds of `db.location.StoreLocation`.

The extensions come from PyPI packages that carry the binaries (`duckdb-extension-ducklake`,
`-postgres-scanner`, `-sqlite-scanner`, the same version as duckdb) and are loaded from the
package's folder: nothing is downloaded.

The lake holds the local store's tables with the same columns, made from the migrated schema
(`schema_columns`), without what DuckLake cannot hold (primary keys, unique and check constraints,
sequences): the local DuckDB file stays where every check happens, and a run reaches the lake only
through `db.push`, already validated, graded and with its provenance. A newer JouleBench adds its
columns to the lake (`ensure_schema`); a migration that rewrites stored values needs the same rewrite
here, in `_ensure_schema`, for the lake's rows (0014's move of inter-token figures to ITL: `_move_itl`).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import duckdb

from db.migrate import apply_migrations, latest_version
from db.store_location import DEFAULT_QUERY_LIMIT_S, QUERY_LIMIT_ENV, TEAM, StoreLocation
from joulebench.errors import DatabaseError
from joulebench.metrics import ITL, TPOT

LAKE_PREFIX = "ducklake:"
STORE_ENV_VAR = "JOULEBENCH_STORE"
DATA_ENV_VAR = "JOULEBENCH_LAKE_DATA"
AS_OF_ENV_VAR = "JOULEBENCH_STORE_AS_OF"  # the explorer reads the team store at this snapshot (`app --as-of`)
_CATALOGS = {"sqlite": "sqlite_scanner", "postgres": "postgres_scanner", "duckdb": None}
LAKE_NAME = "lake"
PASSWORD_HOME = ("put it in PGPASSWORD or in ~/.pgpass (a line host:port:dbname:user:password, mode 0600), where "
                 "libpq reads it, and remove it from the URL")
CREDENTIALS_HOME = ("object-store keys go in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_ENDPOINT_URL for an "
                    "S3-compatible server) in the environment; remove them from the path")

# What may hold a secret, found conservatively (a false alarm costs a rewrite of the URL, a miss leaks it):
_SECRET_WORD = r"[\w.-]*(?:passw(?:or)?d|secret|token|signature|credential)[\w.-]*"
_KEY_SECRET = re.compile(r"(?i)password\s*=")  # libpq's password= and sslpassword=, a URI's ?password=
_QUERY_SECRET = re.compile(r"(?i)[?&]" + _SECRET_WORD + "=")
_USERINFO_SECRET = re.compile(r"://[^@]*:.*@", re.S)  # scheme://user:password@host (a password may hold '@', '/')
_URL_LIKE = re.compile(r"(?i)^[a-z][a-z0-9+.-]*://")
# ... and removed from any text: key=value (quoted, escaped or bare), user:password@, SQL's SECRET 'x'
_VALUE = r"""(?:'(?:[^'\\]|\\.)*'?|"(?:[^"\\]|\\.)*"?|[^\s&'"]*)"""
_REDACT_KEY = re.compile(r"(?i)(" + _SECRET_WORD + r")\s*=\s*" + _VALUE)
_REDACT_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@?#'\"]*):[^\n]{0,256}@")
_REDACT_SQL = re.compile(r"(?i)\b(SECRET|KEY_ID|SESSION_TOKEN)\s+'(?:[^']|'')*'")
SECRET_ENV = ("PGPASSWORD", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "JOULEBENCH_APP_PASSWORD")


def redact(text: str) -> str:
    """`text` without any secret it may hold: a store URL's password in any form, credentials in a data path,
    and the values of the secret variables (PGPASSWORD, AWS_SECRET_ACCESS_KEY, ...). For every message that may
    echo a URL (DuckDB's and libpq's errors about attaching)."""
    text = _REDACT_KEY.sub(lambda m: f"{m.group(1)}=***", text)
    text = _REDACT_USERINFO.sub(lambda m: f"{m.group(1)}:***@", text)
    text = _REDACT_SQL.sub(lambda m: f"{m.group(1)} '***'", text)
    for name in SECRET_ENV:
        value = os.environ.get(name, "")
        if len(value) >= 4:  # a shorter one would blank ordinary words
            text = text.replace(value, "***")
    return text


def _secret_in(text: str, *, query_words: bool) -> str | None:
    """Where `text` holds a secret, in words (never the secret); None when it holds none. Also read %-decoded:
    libpq decodes a URI's user, password and parameter names and values."""
    for t in (text, urllib.parse.unquote(text)):
        if _USERINFO_SECRET.search(t):
            return "user:password@ in the URI"
        if _KEY_SECRET.search(t):
            return "password= in it"
        if query_words and _QUERY_SECRET.search(t):
            return "a secret, token or signature in the query"
    return None


def _conninfo_keywords(text: str) -> list[str]:
    """The keywords of a libpq key=value connection string (values may be 'quoted', with \\' and \\\\ escapes);
    DatabaseError, naming no value, when it is not one."""
    keywords: list[str] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i == n:
            return keywords
        start = i
        while i < n and not text[i].isspace() and text[i] != "=":
            i += 1
        keyword = text[start:i]
        while i < n and text[i].isspace():
            i += 1
        if not keyword or i == n or text[i] != "=":  # the word is not named: it may be a pasted secret
            raise DatabaseError(f"the PostgreSQL connection string: its word {len(keywords) + 1} is not keyword=value; "
                                "write ducklake:postgres:'dbname=lake host=HOST' or ducklake:postgres:"
                                "postgresql://USER@HOST/lake")
        i += 1
        while i < n and text[i].isspace():
            i += 1
        quoted = i < n and text[i] == "'"
        i += quoted
        while i < n and (quoted or not text[i].isspace()):
            if text[i] == "\\":
                i += 1
            elif quoted and text[i] == "'":
                break
            i += 1
        if quoted:
            if i >= n:
                raise DatabaseError(f"the PostgreSQL connection string: the value of {keyword[:40]!r} opens a quote "
                                    "and never closes it")
            i += 1
        keywords.append(keyword)


def check_store(text: str, what: str = "the store URL") -> None:
    """Refuse a store or database name (`what`: where it was given) that holds a password, or that is a URL but
    not a team store's (a DuckDB file is a path): before it is used, printed or stored, with a message that does
    not repeat it."""
    where = _secret_in(text, query_words=False)
    if where:
        raise DatabaseError(f"{what} holds a password: {PASSWORD_HOME}; a URL is shown and logged, a password "
                            f"never is (found: {where})")
    if not is_lake(text) and _URL_LIKE.match(text):
        raise DatabaseError(f"{what} {redact(text)[:200]!r}: a store is a DuckDB file or a team store URL: "
                            "ducklake:postgres:postgresql://USER@HOST/lake, ducklake:postgres:'dbname=... host=...' "
                            "or ducklake:sqlite:PATH")


def is_lake(url: str | None) -> bool:
    """Whether a store's name is a team store's URL: the one test of the text (`db.location.locate`, and
    `check_store` before any use)."""
    return bool(url) and str(url).startswith(LAKE_PREFIX)


READ_ONLY_MESSAGE = ("the team store is read-only in the explorer: runs, uploads, labels and catalog edits go into a "
                     "runner machine's own database, then `joulebench push` sends them")


def lake_data_path(given: str | None) -> str | None:
    """--data-path, else $JOULEBENCH_LAKE_DATA, else None (the catalog's default)."""
    return given or os.environ.get(DATA_ENV_VAR) or None


@dataclass(frozen=True)
class TeamStore(StoreLocation):
    """A team store's location (db.location): its URL, catalog kind and data path, parsed once by `parse`."""

    url: str
    catalog: str  # sqlite | postgres | duckdb
    data_path: str
    kind: ClassVar[str] = TEAM
    read_only_reason: ClassVar[str | None] = READ_ONLY_MESSAGE
    pushes_sql: ClassVar[str] = ("SELECT content_sha256, min(machine) AS machine, min(pushed_at) AS pushed_at "
                                 "FROM pushes GROUP BY content_sha256")

    @property
    def remote(self) -> bool:
        """The Parquet files are in S3-compatible object storage (s3://bucket/prefix/)."""
        return self.data_path.startswith("s3://")

    @property
    def public_url(self) -> str:
        """The URL as it may be shown (`parse` refused any password; redacted all the same)."""
        return redact(self.url)

    @property
    def shown(self) -> str:
        return self.public_url

    def query_limit_s(self) -> float | None:
        """$JOULEBENCH_STORE_QUERY_LIMIT_S (seconds, above 0), else DEFAULT_QUERY_LIMIT_S: the catalog server and
        the data path are across a network, and a page must not wait on them for ever."""
        given = os.environ.get(QUERY_LIMIT_ENV, "").strip()
        if not given:
            return DEFAULT_QUERY_LIMIT_S
        try:
            value = float(given)
        except ValueError:
            value = -1.0
        if not 0 < value < float("inf"):
            raise DatabaseError(f"${QUERY_LIMIT_ENV}={given[:40]!r}: give the seconds a team store's query may "
                                "take, a number above 0")
        return value

    def connect_reading(self, as_of: int | None = None) -> tuple[duckdb.DuckDBPyConnection, int | None]:
        con = connect(self, read_only=True, as_of=as_of)
        try:
            return con, current_snapshot(con)
        except BaseException:
            con.close()
            raise

    def schema_problem(self, version: int) -> str | None:
        if version == 0:
            return (f"{self.public_url}: no JouleBench team store here yet; push to it first "
                    "(`joulebench push --store ...`)")
        if version != latest_version():
            return (f"{self.public_url}: schema version {version}, this JouleBench uses {latest_version()}; push to "
                    "it once with this JouleBench to upgrade it")
        return None

    @classmethod
    def parse(cls, url: str, data_path: str | None = None) -> TeamStore:
        """The one reading of a team store's URL (--store, $JOULEBENCH_STORE) and data path, before either is
        used (`db.location.locate` calls it): DatabaseError for a password or credentials in any form, a catalog
        it does not know, or a PostgreSQL catalog without a data path; the messages never repeat a secret."""
        check_store(url)
        rest = url[len(LAKE_PREFIX):]
        catalog, _, target = rest.partition(":")
        if catalog not in _CATALOGS or not target:
            raise DatabaseError(f"store {redact(url)[:200]!r}: expected ducklake:sqlite:PATH, "
                                "ducklake:postgres:'dbname=... host=...' (or ducklake:postgres:postgresql://USER@HOST/"
                                "DB) or ducklake:duckdb:PATH")
        if catalog == "postgres" and not _URL_LIKE.match(target.strip()):
            _conninfo_keywords(target)
        where = _secret_in(data_path or "", query_words=True)
        if where:
            raise DatabaseError(f"the data path holds credentials ({where}); they would be shown and logged: "
                                f"{CREDENTIALS_HOME}")
        if data_path is None:
            if catalog == "postgres":
                raise DatabaseError("a PostgreSQL catalog needs a data path for the Parquet files: --data-path or "
                                    "JOULEBENCH_LAKE_DATA (a shared folder or an s3:// prefix)")
            data_path = str(Path(target).with_suffix("")) + ".files/"
        return cls(url, catalog, data_path if data_path.endswith("/") else data_path + "/")


LakeUrl = TeamStore  # its former name, which the tests and benchmarks use


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


def connect(lake: TeamStore, *, read_only: bool = False, as_of: int | None = None) -> duckdb.DuckDBPyConnection:
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
            if int(as_of) < 0:  # not a snapshot: DuckLake's own error is a cast error
                raise DatabaseError(_no_snapshot(lake, as_of))
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
            raise DatabaseError(_no_snapshot(lake, as_of)) from e
        raise DatabaseError(f"store {lake.public_url}: cannot open the lake ({redact(str(e))})") from e
    except BaseException:
        con.close()
        raise
    return con


def _no_snapshot(lake: TeamStore, as_of: int) -> str:
    """Why `--as-of` cannot be read, with the snapshots the store holds (its newest, read-only)."""
    held = ""
    try:
        con = connect(lake, read_only=True)
        try:
            row = con.execute(f"SELECT min(snapshot_id), max(snapshot_id) FROM {LAKE_NAME}.snapshots()").fetchone()
        finally:
            con.close()
        if row and row[0] is not None:
            held = f": it holds snapshots {row[0]} to {row[1]}"
            if 0 <= as_of < row[0]:
                held += " (older ones were expired by `joulebench db upkeep`)"
    except DatabaseError:
        pass  # the store cannot be read at all: the message says what it can
    what = f"it has no snapshot {as_of}" if as_of >= 0 else \
        f"--as-of {as_of} is not a snapshot (a snapshot is 0 or more)"
    return f"store {lake.public_url}: {what}{held}; `joulebench db snapshots --store ...` lists them"


S3_ENV = {"KEY_ID": "AWS_ACCESS_KEY_ID", "SECRET": "AWS_SECRET_ACCESS_KEY", "SESSION_TOKEN": "AWS_SESSION_TOKEN",
          "REGION": "AWS_REGION"}
S3_ENDPOINT_ENV = "AWS_ENDPOINT_URL"  # an S3-compatible server (MinIO, Ceph, a lab's own): http(s)://host:port


def _object_store_secret(con: duckdb.DuckDBPyConnection, lake: TeamStore) -> None:
    """httpfs loaded and an S3 secret made from the standard AWS variables (never from the URL): the keys,
    an optional session token and region, and for an S3-compatible server its endpoint (path-style URLs,
    TLS as its scheme says)."""
    con.execute(f"LOAD '{extension_path('httpfs')}'")
    given = {k: os.environ[v] for k, v in S3_ENV.items() if os.environ.get(v)}
    if "REGION" not in given and os.environ.get("AWS_DEFAULT_REGION"):
        given["REGION"] = os.environ["AWS_DEFAULT_REGION"]
    if not {"KEY_ID", "SECRET"} <= set(given):
        raise DatabaseError(f"data path {redact(lake.data_path)}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and "
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
    if any(word in text for word in _NOT_A_CONFLICT):
        return False  # no retry makes a role allowed to write, or a file or folder writable
    return isinstance(e, duckdb.TransactionException) or (isinstance(e, duckdb.Error) and "database is locked" in text)


# A refusal, not another writer: PostgreSQL's "permission denied for table", SQLite's "attempt to write a readonly
# database", a file system's EACCES / EROFS / ENOSPC / EDQUOT.
_NOT_A_CONFLICT = ("permission denied", "read-only", "read only", "readonly", "no space left", "quota exceeded")
_FILE_ERROR = re.compile(r'"([^"]+)": (Permission denied|Read-only file system|No space left on device|'
                         r'Disk quota exceeded)')
_FILE_FIX = {
    "Permission denied": "this user may not write there: give it write access to the data folder (every pusher "
                         "writes Parquet files in it, e.g. a shared group with g+w and the setgid bit), or run as a "
                         "user that has it",
    "Read-only file system": "it is mounted read-only on this machine: mount it read-write",
    "No space left on device": "its disk is full: free space there (`joulebench db upkeep` removes files no "
                               "snapshot needs) or move the data path",
    "Disk quota exceeded": "this user's disk quota there is used up: free space or raise the quota",
}


def refusal(e: BaseException, lake: TeamStore, doing: str) -> BaseException:
    """A refused write as the project's error naming the real cause and its fix: the data folder (not writable,
    read-only, full), a read-only SQLite catalog file, or a catalog role that may only read. Anything not a
    database error (Ctrl-C, a bug) as it is."""
    if not isinstance(e, duckdb.Error):
        return e
    text = " ".join(redact(str(e)).split()) or type(e).__name__
    lowered = text.lower()
    found = _FILE_ERROR.search(text)
    if found:
        path, reason = found.groups()
        folder = str(Path(path).parent) + "/" if path.endswith(".parquet") else path
        where = "the team store's data folder" if path.startswith(lake.data_path.rstrip("/")) else "a file"
        return DatabaseError(f"{doing}: cannot write {where} {folder} ({reason}): {_FILE_FIX[reason]}")
    if "readonly database" in lowered or "read-only database" in lowered:
        catalog = lake.url[len(LAKE_PREFIX):].partition(":")[2] if lake.catalog != "postgres" else ""
        if catalog:
            return DatabaseError(f"{doing}: the team store's catalog file {catalog} is read-only for this user (this "
                                 "is not another machine pushing): give this user write access to the file and to "
                                 "its folder (SQLite writes a journal beside it), e.g. chmod u+w or a shared group "
                                 "with g+w")
    if "permission denied" in lowered:
        return DatabaseError(f"{doing}: the team store refused the write: permission denied for its catalog; this "
                             f"role may only read it (the explorer's): {doing} with a role that may write")
    return DatabaseError(f"{doing}: the team store refused the write: {text[:600]}")


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
        if stored is not None and stored < ITL_VERSION <= version and "runs" in have:
            _move_itl(con)
        if stored is None or stored < version:
            con.execute("DELETE FROM schema_migrations")
            con.execute("INSERT INTO schema_migrations SELECT version, name, now() FROM "
                        "(SELECT unnest(?::INTEGER[]) AS version, 'lake' AS name)", [list(range(1, version + 1))])
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise
    return version


ITL_VERSION = 14  # db/migrations/0014_itl_and_serving.sql: inter-token figures stored as TPOT move to ITL
_MOVED_TO_ITL = ("origin_kind = 'local' OR origin_tool = 'joulebench' OR (origin_format = 'mlenergy-leaderboard' "
                 "AND origin_tool_version = 'v3') OR origin_format = 'optimum-benchmark'")


def _move_itl(con: duckdb.DuckDBPyConnection) -> None:
    """Migration 0014's rewrite on a lake's rows: the sources whose inter-token figure is ITL (the
    migration names them) have it moved out of tpot_*, and their configurations' aggregates renamed
    with it (a lake's aggregates are pushed, not rebuilt, so they are renamed rather than dropped)."""
    tpot = [m for m in TPOT.metrics()]
    itl = {m.name.removeprefix("itl_"): m.name for m in ITL.metrics()}
    sets = ", ".join(f'"{itl[m.name.removeprefix("tpot_")]}" = "{m.name}"' for m in tpot)
    nulls = ", ".join(f'"{m.name}" = NULL' for m in tpot)
    held = " OR ".join(f'"{m.name}" IS NOT NULL' for m in tpot)
    moved = f"SELECT DISTINCT config_key FROM runs WHERE ({_MOVED_TO_ITL}) AND ({held})"
    con.execute(f"UPDATE config_stats SET metric = replace(metric, 'tpot_', 'itl_') "
                f"WHERE metric LIKE 'tpot%' AND config_key IN ({moved})")
    con.execute(f"UPDATE runs SET {sets}, {nulls} WHERE ({_MOVED_TO_ITL}) AND ({held})")


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass  # the failed commit already ended the transaction
