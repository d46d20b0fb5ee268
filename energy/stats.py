"""The aggregate of a configuration's repeats: mean, spread and a 95 % confidence interval.

One module computes it, for the CLI summary, the store (stored per configuration at ingest)
and the explorer, so a figure reads the same everywhere:

- n: repeats that measured the figure (missing values are left out, never counted as 0);
- mean, standard deviation (sample, n - 1), coefficient of variation = sd / mean in %;
- 95 % confidence interval of the mean: mean +- t(0.975, n - 1) x sd / sqrt(n), Student's t
  from scipy (no hand-typed table). With one repeat there is no spread and no interval.
- Every figure aggregated here is a positive physical quantity (samples/s, J, W, ms). When the
  interval would reach 0 or below (few repeats with a wide spread: with n = 2, t = 12.7, any CoV
  above about 11 %), it says nothing true and is withheld: the figure reads "not enough repeats
  for an interval", never "-2,174 to 2,589 samples/s".

`ratio_interval` gives "A is 1.9x (1.8-2.0) B": the ratio of two means with a 95 % interval
from the delta method on the log scale (variances of log means add; Welch-Satterthwaite
degrees of freedom), and says when the interval holds 1: the difference is within the noise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

CONFIDENCE = 0.95


def _t_quantile(confidence: float, dof: float) -> float:
    """Two-sided Student's t critical value: scipy's stdtrit, which scipy.stats.t.ppf calls, imported on first use
    and alone (scipy.stats takes half a second to load, on a page's first rerun)."""
    from scipy.special import stdtrit

    return float(stdtrit(dof, 0.5 + confidence / 2.0))


def significant(x: float, digits: int) -> str:
    """`x` to `digits` significant figures, without an exponent: 586.3, 167, 0.076, 12,345."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    return f"{x:,.{decimals}f}"


def _clean(values: Iterable[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(float(v))]


@dataclass(frozen=True)
class Aggregate:
    """The repeats of one figure. std, cov_pct and the interval are None for a single repeat."""

    n: int
    mean: float
    std: float | None = None
    cov_pct: float | None = None
    ci95_low: float | None = None
    ci95_high: float | None = None

    @classmethod
    def bounded(cls, n: int, mean: float, std: float | None, cov_pct: float | None, low: float | None,
                high: float | None) -> Aggregate:
        """An aggregate whose interval is withheld when it would reach 0 or below (also for
        intervals stored before this rule)."""
        if low is not None and mean > 0 and low <= 0:
            low = high = None
        return cls(n, mean, std, cov_pct, low, high)

    @property
    def interval_withheld(self) -> bool:
        """Repeats that show a spread but too few of them for an interval above 0."""
        return self.n >= 2 and self.ci95_low is None

    def interval_text(self, fmt: Callable[[float], str], unit: str = "") -> str:
        """'12.1 to 12.9 samples/s', or why there is no interval."""
        if self.ci95_low is None or self.ci95_high is None:
            if self.interval_withheld:
                return (f"not enough repeats for an interval ({self.n} with a spread of "
                        f"{significant(self.cov_pct or 0.0, 2)} %: it would reach below 0)")
            return "needs 2 or more repeats"
        return f"{fmt(self.ci95_low)} to {fmt(self.ci95_high)}{(' ' + unit) if unit else ''}"

    @property
    def ci95_half(self) -> float | None:
        """Half the width of the interval (the +- in "mean +- half")."""
        if self.ci95_low is None or self.ci95_high is None:
            return None
        return (self.ci95_high - self.ci95_low) / 2.0

    def as_text(self, digits: int = 3) -> str:
        """'0.643 ± 0.024 (n 3)': the mean to `digits` significant figures, the interval's half
        width to two; '0.643 (n 1)' without an interval."""
        half = self.ci95_half
        if half is None and self.interval_withheld:
            return f"{significant(self.mean, digits)} (n {self.n}, spread too wide for an interval)"
        if half is None:
            return f"{significant(self.mean, digits)} (n {self.n})"
        return f"{significant(self.mean, digits)} ± {significant(half, 2)} (n {self.n})"


def aggregate(values: Iterable[float | None], confidence: float = CONFIDENCE) -> Aggregate | None:
    """The aggregate of the measured values (None and NaN left out); None when there are none."""
    xs = _clean(values)
    n = len(xs)
    if n == 0:
        return None
    mean = math.fsum(xs) / n
    if n == 1:
        return Aggregate(1, mean)
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    half = _t_quantile(confidence, n - 1) * std / math.sqrt(n)
    cov = std / abs(mean) * 100.0 if mean else None
    return Aggregate.bounded(n, mean, std, cov, mean - half, mean + half)


@dataclass(frozen=True)
class RatioInterval:
    """mean(a) / mean(b) with its 95 % interval (None when either side has a single repeat)."""

    ratio: float
    low: float | None
    high: float | None
    n_a: int
    n_b: int

    @property
    def within_noise(self) -> bool | None:
        """True when the interval holds 1 (no difference shown); None without an interval."""
        if self.low is None or self.high is None:
            return None
        return self.low <= 1.0 <= self.high

    def as_text(self, decimals: int = 2) -> str:
        """'1.95x (1.93-1.97)', or '1.95x (no interval: n 1 and 3)'."""
        if self.low is None or self.high is None:
            return f"{self.ratio:.{decimals}f}x (no interval: n {self.n_a} and {self.n_b})"
        return f"{self.ratio:.{decimals}f}x ({self.low:.{decimals}f}-{self.high:.{decimals}f})"


def ratio_interval(a: Iterable[float | None], b: Iterable[float | None],
                   confidence: float = CONFIDENCE) -> RatioInterval | None:
    """The ratio of the means of `a` and `b` (both positive) with its interval; None when a side
    has no values or a mean is not positive."""
    xa, xb = _clean(a), _clean(b)
    if not xa or not xb:
        return None
    agg_a, agg_b = aggregate(xa, confidence), aggregate(xb, confidence)
    assert agg_a is not None and agg_b is not None
    if agg_a.mean <= 0 or agg_b.mean <= 0:
        return None
    ratio = agg_a.mean / agg_b.mean
    if agg_a.std is None or agg_b.std is None:
        return RatioInterval(ratio, None, None, agg_a.n, agg_b.n)
    # variance of log(mean) ~ sd^2 / (n mean^2) (delta method); Welch-Satterthwaite dof
    va = agg_a.std ** 2 / (agg_a.n * agg_a.mean ** 2)
    vb = agg_b.std ** 2 / (agg_b.n * agg_b.mean ** 2)
    se = math.sqrt(va + vb)
    if se == 0:
        return RatioInterval(ratio, ratio, ratio, agg_a.n, agg_b.n)
    dof = (va + vb) ** 2 / (va ** 2 / (agg_a.n - 1) + vb ** 2 / (agg_b.n - 1))
    half = _t_quantile(confidence, dof) * se
    return RatioInterval(ratio, ratio * math.exp(-half), ratio * math.exp(half), agg_a.n, agg_b.n)
