"""`joulebench device-name`: the device names met in imports and the catalog entry each is stored under;
with SOURCE and CATALOG_NAME, map SOURCE to that entry and re-point the runs that stated it."""

from __future__ import annotations

import argparse
from typing import Any

from ingest.stores import add_store_arguments, push_after_write, target
from joulebench.text import table

DESCRIPTION = ("Each device string a file states is stored under a catalog entry: the same part (family, memory "
               "size, form factor: SXM, PCIe, NVL are other power classes and never mapped to each other), else "
               "added once as its own entry. A string that could be several entries keeps its own name until you "
               "choose. Without arguments: every string met in imports and what it maps to. With SOURCE and "
               "CATALOG_NAME: map SOURCE to that catalog entry (or to SOURCE itself to keep it as its own device); "
               "the runs that stated it are re-pointed and regraded, and later imports of SOURCE use your choice.")


def cmd_device_name(args: argparse.Namespace) -> int:
    import db.device_names as device_names
    from ingest.service import open_store

    chosen = target(args)
    if args.source is None:
        with chosen.open_reading() as store:
            rows = device_names.mapping(store)
        if rows.is_empty():
            print("no import has met a device name outside the catalog")
            return 0
        print(table(("name in the files", "stored as", "decided", "could be", "runs"),
                    [(r["source_name"], r["device_name"], r["decided_by"], ", ".join(r["candidates"] or []) or "-",
                      r["runs"]) for r in rows.iter_rows(named=True)]))
        return 0
    if args.catalog_name is None:
        print("error: give the catalog name to map it to, e.g. joulebench device-name 'H100' 'H100 80GB' "
              "(joulebench device-name lists the names met in imports)")
        return 2
    with open_store(chosen.db) as store:
        done = device_names.change(store, args.source, args.catalog_name)
    print(f"{done.source_name!r}: {done.before!r} -> {done.after!r}; {done.runs} run(s) re-pointed"
          + (f"; {done.before!r}, added by an import and now unused, removed from the catalog" if done.removed else ""))
    return push_after_write(chosen)


def add_subcommand(sub: Any, db_help: str) -> None:
    p = sub.add_parser("device-name", help="the device names met in imports; map one to a catalog entry",
                       description=DESCRIPTION)
    p.add_argument("source", nargs="?", help="the device name as a file stated it, e.g. 'NVIDIA A100-SXM4-40GB'")
    p.add_argument("catalog_name", nargs="?", help="the catalog entry it is, e.g. 'A100 40GB'")
    add_store_arguments(p, db_help, reads=False)
    p.set_defaults(func=cmd_device_name)
