"""Chart builders: pure functions from polars frames to plotly figures."""

from __future__ import annotations

import plotly.express as px
import plotly.graph_objects as go
import polars as pl


def throughput_by_batch(runs: pl.DataFrame, title: str) -> go.Figure:
    """Grouped bars: throughput (samples/s) per batch size, one colour per device."""
    frame = runs.with_columns(pl.col("batch_size").cast(pl.String))
    fig = px.bar(frame, x="batch_size", y="throughput_sps", color="device_name", barmode="group",
                 hover_data=["latency_p99_ms", "citation"], title=title,
                 labels={"batch_size": "batch size", "throughput_sps": "throughput (samples/s)",
                         "device_name": "device", "latency_p99_ms": "p99 latency (ms)"})
    fig.update_layout(legend_title_text="device", margin={"t": 60, "b": 40})
    return fig


def runs_per_device(counts: pl.DataFrame) -> go.Figure:
    fig = px.bar(counts, x="runs", y="device_name", color="kind", orientation="h",
                 labels={"device_name": "device", "runs": "runs", "kind": "kind"}, title="Runs per device")
    fig.update_layout(yaxis={"categoryorder": "total ascending"}, margin={"t": 60, "b": 40})
    return fig
