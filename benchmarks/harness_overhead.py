"""Harness fidelity: the runner's measured throughput against an independent bare loop.

The bare loop shares no code with the runner: it builds its model with transformers directly
(its own copy of the shapes: BERT base / large / tiny with a question-answering or
token-classification head, random weights), makes its own synthetic batch, enters inference
mode and autocast itself, and times with `time.perf_counter` after synchronising the device
(CUDA events are not needed for a whole-window figure). The runner's figure comes from
`runner.execute.execute`, exactly as `joulebench run` measures (its warmup fixed to the same
number of steps, so both warm up alike; power sampling on, as in a real run).

Both run interleaved in one process over several rounds, the order alternating each round so
drift cancels. Per round: runner / bare. Printed: each round, the mean ratio with its 95 %
confidence interval (Student's t over the rounds, `energy.stats`), and the target.

    .venv/bin/python benchmarks/harness_overhead.py                  # bert-base-squad infer, batch 8, seq 128, CPU
    .venv/bin/python benchmarks/harness_overhead.py --workload bert-tiny --steps 300 --rounds 9
    .venv/bin/python benchmarks/harness_overhead.py --device cuda --workload bert-large-squad --precision fp16 \\
        --seq-len 384 --batch-size 8 --steps 500 --rounds 9                                       # on a GPU
    .venv/bin/python benchmarks/harness_overhead.py --workload bert-tiny --batch-size 1 --seq-len 16 --warmup 1 \\
        --steps 3 --rounds 2 --threads 1                                         # smallest: seconds

Its default size takes minutes on a CPU; tests/test_benchmarks_run.py runs the smallest. A ratio below the
target is printed beside it (exit code 0); the whole run is time-limited (--limit-s: the runner's run and the
bare loop run in this process): past it, `FAILED: ...` on stderr and exit code 1.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
import transformers  # noqa: E402
import waits  # noqa: E402

from energy.stats import aggregate  # noqa: E402
from runner.execute import execute  # noqa: E402
from runner.options import RunConfig  # noqa: E402

TARGET = 0.99  # the runner reads at least 99 % of the bare loop's throughput

# the bare loop's own copy of the shapes: (config keyword arguments, head class)
BARE_MODELS = {
    "bert-base-squad": ({"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                         "intermediate_size": 3072}, "BertForQuestionAnswering"),
    "bert-large-squad": ({"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
                          "intermediate_size": 4096}, "BertForQuestionAnswering"),
    "bert-tiny": ({"hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 512,
                   "num_labels": 9}, "BertForTokenClassification"),
}
VOCAB = 30522


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@contextlib.contextmanager
def _precision(precision: str, device: torch.device) -> Iterator[None]:
    """fp32 (TF32 off), tf32, or autocast to fp16 / bf16: set here, not through the runner."""
    cuda = device.type == "cuda"
    if cuda:
        before = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = precision == "tf32"
    try:
        if precision in ("fp16", "bf16"):
            dtype = torch.float16 if precision == "fp16" else torch.bfloat16
            with torch.autocast(device_type=device.type, dtype=dtype):
                yield
        else:
            yield
    finally:
        if cuda:
            torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


def bare_loop(workload: str, batch: int, seq: int, precision: str, device: torch.device, warmup: int,
              steps: int) -> float:
    """A hand-written inference loop: examples per second over `steps` batches."""
    kwargs, head = BARE_MODELS[workload]
    model = getattr(transformers, head)(transformers.BertConfig(**kwargs)).to(device).eval()
    gen = torch.Generator().manual_seed(1)
    inputs = {"input_ids": torch.randint(0, VOCAB, (batch, seq), generator=gen).to(device),
              "attention_mask": torch.ones(batch, seq, dtype=torch.long, device=device),
              "token_type_ids": torch.zeros(batch, seq, dtype=torch.long, device=device)}
    with torch.inference_mode(), _precision(precision, device):
        for _ in range(warmup):
            model(**inputs)
        _sync(device)
        start = time.perf_counter()
        for _ in range(steps):
            model(**inputs)
        _sync(device)
        elapsed = time.perf_counter() - start
    del model, inputs
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return steps * batch / elapsed


def runner_loop(cfg: RunConfig) -> float:
    run = execute(cfg).record
    if run["status"] != "ok":
        raise waits.BenchmarkFailed(f"the runner's run ended {run['status']}: {run.get('error')}")
    return float(run["metrics"]["throughput_sps"])


def verdict(low: float | None, mean: float, high: float | None, target: float = TARGET) -> str:
    if low is not None and low >= target:
        return "met (the whole interval is at or above the target)"
    if high is not None and high < target:
        return "NOT met (the whole interval is below the target)"
    if mean >= target:
        return "met on the mean (the interval reaches below the target: more rounds narrow it)"
    return "not shown (the mean is below the target, the interval reaches it: run more rounds)"


def interleaved(runner: Callable[[], float], bare: Callable[[], float], rounds: int, *, what: str, unit: str,
                target: float, digits: int = 3) -> None:
    """Round 0 (not counted) warms both paths; then `rounds` rounds, the order alternating so drift
    cancels; printed: each round, both means with their 95 % intervals, the ratio and the verdict."""
    print(f"{'round':>5}  {'order':<13}  {'runner ' + what:>12}  {'bare ' + what:>12}  {'ratio':>6}")
    r0, b0 = runner(), bare()  # first model build, allocator, page cache
    print(f"{0:>5}  {'(not counted)':<13}  {r0:>12.{digits}f}  {b0:>12.{digits}f}  {r0 / b0:>6.3f}", flush=True)
    ratios, runner_values, bare_values = [], [], []
    for i in range(rounds):
        if i % 2 == 0:
            r, b, order = runner(), bare(), "runner, bare"
        else:
            b, r, order = bare(), runner(), "bare, runner"
        runner_values.append(r)
        bare_values.append(b)
        ratios.append(r / b)
        print(f"{i + 1:>5}  {order:<13}  {r:>12.{digits}f}  {b:>12.{digits}f}  {r / b:>6.3f}", flush=True)
    ratio, runner_agg, bare_agg = aggregate(ratios), aggregate(runner_values), aggregate(bare_values)
    assert ratio is not None and runner_agg is not None and bare_agg is not None
    print(f"\nrunner: {runner_agg.as_text(4)} {unit} (mean ± 95 % CI)")
    print(f"bare loop: {bare_agg.as_text(4)} {unit}")
    interval = "" if ratio.ci95_low is None else f" (95 % CI {ratio.ci95_low:.3f}-{ratio.ci95_high:.3f})"
    print(f"ratio runner / bare: {ratio.mean:.3f}{interval}, n {ratio.n}, round-to-round CoV "
          f"{ratio.cov_pct or 0:.1f} %")
    print(f"target >= {target}: {verdict(ratio.ci95_low, ratio.mean, ratio.ci95_high, target)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default="bert-base-squad", choices=sorted(BARE_MODELS))
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--precision", default="fp32", choices=("fp32", "tf32", "fp16", "bf16"))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, help="torch CPU threads (default: torch's; 1 is steadier on a "
                                                "machine shared with other work)")
    waits.add_limits(ap, limit_s=3600)
    args = ap.parse_args()
    return waits.main(lambda: measure(args), args.limit_s)


def measure(args: argparse.Namespace) -> int:
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    cfg = RunConfig(args.workload, "infer", args.precision, args.batch_size, 1, args.seq_len, args.device, False,
                    args.warmup, args.steps, None, 0)
    print(f"{cfg.label()} on {args.device}, torch {torch.__version__}, {torch.get_num_threads()} threads; "
          f"{args.steps} measured steps after {args.warmup} warmup steps; {args.rounds} rounds", flush=True)
    bare = lambda: bare_loop(args.workload, args.batch_size, args.seq_len, args.precision, device,  # noqa: E731
                             args.warmup, args.steps)
    interleaved(lambda: runner_loop(cfg), bare, args.rounds, what="sps", unit="samples/s", target=TARGET)
    return 0


if __name__ == "__main__":
    sys.exit(main())
