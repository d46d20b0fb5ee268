"""Decide's page sections below the answer's sentences: what the data cannot answer yet (with the page that
fills each gap), and the cost-by-utilisation and per-device figure charts."""

from __future__ import annotations

import streamlit as st

from decision import inputs, tables
from decision.decide import Answer
from decision.markdown import md
from decision.money import CostSettings
from explorer import charts, machine, nav


def gaps(answer: Answer, here: set[str]) -> None:
    """Each device's missing figure with the way to get it: a prefilled New run (or serve-bench for a model a file
    names) where `here` (explorer.machine.devices_here) says this machine is that device, else the command to run
    on one and the upload; a price on Devices."""
    if not answer.gaps:
        return
    st.subheader("What the data cannot answer yet")
    for gap in answer.gaps:
        cols = st.columns([3, 2])
        cols[0].markdown(f"**{md(gap.device)}**: {md(gap.what)}.")
        if gap.fill in ("run", "serve") and gap.device not in here:
            how = ("serve the model with its engine there and run `joulebench serve-bench --target URL`"
                   if gap.fill == "serve" else "run `joulebench run` there")
            cols[1].markdown(f"Not {md(machine.describe())}: {how}, then upload its result file.")
        elif gap.fill == "run":
            cols[1].page_link(nav.NEW_RUN, label="Measure it on this machine (New run, prefilled)",
                              icon=":material/play_arrow:", query_params=gap.prefill)
        elif gap.fill == "serve":
            cols[1].page_link(nav.NEW_RUN, label="Measure it here: serve-bench against an engine serving it (New run)",
                              icon=":material/play_arrow:", query_params=gap.prefill)
        elif gap.fill == "devices":
            cols[1].page_link(nav.DEVICES, label="Enter a price (Devices)", icon=":material/memory:")
    st.caption(inputs.ELSEWHERE)
    st.page_link(nav.UPLOAD, label="Upload a result file", icon=":material/upload:")


def cost_and_figures(answer: Answer, settings: CostSettings) -> None:
    """Cost per 1M samples against utilisation (when a device is costed) beside the figures each cost uses."""
    costed = answer.costed()
    bars = tables.device_bars(answer)
    if costed or not bars.is_empty():
        left, right = st.columns(2)
        if costed:
            left.subheader("Cost per 1M samples as utilisation changes")
            log_y = left.toggle("Log scale", key="log_cost")
            figure = charts.cost_vs_utilisation(tables.cost_curve(answer), settings.currency, settings.utilisation,
                                                answer.crossovers(), log_y)
            left.plotly_chart(figure, width="stretch")
        if not bars.is_empty():
            right.subheader("Throughput and energy per example")
            right.caption("The figures each device's cost uses, with their input size and trust grade.")
            right.plotly_chart(charts.device_figures(bars), width="stretch")
