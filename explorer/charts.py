"""Chart builders: pure functions from polars frames to plotly figures.

Every axis names its unit, every chart says whether higher or lower is better, money axes carry
their currency, and text from the data (device names, series) is made literal for plotly.
"""

from __future__ import annotations

import plotly.express as px
import plotly.graph_objects as go
import polars as pl

from decision.text import sig
from explorer import memo
from joulebench.metrics import label


def _render(frame: pl.DataFrame) -> str:
    return "webgl" if frame.height > 2000 else "svg"


def _literal(frame: pl.DataFrame, *columns: str) -> pl.DataFrame:
    """String columns shown by plotly (legend, axis, hover) made literal text."""
    present = [c for c in columns if c in frame.columns and frame[c].dtype == pl.String]
    return frame.with_columns([_plot_text(pl.col(c)) for c in present])


def _plot_text(text: pl.Expr) -> pl.Expr:
    """decision.text.plot_text as an expression (null stays null): no Python function runs inside polars, whose
    worker threads would wait for the GIL the app server's script threads hold (issue 30, a deadlock)."""
    return (text.str.replace_all("&", "&amp;", literal=True).str.replace_all("<", "&lt;", literal=True)
            .str.replace_all(">", "&gt;", literal=True))


def better(label: str, higher_is_better: bool) -> str:
    """An axis or chart title that says which way is better."""
    return f"{label} — {'higher' if higher_is_better else 'lower'} is better"


def _legend_below(fig: go.Figure, title: str | None = None) -> go.Figure:
    fig.update_layout(legend={"orientation": "h", "y": -0.3, "title": {"text": ""}},
                      margin={"t": 50 if title else 30}, title=title)
    return fig


def throughput_by_batch(runs: pl.DataFrame, title: str) -> go.Figure:
    """Grouped bars: throughput (samples/s) per batch size, one colour per device."""
    frame = _literal(runs.with_columns(pl.col("batch_size").cast(pl.String)), "device_name", "citation")
    fig = px.bar(frame, x="batch_size", y="throughput_sps", color="device_name", barmode="group",
                 hover_data=["latency_p99_ms", "citation"], title=title,
                 labels={"batch_size": "batch size", "throughput_sps": better(label("throughput_sps"), True),
                         "device_name": "device", "latency_p99_ms": label("latency_p99_ms")})
    fig.update_layout(legend_title_text="device", margin={"t": 60, "b": 40})
    fig.update_xaxes(type="category")
    return fig


def runs_per_device(counts: pl.DataFrame) -> go.Figure:
    frame = _literal(counts, "device_name")
    fig = px.bar(frame, x="runs", y="device_name", color="kind", orientation="h",
                 labels={"device_name": "device", "runs": "runs in the database", "kind": "kind"},
                 title="Runs per device")
    fig.update_layout(yaxis={"categoryorder": "total ascending"}, margin={"t": 60, "b": 40})
    return fig


@memo.shared(max_entries=32)
def metric_bars(bar_frame: pl.DataFrame, metric_label: str, higher_is_better: bool, log_y: bool = False,
                title: str | None = None) -> go.Figure:
    """Grouped bars of a metric by configuration (x), one colour per series; n, the 95 % interval,
    the trust grade, boundary, basis and source in the hover. Where the frame carries a 95 %
    interval (`ci_low`, `ci_high`, from repeats) it is drawn as error bars, and where it carries a
    `grade` the letter is printed on the bar (the page gives the legend)."""
    frame = _literal(bar_frame.drop("values", strict=False), "series", "config", "citation")
    errors = {}
    if {"ci_low", "ci_high"} <= set(frame.columns):
        frame = frame.with_columns((pl.col("ci_high") - pl.col("value")).alias("_err_plus"),
                                   (pl.col("value") - pl.col("ci_low")).alias("_err_minus"),
                                   pl.Series("95 % interval", [
                                       "none: a single run" if lo is None else f"{sig(lo)} to {sig(hi)}"
                                       for lo, hi in zip(frame["ci_low"], frame["ci_high"])], pl.String))
        errors = {"error_y": "_err_plus", "error_y_minus": "_err_minus"}
    text = {}
    if "grade" in frame.columns:
        frame = frame.with_columns(pl.col("grade").fill_null("not graded").alias("trust grade"),
                                   ("grade " + pl.col("grade")).fill_null("").alias("_badge"))
        text = {"text": "_badge"}
    counted = "n" if "n" in frame.columns else "runs"
    hover = {counted: True, **({"95 % interval": True} if errors else {}), **({"trust grade": True} if text else {}),
             "boundary": True, "method": True, "basis": True, "citation": True}
    pattern = {}
    if "overloaded" in frame.columns and frame["overloaded"].any():  # drawn hatched, named in the hover
        frame = frame.with_columns(pl.when(pl.col("overloaded")).then(pl.lit("overloaded: measured what arrived"))
                                   .otherwise(pl.lit("served its load")).alias("load"))
        pattern = {"pattern_shape": "load", "pattern_shape_map": {"overloaded: measured what arrived": "x",
                                                                   "served its load": ""}}
        hover["load"] = True
    fig = px.bar(frame, x="config", y="value", color="series", barmode="group", log_y=log_y, hover_data=hover,
                 labels={"config": "configuration", "value": better(metric_label, higher_is_better), "series": "",
                         "n": "runs (n)"}, **errors, **text, **pattern)
    if text:
        fig.update_traces(textposition="inside", insidetextanchor="start", textfont_size=11)
    fig.update_xaxes(type="category", automargin=True, tickangle=-30 if frame["config"].n_unique() > 4 else 0)
    # the legend above the plot: below it, it covered the configurations' rotated labels
    fig.update_layout(legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0, "title": {"text": ""}},
                      margin={"t": 90 if title else 60}, title=title)
    return fig


def stated_ratios(frame: pl.DataFrame, log_y: bool = False) -> go.Figure:
    """The sources' stated ratios, one bar per finding (1 = equal)."""
    shown = _literal(frame, "pair", "scope", "citation", "metric", "finding")
    fig = px.bar(shown, x="finding", y="value", color="pair", barmode="group", log_y=log_y,
                 hover_data={"scope": True, "metric": True, "citation": True},
                 labels={"finding": "the subject's configuration, as the source states it",
                         "value": "stated ratio (×, subject ÷ baseline) — throughput: higher is better",
                         "pair": ""})
    fig.add_hline(y=1, line_dash="dot", line_color="grey")
    return _legend_below(fig)


@memo.shared(max_entries=32)
def power_vs_throughput(runs: pl.DataFrame, log: bool = False) -> go.Figure:
    """Average power against throughput (the blog's wall-power-vs-speed plot)."""
    frame = _literal(runs.drop_nulls(["avg_power_w", "throughput_sps"]), "series", "config")
    fig = px.scatter(frame, x="avg_power_w", y="throughput_sps", color="series", render_mode=_render(frame),
                     log_x=log, log_y=log, hover_data=["config", "power_setting", "energy_boundary", "energy_method"],
                     labels={"avg_power_w": "average power (W) — lower is better",
                             "throughput_sps": better(label("throughput_sps"), True), "series": ""})
    return _legend_below(fig)


@memo.shared(max_entries=32)
def energy_vs_time(points: pl.DataFrame, front: pl.DataFrame, log: bool = False) -> go.Figure:
    """Energy per example against time per example, with the Pareto front (the Jetson paper's Fig. 8)."""
    frame = _literal(points, "series", "config")
    fig = px.scatter(frame, x="s_per_sample", y="j_per_sample", color="series", render_mode=_render(frame),
                     log_x=log, log_y=log, hover_data=["config", "power_setting", "energy_boundary"],
                     labels={"s_per_sample": "time per example (s) — lower is better",
                             "j_per_sample": better("energy per example (J)", False), "series": ""})
    fig.add_trace(go.Scatter(x=front["s_per_sample"].to_list(), y=front["j_per_sample"].to_list(),
                             mode="lines", name="Pareto front (best trade-offs)",
                             line={"dash": "dash", "color": "black"}))
    return _legend_below(fig)


def power_timeline(samples: pl.DataFrame) -> go.Figure:
    fig = px.line(_literal(samples, "domain"), x="t_s", y="power_w", color="domain",
                  labels={"t_s": "time since window start (s)", "power_w": "power (W)", "domain": "sensor"})
    fig.update_layout(margin={"t": 30})
    return fig


def step_time_histogram(steps: pl.DataFrame) -> go.Figure:
    fig = px.histogram(steps, x="duration_ms", nbins=min(50, max(5, steps.height // 2)),
                       labels={"duration_ms": "step time (ms) — lower is better"})
    fig.update_layout(margin={"t": 30}, yaxis_title="steps")
    return fig


def cost_ranking(ranked: pl.DataFrame, currency: str) -> go.Figure:
    """Stacked bars: each ranked device's cost per 1M samples split into its parts."""
    parts = {"energy_cost_per_1m": "electricity while busy", "idle_cost_per_1m": "electricity while idle",
             "hardware_cost_per_1m": "hardware"}
    shown = _literal(ranked, "device_name")
    long = (shown.select("device_name", *parts)
            .unpivot(index="device_name", variable_name="part", value_name="cost")
            .with_columns(pl.col("part").replace_strict(parts)))
    fig = px.bar(long, x="cost", y="device_name", color="part", orientation="h",
                 labels={"cost": better(f"cost per 1M samples ({currency})", False), "device_name": "", "part": ""},
                 category_orders={"device_name": shown["device_name"].to_list()})
    return _legend_below(fig)


def cost_sensitivity(frame: pl.DataFrame, x_label: str, currency: str) -> go.Figure:
    fig = px.line(_literal(frame, "device_name"), x="x", y="cost_per_1m_samples", color="device_name", markers=True,
                  labels={"x": x_label, "cost_per_1m_samples": better(f"cost per 1M samples ({currency})", False),
                          "device_name": ""})
    return _legend_below(fig)


def cost_vs_utilisation(curve: pl.DataFrame, currency: str, chosen_u: float,
                        crossovers: list[tuple[str, str, float]], log_y: bool = False) -> go.Figure:
    """Cost per 1M samples against utilisation, one line per device, the chosen utilisation and
    any crossover marked."""
    frame = _literal(curve, "device").with_columns((pl.col("utilisation") * 100).alias("utilisation_pct"))
    fig = px.line(frame, x="utilisation_pct", y="cost", color="device", log_y=log_y,
                  labels={"utilisation_pct": "utilisation (% of the time busy)",
                          "cost": better(f"cost per 1M samples ({currency})", False), "device": ""},
                  hover_data={"cost": ":.3g"})
    fig.add_vline(x=chosen_u * 100, line_dash="dot", line_color="grey",
                  annotation_text=f"{chosen_u * 100:.0f}% chosen", annotation_position="top")
    for _low, _high, u in crossovers:
        fig.add_vline(x=u * 100, line_dash="dash", line_color="black",
                      annotation_text=f"crossover {u * 100:.0f}%", annotation_position="bottom right")
    return _legend_below(fig)


def device_figures(frame: pl.DataFrame) -> go.Figure:
    """Decide's per-device bars: throughput (samples/s, higher is better) beside energy per example
    (J, lower is better), each bar labelled with its value, basis, input size and trust grade
    (rows of decision.tables.device_bars)."""
    from plotly.subplots import make_subplots

    data = _literal(frame, "device", "label", "hover")
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.15,
                        subplot_titles=("throughput (samples/s)<br>higher is better",
                                        "energy per example (J)<br>lower is better"))
    fig.update_annotations(font_size=12)
    for col, what in enumerate(("Throughput", "Energy per example"), start=1):
        part = data.filter(pl.col("figure") == what)
        fig.add_trace(go.Bar(x=part["device"].to_list(), y=part["value"].to_list(), text=part["label"].to_list(),
                             textposition="auto", hovertext=part["hover"].to_list(), hoverinfo="text",
                             name=what, showlegend=False), row=1, col=col)
    fig.update_yaxes(title_text="samples/s", row=1, col=1)
    fig.update_yaxes(title_text="J per example", row=1, col=2)
    fig.update_layout(margin={"t": 70})
    return fig
