"""The runner: measures transformers training and inference on the local device.

Modules, one job each: `workloads` (models from configs, synthetic inputs), `precision`,
`devices` (resolve, synchronise, peak memory), `power` (the power-meter seam and the
integration rule), `sensors` (NVML, Jetson INA3221 / jtop, RAPL, external log, estimate; detected
in a fixed order), `sampler` (the background sampler and the sensor meter), `control` (power
limit / power mode, always restored), `idle` (the idle baseline), `measure` (the timed loop),
`environment` (what the run ran on), `options` (parsing and validation), `execute` (one run and
its outcome), `record` (result file and ingest), `sweep`, `report`, `interrupts`, `cli`.

Measurement definitions (PRODUCT.md): a *step* is one batch of n in inference and one
optimizer step of m x n examples in training. Throughput = examples in the measured window /
window wall time, the device synchronised at both edges; warmup steps are excluded. Latency
percentiles are over the measured steps' times.
"""

from __future__ import annotations

from typing import Any

from runner.options import RunConfig, SweepOptions

__all__ = ["RunConfig", "SweepOptions", "SweepResult", "run_sweep"]


def __getattr__(name: str) -> Any:
    # run_sweep needs torch; importing `runner` (e.g. for `joulebench --help`) must not.
    if name in ("SweepResult", "run_sweep"):
        from runner import sweep

        return getattr(sweep, name)
    raise AttributeError(f"module 'runner' has no attribute {name!r}")
