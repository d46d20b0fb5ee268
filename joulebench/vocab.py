"""The project's vocabularies, read from the result-file schema (the one definition).

    BOUNDARIES  where energy was measured      PRECISIONS  numeric precisions
    METHODS     how energy was obtained        MODES       train | infer | idle
    DEVICE_KINDS gpu | jetson | cpu            STATUSES    run outcomes
    SOURCE_KINDS local | upload | reference
"""

from __future__ import annotations

from typing import Any

from joulebench.resultfile import schema


def _enum(def_name: str, prop: str) -> tuple[str, ...]:
    spec: dict[str, Any] = schema()["$defs"][def_name]["properties"][prop]
    return tuple(v for v in spec["enum"] if v is not None)


BOUNDARIES = _enum("metrics", "energy_boundary")
METHODS = _enum("metrics", "energy_method")
PRECISIONS = _enum("config", "precision")
MODES = _enum("config", "mode")
DEVICE_KINDS = _enum("run_device", "kind")
STATUSES = _enum("run", "status")
SOURCE_KINDS = _enum("provenance", "source_kind")

RUN_MODES = tuple(m for m in MODES if m != "idle")  # what `joulebench run` measures
CPU_PRECISIONS = ("fp32", "bf16")  # the precisions a CPU runs (runner.precision defines each)
INFER_ONLY_PRECISIONS = ("fp16-weights",)
