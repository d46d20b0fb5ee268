"""The aggregate of repeats against reference implementations (numpy, scipy.stats) and by coverage."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy import stats as sps

from energy.stats import aggregate, ratio_interval

KNOWN = {
    # the H100 evidence: J/sample of the 10 s repeats and of the 30-step repeats
    "h100-10s": [0.631309, 0.643246, 0.654548],
    "h100-30-steps": [0.616658, 0.634429, 0.515675, 0.619137, 0.508458],
    "two": [436.5, 445.6],  # a wild pair (436.5, 745.6) has its interval withheld: see below
    "ten": [10.1, 9.8, 10.4, 10.0, 9.9, 10.2, 10.3, 9.7, 10.0, 10.1],
}


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_aggregate_matches_numpy_and_scipy(name: str) -> None:
    xs = KNOWN[name]
    agg = aggregate(xs)
    assert agg is not None and agg.n == len(xs)
    a = np.asarray(xs)
    assert agg.mean == pytest.approx(a.mean(), rel=1e-12)
    assert agg.std == pytest.approx(a.std(ddof=1), rel=1e-12)
    assert agg.cov_pct == pytest.approx(a.std(ddof=1) / a.mean() * 100, rel=1e-12)
    low, high = sps.t.interval(0.95, len(xs) - 1, loc=a.mean(), scale=sps.sem(a))
    assert (agg.ci95_low, agg.ci95_high) == (pytest.approx(low, rel=1e-12), pytest.approx(high, rel=1e-12))


def test_one_value_has_no_spread_missing_values_are_not_zeros() -> None:
    one = aggregate([0.643])
    assert one is not None and (one.n, one.mean, one.std, one.ci95_low, one.ci95_half) == (1, 0.643, None, None, None)
    assert one.as_text() == "0.643 (n 1)"
    assert aggregate([]) is None and aggregate([None, float("nan")]) is None
    with_gaps = aggregate([1.0, None, 3.0, float("nan")])
    assert with_gaps is not None and (with_gaps.n, with_gaps.mean) == (2, 2.0)
    assert (aggregate([1.0, 1.1, 0.9]) or one).as_text() == "1.00 ± 0.25 (n 3)"
    assert (aggregate([436.5, 745.6, 592.0]) or one).as_text(4) == "591.4 ± 384 (n 3)"  # no exponent


def test_the_interval_covers_the_true_mean_95_percent_of_the_time() -> None:
    rng = random.Random(3)
    trials, hits = 2000, 0
    for _ in range(trials):
        agg = aggregate([rng.gauss(0.643, 0.02) for _ in range(3)])
        assert agg is not None and agg.ci95_low is not None and agg.ci95_high is not None
        hits += agg.ci95_low <= 0.643 <= agg.ci95_high
    assert abs(hits / trials - 0.95) < 0.015  # binomial sd at 2000 trials: 0.5 %


def test_ratio_interval_reference_and_coverage() -> None:
    a, b = [1372.3, 1380.1, 1365.0], [703.1, 710.4, 698.8]
    r = ratio_interval(a, b)
    assert r is not None and r.ratio == pytest.approx(np.mean(a) / np.mean(b))
    # the delta method on the log scale, computed independently
    va = np.var(a, ddof=1) / (3 * np.mean(a) ** 2)
    vb = np.var(b, ddof=1) / (3 * np.mean(b) ** 2)
    dof = (va + vb) ** 2 / (va ** 2 / 2 + vb ** 2 / 2)
    half = sps.t.ppf(0.975, dof) * math.sqrt(va + vb)
    assert (r.low, r.high) == (pytest.approx(r.ratio * math.exp(-half)), pytest.approx(r.ratio * math.exp(half)))
    assert r.within_noise is False and r.as_text() == "1.95x (1.92-1.98)"
    same = ratio_interval([10.0, 10.4, 9.7], [10.1, 9.8, 10.3])
    assert same is not None and same.within_noise is True  # no difference shown
    single = ratio_interval([2.0], [1.0, 1.1])
    assert single is not None and single.low is None and single.within_noise is None
    assert single.as_text() == "1.90x (no interval: n 1 and 2)"
    assert ratio_interval([], [1.0]) is None and ratio_interval([-1.0], [1.0]) is None
    rng = random.Random(5)
    trials, hits = 1500, 0
    for _ in range(trials):
        ri = ratio_interval([rng.gauss(200, 6) for _ in range(4)], [rng.gauss(100, 4) for _ in range(3)])
        assert ri is not None and ri.low is not None and ri.high is not None
        hits += ri.low <= 2.0 <= ri.high
    assert abs(hits / trials - 0.95) < 0.025


def test_an_interval_that_would_reach_below_zero_is_withheld_not_printed():
    """Issue 17 item 7: two runs of 19.8 and 394.7 samples/s gave '-2,174 to 2,589 samples/s'."""
    agg = aggregate([19.8, 394.7])
    assert agg is not None and agg.n == 2 and agg.ci95_low is None and agg.ci95_high is None
    assert agg.interval_withheld
    text = agg.interval_text(lambda x: f"{x:,.0f}", "samples/s")
    assert text.startswith("not enough repeats for an interval (2 with a spread of")
    assert "-" not in agg.as_text() and "spread too wide" in agg.as_text()


def test_a_tight_pair_keeps_its_interval_and_a_stored_negative_one_is_withheld():
    agg = aggregate([100.0, 101.0])
    assert agg is not None and agg.ci95_low is not None and agg.ci95_low > 0
    from energy.stats import Aggregate

    stored = Aggregate.bounded(2, 207.25, 265.1, 127.9, -2174.0, 2589.0)  # written before the rule
    assert stored.ci95_low is None and stored.interval_withheld


def test_run_detail_shows_not_enough_repeats_for_the_wild_pair():
    from explorer.detail import configuration_rows

    config = {"throughput_sps_n": 2, "throughput_sps_mean": 207.25, "throughput_sps_std": 265.1,
              "throughput_sps_cov_pct": 127.9, "throughput_sps_ci95_low": -2174.0, "throughput_sps_ci95_high": 2589.0}
    (row,) = configuration_rows(config)
    assert row["95 % interval"].startswith("not enough repeats for an interval")
