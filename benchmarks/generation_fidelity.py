"""Generation fidelity: the runner's decode tokens/s against an independent hand-written generation loop.

The bare loop shares no code with the runner: it builds its decoder with transformers directly
(its own copy of the shapes, random weights), makes its own prompts, and generates greedily with the
KV cache to the same length, timing the decode with `time.perf_counter` between two synchronisations
(after the first token, after the last). The runner's figure is `decode_tokens_per_s` from
`runner.execute.execute`, exactly as `joulebench run` measures (warmup fixed to the same number of
batches, power sampling on as in a real run).

Both run interleaved in one process over several rounds, the order alternating each round so drift
cancels. Per round: runner / bare. Printed: each round, the mean ratio with its 95 % confidence
interval (Student's t over the rounds, `energy.stats`), and the target.

    .venv/bin/python benchmarks/generation_fidelity.py           # llm-tiny, batch 4, prompt 32 + 32 new, CPU
    .venv/bin/python benchmarks/generation_fidelity.py --device cuda --workload llm-1b --precision bf16 \\
        --batch-size 8 --seq-len 512 --max-new-tokens 128 --steps 5 --rounds 7                  # on a GPU
    .venv/bin/python benchmarks/generation_fidelity.py --batch-size 1 --seq-len 8 --max-new-tokens 4 --warmup 1 \\
        --steps 1 --rounds 2 --threads 1                                         # smallest: seconds

Its default size takes a minute or more; tests/test_benchmarks_run.py runs the smallest. A ratio below the
target is printed beside it (exit code 0); the whole run is time-limited (--limit-s: the runner's run and the
bare loop run in this process): past it, `FAILED: ...` on stderr and exit code 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402
import transformers  # noqa: E402
import waits  # noqa: E402
from harness_overhead import interleaved  # noqa: E402

from runner.execute import execute  # noqa: E402
from runner.options import RunConfig  # noqa: E402

TARGET = 0.98  # the runner reads at least 98 % of the bare loop's decode tokens/s

# the bare loop's own copy of the shapes (LlamaConfig keyword arguments)
BARE_MODELS = {
    "llm-tiny": {"vocab_size": 2048, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                 "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 2048},
    "llm-1b": {"vocab_size": 128256, "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
               "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072},
    "llm-8b": {"vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
               "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072,
               "tie_word_embeddings": False},
}
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def bare_loop(workload: str, batch: int, prompt: int, new: int, precision: str, device: torch.device,
              warmup: int, steps: int) -> float:
    """Hand-written greedy generation with the KV cache: decoded tokens per second over `steps` batches."""
    kwargs = BARE_MODELS[workload]
    with device:
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**kwargs)).to(DTYPES[precision]).eval()
    gen = torch.Generator().manual_seed(1)
    ids = torch.randint(0, kwargs["vocab_size"], (batch, prompt), generator=gen).to(device)
    decode_s = 0.0
    with torch.inference_mode():
        for i in range(warmup + steps):
            out = model(input_ids=ids, use_cache=True)
            cache = out.past_key_values
            token = out.logits[:, -1:].argmax(-1)
            _sync(device)
            t0 = time.perf_counter()
            for _ in range(new - 1):
                out = model(input_ids=token, past_key_values=cache, use_cache=True)
                cache = out.past_key_values
                token = out.logits[:, -1:].argmax(-1)
            _sync(device)
            if i >= warmup:
                decode_s += time.perf_counter() - t0
    del model, ids
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return steps * batch * (new - 1) / decode_s


def runner_loop(cfg: RunConfig) -> float:
    run = execute(cfg).record
    if run["status"] != "ok":
        raise waits.BenchmarkFailed(f"the runner's run ended {run['status']}: {run.get('error')}")
    return float(run["metrics"]["decode_tokens_per_s"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default="llm-tiny", choices=sorted(BARE_MODELS))
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--seq-len", type=int, default=32)
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--precision", default="fp32", choices=sorted(DTYPES))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
    waits.add_limits(ap, limit_s=3600)
    args = ap.parse_args()
    return waits.main(lambda: measure(args), args.limit_s)


def measure(args: argparse.Namespace) -> int:
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    cfg = RunConfig(args.workload, "infer", args.precision, args.batch_size, 1, args.seq_len, args.device, False,
                    args.warmup, args.steps, None, 0, max_new_tokens=args.max_new_tokens)
    print(f"{cfg.label()} on {args.device}, torch {torch.__version__}, transformers {transformers.__version__}; "
          f"{args.steps} measured batches after {args.warmup} warmup batches; {args.rounds} rounds", flush=True)

    def bare() -> float:
        return bare_loop(args.workload, args.batch_size, args.seq_len, args.max_new_tokens, args.precision, device,
                         args.warmup, args.steps)

    interleaved(lambda: runner_loop(cfg), bare, args.rounds, what="tok/s", unit="decode tokens/s", target=TARGET,
                digits=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
