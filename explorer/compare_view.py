"""What Compare computes for one selection, in one place: pages/compare.py draws it, and explorer.warm computes
the default selection's before the first visit. Both go through these functions, so the shared caches
(`explorer.memo`) the warm-up fills are the ones the page reads, and the two cannot drift apart."""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go
import polars as pl

from decision import cost
from decision.money import CostSettings, Rates
from decision.pareto import pareto_front
from explorer import charts, compare, compare_ratios, memo


def costed(all_runs: pl.DataFrame, catalog: pl.DataFrame, rates: Rates, settings: CostSettings) -> pl.DataFrame:
    """Every run with its cost per 1M samples at `settings` (electricity, hardware and their sum): one frame per
    runs, prices and settings for every session (`memo`), so a later visit gets the very frame the first made,
    and each cached step after it (`compare.options`, `view`) finds its digest already computed."""
    prices, price_missing = cost.converted_prices(catalog, rates, settings.currency)
    return _costed(all_runs, prices, price_missing, settings)


@memo.shared(max_entries=4)  # a frame of one row per run: kept for a few cost settings
def _costed(all_runs: pl.DataFrame, prices: dict[str, float], price_missing: dict[str, str],
            settings: CostSettings) -> pl.DataFrame:
    return cost.with_cost(all_runs, prices, price_missing, cost.idle_power_by_device(all_runs), settings)


@dataclass(frozen=True)
class View:
    """Compare's frames for the chosen runs (`compare.apply`) of one selection."""

    metric: compare.Metric
    stated: pl.DataFrame  # what the sources state about the named devices
    coverage: pl.DataFrame
    measured: pl.DataFrame  # the chosen runs but idle baselines
    table: pl.DataFrame  # one row per configuration
    labelled: pl.DataFrame  # the runs the charts draw, labelled
    shared: str  # what every bar has in common
    left_out: str | None
    bar_frame: pl.DataFrame
    ratios: pl.DataFrame  # empty when there are no bars
    points: pl.DataFrame  # energy against time per example


@memo.shared(max_entries=8)  # its frames are one row per run at most: kept for a few selections
def view(chosen: pl.DataFrame, named: list[str], findings: pl.DataFrame, metric: compare.Metric,
         reference: str | None, currency: str) -> View:
    stated = compare_ratios.findings_for(findings, named)
    measured = chosen.filter(pl.col("mode") != "idle")
    labelled, shared, left_out = compare.chart_runs(measured)
    bar_frame = compare.bars(labelled, metric)
    return View(metric, stated, compare.coverage(chosen, stated), measured,
                compare.config_table(measured, reference, metric, currency), labelled, shared, left_out, bar_frame,
                pl.DataFrame() if bar_frame.is_empty() else compare_ratios.ratio_table(bar_frame, metric),
                compare.energy_time_points(labelled))


def bar_figure(v: View, currency: str, show_all: bool, log_scale: bool) -> tuple[go.Figure, str | None]:
    """The bars of the metric (the most readable ones unless `show_all`), and what was cut."""
    shown, cut = compare.readable_bars(v.bar_frame, v.metric.higher_is_better, show_all)
    return charts.metric_bars(shown, compare.chart_label(v.metric, currency), v.metric.higher_is_better,
                              log_scale), cut


def power_figure(v: View, log_scale: bool) -> go.Figure | None:
    """Average power against throughput; None when no run measured both."""
    if v.labelled.drop_nulls(["avg_power_w", "throughput_sps"]).is_empty():
        return None
    return charts.power_vs_throughput(v.labelled, log_scale)


def energy_figure(v: View, log_scale: bool) -> go.Figure | None:
    """Energy against time per example, with its Pareto front; None when no run measured both."""
    if v.points.is_empty():
        return None
    return charts.energy_vs_time(v.points, pareto_front(v.points, "s_per_sample", "j_per_sample"), log_scale)
