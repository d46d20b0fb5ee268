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

import numpy as np
from numpy.typing import ArrayLike

MIN_POINTS_PER_SPAN = 2
MIN_DRIFT_POINTS = 4
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


def drift_pct(t_s: ArrayLike, values: ArrayLike, *, min_points: int = MIN_DRIFT_POINTS) -> float | None:
    """(mean of the second half - mean of the first half) / overall mean, in % (positive: rising),
    with the halves split at the middle of the time span (a value stamped at the middle belongs to
    the first half). None with fewer than `min_points` values. Takes lists or numpy arrays, in any
    order. The store computes the same halves in SQL and finishes with `drift_from_halves`."""
    t = np.asarray(t_s, dtype=float)
    v = np.asarray(values, dtype=float)
    if len(t) != len(v) or not len(t):
        return None
    mid = (float(t.min()) + float(t.max())) / 2.0
    later = t > mid
    return drift_from_halves(len(t), bool(t.max() > t.min()), float(v[~later].mean()) if (~later).any() else None,
                             float(v[later].mean()) if later.any() else None, float(v.mean()), min_points)


def drift_from_halves(n: int, spans_time: bool, first_mean: float | None, second_mean: float | None,
                      overall_mean: float | None, min_points: int = MIN_DRIFT_POINTS) -> float | None:
    """The drift from the halves' means (see drift_pct)."""
    if n < min_points or not spans_time or first_mean is None or second_mean is None or overall_mean is None:
        return None
    if overall_mean <= 0:
        return None
    return (second_mean - first_mean) / overall_mean * 100.0


def update_period_s(t_s: Sequence[float], values: Sequence[float], *, min_changes: int = 3) -> float | None:
    """The median interval between successive changes of a polled value; None with fewer than
    `min_changes` changes (a value that never moves tells nothing about its period)."""
    changes = [t for t, a, b in zip(t_s[1:], values, values[1:]) if b != a]
    if len(changes) < min_changes:
        return None
    gaps = [b - a for a, b in zip(changes, changes[1:]) if b > a]
    return statistics.median(gaps) if gaps else None
