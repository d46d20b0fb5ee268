"""Decide's and Compare's section "Goodput under your limits" (issue 38): the TTFT, ITL, TPOT and end-to-end
limits a person types (kept in the link, checked against the ranges every typed latency has: decision.goodput's
`limit_range`, through explorer.params.UrlReader), and for every serving point of the page's selection the goodput
decision.goodput recomputes from its stored requests: good requests per second and per joule and the share of its
requests meeting every limit, labelled with the limits. A point that keeps no requests says so, and answers only
what its stored figures say exactly.

The requests are read once per store version for every session (explorer.data.slo_frame, shared), so a new limit
is only a computation over them (benchmarks/requests_scale.py times it over 1,000,000 requests)."""

from __future__ import annotations

import polars as pl
import streamlit as st

from decision import goodput
from decision.markdown import md
from decision.text import count
from explorer import data, nav, request_charts
from explorer.params import UrlReader
from explorer.tables import styled

KEYS = {metric: f"gp_{metric}" for metric in goodput.METRICS}  # the link's parameter per limit, in ms
AT_KEY = "gp_at"
EVERY = "every request"
AT_OPTIONS = [EVERY, *(f"p{p}" for p in goodput.PERCENTILES)]
AT_HELP = ("Every request is held to every limit either way: goodput counts the requests meeting all of them. "
           "A percentile also says whether each limit held for at least that share of a point's requests, and "
           "lets a point that keeps no requests answer from the percentile it stores (p90).")
ABOUT = ("Goodput as DistServe defines it: the requests per second that met every limit, recomputed from each "
         "serving point's stored requests for the limits typed here (no run needs to have seen them). TTFT, "
         "end-to-end latency and TPOT ((end-to-end - TTFT) / (output tokens - 1)) are held per request, ITL "
         "through each request's longest gap. Per joule: the good requests over the energy of the point's "
         "measured window.")


def limits(url: UrlReader, sfx: str) -> tuple[goodput.Slo | None, dict[str, str]]:
    """The limit widgets (prefilled from the link; a value outside its range is reported and not applied), the SLO
    they make (None: no limit typed, or one refused with a warning) and the link's parameters for them."""
    own = UrlReader(url.params)  # this section's own problems, shown here
    cols = st.columns(5)
    values: dict[str, float] = {}
    for col, (metric, key) in zip(cols, KEYS.items()):
        title = goodput.METRICS[metric].title
        high = goodput.limit_range(metric).high or 0.0
        start = own.number(key, f"{title} limit", 0.0, high) or 0.0
        values[metric] = col.number_input(f"{title} limit (ms; 0: none)", 0.0, high, start, key=f"{key}{sfx}",
                                          help=goodput.METRICS[metric].p90.meaning)
    at = cols[4].selectbox("Held at", AT_OPTIONS, key=f"{AT_KEY}{sfx}", help=AT_HELP,
                           index=AT_OPTIONS.index(own.one(AT_KEY, AT_OPTIONS, "held at") or EVERY))
    if warning := own.warning():
        st.warning(md(warning))
    query = {KEYS[m]: f"{v:g}" for m, v in values.items() if v}
    if at != EVERY:
        query[AT_KEY] = at
    try:
        slo = goodput.slo_of(values, None if at == EVERY else int(at[1:]))
    except goodput.SloError as e:
        st.warning(md(str(e)))
        return None, query
    return slo, query


def inference_of(runs: pl.DataFrame, devices: list[str]) -> pl.DataFrame:
    """Decide's selection: the inference runs of the candidate devices."""
    return runs.filter(pl.col("device_name").is_in(devices) & (pl.col("mode") == "infer"))


def render(path: str, runs: pl.DataFrame, url: UrlReader, sfx: str, scope: str) -> None:
    """The section over the serving points among `runs` (`scope` says which runs those are, for a person)."""
    st.subheader("Goodput under your limits")
    st.caption(ABOUT)
    slo, query = limits(url, sfx)
    for key in [*KEYS.values(), AT_KEY]:  # added to the link the page wrote; a cleared limit leaves it
        if key in query:
            st.query_params[key] = query[key]
        elif key in st.query_params:
            del st.query_params[key]
    if slo is None:
        st.caption(f"Type a limit above to see, for each serving point of {md(scope)}, how many of its requests meet "
                "it, per second and per joule.")
        return
    requests = data.or_stop(data.slo_frame, path)
    found = goodput.answer(runs, requests, slo)
    st.markdown(f"**Your limits:** {md(slo.label())}. Serving points of {md(scope)}: "
                f"{count(found.counted, 'point')} counted from {'its' if found.counted == 1 else 'their'} stored "
                f"requests, {count(found.without_requests, 'point')} without requests.")
    if found.points.is_empty():
        st.caption(f"No serving point among {md(scope)}. A serving point is a serve-bench run or an imported serving "
                "benchmark; vLLM's --save-detailed and LLMPerf's individual responses keep their requests.")
        st.page_link(nav.UPLOAD, label="Upload a result file", icon=":material/upload:")
        return
    for line in found.sentences():
        st.markdown(line)  # names escaped where the sentence is built
    table = found.table().with_columns((pl.lit(nav.RUN_DETAIL_URL + "?run_id=") + pl.col("Run")).alias("Run"))
    answered = found.points["known"].fill_null(False) | (found.points["basis"] == goodput.BASIS_REQUESTS)
    shown, rest = table.filter(answered), table.filter(~answered)
    links = {"Run": st.column_config.LinkColumn("Run", display_text="open")}
    if shown.is_empty():
        st.info("No serving point here keeps its requests or a goodput stored under these same limits, so none can "
                "say how many requests met them (below: what their stored figures say).")
    else:
        st.dataframe(styled(shown), hide_index=True, width="stretch", column_config=links)
        chart = request_charts.goodput_bars(shown, goodput.PER_J_COLUMN, goodput.PER_S_COLUMN)
        if chart is not None:
            st.plotly_chart(chart, width="stretch")
    if not rest.is_empty():
        with st.expander(f"{count(rest.height, 'serving point')} without requests: not known under your limits"):
            st.caption("These points keep only their aggregate figures: a stored percentile answers a limit held at "
                       "that percentile (the column 'held'), never how many requests met every limit.")
            st.dataframe(styled(rest.drop(goodput.GOOD_COLUMN, goodput.COMPLETED_COLUMN, goodput.SHARE_COLUMN)),
                         hide_index=True, width="stretch",
                         column_config=links)
