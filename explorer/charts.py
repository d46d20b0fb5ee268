"""Chart builders: pure functions from polars frames to plotly figures."""

from __future__ import annotations

import plotly.express as px
import plotly.graph_objects as go
import polars as pl


def _render(frame: pl.DataFrame) -> str:
    return "webgl" if frame.height > 2000 else "svg"


def throughput_by_batch(runs: pl.DataFrame, title: str) -> go.Figure:
    """Grouped bars: throughput (samples/s) per batch size, one colour per device."""
    frame = runs.with_columns(pl.col("batch_size").cast(pl.String))
    fig = px.bar(frame, x="batch_size", y="throughput_sps", color="device_name", barmode="group",
                 hover_data=["latency_p99_ms", "citation"], title=title,
                 labels={"batch_size": "batch size", "throughput_sps": "throughput (samples/s)",
                         "device_name": "device", "latency_p99_ms": "p99 latency (ms)"})
    fig.update_layout(legend_title_text="device", margin={"t": 60, "b": 40})
    fig.update_xaxes(type="category")
    return fig


def runs_per_device(counts: pl.DataFrame) -> go.Figure:
    fig = px.bar(counts, x="runs", y="device_name", color="kind", orientation="h",
                 labels={"device_name": "device", "runs": "runs", "kind": "kind"}, title="Runs per device")
    fig.update_layout(yaxis={"categoryorder": "total ascending"}, margin={"t": 60, "b": 40})
    return fig


def metric_bars(bar_frame: pl.DataFrame, metric_label: str) -> go.Figure:
    """Grouped bars of a metric by batch size, one colour per series, boundary in the hover."""
    frame = bar_frame.with_columns(pl.col("batch_size").cast(pl.String).fill_null("not stated"))
    fig = px.bar(frame, x="batch_size", y="value", color="series", barmode="group",
                 hover_data={"runs": True, "boundary": True, "method": True, "citation": True},
                 labels={"batch_size": "batch size", "value": metric_label, "series": ""})
    fig.update_layout(legend={"orientation": "h", "y": -0.25}, margin={"t": 30})
    fig.update_xaxes(type="category")
    return fig


def power_vs_throughput(runs: pl.DataFrame) -> go.Figure:
    """Average power against throughput (the blog's wall-power-vs-speed plot)."""
    frame = runs.drop_nulls(["avg_power_w", "throughput_sps"])
    fig = px.scatter(frame, x="avg_power_w", y="throughput_sps", color="series", render_mode=_render(frame),
                     hover_data=["batch_size", "power_setting", "energy_boundary", "energy_method"],
                     labels={"avg_power_w": "average power (W)", "throughput_sps": "throughput (samples/s)",
                             "series": ""})
    fig.update_layout(legend={"orientation": "h", "y": -0.25}, margin={"t": 30})
    return fig


def energy_vs_time(points: pl.DataFrame, front: pl.DataFrame) -> go.Figure:
    """Energy per example against time per example, with the Pareto front (the Jetson paper's Fig. 8)."""
    fig = px.scatter(points, x="s_per_sample", y="j_per_sample", color="series", render_mode=_render(points),
                     hover_data=["batch_size", "power_setting", "energy_boundary"],
                     labels={"s_per_sample": "time per example (s)", "j_per_sample": "energy per example (J)",
                             "series": ""})
    fig.add_trace(go.Scatter(x=front["s_per_sample"].to_list(), y=front["j_per_sample"].to_list(),
                             mode="lines", name="Pareto front", line={"dash": "dash", "color": "black"}))
    fig.update_layout(legend={"orientation": "h", "y": -0.25}, margin={"t": 30})
    return fig


def power_timeline(samples: pl.DataFrame) -> go.Figure:
    fig = px.line(samples, x="t_s", y="power_w", color="domain",
                  labels={"t_s": "time since window start (s)", "power_w": "power (W)", "domain": "sensor"})
    fig.update_layout(margin={"t": 30})
    return fig


def step_time_histogram(steps: pl.DataFrame) -> go.Figure:
    fig = px.histogram(steps, x="duration_ms", nbins=min(50, max(5, steps.height // 2)),
                       labels={"duration_ms": "step time (ms)"})
    fig.update_layout(margin={"t": 30}, yaxis_title="steps")
    return fig


def cost_ranking(ranked: pl.DataFrame) -> go.Figure:
    fig = px.bar(ranked, x="cost_per_1m_samples", y="device_name", orientation="h",
                 color="energy_cost_share", color_continuous_scale="Viridis",
                 labels={"cost_per_1m_samples": "cost per 1M samples", "device_name": "",
                         "energy_cost_share": "energy share"})
    fig.update_layout(yaxis={"categoryorder": "total descending"}, margin={"t": 30})
    return fig


def cost_sensitivity(frame: pl.DataFrame, x_label: str) -> go.Figure:
    fig = px.line(frame, x="x", y="cost_per_1m_samples", color="device_name", markers=True,
                  labels={"x": x_label, "cost_per_1m_samples": "cost per 1M samples", "device_name": ""})
    fig.update_layout(margin={"t": 30})
    return fig
