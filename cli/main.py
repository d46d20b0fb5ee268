"""The `joulebench` command line: import, label, export, db info, app, run, idle, workloads."""

from __future__ import annotations

import argparse
import dataclasses
import os
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ingest.stores import add_store_arguments, open_for_reading, push_after_write, target
from joulebench import __version__
from joulebench.commands import run_parser
from joulebench.errors import LabelError
from joulebench.paths import DB_ENV_VAR, REPO_ROOT, resolve_db_path
from joulebench.text import shown, table

if TYPE_CHECKING:  # imported where used: `joulebench --help` stays fast
    from db.export import Selection
    from importers import Hints


def _hints(args: argparse.Namespace) -> Hints:
    from importers import Hints

    return Hints(device=args.device, device_kind=args.device_kind, boundary=args.boundary, precision=args.precision,
                 mode=args.mode, workload=args.workload, batch_size=args.batch_size, units=tuple(args.unit or ()))


def _label_value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        shown = ", ".join(map(str, value[:8])) + (", ..." if len(value) > 8 else "")
        return f"{shown} (one per run)"
    return str(value)


def _batch_sizes(text: str) -> int | tuple[int, ...]:
    """'8' -> 8 (every run); '1,2,4' -> one per run in the file's order."""
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"{text[:60]!r}: give whole numbers, e.g. 8 or 1,2,4,8") from e
    return values[0] if len(values) == 1 else values


def _column_unit(text: str) -> tuple[str, str]:
    from importers.base import column_unit

    try:
        return column_unit(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


@dataclass
class _Outcome:
    """One file's line in the import summary."""

    name: str
    result: str  # imported | already imported | queued | skipped | refused
    runs: int = 0
    not_stated: str = ""
    why: str = ""


def _fill_command(source: str, counts: dict[str, int]) -> str:
    from joulebench.labels import LABEL_FLAGS

    return f"joulebench label {shlex.quote(source)} " + " ".join(LABEL_FLAGS[k] for k in counts)


def _nothing_to_import(problems: list[str]) -> str:
    """'a temperature log without power (...)' / 'not a format JouleBench knows' from the error."""
    first = problems[0] if problems else ""
    for prefix in ("(whole file): ", "(whole folder): "):
        first = first.removeprefix(prefix)
    return first.split("; known formats:")[0].removesuffix("; no benchmark figure to import")


def _report_rows(report: Any, imported: Any, power_log: Any) -> list[tuple[str, str]]:
    from joulebench.labels import describe_not_stated

    runs = imported.runs
    counts = imported.not_stated()
    status = report.status.replace("_", " ") + (f" (source {report.source_id})" if report.source_id else "")
    devices = sorted({r["device"]["name"] for r in runs if r["device"] is not None})
    if any(r["device"] is None for r in runs):
        devices.append("not stated")
    rows = [
        ("format detected", imported.format),
        ("status", status),
        ("runs imported", f"{report.runs_added} of {len(runs)}"
         + (f" ({report.runs_duplicate} already stored)" if report.runs_duplicate else "")),
        ("devices", ", ".join(devices) or "none"),
        ("not stated", describe_not_stated(counts, len(runs)) if counts else "nothing"),
    ]
    if counts and report.status != "already_imported":
        rows.append(("fill them with", _fill_command(str(report.source_id or imported.name), counts)))
    rows.append(("figures missing", ", ".join(imported.missing_fields()) or "none"))
    other = [w for w in imported.warnings if not w.startswith("not stated in the file:")]
    rows.append(("warnings", "; ".join(other) or "none"))
    if report.message:
        rows.append(("note", report.message))
    if power_log is not None and report.runs_duplicate:
        rows.append(("power log", f"{report.runs_duplicate} run(s) were stored before without this log "
                                  "and are kept as stored"))
    return rows


def cmd_import(args: argparse.Namespace) -> int:
    """Import files, folders and .zip archives of any known format: a table per file (what came
    in, what it does not state), then, for several files, one line each (imported, skipped or
    refused, and why)."""
    from importers.archive import sources_from_path
    from ingest.service import import_sources
    from joulebench.errors import NothingToImportError, ResultFileError
    from joulebench.labels import LABEL_TITLES

    hints = _hints(args)
    chosen = target(args)
    from cli.mapping import mapped_sources, read_recipe, saved_recipes

    try:  # --mapping RECIPE reads every file by it; else a file of a saved mapping's shape is read by that one
        recipe = read_recipe(args.mapping) if args.mapping is not None else None
    except ResultFileError as e:
        print(e.format_message(), file=sys.stderr)
        return 2
    saved, note = ([], "") if recipe is not None else saved_recipes(chosen.db)
    if note:
        print(note, file=sys.stderr)
    mapped: dict[int, Any] = {}  # id(source) -> importers.mapping.Mapped
    log = None
    if args.power_log is not None:
        from ingest.attach import PowerLogFile

        if len(args.paths) != 1:
            print("error: --power-log attaches one log to the runs of one result file; give one path",
                  file=sys.stderr)
            return 2
        try:
            log = PowerLogFile(args.power_log.read_bytes(), args.power_log.name, args.power_log_boundary)
        except OSError as e:
            print(f"error: {args.power_log}: cannot read the file: {e.strerror}", file=sys.stderr)
            return 2
    elif args.power_log_boundary is not None:
        print("error: --power-log-boundary needs --power-log", file=sys.stderr)
        return 2
    outcomes: list[_Outcome] = []
    every: list[tuple[Any, Any]] = []  # (source, power log) of every path: imported together, all or nothing
    in_folder: list[bool] = []  # whether each came from a folder or an archive of several files
    for path in args.paths:
        try:
            sources = sources_from_path(path)
        except ResultFileError as e:
            outcomes.append(_Outcome(str(path), "refused", why=e.problems[0] if e.problems else ""))
            print(e.format_message(), file=sys.stderr)
            continue
        walked = path.is_dir() or len(sources) > 1
        sources, by_recipe, not_fitting = mapped_sources(sources, recipe, saved)
        mapped.update({id(sources[i]): done for i, done in by_recipe.items()})
        for i, why in not_fitting.items():
            outcomes.append(_Outcome(sources[i].name, "refused", why=why.splitlines()[-1][:300]))
            print(f"{sources[i].name}: refused (the mapping does not fit it)\n{why}", file=sys.stderr)
        sources = [s for i, s in enumerate(sources) if i not in not_fitting]
        if log is not None and len(sources) != 1:
            print(f"error: --power-log needs one result file; {path} holds {len(sources)} (use --attach-logs "
                  "for a folder of result files with their logs)", file=sys.stderr)
            return 2
        if log is not None:
            every.append((sources[0], log))
        elif args.attach_logs and walked:
            from ingest.attach import pair_sources

            every.extend(pair_sources(sources))
        else:
            every.extend((source, None) for source in sources)
        in_folder.extend([walked] * (len(every) - len(in_folder)))
    # one transaction for the whole command: Ctrl-C or a kill before its commit adds nothing
    results = import_sources(every, db=chosen.db, source_kind=args.kind, hints=hints) if every else []
    for (source, power_log), walked, outcome in zip(every, in_folder, results, strict=True):
        report, imported, error = outcome.report, outcome.loaded, outcome.error
        if id(source) in mapped:  # said first, and the reader's words turned into the table's
            by = mapped[id(source)]
            error = by.explained(error) if error is not None else None
            if imported is not None:
                imported = dataclasses.replace(imported, warnings=(by.said, *map(by.explain, imported.warnings)))
            else:
                print(f"{source.name}: {by.said}", file=sys.stderr)
        if isinstance(error, NothingToImportError):
            why = _nothing_to_import(error.problems)
            if walked:  # a folder holds other files too: skipped, not a failure
                outcomes.append(_Outcome(source.name, "skipped", why=why))
                print(f"{source.name}: skipped: {why}")
                continue
            outcomes.append(_Outcome(source.name, "refused", why=why))
            print(f"{source.name}: refused", file=sys.stderr)
            print(error.format_message(), file=sys.stderr)
            continue
        if error is not None or report is None or imported is None:
            problems = error.problems if error is not None else []
            outcomes.append(_Outcome(source.name, "refused", why="; ".join(problems[:2])))
            print(f"{source.name}: refused", file=sys.stderr)
            if error is not None:
                print(error.format_message(), file=sys.stderr)
            continue
        name = imported.name if power_log is not None else source.name
        outcomes.append(_Outcome(name, report.status.replace("_", " "), report.runs_added,
                                 ", ".join(LABEL_TITLES[k] for k in imported.not_stated()),
                                 report.message if report.status == "queued" else ""))
        print(f"\n{name}")
        print(table(("field", "value"), _report_rows(report, imported, power_log)))
    if not outcomes:
        print("no files found in the given paths", file=sys.stderr)
        return 2
    if len(outcomes) > 1:
        done = {r: sum(1 for o in outcomes if o.result == r) for r in dict.fromkeys(o.result for o in outcomes)}
        print(f"\n{len(outcomes)} files: " + ", ".join(f"{n} {r}" for r, n in done.items())
              + f"; {sum(o.runs for o in outcomes)} runs added")
        print(table(("file", "result", "runs added", "not stated", "why"),
                    [(o.name, o.result, o.runs, o.not_stated, o.why[:160]) for o in outcomes]))
    if all(o.result == "skipped" for o in outcomes):
        unknown = all("not a format JouleBench knows" in o.why for o in outcomes)
        print(f"{len(outcomes)} file(s) looked at, none " + ("in a format JouleBench knows" if unknown
                                                             else "with a benchmark figure to import"),
              file=sys.stderr)
        return 2
    pushed = push_after_write(chosen) if any(o.result == "imported" for o in outcomes) else 0
    return 2 if any(o.result == "refused" for o in outcomes) else pushed


def cmd_label(args: argparse.Namespace) -> int:
    """Fill labels the files of one source did not state, for all its runs, as user-supplied."""
    from db.labels import describe_gaps
    from ingest.labels import label_source, label_values
    from joulebench.labels import LABEL_TITLES

    values, kind = label_values(args.device, args.device_kind, args.mode, args.precision, args.batch_size,
                                args.boundary)
    chosen = target(args)
    try:
        report = label_source(args.source, values, kind, db=chosen.db, via="cli")
    except LabelError as e:
        if chosen.team is None or not str(e).startswith("no source"):
            raise
        raise LabelError(f"no source {args.source!r} in this machine's database {resolve_db_path(chosen.db)}: labels "
                         "are given where a source was imported or run (`joulebench db info --db FILE` lists that "
                         "machine's sources), then pushed to the team store with the label") from e
    src = report.source
    print(f"source {src.source_id}: {src.file_name} ({src.format}, {src.runs} runs)")
    print(table(("label", "value", "runs filled", "runs changed"),
                [(LABEL_TITLES[k], _label_value(values[k]), report.filled.get(k, 0), report.replaced.get(k, 0))
                 for k in values]))
    for k in values:
        if not report.filled.get(k) and not report.replaced.get(k):
            print(f"nothing to fill for {LABEL_TITLES[k]}: every run of this source states it (a value the file "
                  "states is never overwritten)" + (" or has no energy figure" if k == "energy_boundary" else ""))
    if report.device_added:
        print(f"device {values['device']!r} added to the catalog as a {kind}")
    for note in report.notes:
        print(f"note: {note}")
    still = describe_gaps(report.still_not_stated)
    print(f"still not stated: {still}" if still else "every label is now stated or supplied")
    return push_after_write(chosen)


def _selection(args: argparse.Namespace) -> Selection:
    from db.export import Selection

    return Selection(run_ids=tuple(args.run_id), device_names=tuple(args.device),
                     workloads=tuple(args.workload), source_kinds=tuple(args.source_kind))


def cmd_export(args: argparse.Namespace) -> int:
    from db.export import write_result_file, write_tables

    out: Path = args.out
    fmt = args.format
    if fmt == "auto":
        fmt = "csv" if out.suffix == ".csv" else "parquet" if out.suffix == ".parquet" else "json"
    with open_for_reading(args) as store:
        if fmt == "json":
            n = write_result_file(store, out, _selection(args))
            print(f"wrote {n} runs to {out}")
        else:
            target = out if out.suffix == f".{fmt}" else out.with_suffix(f".{fmt}")
            for path in write_tables(store, target, _selection(args)):
                print(f"wrote {path}")
    return 0


def cmd_db_info(args: argparse.Namespace) -> int:
    from db.location import as_team_store
    from ingest.inbox import pending

    with open_for_reading(args) as store:
        info = store.info()
        snapshot, at = store.snapshot_id, store.snapshot_time()
    print(f"database:        {info.location.shown}")
    print(f"store kind:      {info.location.kind}" + (" (read-only here; `joulebench push` adds to it)"
                                                      if info.location.read_only_reason else ""))
    print(f"schema version:  {info.schema_version}")
    print(f"runs:            {info.runs}")
    print(f"devices:         {info.devices} in the catalog")
    print(f"findings:        {info.findings}")
    if as_team_store(info.location) is None:
        print(f"inbox:           {len(pending(info.path))} file(s) waiting\n")
    else:  # a team store: no inbox; the snapshot read
        print(f"snapshot:        {snapshot}" + (f", committed {at:%Y-%m-%d %H:%M:%S} UTC" if at else "")
              + " (`joulebench db snapshots` lists them)\n")
    print("runs per source kind")
    print(table(info.runs_by_source_kind.columns, info.runs_by_source_kind.rows()))
    print("\nruns per device")
    print(table(info.runs_by_device.columns, info.runs_by_device.rows()))
    print("\nsources")
    print(table(info.sources.columns, info.sources.rows()))
    if info.intake.height:
        print("\ningested without a command (inbox, sweeps that ended without importing), newest first")
        print(table(info.intake.columns, info.intake.rows()))
    return 0


def cmd_app(args: argparse.Namespace) -> int:
    from db.lake import AS_OF_ENV_VAR, DATA_ENV_VAR, STORE_ENV_VAR
    from db.location import as_team_store
    from explorer.access import (
        ALLOWED_HOSTS_ENV,
        FORWARDED_ENV,
        LOCAL_HOSTS,
        PASSWORD_ENV,
        TRUSTED_PROXIES_ENV,
        parse_proxies,
    )

    chosen = target(args)
    env = dict(os.environ, **{DB_ENV_VAR: str(resolve_db_path(chosen.db))})
    for name in (STORE_ENV_VAR, AS_OF_ENV_VAR):  # the app reads what the flags chose
        env.pop(name, None)
    team = as_team_store(chosen.reads)
    if team is not None:
        env[STORE_ENV_VAR] = team.url  # parsed: holds no password
        env[DATA_ENV_VAR] = team.data_path
        if chosen.as_of is not None:
            env[AS_OF_ENV_VAR] = str(chosen.as_of)
    env.setdefault("HF_HUB_OFFLINE", "1")
    if args.password_file is not None:
        try:
            env[PASSWORD_ENV] = args.password_file.read_text().strip()
        except OSError as e:
            print(f"error: --password-file {args.password_file}: cannot read it ({e.strerror})", file=sys.stderr)
            return 2
        if not env[PASSWORD_ENV]:
            print(f"error: --password-file {args.password_file} is empty", file=sys.stderr)
            return 2
    local = args.address in LOCAL_HOSTS
    if not local and not env.get(PASSWORD_ENV):
        print(f"error: --address {args.address} lets other machines start runs (and change power limits) and edit "
              "the catalog; set a password first: --password-file FILE (or $" + PASSWORD_ENV + "). "
              "Without one the app listens on localhost only.", file=sys.stderr)
        return 2
    hosts = [h for h in args.allow_host if h]
    if not local and args.address not in ("0.0.0.0", "::"):
        hosts.append(args.address)
    if not local and not hosts:
        hosts = ["*"]  # bound to every interface without a host list: the password guards it
    env[ALLOWED_HOSTS_ENV] = ",".join(hosts)
    try:
        proxies = parse_proxies(",".join(args.trusted_proxy) if args.trusted_proxy
                                else os.environ.get(TRUSTED_PROXIES_ENV, ""))
    except ValueError as e:
        print(f"error: --trusted-proxy (or ${TRUSTED_PROXIES_ENV}): {e}", file=sys.stderr)
        return 2
    # the server believes X-Forwarded-For from these proxies only (uvicorn's own default believes 127.0.0.1:
    # every local client could then claim a new address per guess); empty: from nobody
    env[TRUSTED_PROXIES_ENV] = env[FORWARDED_ENV] = ",".join(map(str, proxies))
    # explorer.warm: Streamlit's server, with a thread that imports and reads before the first browser arrives
    cmd = [sys.executable, "-m", "explorer.warm", "run", str(REPO_ROOT / "explorer" / "streamlit_main.py"),
           "--server.port", str(args.port), "--server.address", args.address,
           "--server.headless", "true", "--server.fileWatcherType", "none"]
    where = chosen.reads.describe()
    if team is not None:
        where += f" (read-only, as of snapshot {chosen.as_of})" if chosen.as_of is not None else " (read-only)"
    print(f"JouleBench explorer at http://{args.address}:{args.port} ({where})"
          + ("" if local else "; password required")
          + (f"; client addresses forwarded by {env[FORWARDED_ENV]} are believed" if proxies else ""), flush=True)
    sys.stderr.flush()
    os.chdir(REPO_ROOT)  # Streamlit reads .streamlit/config.toml there
    # the server takes this process's place: whatever stops `joulebench app` (SIGTERM, Ctrl-C, SIGHUP, SIGKILL)
    # stops the server, and no child is left answering on the port
    os.execve(sys.executable, cmd, env)


def cmd_push(args: argparse.Namespace) -> int:
    from db.push import machine_name, push
    from ingest import open_store
    from ingest.stores import team_store

    machine = machine_name(args.machine)  # checked before anything is opened or printed
    chosen = target(args)
    lake = team_store(chosen, "push sends runs to a team store", args.store)
    if lake is None:
        return 2
    with open_store(chosen.db) as store:  # migrated, and its inbox ingested, before it is read
        local = store.path
    print(f"pushing {local} to {lake.public_url} as {machine}", flush=True)

    def said(sha: str, runs: int) -> None:
        print(f"  pushed {sha[:12]}: {runs} run(s)", flush=True)

    report = push(local, lake, machine=machine, on_source=said)
    rate = f"{report.runs_pushed / report.seconds:,.0f} runs/s" if report.seconds > 0 else ""
    print(f"pushed {report.sources_pushed} source(s), {report.runs_pushed} run(s), {report.samples_pushed} power "
          f"sample(s) in {report.seconds:.1f} s ({rate}); {report.sources_already_there} source(s) and "
          f"{report.runs_already_there} run(s) were there already; {report.runs_relabelled} run(s) relabelled, "
          f"{report.catalog_edits_pushed} catalog edit(s); {report.retries} retried commit(s)")
    return 0


def cmd_db_snapshots(args: argparse.Namespace) -> int:
    from db import Store
    from db.location import as_team_store

    chosen = target(args)
    team = as_team_store(chosen.reads)
    if team is None:
        print("error: --store: snapshots are a team store's (a DuckLake URL); a DuckDB file keeps none",
              file=sys.stderr)
        return 2
    with Store.open_reading(team, as_of=chosen.as_of) as store:
        frame = store.snapshots(max(1, args.limit))
        print(f"{team.describe()}, read at snapshot {store.snapshot_id}")
    rows = [(r["snapshot_id"], str(r["snapshot_time"])[:19], shown(r["author"], 60), shown(r["commit_message"], 80),
             shown(", ".join(sorted(r["changes"] or {})), 120)) for r in frame.iter_rows(named=True)]
    print(table(("snapshot", "time (UTC)", "machine", "what", "changed"), rows))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="joulebench",
        description="Measure and compare deep-learning hardware: throughput, joules per example, cost per sample.")
    parser.add_argument("--version", action="version", version=f"joulebench {__version__}")
    db_help = f"database file (default: ${DB_ENV_VAR}, else the per-user data directory)"
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("import", help="import result files of any known format (files, folders, .zip)",
                       description="Import result files: JouleBench's own and other tools' (optimum-benchmark, "
                                   "MLPerf, CodeCarbon, Zeus, ML.ENERGY, Lambda, HF Trainer, dllogger, nvidia-smi, "
                                   "tegrastats, jtop, tqdm), detected by content. Each file is imported whole or not "
                                   "at all; the same file twice adds nothing. What a file does not say (device, "
                                   "measurement boundary, precision, mode, batch size) comes from a folder named "
                                   "after it or from the flags below; nothing is guessed: without them it is "
                                   "imported as 'not stated' and `joulebench label` fills it later. A file is "
                                   "refused only when it holds no benchmark figure, or a bad one. When another "
                                   "process holds the database, files wait in its inbox and are ingested the next "
                                   "time it is opened.")
    p.add_argument("paths", nargs="+", type=Path, help="result files, folders or .zip archives")
    add_store_arguments(p, db_help, reads=False)
    p.add_argument("--kind", choices=("upload", "local"), default="upload",
                   help="provenance recorded for these files (default: upload)")
    p.add_argument("--device", help="device that ran the files that do not name it, e.g. 'NVIDIA A100-SXM4-40GB'")
    p.add_argument("--device-kind", choices=("gpu", "jetson", "cpu"),
                   help="kind of the --device (default: from its name)")
    p.add_argument("--boundary", choices=("gpu_board", "jetson_module", "cpu_package", "system", "wall", "estimated"),
                   help="where the power was measured, when the file does not say")
    p.add_argument("--precision", choices=("fp32", "tf32", "fp16", "bf16", "fp16-weights"),
                   help="precision, when the file does not say")
    p.add_argument("--mode", choices=("train", "infer", "idle"),
                   help="what ran, for files that do not say (power logs, CodeCarbon, tqdm)")
    p.add_argument("--workload", help="workload name, for files that do not name the model")
    p.add_argument("--batch-size", type=int, help="batch size, for files that do not say (e.g. tqdm it/s)")
    p.add_argument("--unit", action="append", type=_column_unit, metavar="COLUMN=UNIT",
                   help="the unit of a table column whose name does not state it, e.g. PWR_IN_AVG=mW or "
                        "energy=kWh (J, kJ, mWh, Wh, kWh, mW, W, kW, ms, s, min, h); repeat for each column")
    p.add_argument("--power-log", type=Path, metavar="LOG",
                   help="attach this power log (nvidia-smi CSV, tegrastats, jtop CSV, or a meter's time,watts CSV) "
                        "to the runs of the one result file given: each run with a known wall-clock window gets "
                        "the log's samples in it as its power trace and, if it has no energy, the log's energy. "
                        "Log times without a zone are read as this machine's local time (set TZ to change it)")
    p.add_argument("--power-log-boundary", choices=("gpu_board", "jetson_module", "cpu_package", "system", "wall",
                                                     "estimated"),
                   help="where the power log measured (default: wall for a meter CSV, else the log's own: "
                        "gpu_board for nvidia-smi, jetson_module for tegrastats / jtop)")
    p.add_argument("--mapping", type=Path, metavar="RECIPE",
                   help="read the files by this mapping (a table no reader knows: each column's field and unit, "
                        "as `joulebench mapping export` writes it); without it, a file whose shape has a saved "
                        "mapping is read by that one, and the import says so")
    p.add_argument("--attach-logs", action="store_true",
                   help="in folders and .zip archives, attach a power log to the result file beside it when a "
                        "folder holds exactly one of each")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("label", help="fill what a source's files did not state (device, mode, ...) for all its runs",
                       description="Fill labels an imported source did not state, for every run of it that "
                                   "does not state them: the device, mode, precision, batch size or where energy "
                                   "was measured. Recorded as user-supplied (who, when). A value the file states "
                                   "is never overwritten; a label supplied before (a flag at import, a folder name, "
                                   "an earlier label) is replaced.")
    p.add_argument("source", help="a source id or file name, as `joulebench db info` lists them")
    p.add_argument("--device", help="the device that ran it, e.g. 'NVIDIA A100-SXM4-40GB'")
    p.add_argument("--device-kind", choices=("gpu", "jetson", "cpu"),
                   help="kind of a device new to the catalog (default: from its name)")
    p.add_argument("--mode", choices=("train", "infer", "idle"), help="what ran")
    p.add_argument("--precision", choices=("fp32", "tf32", "fp16", "bf16", "fp16-weights"), help="numeric precision")
    p.add_argument("--batch-size", type=_batch_sizes, metavar="N[,N...]",
                   help="per-device batch size: one value for every run, or one per run in the file's order "
                        "(e.g. 1,2,4,8 for a table with one row per batch size)")
    p.add_argument("--boundary", choices=("gpu_board", "jetson_module", "cpu_package", "system", "wall", "estimated"),
                   help="where the energy was measured, for runs with an energy figure")
    add_store_arguments(p, db_help, reads=False)
    p.set_defaults(func=cmd_label)

    p = sub.add_parser("export", help="export runs as a result file, or as CSV / Parquet tables",
                       description="Write a selection of runs. json (or .json.gz) writes one result file; "
                                   "csv and parquet write <stem>_runs (with trust grades), <stem>_configurations "
                                   "(mean, 95 %% interval, n and grade per configuration), <stem>_power_samples "
                                   "and <stem>_step_times.")
    p.add_argument("out", type=Path, help="output file (.json, .json.gz, .csv or .parquet)")
    p.add_argument("--format", choices=("auto", "json", "csv", "parquet"), default="auto",
                   help="default: from the file name")
    p.add_argument("--run-id", action="append", default=[], help="select a run (repeatable)")
    p.add_argument("--device", action="append", default=[], help="select a device by name (repeatable)")
    p.add_argument("--workload", action="append", default=[], help="select a workload (repeatable)")
    p.add_argument("--source-kind", action="append", default=[], choices=("local", "team", "upload", "reference"),
                   help="select by provenance, as `db info` shows it (repeatable; 'team': a team store's runners' "
                        "own runs)")
    add_store_arguments(p, db_help, reads=True)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("db", help="database commands")
    dbsub = p.add_subparsers(dest="db_command", required=True)
    q = dbsub.add_parser("info", help="location, schema version, counts per source and device",
                         description="Show where the database is and what it holds. Creates, migrates and seeds "
                                     "it on first use, and ingests files waiting in its inbox.")
    add_store_arguments(q, db_help, reads=True)
    q.set_defaults(func=cmd_db_info)
    q = dbsub.add_parser("snapshots", help="a team store's snapshots: when, which machine, what it pushed",
                         description="List a team store's snapshots, newest first: each push's commit, with the "
                                     "machine that made it. `--as-of SNAPSHOT` reads the store as it was then.")
    add_store_arguments(q, db_help, reads=True)
    q.add_argument("--limit", type=int, default=30, help="how many, newest first (default: 30)")
    q.set_defaults(func=cmd_db_snapshots)
    from cli.upkeep import add_db_subcommand as add_db_upkeep

    add_db_upkeep(dbsub)

    p = sub.add_parser("app", help="start the explorer (Streamlit) on localhost",
                       description="Start the JouleBench explorer web app.")
    add_store_arguments(p, db_help, reads=True)
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--address", default="localhost",
                   help="interface to listen on (default: localhost); any other needs a password")
    p.add_argument("--password-file", type=Path,
                   help="a file holding the password the app asks for (or set $JOULEBENCH_APP_PASSWORD)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="a host name browsers use to reach the app (repeatable); others are refused")
    p.add_argument("--trusted-proxy", action="append", default=[], metavar="ADDR",
                   help="a reverse proxy in front of the app (an address or network; repeatable or a comma list; "
                        "default: $JOULEBENCH_TRUSTED_PROXIES, else none): the client address in its X-Forwarded-For "
                        "is believed, so wrong passwords are throttled per client. Without it the header is ignored "
                        "and the connecting address counts. Name a proxy only if it is the one way to reach the app")
    p.set_defaults(func=cmd_app)

    p = sub.add_parser("push", help="send this machine's runs to the team store (a DuckLake)",
                       description="Send every source of the local database the team store lacks, each in one "
                                   "transaction with its runs, power samples, grades and who pushed it. Pushing "
                                   "twice adds nothing; a push cut off resumes where it stopped; several machines "
                                   "can push at once. A PostgreSQL password comes from PGPASSWORD or ~/.pgpass, "
                                   "never the URL.")
    add_store_arguments(p, db_help, reads=False)
    p.add_argument("--machine", help="the name the pushed runs carry in the team store (default: the host name)")
    p.set_defaults(func=cmd_push)

    from runner.cli import add_subcommands as add_runner_subcommands  # run, workloads

    add_runner_subcommands(sub, db_help)
    from cli.recommend import add_subcommand as add_recommend

    add_recommend(sub, db_help)
    from cli.decide import add_subcommand as add_decide

    add_decide(sub, db_help)
    from cli.device_name import add_subcommand as add_device_name

    add_device_name(sub, db_help)
    from cli.mapping import add_subcommand as add_mapping

    add_mapping(sub, db_help)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run_parser(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
