"""The trust-grade legend as every page shows it: an expander "What the grades mean" with the
grades' meanings (energy.grades), what the page's grades are built from, and where the checks
and thresholds are written down."""

from __future__ import annotations

import streamlit as st

from decision.aggregates import grade_legend

HOW = ("Each check allows a best grade and a figure gets the lowest: the window against the sensor's update "
       "period, steady state, repeats and their spread, counter against trace, throttling, where and how energy "
       "was measured, and where the figure comes from.")


def legend(what_is_graded: str) -> None:
    """`what_is_graded`: one sentence on what the grades on this page belong to."""
    with st.expander("What the grades mean"):
        st.dataframe(grade_legend(), hide_index=True, width="stretch")
        st.caption(f"{what_is_graded} {HOW}")
