"""Decide's section "Energy per token at your latency target": the inputs (model and lengths, the
user's TPOT and TTFT limits, kept in the link) and the answer `decision.token_target` computes."""

from __future__ import annotations

import polars as pl
import streamlit as st

from decision import token_target
from decision.inputs import DecideInputs
from decision.markdown import md
from decision.money import Rates
from explorer import data, nav, serving_charts
from explorer.params import UrlReader
from explorer.tables import styled
from joulebench.metrics import ITL, TPOT

TPOT_HELP = TPOT.p90.meaning + " A limit on TPOT is never applied to a source's ITL figure."
ITL_HELP = ITL.p90.meaning + " A limit on ITL is never applied to a source's TPOT figure."


def render(path: str, asked: DecideInputs, catalog: pl.DataFrame, rates: Rates, url: UrlReader,
           query: dict[str, list[str]], sfx: str) -> None:
    st.subheader("Energy per token at your latency target")
    st.caption(token_target.__doc__.split("\n\n")[0] if token_target.__doc__ else "")
    configs = token_target.with_serving(data.configurations(path), serving_charts.serving(path))
    shape_options = token_target.shapes(token_target.token_configs(configs, list(asked.devices)))
    if not shape_options:
        st.info("None of these devices has generation runs with energy per token. Measure one here (New run, "
                "workload llm-1b or llm-8b) or upload a vLLM, ML.ENERGY or AI Energy Score result file.")
        st.page_link(nav.NEW_RUN, label="Measure generation (New run)", icon=":material/play_arrow:",
                     query_params={"workload": "llm-1b", "mode": "infer", "precision": "bf16"})
        return
    cols = st.columns([3, 1, 1, 1])
    shape = cols[0].selectbox("Model and lengths (compared like for like)", shape_options,
                              index=shape_options.index(url.one("shape", shape_options, "shape") or
                                                        shape_options[0]), key=f"shape{sfx}")
    tpot = cols[1].number_input("TPOT p90 limit (ms, your value; 0: none)", 0.0, 10_000.0,
                                url.number("tpot", "TPOT limit", 0.0, 10_000.0) or 0.0, key=f"tpot{sfx}",
                                help=TPOT_HELP)
    itl = cols[2].number_input("ITL p90 limit (ms, your value; 0: none)", 0.0, 10_000.0,
                               url.number("itl", "ITL limit", 0.0, 10_000.0) or 0.0, key=f"itl{sfx}", help=ITL_HELP)
    ttft = cols[3].number_input("TTFT p90 limit (ms, your value; 0: none)", 0.0, 600_000.0,
                                url.number("ttft", "TTFT limit", 0.0, 600_000.0) or 0.0, key=f"ttft{sfx}")
    target = token_target.Target(tpot or None, ttft or None, itl or None)
    st.query_params.from_dict({**query, "shape": [shape], "tpot": [f"{tpot:g}"], "itl": [f"{itl:g}"],
                               "ttft": [f"{ttft:g}"]})
    tokens = token_target.decide(configs, list(asked.devices), shape, target, catalog, rates, asked.settings)
    for line in tokens.sentences:
        st.markdown(line)  # names escaped where the sentence is built
    st.dataframe(styled(tokens.table), hide_index=True, width="stretch")
    if tokens.left_out:
        with st.expander(f"Left out of this comparison ({len(tokens.left_out)}): not like for like"):
            for line in tokens.left_out:
                st.markdown(f"- {line}")  # escaped where it is built
    if not tokens.curve.is_empty():
        metric = token_target.curve_metric(tokens.curve, target)
        limit = {TPOT.p90.name: target.tpot_p90_ms, ITL.p90.name: target.itl_p90_ms}.get(metric.name)
        left, right = st.columns(2)
        left.plotly_chart(serving_charts.latency_throughput(tokens.curve, metric, limit), width="stretch")
        for line in serving_charts.withheld(tokens.curve):  # the points the latency line leaves out, and why
            left.caption(md(line))
        right.plotly_chart(serving_charts.j_per_token_by_load(tokens.curve), width="stretch")
    st.code(token_target.COST_FORMULA, language=None)
