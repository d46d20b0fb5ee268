"""Harness overhead: the runner's measured throughput against a bare hand-written loop.

Same model (same seed, so the same weights), same synthetic batch, same precision, interleaved
in one process over several rounds (the order alternates each round so drift cancels). Prints
both throughputs per round, the median of the per-round ratios runner / bare, and the target.

    .venv/bin/python benchmarks/harness_overhead.py                 # bert-base, infer, batch 8, seq 128, CPU
    .venv/bin/python benchmarks/harness_overhead.py --rounds 7 --steps 20 --precision bf16

Not part of the test suite: it takes minutes on a CPU.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from runner import precision  # noqa: E402
from runner.execute import build, execute  # noqa: E402
from runner.options import RunConfig  # noqa: E402

TARGET = 0.99


def bare_loop(cfg: RunConfig) -> float:
    """A hand-written inference loop: examples per second over `cfg.steps` batches."""
    device = torch.device(cfg.device)
    model, inputs = build(cfg, device)
    prec = precision.get(cfg.precision)
    with precision.tf32_setting(prec, device), torch.inference_mode(), precision.autocast(prec, device):
        for _ in range(cfg.warmup_steps):
            model(**inputs)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        for _ in range(cfg.steps or 0):
            model(**inputs)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        elapsed = time.perf_counter() - start
    return (cfg.steps or 0) * cfg.batch_size / elapsed


def runner_loop(cfg: RunConfig) -> float:
    run = execute(cfg).record
    if run["status"] != "ok":
        raise SystemExit(f"the runner's run ended {run['status']}: {run.get('error')}")
    return float(run["metrics"]["throughput_sps"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default="bert-base-squad")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    cfg = RunConfig(args.workload, "infer", args.precision, args.batch_size, 1, args.seq_len, args.device,
                    False, args.warmup, args.steps, None, 0)
    print(f"{cfg.label()} on {args.device}, torch threads {torch.get_num_threads()}, "
          f"{args.steps} measured steps after {args.warmup} warmup, {args.rounds} rounds")
    print(f"{'round':>5}  {'order':<13}  {'runner sps':>10}  {'bare sps':>10}  {'ratio':>6}")
    # round 0 warms both paths (first model build, allocator, page cache) and is not counted
    r0, b0 = runner_loop(cfg), bare_loop(cfg)
    print(f"{0:>5}  {'(not counted)':<13}  {r0:>10.3f}  {b0:>10.3f}  {r0 / b0:>6.3f}", flush=True)
    ratios, runner_sps, bare_sps = [], [], []
    for i in range(args.rounds):
        if i % 2 == 0:
            r, b, order = runner_loop(cfg), bare_loop(cfg), "runner, bare"
        else:
            b, r, order = bare_loop(cfg), runner_loop(cfg), "bare, runner"
        runner_sps.append(r)
        bare_sps.append(b)
        ratios.append(r / b)
        print(f"{i + 1:>5}  {order:<13}  {r:>10.3f}  {b:>10.3f}  {r / b:>6.3f}", flush=True)
    ratio = statistics.median(ratios)
    print(f"\nrunner throughput (median): {statistics.median(runner_sps):.3f} samples/s")
    print(f"bare loop throughput (median): {statistics.median(bare_sps):.3f} samples/s")
    print(f"per-round ratios: min {min(ratios):.3f}, max {max(ratios):.3f}")
    print(f"ratio runner / bare (median of per-round ratios): {ratio:.3f}   target >= {TARGET}   "
          f"{'met' if ratio >= TARGET else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
