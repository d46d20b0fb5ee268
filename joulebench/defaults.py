"""Defaults shared by `joulebench run` and the New run page (one place, so they cannot drift)."""

from __future__ import annotations

WORKLOAD = "bert-tiny"
MODE = "infer"
PRECISION = "fp32"
BATCH_SIZE = 8
STEPS = 20  # measured steps per run when neither --steps nor --duration is given
WARMUP_STEPS = 3
REPEATS = 1
IDLE_S = 10.0  # idle baseline per power setting
SETTLE_S = 5.0  # wait after changing the power setting, before measuring
SAMPLE_HZ = 10.0
