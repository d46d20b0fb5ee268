"""`joulebench serve-bench --target URL`: measure a running OpenAI-compatible server under load.

Every option and the server itself (reachable, OpenAI-compatible, serving the model) are checked before
anything is sent to be measured or stored; a bad one ends the command with the reason and no file.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

DESCRIPTION = (
    "Measure a running OpenAI-compatible server (vLLM, SGLang, TGI, llama.cpp, Ollama, transformers serve) with "
    "streamed requests while sampling the power of the device it runs on. --rate 0.5,1,2,4 or --concurrency 1,4,16 "
    "make a sweep: one run per point, all in one result file, imported into the database. Figures cover the "
    "steady state (warm-up and drain left out); an overloaded point is flagged and gets no latency percentiles.")


def add_arguments(p: argparse.ArgumentParser, db_help: str) -> None:
    from ingest.stores import add_store_arguments
    from runner.energy_args import add_energy_arguments
    from runner.serve_bench.options import APIS, ARRIVALS

    p.add_argument("--target", required=True, help="the server's URL, e.g. http://localhost:8000")
    p.add_argument("--model", help="the model id to request (default: the server's only model)")
    p.add_argument("--api", choices=APIS, default="completions",
                   help="/v1/completions or /v1/chat/completions (default: completions)")
    p.add_argument("--rate", help="open-loop arrival rate(s), requests/s, e.g. 0.5,1,2,4; or 'sweep': measure one "
                                  "stream (concurrency 1) and the saturation throughput (concurrency "
                                  "--max-concurrency, default 16), then --sweep-points rates evenly between them, "
                                  "the last at saturation (as GuideLLM's sweep)")
    p.add_argument("--sweep-points", type=float, help="with --rate sweep: the rates between one stream and "
                                                      "saturation (default 4)")
    p.add_argument("--concurrency", help="fixed concurrency (closed loop), e.g. 1,4,16")
    p.add_argument("--max-concurrency", type=float, help="with --rate: at most this many requests in flight")
    p.add_argument("--arrival", choices=ARRIVALS, default="poisson", help="arrival process (default: poisson)")
    p.add_argument("--burstiness", type=float, default=1.0,
                   help="with --arrival gamma: the gamma shape (1 Poisson, <1 burstier, >1 more even)")
    p.add_argument("--requests", type=float, help="requests per point (default: --duration's worth, else 10 s's)")
    p.add_argument("--duration", type=float, help="with --rate: seconds of arrivals per point (default 10)")
    p.add_argument("--warmup-requests", type=float, default=2.0, help="sequential requests before each point "
                                                                     "(not measured; default 2)")
    p.add_argument("--prompt-tokens", default="128", help="prompt tokens: 128, or mean=128,stdev=32,min=16,max=256")
    p.add_argument("--output-tokens", default="128", help="output tokens (max_tokens): as --prompt-tokens")
    p.add_argument("--lengths-csv", type=Path, help="a CSV of (prompt tokens, output tokens) rows to replay")
    p.add_argument("--tokenizer", type=Path, help="a local tokenizer folder: prompts of exactly the requested tokens")
    p.add_argument("--slo", help="goodput's targets, e.g. ttft_p90=500ms,tpot_p90=50ms (each request is held to "
                                 "every term)")
    p.add_argument("--engine", help="the engine's name when the server does not say it, e.g. vllm")
    p.add_argument("--seed", type=float, default=0.0, help="the seed of the first repeat (repeat r: seed + r)")
    p.add_argument("--repeats", type=float, default=1.0, help="runs per point (default 1)")
    p.add_argument("--request-timeout", type=float, default=300.0, help="seconds before a request counts as "
                                                                        "timed out (default 300)")
    p.add_argument("--device", help="the device the server runs on, whose power is sampled: cpu, cuda or cuda:N")
    p.add_argument("--server-device", help="a server on another machine: the device it runs on (e.g. 'Jetson AGX "
                                           "Orin'), measured by --power-log (that machine's log over the run)")
    p.add_argument("--gpus", help="the GPUs the server runs on, e.g. 0,1: their power summed into one energy figure, "
                                  "each GPU's trace kept (NVML; on a Jetson, 0: the module's power)")
    add_store_arguments(p, db_help, reads=False)
    p.add_argument("--out", type=Path, help="result file to write (default: results/ next to the database)")
    p.add_argument("--tag", help="a label stored with every run")
    p.add_argument("--check", action="store_true",
                   help="check the options and ask the server what it serves, print the planned runs as JSON, "
                        "and stop: nothing is measured or stored (the New run page's check)")
    add_energy_arguments(p)


def options_from(args: argparse.Namespace, db: str | None) -> Any:
    """ServeBenchOptions from the arguments; ServeBenchError listing every problem."""
    from joulebench.ranges import RangeError, check_text
    from runner.serve_bench.lengths import LengthPlan, parse_lengths, read_lengths_csv
    from runner.serve_bench.options import (
        SWEEP_POINTS,
        SWEEP_PROBE_CONCURRENCY,
        ServeBenchError,
        ServeBenchOptions,
        number_problem,
        parse_numbers,
        parse_slo,
    )

    problems: list[str] = []

    def guarded(fn: Any, *a: Any) -> Any:
        try:
            return fn(*a)
        except ServeBenchError as e:
            problems.extend(e.problems)
            return None

    from runner.serve_bench.gpus import parse_gpus

    rate_sweep = bool(args.rate) and str(args.rate).strip().lower() == "sweep"
    rates = parse_numbers("--request-rate", args.rate, float, problems) if args.rate and not rate_sweep else []
    concurrencies = [int(c) for c in parse_numbers("--concurrency", args.concurrency, int, problems)] \
        if args.concurrency else []
    problems[:] = [p.replace("--request-rate", "--rate", 1) for p in problems]
    if bool(args.rate) == bool(args.concurrency):
        problems.append("give one of --rate (open-loop arrivals, e.g. 0.5,1,2) and --concurrency (e.g. 1,4,16)")
    for option, value in (("--max-concurrency", args.max_concurrency), ("--burstiness", args.burstiness),
                          ("--requests", args.requests), ("--duration", args.duration),
                          ("--warmup-requests", args.warmup_requests), ("--seed", args.seed),
                          ("--repeats", args.repeats), ("--request-timeout", args.request_timeout),
                          ("--sample-hz", args.sample_hz), ("--tdp-w", args.tdp_w)):
        if value is not None:
            problem = number_problem(option, float(value))
            problems += [problem] if problem else []
    if args.arrival != "gamma" and args.burstiness != 1.0 and math.isfinite(args.burstiness):
        problems.append("--burstiness applies to --arrival gamma only")
    if args.concurrency and (args.max_concurrency is not None or args.duration is not None):
        problems.append("--max-concurrency and --duration apply to --rate only")
    sweep_points = getattr(args, "sweep_points", None)
    if sweep_points is not None:
        problem = number_problem("--sweep-points", float(sweep_points))
        problems += [problem] if problem else []
        if not rate_sweep:
            problems.append("--sweep-points applies to --rate sweep only")
    probe = int(args.max_concurrency) if args.max_concurrency and math.isfinite(args.max_concurrency) \
        else SWEEP_PROBE_CONCURRENCY
    if rate_sweep and args.requests is not None and math.isfinite(args.requests) and args.requests <= probe:
        problems.append(f"--requests: {args.requests:g} is too few for --rate sweep: its throughput probe keeps "
                        f"{probe} requests in flight (--max-concurrency), so give more than {probe}")
    gpus = guarded(parse_gpus, args.gpus) if getattr(args, "gpus", None) else []
    if gpus and (args.device is not None or args.power_log is not None):
        problems.append("--gpus names the devices to measure: leave out --device and --power-log")
    problems += remote_problems(args.target, getattr(args, "server_device", None), args.power_log)
    slo = guarded(parse_slo, args.slo) or []
    if args.lengths_csv is not None:
        pairs = guarded(read_lengths_csv, args.lengths_csv)
        lengths = LengthPlan(pairs=tuple(pairs or ()))
    else:
        lengths = LengthPlan(guarded(parse_lengths, "--prompt-tokens", args.prompt_tokens),
                             guarded(parse_lengths, "--output-tokens", args.output_tokens))
    if args.tokenizer is not None and not args.tokenizer.is_dir():
        problems.append(f"--tokenizer: {args.tokenizer} is not a folder (a tokenizer saved with save_pretrained)")
    for option, text in (("--tag", args.tag), ("--engine", args.engine), ("--model", args.model),
                         ("--server-device", getattr(args, "server_device", None))):
        try:
            check_text(text, option)
        except RangeError as e:
            problems.append(e.format_message())
    if problems:
        raise ServeBenchError(problems)
    return ServeBenchOptions(
        target=args.target, model=args.model, api=args.api, rates=rates, concurrencies=concurrencies,
        rate_sweep=rate_sweep, sweep_points=int(sweep_points) if sweep_points else SWEEP_POINTS, gpus=gpus or [],
        max_concurrency=int(args.max_concurrency) if args.max_concurrency else None, arrival=args.arrival,
        burstiness=args.burstiness, requests=int(args.requests) if args.requests else None, duration_s=args.duration,
        warmup_requests=int(args.warmup_requests), seed=int(args.seed), repeats=int(args.repeats),
        request_timeout_s=args.request_timeout, lengths=lengths, tokenizer=args.tokenizer, slo=slo,
        engine=args.engine, device=args.device, db=db, out=args.out, tag=args.tag, power_log=args.power_log,
        power_log_boundary=args.power_log_boundary, tdp_w=args.tdp_w, sample_hz=args.sample_hz,
        server_device=getattr(args, "server_device", None))


def remote_problems(target: str, server_device: str | None, power_log: Path | None) -> list[str]:
    """A server on another machine is measured through its own power log, under the device named for it:
    this machine's sensors would measure the client (runner.serve_bench.target_host)."""
    from runner.serve_bench.target_host import host_of, on_this_machine

    if server_device is not None and power_log is None:
        return ["--server-device names the device a --power-log measured: give --power-log FILE too (the "
                "server's power log over the run), or leave --server-device out for a server on this machine"]
    if server_device is not None or not target.lower().startswith(("http://", "https://")) or on_this_machine(target):
        return []
    host = host_of(target)[:80]
    if power_log is None:
        return [f"--target: {host} is another machine, so this machine's sensors would measure the client, not the "
                "server. Run serve-bench on the server's machine, or give the server's power log over the run "
                "(--power-log FILE, e.g. its tegrastats or nvidia-smi log) and name its device (--server-device NAME)"]
    return [f"--target: {host} is another machine: name the device its power log measured (--server-device NAME, "
            "e.g. 'Jetson AGX Orin'); this machine is only the client"]


def check(opts: Any) -> dict[str, Any]:
    """What the sweep would measure, after asking the server (ServeBenchError when it cannot be measured):
    the runs planned (one per point and repeat), as `joulebench run --check` reports them."""
    from runner.serve_bench.gpus import open_gpus
    from runner.serve_bench.probe import probe

    info = probe(opts.target, opts.model, opts.engine)
    if opts.gpus:
        open_gpus(opts.gpus).close()  # an index that does not exist ends the check here
    if opts.rate_sweep:
        loads = ["concurrency 1 (one stream)", f"concurrency {opts.probe_concurrency} (saturation)"] + [
            f"rate {k} of {opts.sweep_points} between them" for k in range(1, opts.sweep_points + 1)]
    else:
        loads = [f"{opts.load_kind} {point:g}" for point in opts.points()]
    labels = [f"{info.label} at {load}" + (f" (repeat {r})" if opts.repeats > 1 else "")
              for r in range(opts.repeats) for load in (loads if r == 0 or not opts.rate_sweep else loads[2:])]
    return {"measured_runs": len(labels), "idle_runs": 0, "runs": labels, "model": info.label,
            "engine": info.engine}


def cmd_serve_bench(args: argparse.Namespace) -> int:
    from ingest.stores import push_after_write, target

    chosen = target(args)
    opts = options_from(args, chosen.db)
    if args.check:  # without the runner's recording (torch): the check answers within the probe's time limit
        print(json.dumps(check(opts)))
        return 0
    from runner.serve_bench.run import serve_bench

    result = serve_bench(opts, stream=sys.stderr)
    if result.out_path is not None:
        print(f"\nresult file: {result.out_path}")
    if result.ingest is not None:
        r = result.ingest
        print(f"database: {r.message}" if r.status == "queued" else f"database: {r.status}, {r.runs_added} run(s) "
                                                                     "added")
    if result.ingest_error is not None:
        print(f"error: could not import the result file: {result.ingest_error.format_message()}", file=sys.stderr)
    pushed = push_after_write(chosen) if result.ingest is not None and result.ingest.status == "imported" else 0
    stopped = any(run["status"] == "interrupted" for run in result.runs)  # a server that died mid-run
    return result.exit_code or (1 if stopped else 0) or pushed


def add_subcommand(sub: Any, db_help: str) -> None:
    p = sub.add_parser("serve-bench", help="measure a running OpenAI-compatible server under load (rate or "
                                           "concurrency sweeps)", description=DESCRIPTION)
    add_arguments(p, db_help)
    p.set_defaults(func=cmd_serve_bench)
