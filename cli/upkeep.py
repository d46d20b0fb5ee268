"""`joulebench db upkeep`: a team store's maintenance (db.upkeep) and the lines a person reads about it."""

from __future__ import annotations

import argparse
from typing import Any

from db.lake import STORE_ENV_VAR
from ingest.stores import target, team_store

DESCRIPTION = (
    "Keep a team store (a DuckLake) small and fast, as DuckLake documents: merge the small Parquet files pushes "
    "write, expire snapshots older than a retention the team sets (none by default: every snapshot stays readable "
    "with --as-of), remove the files no snapshot needs any more and those no snapshot references (what a killed "
    "push wrote before its commit). It takes the pushes' lock, so a push running meanwhile retries and loses "
    "nothing. Files are removed once they are older than --grace-minutes. Run it from cron on one machine, e.g. "
    "nightly, with a role that may write.")


def add_db_subcommand(dbsub: Any) -> None:
    """`db upkeep` under `joulebench db`."""
    from db.upkeep import DEFAULT_GRACE_MINUTES

    q = dbsub.add_parser("upkeep", help="a team store's maintenance: merge small files, expire old snapshots, "
                                        "remove unreferenced files", description=DESCRIPTION)
    q.add_argument("--store", help=f"the team store, ducklake:sqlite:PATH or ducklake:postgres:'dbname=... host=...' "
                                   f"(default: ${STORE_ENV_VAR})")
    q.add_argument("--data-path", help="where its Parquet files live (default: $JOULEBENCH_LAKE_DATA; for SQLite, "
                                       "beside the catalog)")
    q.add_argument("--keep-snapshots-days", type=_days, metavar="DAYS",
                   help="expire snapshots older than this many days (--as-of cannot read them afterwards; the newest "
                        "is always kept); default: expire none")
    q.add_argument("--grace-minutes", type=_minutes, default=DEFAULT_GRACE_MINUTES, metavar="MINUTES",
                   help="remove a file only once it is this old (default: %(default)s): a reader may still scan a "
                        "merged-away file, and another upkeep's merge may be writing; 0 when nothing else runs")
    q.add_argument("--dry-run", action="store_true", help="change nothing; list what would be expired and removed "
                                                          "(the merge is not run)")
    q.set_defaults(func=cmd_db_upkeep, db=None)


def _days(text: str) -> float:
    return _non_negative(text, "days")


def _minutes(text: str) -> float:
    return _non_negative(text, "minutes")


def _non_negative(text: str, unit: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text[:40]!r}: give a number of {unit}, 0 or more")
    return value


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:,} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def cmd_db_upkeep(args: argparse.Namespace) -> int:
    from db.upkeep import upkeep

    lake = team_store(target(args), "upkeep is a team store's (a DuckDB file needs none)", args.store)
    if lake is None:
        return 2
    print(f"{'dry run: ' if args.dry_run else ''}upkeep of team store {lake.public_url} (data: {lake.data_path})",
          flush=True)
    report = upkeep(lake, keep_snapshots_days=args.keep_snapshots_days, grace_minutes=args.grace_minutes,
                    dry_run=args.dry_run)
    would = "would be " if report.dry_run else ""
    rows = [
        ("files merged", "not run in a dry run" if report.dry_run else
         f"{report.files_merged} small file(s) into {report.files_written}" if report.files_merged
         else "none to merge"),
        ("snapshots expired", f"{would}{len(report.snapshots_expired)}"
         + (f" ({_ids(report.snapshots_expired)})" if report.snapshots_expired else "")
         + ("" if args.keep_snapshots_days is not None else " (no --keep-snapshots-days: every snapshot is kept)")),
        ("old files removed", f"{would}{len(report.old_files_removed)} (merged away or only in expired snapshots)"),
        ("orphaned files removed", f"{would}{len(report.orphans_removed)} (in no snapshot: failed or killed pushes)"),
        ("bytes freed", f"{would}{_size(report.bytes_freed)}"),
        ("Parquet files", f"{report.files_before.count} ({_size(report.files_before.bytes)}) before, "
                          f"{report.files_after.count} ({_size(report.files_after.bytes)}) after"),
        ("snapshots held", "none" if report.snapshots_left is None else
         f"{report.snapshots_left[0]} to {report.snapshots_left[1]}"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key + ':':<{width + 2}}{value}")
    print(f"done in {report.seconds:.1f} s; {report.retries} retried commit(s)" + (
        f"; files newer than {args.grace_minutes:g} min are left for the next upkeep" if args.grace_minutes else ""))
    return 0


def _ids(ids: list[int]) -> str:
    ordered = sorted(ids)
    return ", ".join(map(str, ordered)) if len(ordered) <= 6 else f"from {ordered[0]} to {ordered[-1]}"
