"""Command-line glue: `joulebench run`, `joulebench workloads`, `joulebench serve-bench` and `python -m runner`.

Importing this module is cheap (no torch): the subcommands import the runner when they run.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ingest.stores import add_store_arguments, push_after_write, target
from runner.energy_args import add_energy_arguments

RUN_DESCRIPTION = (
    "Measure transformers training or inference on this machine. Comma lists on --workload, --mode, "
    "--precision, --batch-size, --grad-accum, --seq-len, --image-size and --max-new-tokens make a sweep: one run per "
    "combination. Each sweep writes one result file (default: results/ next to the database) and "
    "imports it. Bad options fail before anything runs. Ctrl-C or SIGTERM keeps finished runs and "
    "records the one in progress as interrupted. Exit status: 0, 1 when a run failed, 130/143 when "
    "interrupted.")


def add_run_arguments(p: argparse.ArgumentParser, db_help: str) -> None:
    from joulebench import defaults
    from joulebench.vocab import PRECISIONS
    from runner.workloads import names

    p.add_argument("--workload", default="bert-tiny", help=f"workload(s): {', '.join(names())} (default: bert-tiny)")
    p.add_argument("--mode", default="infer", help="train, infer, or train,infer (default: infer)")
    p.add_argument("--precision", default="fp32",
                   help=f"precision(s): {', '.join(PRECISIONS)}; on a CPU only fp32, bf16 (default: fp32)")
    p.add_argument("--batch-size", default="8", help="per-step batch size(s) n, e.g. 1,8,32 (default: 8)")
    p.add_argument("--grad-accum", default="1",
                   help="gradient accumulation steps m (training only): m x n examples per optimizer step (default: 1)")
    p.add_argument("--seq-len", help="sequence length(s) for text workloads, the prompt length for generation "
                                     "workloads (default: the workload's)")
    p.add_argument("--max-new-tokens", dest="max_new_tokens",
                   help="generation workloads (llm-*): output tokens per request, generated to exactly this "
                        "length; --batch-size is the number of concurrent requests (default: the workload's)")
    p.add_argument("--request-rate", dest="request_rate",
                   help="generation workloads: serve requests arriving at this rate (Poisson, seeded), requests/s; "
                        "--batch-size is then the most generated together, and token figures cover the steady "
                        "state (full batches). Without it: batches generated back to back")
    p.add_argument("--image-size", help="image side(s) in pixels for image workloads (default: 224)")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (compilation happens in warmup)")
    p.add_argument("--warmup", metavar="auto|N",
                   help="warmup before each window: auto (until power and step time are steady, at most "
                        f"{defaults.WARMUP_MAX_S:g} s) or N steps (default: auto on a power sensor, "
                        f"{defaults.WARMUP_STEPS} steps on the estimate)")
    p.add_argument("--steps", type=int, help="measure exactly this many steps (default: as many as fill "
                                             "--min-window on a power sensor; "
                                             f"{defaults.STEPS} steps on the estimate)")
    p.add_argument("--duration", type=float, help="measure exactly this many seconds instead of --steps")
    p.add_argument("--min-window", dest="min_window", type=float,
                   help="the shortest window, s: without --steps/--duration each window lasts this long, and a "
                        "shorter one is flagged window_under_minimum (default: "
                        f"{defaults.MIN_WINDOW_S:g} on a power sensor, none on the estimate; 0 switches it off)")
    p.add_argument("--repeats", type=int, help="runs per combination, each starting at a random offset within "
                                               "one sensor update period (default: "
                                               f"{defaults.SENSOR_REPEATS} on a power sensor, "
                                               f"{defaults.REPEATS} on the estimate)")
    p.add_argument("--device", help="cpu, cuda or cuda:N (default: cuda when available, else cpu)")
    add_store_arguments(p, db_help, reads=False)
    p.add_argument("--out", type=Path, help="result file to write (.json or .json.gz; default: "
                                            "results/joulebench-run-<UTC time>.json next to the database)")
    p.add_argument("--tag", help="a label stored with every run of this sweep")
    p.add_argument("--check", action="store_true",
                   help="validate the options and print the planned runs as JSON, then exit without running")
    add_energy_arguments(p)
    g = p.add_argument_group("power settings")
    g.add_argument("--power-limit", help="GPU power limit(s) in W to sweep, e.g. 100,125,150,170 (NVML, else "
                                         "nvidia-smi -pl; checked against the card's range before anything runs)")
    g.add_argument("--power-mode", help="Jetson nvpmodel mode id(s) to sweep, e.g. 0,6")
    g.add_argument("--jetson-clocks", action="store_true", help="run jetson_clocks after each power mode")
    g.add_argument("--settle", type=float, default=defaults.SETTLE_S,
                   help=f"seconds to wait after changing the power setting (default: {defaults.SETTLE_S:g})")
    g.add_argument("--no-idle", dest="idle", action="store_false",
                   help="skip the idle baseline measured at each power setting before its runs")
    g.add_argument("--idle-seconds", type=float, default=defaults.IDLE_S,
                   help=f"length of each idle baseline (default: {defaults.IDLE_S:g})")
    g.add_argument("--profile", action="store_true",
                   help="cheap profile: build each configuration once and measure every --power-limit / "
                        "--power-mode setting in the same process (change, settle, measure, go on); each setting "
                        "is stored as its own run marked as a profile; `joulebench recommend` models them")
    g.add_argument("--power-dry-run", action="store_true",
                   help="record the power settings that would be applied and change nothing (the runs say the "
                        "setting was not applied); the only mode allowed on a machine whose settings must not "
                        "change, such as a lent GPU")


def add_subcommands(sub: Any, db_help: str) -> None:
    """Register `run` and `workloads` on a subparsers object."""
    p = sub.add_parser("run", help="measure workloads on this machine (a sweep over comma lists)",
                       description=RUN_DESCRIPTION)
    add_run_arguments(p, db_help)
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("workloads", help="list the workloads `run` can measure, with parameter counts",
                       description="List the workloads: model, task, input shape and parameter count.")
    p.set_defaults(func=cmd_workloads)
    p = sub.add_parser("idle", help="measure the idle power of this machine's device (the baseline for net J/example)",
                       description="Measure power with nothing running for --seconds and record it as an idle run "
                                   "(workload idle, mode idle) in a result file and the database.")
    p.add_argument("--seconds", type=float, default=10.0, help="how long to measure (default: 10)")
    p.add_argument("--device", help="cpu, cuda or cuda:N (default: cuda when available, else cpu)")
    add_store_arguments(p, db_help, reads=False)
    p.add_argument("--out", type=Path, help="result file to write (default: results/ next to the database)")
    p.add_argument("--tag", help="a label stored with the run")
    add_energy_arguments(p)
    p.set_defaults(func=cmd_idle)
    from runner.serve_bench.cli import add_subcommand as add_serve_bench

    add_serve_bench(sub, db_help)


def cmd_run(args: argparse.Namespace) -> int:
    import runner.options as options
    from runner.report import summary
    from runner.sweep import run_sweep

    chosen = target(args)
    opts = options.from_strings(
        workload=args.workload, mode=args.mode, precision=args.precision, batch_size=args.batch_size,
        grad_accum=args.grad_accum, seq_len=args.seq_len, image_size=args.image_size,
        max_new_tokens=args.max_new_tokens, request_rate=args.request_rate, compile=args.compile,
        warmup=args.warmup, steps=args.steps, duration_s=args.duration, min_window_s=args.min_window,
        repeats=args.repeats,
        device=args.device, db=chosen.db, out=args.out, tag=args.tag, power_limit=args.power_limit,
        power_mode=args.power_mode, jetson_clocks=args.jetson_clocks, settle_s=args.settle, idle=args.idle,
        idle_s=args.idle_seconds, power_log=args.power_log, power_log_boundary=args.power_log_boundary,
        tdp_w=args.tdp_w, sample_hz=args.sample_hz, profile=args.profile, power_dry_run=args.power_dry_run)
    if args.check:
        import json

        configs = opts.expand(sensor=opts.sensor_equipped())
        settings = len(opts.power_values() or [None])
        print(json.dumps({"measured_runs": len(configs) * settings, "idle_runs": settings if opts.idle else 0,
                          "runs": [cfg.label() for cfg in configs], "power_settings": opts.power_values(),
                          "profile": opts.profile, "power_dry_run": opts.power_dry_run}))
        return 0
    if opts.profile:
        from runner.profile import run_profile

        result = run_profile(opts)
    else:
        result = run_sweep(opts)
    if result.runs:
        print(summary(result.runs))
    if result.out_path is not None:
        print(f"\nresult file: {result.out_path}")
    if result.ingest is not None:
        r = result.ingest
        if r.status == "queued":
            print(f"database: {r.message}")
        else:
            print(f"database: {r.status}, {r.runs_added} run(s) added")
    if result.ingest_error is not None:
        kept = (f"the file is kept; import it later with `joulebench import {result.out_path} --kind local`"
                if result.out_path is not None and result.out_path.exists()
                else "no result file holds the runs: they were printed above as one")
        print(f"error: could not import the result file: {result.ingest_error.format_message()}\n{kept}",
              file=sys.stderr)
    pushed = push_after_write(chosen) if result.ingest is not None and result.ingest.status == "imported" else 0
    return result.exit_code or pushed


def cmd_idle(args: argparse.Namespace) -> int:
    from joulebench.errors import RunConfigError
    from runner.control import restore_leftover, state_path_for
    from runner.idle import measure_idle
    from runner.interrupts import InterruptGuard, exit_code
    from runner.options import SweepOptions
    from runner.output import ResultSink, unique_out_path
    from runner.sweep import make_meter

    chosen = target(args)
    opts = SweepOptions(device=args.device, db=chosen.db, idle_s=args.seconds, power_log=args.power_log,
                        power_log_boundary=args.power_log_boundary, tdp_w=args.tdp_w, sample_hz=args.sample_hz)
    problems = opts._power_problems()
    if not args.seconds > 0:
        problems.append(f"--seconds: {args.seconds:g} is not valid; expected a positive number of seconds")
    from runner.devices import device_problem

    bad_device = device_problem(opts.resolved_device())
    if bad_device:
        problems.append(bad_device)
    if problems:
        raise RunConfigError(problems)
    restore_leftover(state_path_for(chosen.db))
    meter = make_meter(opts, sys.stderr)
    sink = ResultSink(args.out or unique_out_path(chosen.db, "idle"), chosen.db)
    try:
        with InterruptGuard() as guard:
            run = measure_idle(meter, args.seconds, opts.resolved_device(), guard=guard, tag=args.tag)
    finally:
        meter.close()
    sink.add(run)
    m = run["metrics"]
    if m.get("idle_power_w"):
        print(f"idle power: {m['idle_power_w']:.3f} W over {m['duration_s']:.1f} s "
              f"(boundary {m.get('energy_boundary')}, method {m.get('energy_method')})")
    else:
        print(f"idle power: not measured: {m.get('energy_missing_reason')}")
    if sink.write_error is None:
        print(f"result file: {sink.out_path}")
    report = sink.ingest()
    print(f"database: {report.status}")
    pushed = push_after_write(chosen) if report.status == "imported" else 0
    return exit_code(guard.pending) if guard.pending is not None else pushed


def cmd_workloads(args: argparse.Namespace) -> int:
    import runner.workloads as workloads
    from runner.report import table

    rows = []
    for name in workloads.names():
        w = workloads.get(name)
        size = f"seq {w.default_size}" if w.input_kind == "text" else f"{w.default_size}x{w.default_size}"
        if w.generates:
            size = f"prompt {w.default_size} + {w.default_max_new_tokens}"
        rows.append((name, w.model, w.task, size, f"{w.parameter_count() / 1e6:,.1f} M", w.description))
    print(table(("workload", "model", "task", "default input", "parameters", "description"), rows))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m runner", description="The JouleBench runner.")
    sub = parser.add_subparsers(dest="command", required=True)
    add_subcommands(sub, "database file (default: $JOULEBENCH_DB, else the per-user data directory)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from joulebench.commands import run_parser

    return run_parser(build_parser(), argv)
