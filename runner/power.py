"""The seam for energy measurement: a power meter opens a window around the measured steps.

The measurement loop calls `meter.window()` right after the device is synchronised at the
window start and leaves it right after the synchronisation at the end. The meters that do the
measuring live in `runner.sensors` (detected in a fixed order by `runner.sensors.detect`);
`NoPowerMeter` remains for callers that want energy recorded as missing, with a reason.

Integration rule (one place): energy from samples is the **trapezoid rule** over the sample
times, sum of (P_i + P_{i+1}) / 2 x (t_{i+1} - t_i). It is exact for piecewise-linear power and
its error on a step is at most half a sample interval's worth of the step, where the left sum
(P_i x dt_i, the importers' rule for whole logs) errs by a full interval on ramps.
"""

from __future__ import annotations

import bisect
import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

NO_SENSOR_REASON = "no power sensor: energy measurement not available on this device yet"


@dataclass
class PowerTrace:
    domain: str  # e.g. gpu0, VDD_IN, package-0
    boundary: str | None  # gpu_board, jetson_module, cpu_package, system, wall, estimated; None: a sub-rail
    method: str  # counter, sampled, reported, estimated
    t_s: list[float] = field(default_factory=list)  # seconds from the window start
    power_w: list[float] = field(default_factory=list)


@dataclass
class EnergyReading:
    """What a meter measured over one window; filled in when the window closes."""

    energy_j: float | None = None
    boundary: str | None = None
    method: str | None = None
    missing_reason: str | None = None
    traces: list[PowerTrace] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)  # extra result-file metrics (energy_counter_j, clocks)
    started_wall_s: float | None = None  # Unix time of the window start (for aligning external logs)
    duration_s: float | None = None  # the meter's own view of the window length


class PowerMeter(Protocol):
    """One measurement window at a time; `window()` must close the window even on error."""

    name: str
    boundary: str
    method: str

    def window(self) -> contextlib.AbstractContextManager[EnergyReading]: ...

    def close(self) -> None: ...


class NoPowerMeter:
    """The meter for a device without a sensor: every window reports energy missing."""

    name = "none"
    boundary = "estimated"
    method = "estimated"

    def __init__(self, reason: str = NO_SENSOR_REASON) -> None:
        self.reason = reason

    @contextlib.contextmanager
    def window(self) -> Iterator[EnergyReading]:
        reading = EnergyReading()
        try:
            yield reading
        finally:
            reading.missing_reason = self.reason

    def close(self) -> None:
        pass


def default_meter() -> PowerMeter:
    """The meter for this machine: the first sensor found (NVML, Jetson, RAPL), else the estimate."""
    from runner.sensors import detect

    return detect()


# --- integration ------------------------------------------------------------------------------

def trapezoid_j(t_s: Sequence[float], power_w: Sequence[float]) -> float:
    """Energy in J of power samples (W) at times (s), by the trapezoid rule."""
    total = 0.0
    for i in range(1, len(t_s)):
        total += (power_w[i] + power_w[i - 1]) * 0.5 * (t_s[i] - t_s[i - 1])
    return total


def interpolate_w(t_s: Sequence[float], power_w: Sequence[float], at_s: float) -> float:
    """Power at `at_s`, linear between samples, held constant beyond the first and last."""
    if at_s <= t_s[0]:
        return power_w[0]
    if at_s >= t_s[-1]:
        return power_w[-1]
    i = bisect.bisect_right(t_s, at_s)
    t0, t1, p0, p1 = t_s[i - 1], t_s[i], power_w[i - 1], power_w[i]
    return p0 if t1 == t0 else p0 + (p1 - p0) * (at_s - t0) / (t1 - t0)


def window_j(t_s: Sequence[float], power_w: Sequence[float], start_s: float, end_s: float) -> float:
    """Energy in J between `start_s` and `end_s`: trapezoid over the samples inside, with the
    power at both edges interpolated between the neighbouring samples."""
    if end_s <= start_s or not t_s:
        return 0.0
    inside = [(t, p) for t, p in zip(t_s, power_w) if start_s < t < end_s]
    ts = [start_s] + [t for t, _ in inside] + [end_s]
    ps = [interpolate_w(t_s, power_w, start_s)] + [p for _, p in inside] + [interpolate_w(t_s, power_w, end_s)]
    return trapezoid_j(ts, ps)
