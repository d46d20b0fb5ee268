"""`joulebench run` on a lent GPU machine whose image lacks duckdb: the same options and defaults as the CLI's
(`runner.options.from_strings`), `run_sweep(ingest=False)`, the result file written to argv[1]; import it with
`joulebench import FILE` on a machine with the store. Needs torch, transformers, nvidia-ml-py, polars and jsonschema
(carry the last two as wheels: the device tool's README says how).

    python3 benchmarks/gpu_run_file_only.py OUT.json SCRATCH.duckdb [workload=...] [precision=...] [batch_size=...]
        [repeats=N]

Defaults: the issue's check, bert-large-squad infer fp16 batch 8.
"""

import sys
from pathlib import Path

from joulebench import defaults
from runner import options
from runner.report import summary
from runner.sweep import run_sweep

out, db = Path(sys.argv[1]), Path(sys.argv[2])
extra = dict(a.split("=", 1) for a in sys.argv[3:])
opts = options.from_strings(
    workload=extra.get("workload", "bert-large-squad"), mode="infer", precision=extra.get("precision", "fp16"),
    batch_size=extra.get("batch_size", "8"), grad_accum="1", seq_len=None, image_size=None, max_new_tokens=None,
    request_rate=None, compile=False, warmup=None, steps=None, duration_s=None, min_window_s=None,
    repeats=int(extra["repeats"]) if "repeats" in extra else None, device=extra.get("device"), db=db, out=out,
    tag=None, power_limit=None, power_mode=None, jetson_clocks=False, settle_s=defaults.SETTLE_S, idle=True,
    idle_s=defaults.IDLE_S, power_log=None, power_log_boundary=None, tdp_w=None, sample_hz=defaults.SAMPLE_HZ,
    profile=False, power_dry_run=False)
result = run_sweep(opts, ingest=False)
if result.runs:
    print(summary(result.runs))
print("result file:", result.out_path, "exit", result.exit_code)
sys.exit(result.exit_code)
