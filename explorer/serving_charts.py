"""Serving charts for Decide's per-token answer (issue 26): the latency-throughput curve per device (TPOT
or ITL p90 against output tokens/s, one point per load, the user's limit drawn as a line) and J/token
against load, both from the serving points of the compared shape (`decision.token_target.curve`), and the
read of how each configuration's token figures were measured (db.serving)."""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl

from db import Store
from db import serving as serving_db
from explorer import data
from explorer.charts import _legend_below, _literal, better
from joulebench.metrics import Metric


@data.reads(max_entries=4)
def serving(store: Store) -> pl.DataFrame:
    """Per configuration: its load, engine, request lengths and serving figures (db.serving)."""
    return serving_db.serving_configs(store)


def _load_title(points: pl.DataFrame) -> str:
    kinds = set(points["load_kind"].drop_nulls().to_list())
    return "concurrency (requests in flight)" if kinds == {"concurrency"} else "offered load (requests/s)"


def latency_throughput(points: pl.DataFrame, metric: Metric, limit_ms: float | None) -> go.Figure:
    """One line per device through its load points: `metric` (a p90 latency) against output tokens/s; an
    overloaded point (no steady-state latency) is left out of the line and named in the caption's data."""
    column = f"{metric.name}_mean"
    frame = _literal(points.filter(pl.col(column).is_not_null() & pl.col("tokens_per_s_mean").is_not_null()),
                     "device_name")
    fig = go.Figure()
    for (device,), rows in frame.group_by(["device_name"], maintain_order=True):
        rows = rows.sort("tokens_per_s_mean")
        fig.add_trace(go.Scatter(
            x=rows["tokens_per_s_mean"].to_list(), y=rows[column].to_list(), mode="lines+markers", name=str(device),
            text=[f"load {v:g}" for v in rows["load"].to_list()],
            hovertemplate="%{text}<br>%{x:.4g} output tokens/s<br>%{y:.4g} ms<extra>%{fullData.name}</extra>"))
    if limit_ms:
        fig.add_hline(y=limit_ms, line_dash="dash", annotation_text=f"your limit {limit_ms:g} ms",
                      annotation_position="top left")
    fig.update_layout(xaxis_title=better("output tokens/s", True), yaxis_title=better(f"{metric.label}", False))
    return _legend_below(fig, f"Latency against throughput, one point per load ({metric.label.split(' (')[0]})")


def j_per_token_by_load(points: pl.DataFrame) -> go.Figure:
    """J per output token against the load, one line per device (overloaded points drawn hollow)."""
    frame = _literal(points.filter(pl.col("j_per_token_mean").is_not_null() & pl.col("load").is_not_null()),
                     "device_name")
    fig = go.Figure()
    for (device,), rows in frame.group_by(["device_name"], maintain_order=True):
        rows = rows.sort("load")
        fig.add_trace(go.Scatter(
            x=rows["load"].to_list(), y=rows["j_per_token_mean"].to_list(), mode="lines+markers", name=str(device),
            marker={"symbol": ["circle-open" if o else "circle" for o in rows["overloaded"].to_list()], "size": 9},
            text=["overloaded" if o else "" for o in rows["overloaded"].to_list()],
            hovertemplate="load %{x:g}<br>%{y:.4g} J/token %{text}<extra>%{fullData.name}</extra>"))
    fig.update_layout(xaxis_title=_load_title(frame) if frame.height else "load",
                      yaxis_title=better("J per output token", False))
    return _legend_below(fig, "Energy per output token against load (hollow: overloaded)")
