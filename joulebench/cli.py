"""The `joulebench` command line: import, export, db info, app."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from joulebench import __version__
from joulebench.errors import JouleBenchError
from joulebench.paths import DB_ENV_VAR, REPO_ROOT, resolve_db_path

RESULT_SUFFIXES = (".json", ".json.gz", ".gz")


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _result_files(paths: Sequence[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(RESULT_SUFFIXES))
        else:
            found.append(path)
    return found


def cmd_import(args: argparse.Namespace) -> int:
    from db import import_file
    from joulebench.errors import ResultFileError

    files = _result_files(args.paths)
    if not files:
        print("no result files found in the given paths", file=sys.stderr)
        return 2
    rows, failed = [], 0
    for file in files:
        try:
            r = import_file(file, db=args.db, source_kind=args.kind)
            rows.append((file, r.status, r.runs_added, r.runs_duplicate, r.findings_added, r.message))
        except ResultFileError as e:
            failed += 1
            rows.append((file, "rejected", 0, 0, 0, "see below"))
            print(e.format_message(), file=sys.stderr)
    print(_table(("file", "status", "runs added", "duplicate runs", "findings", "note"), rows))
    return 2 if failed else 0


def _selection(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from db.export import Selection

    return Selection(run_ids=tuple(args.run_id), device_names=tuple(args.device),
                     workloads=tuple(args.workload), source_kinds=tuple(args.source_kind))


def cmd_export(args: argparse.Namespace) -> int:
    from db import Store
    from db.export import write_result_file, write_tables

    out: Path = args.out
    fmt = args.format
    if fmt == "auto":
        fmt = "csv" if out.suffix == ".csv" else "parquet" if out.suffix == ".parquet" else "json"
    with Store.open(args.db) as store:
        if fmt == "json":
            n = write_result_file(store, out, _selection(args))
            print(f"wrote {n} runs to {out}")
        else:
            target = out if out.suffix == f".{fmt}" else out.with_suffix(f".{fmt}")
            for path in write_tables(store, target, _selection(args)):
                print(f"wrote {path}")
    return 0


def cmd_db_info(args: argparse.Namespace) -> int:
    from db import Store

    with Store.open(args.db) as store:
        info = store.info()
    print(f"database:        {info.path}")
    print(f"schema version:  {info.schema_version}")
    print(f"runs:            {info.runs}")
    print(f"devices:         {info.devices} in the catalog")
    print(f"findings:        {info.findings}")
    print(f"inbox:           {info.inbox_pending} file(s) waiting\n")
    print("runs per source kind")
    print(_table(info.runs_by_source_kind.columns, info.runs_by_source_kind.rows()))
    print("\nruns per device")
    print(_table(info.runs_by_device.columns, info.runs_by_device.rows()))
    print("\nsources")
    print(_table(info.sources.columns, info.sources.rows()))
    return 0


def cmd_app(args: argparse.Namespace) -> int:
    env = dict(os.environ, **{DB_ENV_VAR: str(resolve_db_path(args.db))})
    env.setdefault("HF_HUB_OFFLINE", "1")
    cmd = [sys.executable, "-m", "streamlit", "run", str(REPO_ROOT / "app.py"),
           "--server.port", str(args.port), "--server.address", args.address,
           "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    print(f"JouleBench explorer at http://{args.address}:{args.port} (database {env[DB_ENV_VAR]})")
    return subprocess.call(cmd, env=env, cwd=REPO_ROOT)  # cwd: Streamlit reads .streamlit/config.toml there


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="joulebench",
        description="Measure and compare deep-learning hardware: throughput, joules per example, cost per sample.")
    parser.add_argument("--version", action="version", version=f"joulebench {__version__}")
    db_help = f"database file (default: ${DB_ENV_VAR}, else the per-user data directory)"
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("import", help="import result files (files or folders)",
                       description="Import JouleBench result files. Each file is imported whole or not at all; "
                                   "the same file twice adds nothing. When another process holds the database, "
                                   "files wait in its inbox and are ingested the next time it is opened.")
    p.add_argument("paths", nargs="+", type=Path, help="result files (.json, .json.gz) or folders")
    p.add_argument("--db", help=db_help)
    p.add_argument("--kind", choices=("upload", "local"), default="upload",
                   help="provenance recorded for these files (default: upload)")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("export", help="export runs as a result file, or as CSV / Parquet tables",
                       description="Write a selection of runs. json (or .json.gz) writes one result file; "
                                   "csv and parquet write <stem>_runs, <stem>_power_samples and <stem>_step_times.")
    p.add_argument("out", type=Path, help="output file (.json, .json.gz, .csv or .parquet)")
    p.add_argument("--format", choices=("auto", "json", "csv", "parquet"), default="auto",
                   help="default: from the file name")
    p.add_argument("--run-id", action="append", default=[], help="select a run (repeatable)")
    p.add_argument("--device", action="append", default=[], help="select a device by name (repeatable)")
    p.add_argument("--workload", action="append", default=[], help="select a workload (repeatable)")
    p.add_argument("--source-kind", action="append", default=[], choices=("local", "upload", "reference"),
                   help="select by provenance (repeatable)")
    p.add_argument("--db", help=db_help)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("db", help="database commands")
    dbsub = p.add_subparsers(dest="db_command", required=True)
    q = dbsub.add_parser("info", help="location, schema version, counts per source and device",
                         description="Show where the database is and what it holds. Creates, migrates and seeds "
                                     "it on first use, and ingests files waiting in its inbox.")
    q.add_argument("--db", help=db_help)
    q.set_defaults(func=cmd_db_info)

    p = sub.add_parser("app", help="start the explorer (Streamlit) on localhost",
                       description="Start the JouleBench explorer web app.")
    p.add_argument("--db", help=db_help)
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--address", default="localhost")
    p.set_defaults(func=cmd_app)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except JouleBenchError as e:
        print(f"error: {e.format_message()}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
