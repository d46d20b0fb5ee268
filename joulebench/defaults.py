"""Defaults shared by `joulebench run` and the New run page (one place, so they cannot drift).

Two sets, chosen by the power meter the run uses:
- a real sensor (NVML, INA3221, jtop, RAPL, a power log): energy-grade windows, at least
  MIN_WINDOW_S long after a warmup that ends when power and step time are steady, and
  SENSOR_REPEATS repeats (docs/trust-grades.md says why);
- the estimate only (a CPU without sensors, CI): short runs, STEPS measured steps after
  WARMUP_STEPS warmup steps, one repeat, so tests stay fast.
"""

from __future__ import annotations

from energy.grades import DECISION_WINDOW_S, REPEATS_A

WORKLOAD = "bert-tiny"
# the workloads the runner ships (runner.workloads.names(); tests/test_configuration.py checks both agree): what a page
# may prefill New run with; a model a file names is measured by serving it (serve-bench), not by the runner
RUNNER_WORKLOADS = ("bert-large-ner", "bert-base-ner", "bert-large-squad", "bert-base-squad", "distilbert-cls", "gpt2",
                    "resnet50", "vit-base", "bert-tiny", "llm-0.5b", "llm-1b", "llm-3b", "llm-8b", "llm-tiny")
MODE = "infer"
PRECISION = "fp32"
BATCH_SIZE = 8
IDLE_S = 10.0  # idle baseline per power setting
SETTLE_S = 5.0  # wait after changing the power setting, before measuring
SAMPLE_HZ = 10.0

# --- a real power sensor: energy-grade windows ----------------------------------------------------
MIN_WINDOW_S = DECISION_WINDOW_S  # the measured window lasts at least this long (--min-window)
SENSOR_REPEATS = REPEATS_A  # repeats per configuration (--repeats)
WARMUP_MIN_STEPS = 3  # steps before steadiness is judged (compilation, first allocations)
WARMUP_SPAN_S = 1.0  # the rolling mean's span; the last three spans are compared
WARMUP_TOLERANCE_PCT = 3.0  # steady: the three spans' means within this, for power and step time
WARMUP_MAX_S = 60.0  # the warmup's time cap; a run that reaches it is flagged warmup_not_steady

# --- the estimate only (no sensor): short runs -------------------------------------------------
STEPS = 20  # measured steps per run when neither --steps, --duration nor --min-window is given
WARMUP_STEPS = 3
REPEATS = 1
