"""Charts of a serving point's stored requests (issue 38): Run detail's request timeline (each request's send time
against its TTFT and end-to-end latency, errors and the requests before the steady state marked) and its latency
distributions (the ECDF of TTFT, ITL, TPOT and end-to-end latency), so warm-up, queueing and overload show as
shapes; and the goodput under a person's limits per serving point (Decide, Compare).

Pure functions from polars frames (db.requests' columns) to plotly figures; a frame larger than a browser draws
quickly is thinned evenly (MAX_TIMELINE_POINTS, ECDF_POINTS) and the title says so."""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from explorer.charts import _legend_below, _literal, better
from joulebench.metrics import E2E, ITL, TPOT, TTFT, Distribution
from joulebench.requests import COMPLETED, GAPS_EVERY

MAX_TIMELINE_POINTS = 20_000  # per trace; more are thinned evenly (every k-th request)
ECDF_POINTS = 2_000  # the ECDF drawn through this many of its sorted values (first and last kept)


def _axis(dist: Distribution) -> str:
    """'TTFT (ms)': the distribution's name and unit, from the metric catalogue."""
    return f"{dist.title} ({dist.avg.unit})"


def _thin(frame: pl.DataFrame, limit: int) -> tuple[pl.DataFrame, int]:
    """Every k-th row so at most `limit` remain; k (1: all kept)."""
    step = max(1, -(-frame.height // limit))
    return (frame.gather_every(step) if step > 1 else frame), step


def _trace(x: pl.Series, y: pl.Series, name: str, big: bool, **marker: object) -> go.Scatter | go.Scattergl:
    kind = go.Scattergl if big else go.Scatter
    return kind(x=x.to_numpy(), y=y.to_numpy(), mode="markers", name=name, marker=marker)


def timeline(requests: pl.DataFrame) -> go.Figure:
    """Each request at its send time (s from the point's start; the request's index where the source keeps no send
    times): its TTFT and its end-to-end latency; failed, refused or timed-out requests as crosses on the axis, the
    requests before the steady state (not counted in the point's figures) hollow."""
    timed = requests["send_s"].null_count() < requests.height
    x_col = "send_s" if timed else "request_index"
    x_title = ("Send time (s from the point's start)" if timed
               else "Request (in the file's order; it keeps no send times)")
    ok = requests.filter(pl.col("status").is_in(list(COMPLETED)))
    failed = requests.filter(~pl.col("status").is_in(list(COMPLETED)))
    fig = go.Figure()
    big = requests.height > 2000
    thinned = 1
    for counted, suffix, fill in ((True, "", "circle"), (False, ", before the steady state", "circle-open")):
        part = ok.filter(pl.col("counted") == counted)
        for dist, column, colour in ((TTFT, "ttft_ms", "#1f77b4"), (E2E, "e2e_ms", "#ff7f0e")):
            values = part.filter(pl.col(column).is_not_null())
            if values.is_empty():
                continue
            values, step = _thin(values, MAX_TIMELINE_POINTS)
            thinned = max(thinned, step)
            fig.add_trace(_trace(values[x_col], values[column], f"{dist.title}{suffix}", big, color=colour,
                                 symbol=fill, size=5))
    if failed.height:
        shown, step = _thin(failed, MAX_TIMELINE_POINTS)
        thinned = max(thinned, step)
        fig.add_trace(_trace(shown[x_col], pl.Series([0.0] * shown.height), f"failed ({failed.height:,})", big,
                             color="#d62728", symbol="x", size=7))
    note = f" (every {thinned}th request drawn)" if thinned > 1 else ""
    fig.update_layout(xaxis_title=x_title, yaxis_title=f"{TTFT.title} and {E2E.title} ({TTFT.avg.unit})")
    return _legend_below(fig, f"Requests over time: latency at each send{note}")


def _ecdf(values: pl.Series) -> tuple[list[float], list[float]]:
    """(value, share of values at most it) through at most ECDF_POINTS of the sorted values, evenly by rank."""
    ordered = values.drop_nulls().sort()
    n = ordered.len()
    if n == 0:
        return [], []
    step = max(1, -(-n // ECDF_POINTS))
    ranks = list(range(0, n, step)) + ([n - 1] if (n - 1) % step else [])
    return ordered.gather(ranks).to_list(), [(r + 1) / n * 100.0 for r in ranks]


def per_request(requests: pl.DataFrame) -> dict[str, pl.Series]:
    """The values each distribution pools, over the point's counted ok requests: TTFT, TPOT and end-to-end latency
    one per request, ITL every kept gap (joulebench.requests.aggregate's populations)."""
    ok = requests.filter(pl.col("counted") & (pl.col("status") == "ok"))
    out_tokens = pl.coalesce("output_tokens_server", "output_tokens_client")
    tpot = pl.when(out_tokens > 1).then((pl.col("e2e_ms") - pl.col("ttft_ms")) / (out_tokens - 1))
    gaps = ok.filter(pl.col("itl_kept") == GAPS_EVERY)["itl_ms"].explode() if "itl_ms" in ok.columns else pl.Series(
        [], dtype=pl.Float64)
    return {TTFT.key: ok["ttft_ms"], ITL.key: gaps.cast(pl.Float64), TPOT.key: ok.select(tpot)[:, 0],
            E2E.key: ok["e2e_ms"]}


def distributions(requests: pl.DataFrame) -> go.Figure:
    """The ECDF of TTFT, ITL, TPOT and end-to-end latency (2 x 2), each over what the point's figures pool; a
    distribution the source keeps no values for says so in its panel."""
    values = per_request(requests)
    dists = (TTFT, ITL, TPOT, E2E)
    titles = [f"{d.title}: {values[d.key].drop_nulls().len():,} values" if values[d.key].drop_nulls().len()
              else f"{d.title}: not kept by the source" for d in dists]
    fig = make_subplots(rows=2, cols=2, subplot_titles=titles, vertical_spacing=0.18)
    for i, dist in enumerate(dists):
        x, y = _ecdf(values[dist.key])
        row, col = i // 2 + 1, i % 2 + 1
        if x:
            fig.add_trace(go.Scatter(x=x, y=y, mode="lines", line_shape="hv", name=dist.title, showlegend=False),
                          row=row, col=col)
        fig.update_xaxes(title_text=_axis(dist), row=row, col=col)
        fig.update_yaxes(title_text="requests at most (%)" if dist is not ITL else "gaps at most (%)",
                         range=[0, 100], row=row, col=col)
    fig.update_layout(title="Latency distributions (ECDF) of the counted requests", height=620)
    return fig


def goodput_bars(table: pl.DataFrame, per_j: str, per_s: str) -> go.Figure | None:
    """Goodput per joule under the person's limits per point (goodput per second where no point has an energy),
    best at the top; None when no point has either. `table`: decision.goodput.GoodputAnswer.table's columns."""
    column = per_j if table[per_j].drop_nulls().len() else per_s
    known = table.filter(pl.col(column).is_not_null())
    if known.is_empty():
        return None
    shown = _literal(known.with_columns((pl.col("Device") + pl.lit(" · ") + pl.col("Serving point")).str.slice(0, 90)
                                        .alias("Point")), "Point", "Device").sort(column)
    fig = go.Figure(go.Bar(x=shown[column].to_numpy(), y=shown["Point"].to_list(), orientation="h",
                           text=[f"{v:.3g}" for v in shown[column].to_list()], textposition="auto"))
    fig.update_layout(title=better(column, True), xaxis_title=column, yaxis_title=None,
                      height=max(260, 40 + 28 * shown.height))
    return fig


__all__ = ["ECDF_POINTS", "MAX_TIMELINE_POINTS", "distributions", "goodput_bars", "per_request", "summary", "timeline"]


def summary(requests: pl.DataFrame) -> str:
    """'150 requests stored: 20 completed (3 with no output token), 130 failed (HTTP 429: 130); 3 before the steady
    state, not counted in the point's figures.'"""
    by_status = dict(requests.group_by("status").len().iter_rows())
    completed = sum(by_status.get(s, 0) for s in COMPLETED)
    failed = requests.height - completed
    parts = [f"{requests.height:,} requests stored: {completed:,} completed"
             + (f" ({by_status['empty']:,} with no output token)" if by_status.get("empty") else "")]
    if failed:
        classes = (requests.filter(~pl.col("status").is_in(list(COMPLETED)))
                   .group_by(pl.col("error_class").fill_null("no error class")).len().sort("len", descending=True))
        shown = ", ".join(f"{c[:60]}: {n:,}" for c, n in classes.head(3).iter_rows())
        parts.append(f"{failed:,} failed, refused or timed out ({shown}{', ...' if classes.height > 3 else ''})")
    before = requests.height - int(requests["counted"].sum())
    text = ", ".join(parts)
    if before:
        text += f"; {before:,} before the steady state, not counted in the point's figures"
    return text + "."
