"""Chart builders of the Power settings page: pure functions from the candidates frame
(`explorer.power_settings.candidates_frame`) to plotly figures."""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

MEASURED = "#1f77b4"
PREDICTED = "#ff7f0e"
BEST = "#2ca02c"


def _band(fig: go.Figure, x: list, low: list, high: list, col: int, name: str) -> None:
    fig.add_trace(go.Scatter(x=x + x[::-1], y=high + low[::-1], fill="toself", fillcolor="rgba(255,127,14,0.18)",
                             line={"width": 0}, hoverinfo="skip", name=name, showlegend=col == 1,
                             legendgroup="band"), row=1, col=col)


def settings_curves(frame: pl.DataFrame, rate_label: str, energy_label: str, by_limit: bool) -> go.Figure:
    """Throughput and energy per unit against the power limit (or mode): measured points, the
    predicted curve with its error band, the recommended setting."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=(rate_label, energy_label))
    x_col = "power_limit_w" if by_limit else "setting"
    predicted = frame.filter(pl.col("basis") == "predicted")
    measured = frame.filter(pl.col("basis") == "measured")
    for col, (y, low, high) in enumerate((("throughput", "throughput_low", "throughput_high"),
                                          ("j_per_unit", "j_per_unit_low", "j_per_unit_high")), start=1):
        if predicted.height:
            if by_limit:
                _band(fig, predicted[x_col].to_list(), predicted[low].to_list(), predicted[high].to_list(), col,
                      "prediction band (± leave-one-out RMS error)")
                fig.add_trace(go.Scatter(x=predicted[x_col].to_list(), y=predicted[y].to_list(), mode="lines",
                                         line={"color": PREDICTED}, name="predicted", showlegend=col == 1,
                                         legendgroup="predicted"), row=1, col=col)
            else:
                values = predicted[y].to_list()
                fig.add_trace(go.Scatter(
                    x=predicted[x_col].to_list(), y=values, mode="markers", marker={"color": PREDICTED, "size": 9},
                    error_y={"type": "data", "symmetric": False,
                             "array": [h - v for h, v in zip(predicted[high].to_list(), values)],
                             "arrayminus": [v - lo for lo, v in zip(predicted[low].to_list(), values)]},
                    name="predicted (± leave-one-out RMS error)", showlegend=col == 1, legendgroup="predicted"),
                    row=1, col=col)
        fig.add_trace(go.Scatter(x=measured[x_col].to_list(), y=measured[y].to_list(), mode="markers",
                                 marker={"color": MEASURED, "size": 10}, name="measured", showlegend=col == 1,
                                 legendgroup="measured", text=measured["setting"].to_list()), row=1, col=col)
        best = frame.filter(pl.col("recommended"))
        if best.height:
            fig.add_trace(go.Scatter(x=best[x_col].to_list(), y=best[y].to_list(), mode="markers",
                                     marker={"color": BEST, "size": 16, "symbol": "star"}, name="recommended",
                                     showlegend=col == 1, legendgroup="best"), row=1, col=col)
        fig.update_xaxes(title_text="power limit (W)" if by_limit else "power mode", row=1, col=col)
    fig.update_layout(margin={"t": 50, "b": 40}, legend={"orientation": "h", "y": -0.2})
    return fig


def pareto(frame: pl.DataFrame, time_label: str, energy_label: str) -> go.Figure:
    """Time vs energy per unit: every setting, the Pareto front as a line, the recommendation."""
    fig = go.Figure()
    for basis, color in (("measured", MEASURED), ("predicted", PREDICTED)):
        part = frame.filter(pl.col("basis") == basis)
        if part.height:
            fig.add_trace(go.Scatter(x=part["s_per_unit"].to_list(), y=part["j_per_unit"].to_list(), mode="markers",
                                     marker={"color": color, "size": 9 if basis == "measured" else 6},
                                     text=part["setting"].to_list(), name=basis,
                                     hovertemplate="%{text}<br>%{x:.4g} s, %{y:.4g} J<extra></extra>"))
    front = frame.filter(pl.col("on_front")).sort("s_per_unit")
    fig.add_trace(go.Scatter(x=front["s_per_unit"].to_list(), y=front["j_per_unit"].to_list(), mode="lines",
                             line={"color": "#7f7f7f", "dash": "dot"}, name="Pareto front"))
    best = frame.filter(pl.col("recommended"))
    if best.height:
        fig.add_trace(go.Scatter(x=best["s_per_unit"].to_list(), y=best["j_per_unit"].to_list(), mode="markers",
                                 marker={"color": BEST, "size": 16, "symbol": "star"}, name="recommended",
                                 text=best["setting"].to_list()))
    fig.update_layout(xaxis_title=time_label, yaxis_title=energy_label, title="Pareto front: time vs energy",
                      margin={"t": 50, "b": 40})
    return fig
