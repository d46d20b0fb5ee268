"""Power traces, energy readings and the integration rule.

Integration rule (one place): energy from samples is the **trapezoid rule** over the sample
times, sum of (P_i + P_{i+1}) / 2 x (t_{i+1} - t_i). It is exact for piecewise-linear power and
its error on a step is at most half a sample interval's worth of the step, where the left sum
(P_i x dt_i) errs by a full interval on ramps. Whole power logs, live windows and logs attached
to imported runs all use it.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class PowerTrace:
    domain: str  # e.g. gpu0, VDD_IN, package-0
    boundary: str | None  # gpu_board, jetson_module, cpu_package, system, wall, estimated; None: a sub-rail
    method: str  # counter, sampled, reported, estimated
    t_s: list[float] = field(default_factory=list)  # seconds from the window start
    power_w: list[float] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The result file's `power_traces[]` entry."""
        return {"domain": self.domain, "boundary": self.boundary, "method": self.method,
                "t_s": list(self.t_s), "power_w": list(self.power_w)}


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


def trapezoid_j(t_s: Sequence[float], power_w: Sequence[float]) -> float:
    """Energy in J of power samples (W) at times (s), by the trapezoid rule."""
    if len(t_s) < 2:
        return 0.0
    t = np.asarray(t_s, dtype=float)
    p = np.asarray(power_w, dtype=float)
    return float(np.sum((p[1:] + p[:-1]) * 0.5 * np.diff(t)))


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
    if end_s <= start_s or not len(t_s):
        return 0.0
    lo, hi = bisect.bisect_right(t_s, start_s), bisect.bisect_left(t_s, end_s)
    ts = [start_s, *t_s[lo:hi], end_s]
    ps = [interpolate_w(t_s, power_w, start_s), *power_w[lo:hi], interpolate_w(t_s, power_w, end_s)]
    return trapezoid_j(ts, ps)


def median_period_s(t_s: Sequence[float]) -> float | None:
    """The median interval between successive samples (the sensor's effective period)."""
    steps = sorted(b - a for a, b in zip(t_s, t_s[1:]) if b > a)
    return steps[len(steps) // 2] if steps else None
