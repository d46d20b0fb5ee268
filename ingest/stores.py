"""`--store` for every command (the CLI and the runner): which store a command reads, and where the runs it adds go.

`--store` (default $JOULEBENCH_STORE) is a DuckDB file (the same as `--db`) or a team store, a
DuckLake URL (db.lake). With a team store:

- commands that read (`db info`, `export`, `recommend`, `app`) read it, read-only, at its newest
  snapshot or at `--as-of SNAPSHOT`; an explicit `--db` beats $JOULEBENCH_STORE, so a runner with
  the variable set still reaches its own file;
- commands that add runs or labels (`run`, `idle`, `import`, `label`) write this machine's own
  file first, where every check happens and nothing is lost when the store cannot be reached, then
  push it (db.push). A failed push says so and leaves the runs for `joulebench push`.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from db import Store
from db.lake import STORE_ENV_VAR, LakeUrl, check_store, is_lake, lake_data_path
from db.push import push
from ingest.service import open_store
from joulebench.errors import DatabaseError, JouleBenchError
from joulebench.paths import resolve_db_path


def add_store_arguments(p: argparse.ArgumentParser, db_help: str, *, reads: bool) -> None:
    """--db, --store and --data-path (and --as-of for a command that reads)."""
    p.add_argument("--db", help=db_help)
    p.add_argument("--store", help="a DuckDB file (as --db) or a team store, ducklake:sqlite:PATH or "
                                   "ducklake:postgres:'dbname=... host=...' (default: $" + STORE_ENV_VAR + "); "
                   + ("a team store is read, read-only" if reads else
                      "with a team store this machine's file is written first, then pushed to it"))
    p.add_argument("--data-path", help="where the team store's Parquet files live: a shared folder or an s3:// "
                                       "prefix (default: $JOULEBENCH_LAKE_DATA; for SQLite, beside the catalog)")
    if reads:
        p.add_argument("--as-of", type=snapshot_number, metavar="SNAPSHOT",
                       help="read the team store as it was at this snapshot (`joulebench db snapshots` lists them)")


def snapshot_number(text: str) -> int:
    """--as-of: a whole number (a negative one, or one the store lacks, is refused when the store is opened, with
    the snapshots it holds: db.lake.connect)."""
    try:
        return int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a snapshot number (0 or more), as `joulebench db "
                                         "snapshots --store URL` lists them") from None


@dataclass(frozen=True)
class Target:
    db: str | None  # this machine's DuckDB file (None: $JOULEBENCH_DB or the default)
    lake: str | None  # the team store's URL, when there is one
    data_path: str | None
    reads_lake: bool  # a read command reads the team store (not an explicit --db over $JOULEBENCH_STORE)
    as_of: int | None = None

    def open_lake(self) -> Store:
        assert self.lake is not None
        return Store.open_team_store(self.lake, data_path=self.data_path, as_of=self.as_of)

    def lake_url(self) -> LakeUrl:
        assert self.lake is not None
        return LakeUrl.parse(self.lake, lake_data_path(self.data_path))


def target(args: argparse.Namespace) -> Target:
    """The store the command's flags and the environment choose. DatabaseError for a bad team-store URL (a
    password in it, no data path for PostgreSQL) or two different files named."""
    given = getattr(args, "store", None)
    store = given if given is not None else os.environ.get(STORE_ENV_VAR) or None
    as_of = getattr(args, "as_of", None)
    data_path = getattr(args, "data_path", None)
    if store is not None:  # before anything prints or uses it: a password in any form is refused
        check_store(store, "--store" if given is not None else f"${STORE_ENV_VAR}")
    if getattr(args, "db", None) is not None:
        check_store(str(args.db), "--db")
    if is_lake(store):
        assert store is not None
        LakeUrl.parse(store, lake_data_path(data_path))  # refuses a password, or PostgreSQL without a data path
        reads_lake = given is not None or args.db is None
        if as_of is not None and not reads_lake:
            raise DatabaseError("--as-of reads a team store's snapshot, and --db names a file; give --store URL")
        return Target(args.db, store, data_path, reads_lake, as_of)
    if as_of is not None:
        raise DatabaseError("--as-of reads a team store's snapshot: give --store ducklake:... (or $"
                            f"{STORE_ENV_VAR})")
    if given is not None and args.db is not None and Path(given).expanduser() != Path(args.db).expanduser():
        raise DatabaseError(f"--store {given} and --db {args.db} name two files; give one")
    return Target(args.db or store, None, data_path, False)


def open_for_reading(args: argparse.Namespace) -> Store:
    """The team store (read-only) when one is chosen, else this machine's file (opened, migrated and its
    inbox ingested)."""
    chosen = target(args)
    return chosen.open_lake() if chosen.reads_lake else open_store(chosen.db)


def team_store(chosen: Target, what: str, given: str | None) -> LakeUrl | None:
    """The team store of a command that works on one only (push, upkeep), or None once it has said on stderr
    that `given` (the --store text, if any) is not one; `what` starts the sentence ('push sends runs to a
    team store')."""
    if chosen.lake is not None:
        return chosen.lake_url()
    print(f"error: --store: {what}, a DuckLake: ducklake:sqlite:PATH or ducklake:postgres:'dbname=... host=...' "
          f"(or ${STORE_ENV_VAR}); got {given or 'nothing'}", file=sys.stderr)
    return None


def push_after_write(chosen: Target, machine: str | None = None) -> int:
    """After a command added to this machine's file: push it to the team store, when one is chosen. 0 when
    pushed or when there is none; the error's exit code when the push failed (the runs stay local)."""
    if chosen.lake is None:
        return 0
    lake = chosen.lake_url()
    local = resolve_db_path(chosen.db)
    try:
        report = push(local, lake, machine=machine)
    except JouleBenchError as e:
        print(f"error: team store {lake.public_url}: not pushed: {e.format_message()}\nthe runs are kept in "
              f"{local}; `joulebench push --db {local}` sends them when the store can be reached", file=sys.stderr)
        return e.exit_code
    print(f"team store {lake.public_url}: pushed {report.runs_pushed} run(s) as {report.machine}"
          + (f", {report.runs_relabelled} run(s) relabelled" if report.runs_relabelled else "")
          + (f", {report.catalog_edits_pushed} catalog edit(s)" if report.catalog_edits_pushed else ""))
    return 0
