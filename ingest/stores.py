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
from db.lake import STORE_ENV_VAR, TeamStore, check_store
from db.location import LocalFile, as_team_store, locate
from db.push import push
from db.store_location import StoreLocation
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
    """The stores a command's flags and the environment chose, each located once (db.location)."""

    db: str | None  # this machine's DuckDB file as given (None: $JOULEBENCH_DB or the default)
    team: TeamStore | None  # the team store, when one is chosen: where the runs a command adds are pushed
    reads: StoreLocation  # what a command that reads reads: the team store, or an explicit --db over $JOULEBENCH_STORE
    as_of: int | None = None

    def open_reading(self, *, prepare_file: bool = True) -> Store:
        """The store a read command reads: a team store read-only (at --as-of); this machine's file opened
        read-write first (created, migrated and its inbox ingested) when `prepare_file` or when it does not
        exist yet, else read-only."""
        if as_team_store(self.reads) is None and (prepare_file or not self.reads.file.exists()):
            return open_store(self.db)
        return Store.open_reading(self.reads, as_of=self.as_of)


def target(args: argparse.Namespace) -> Target:
    """The store the command's flags and the environment choose. DatabaseError for a bad team-store URL (a
    password in it, no data path for PostgreSQL) or two different files named."""
    given = getattr(args, "store", None)
    store = given if given is not None else os.environ.get(STORE_ENV_VAR) or None
    as_of = getattr(args, "as_of", None)
    if store is not None:  # before anything prints or uses it: a password in any form is refused
        check_store(store, "--store" if given is not None else f"${STORE_ENV_VAR}")
    if getattr(args, "db", None) is not None:
        check_store(str(args.db), "--db")
    # the one reading of the name: refuses a password, or PostgreSQL without a data path
    team = as_team_store(locate(store, getattr(args, "data_path", None))) if store is not None else None
    if team is not None:
        reads_team = given is not None or args.db is None
        if as_of is not None and not reads_team:
            raise DatabaseError("--as-of reads a team store's snapshot, and --db names a file; give --store URL")
        return Target(args.db, team, team if reads_team else LocalFile(resolve_db_path(args.db)), as_of)
    if as_of is not None:
        raise DatabaseError("--as-of reads a team store's snapshot: give --store ducklake:... (or $"
                            f"{STORE_ENV_VAR})")
    if given is not None and args.db is not None and Path(given).expanduser() != Path(args.db).expanduser():
        raise DatabaseError(f"--store {given} and --db {args.db} name two files; give one")
    db = args.db or store
    return Target(db, None, LocalFile(resolve_db_path(db)))


def open_for_reading(args: argparse.Namespace) -> Store:
    """The team store (read-only) when one is chosen, else this machine's file (opened, migrated and its
    inbox ingested)."""
    return target(args).open_reading()


def team_store(chosen: Target, what: str, given: str | None) -> TeamStore | None:
    """The team store of a command that works on one only (push, upkeep), or None once it has said on stderr
    that `given` (the --store text, if any) is not one; `what` starts the sentence ('push sends runs to a
    team store')."""
    if chosen.team is not None:
        return chosen.team
    print(f"error: --store: {what}, a DuckLake: ducklake:sqlite:PATH or ducklake:postgres:'dbname=... host=...' "
          f"(or ${STORE_ENV_VAR}); got {given or 'nothing'}", file=sys.stderr)
    return None


def push_after_write(chosen: Target, machine: str | None = None) -> int:
    """After a command added to this machine's file: push it to the team store, when one is chosen. 0 when
    pushed or when there is none; the error's exit code when the push failed (the runs stay local)."""
    lake = chosen.team
    if lake is None:
        return 0
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
