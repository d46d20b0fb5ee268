"""Serving charts for Decide's per-token answer (issue 26): the latency-throughput curve per device (TPOT
or ITL p90 against output tokens/s, one point per load, the user's limit drawn as a line) and J/token
against load, both from the serving points of the compared shape (`decision.token_target.curve`), and the
read of how each configuration's token figures were measured (db.serving)."""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl

from db import Store
from db import serving as serving_db
from decision.text import plot_text
from explorer import data
from explorer.charts import _legend_below, _literal, better
from joulebench.metrics import Metric, label


@data.reads(max_entries=4)
def serving(store: Store) -> pl.DataFrame:
    """Per configuration: its load, engine, request lengths and serving figures (db.serving)."""
    return serving_db.serving_configs(store)


def _load_title(points: pl.DataFrame) -> str:
    kinds = set(points["load_kind"].drop_nulls().to_list())
    return "concurrency (requests in flight)" if kinds == {"concurrency"} else "offered load (requests/s)"


def _curves(frame: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
    """(name, rows) per curve: one per device and sweep (`sweep_id`: the points a sweep links; none stated: one
    curve for the device); a device with several sweeps names each by its id's first 8 characters."""
    keys = ["device_name", "sweep_id"] if "sweep_id" in frame.columns else ["device_name"]
    groups = list(frame.group_by(keys, maintain_order=True))
    sweeps: dict[str, int] = {}
    for key, _ in groups:
        sweeps[str(key[0])] = sweeps.get(str(key[0]), 0) + 1
    out = []
    for key, rows in groups:
        device, sweep = str(key[0]), key[1] if len(key) > 1 else None
        out.append((f"{device} · sweep {str(sweep)[:8]}" if sweeps[device] > 1 and sweep is not None else device,
                    rows))
    return out


def withheld(points: pl.DataFrame) -> list[str]:
    """'H100 80GB, load 8: latency withheld: overloaded: ...' for each point whose latency percentiles were
    withheld (the stored `latency_missing_reason`), in curve order: what the latency chart leaves out, and why."""
    if points.is_empty() or "latency_missing_reason" not in points.columns:
        return []
    rows = points.filter(pl.col("latency_missing_reason").is_not_null()).unique(
        ["device_name", "load"], keep="first", maintain_order=True)
    return [f"{r['device_name']}, load {r['load']:g}: latency withheld: {r['latency_missing_reason']}"
            for r in rows.iter_rows(named=True)]


def latency_throughput(points: pl.DataFrame, metric: Metric, limit_ms: float | None) -> go.Figure:
    """One line per device and sweep through its load points: `metric` (a p90 latency) against output
    tokens/s; a point whose latency was withheld (overloaded, too few requests) is left out of the line and
    named, with the reason, under the chart's title (`withheld` gives the same lines for a caption)."""
    column = f"{metric.name}_mean"
    frame = _literal(points.filter(pl.col(column).is_not_null() & pl.col("tokens_per_s_mean").is_not_null()),
                     "device_name")
    fig = go.Figure()
    for name, rows in _curves(frame):
        rows = rows.sort("tokens_per_s_mean")
        fig.add_trace(go.Scatter(
            x=rows["tokens_per_s_mean"].to_list(), y=rows[column].to_list(), mode="lines+markers", name=name,
            text=[f"load {v:g}" for v in rows["load"].to_list()],
            hovertemplate="%{text}<br>%{x:.4g} output tokens/s<br>%{y:.4g} ms<extra>%{fullData.name}</extra>"))
    if limit_ms:
        fig.add_hline(y=limit_ms, line_dash="dash", annotation_text=f"your limit {limit_ms:g} ms",
                      annotation_position="top left")
    fig.update_layout(xaxis_title=better("output tokens/s", True), yaxis_title=better(f"{metric.label}", False))
    title = f"Latency against throughput, one point per load ({metric.label.split(' (')[0]})"
    left_out = [plot_text(line.split(":", 1)[0]) for line in withheld(points)]
    if left_out:
        title += f"<br><sup>not drawn (latency withheld, reasons below): {'; '.join(left_out)}</sup>"
    out = _legend_below(fig, title)
    if left_out:
        out.update_layout(margin={"t": 80})
    return out


def j_per_token_by_load(points: pl.DataFrame) -> go.Figure:
    """J per output token against the load, one line per device (overloaded points drawn hollow)."""
    frame = _literal(points.filter(pl.col("j_per_token_mean").is_not_null() & pl.col("load").is_not_null()),
                     "device_name")
    fig = go.Figure()
    for name, rows in _curves(frame):
        rows = rows.sort("load")
        reasons = rows["latency_missing_reason"].to_list() if "latency_missing_reason" in rows.columns \
            else [None] * rows.height
        fig.add_trace(go.Scatter(
            x=rows["load"].to_list(), y=rows["j_per_token_mean"].to_list(), mode="lines+markers", name=name,
            marker={"symbol": ["circle-open" if o else "circle" for o in rows["overloaded"].to_list()], "size": 9},
            text=[plot_text(f"latency withheld: {why}") if why else "overloaded" if o else ""
                  for o, why in zip(rows["overloaded"].to_list(), reasons)],
            hovertemplate="load %{x:g}<br>%{y:.4g} J/token %{text}<extra>%{fullData.name}</extra>"))
    fig.update_layout(xaxis_title=_load_title(frame) if frame.height else "load",
                      yaxis_title=better(label("j_per_token"), False))
    return _legend_below(fig, "Energy per output token against load (hollow: overloaded)")
