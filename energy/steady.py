"""Steady state and sensor update periods, from time series (power samples, step times).

- `is_steady`: the rolling means over the last three spans of `span_s` agree within
  `tolerance_pct`. The runner's time-based warmup ends when both power and step
  time are steady (with a cap); see runner.measure.
- `drift_pct`: how much a window's mean changes between its first and second half (signed:
  positive when it rises). The trust grade uses it to see a window that began before power
  had risen (a warmup too short), or an idle baseline that had not settled.
- `update_period_s`: how often a polled value actually changes (the sensor's update period,
  which can be far slower than the polling: NVML on an H100 updates about every 100 ms).
"""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Sequence

MIN_POINTS_PER_SPAN = 2
STEADY_SPANS = 3


def _mean_between(t_s: Sequence[float], values: Sequence[float], lo: float, hi: float) -> tuple[float, int]:
    """Mean of the values stamped in (lo, hi], and how many there are."""
    i, j = bisect.bisect_right(t_s, lo), bisect.bisect_right(t_s, hi)
    chunk = values[i:j]
    return (sum(chunk) / len(chunk) if chunk else float("nan")), len(chunk)


def is_steady(t_s: Sequence[float], values: Sequence[float], *, span_s: float, tolerance_pct: float,
              spans: int = STEADY_SPANS, min_points: int = MIN_POINTS_PER_SPAN) -> bool:
    """Whether the means over the last `spans` consecutive spans of `span_s` agree within
    `tolerance_pct` (largest minus smallest, against their mean). Three spans, not two: two
    adjacent means of a swinging signal can match at one phase, three cannot. False until the
    series covers the spans with `min_points` values in each."""
    if not t_s or len(t_s) != len(values):
        return False
    end = t_s[-1]
    if end - t_s[0] < spans * span_s:
        return False
    means = []
    for k in range(spans):
        mean, n = _mean_between(t_s, values, end - (k + 1) * span_s, end - k * span_s)
        if n < min_points:
            return False
        means.append(mean)
    overall = sum(means) / len(means)
    if overall == 0:
        return False
    return (max(means) - min(means)) / abs(overall) * 100.0 <= tolerance_pct


def drift_pct(t_s: Sequence[float], values: Sequence[float], *, min_points: int = 4) -> float | None:
    """(mean of the second half - mean of the first half) / overall mean, in % (positive: rising),
    with the halves split at the middle of the time span. None with fewer than `min_points` values."""
    if len(t_s) < min_points or len(t_s) != len(values) or t_s[-1] <= t_s[0]:
        return None
    mid = (t_s[0] + t_s[-1]) / 2.0
    first = [v for t, v in zip(t_s, values) if t <= mid]
    second = [v for t, v in zip(t_s, values) if t > mid]
    if not first or not second:
        return None
    overall = sum(values) / len(values)
    if overall <= 0:
        return None
    return (sum(second) / len(second) - sum(first) / len(first)) / overall * 100.0


def update_period_s(t_s: Sequence[float], values: Sequence[float], *, min_changes: int = 3) -> float | None:
    """The median interval between successive changes of a polled value; None with fewer than
    `min_changes` changes (a value that never moves tells nothing about its period)."""
    changes = [t for t, a, b in zip(t_s[1:], values, values[1:]) if b != a]
    if len(changes) < min_changes:
        return None
    gaps = [b - a for a, b in zip(changes, changes[1:]) if b > a]
    return statistics.median(gaps) if gaps else None
