"""Compare's sidebar filters, a shared Streamlit piece: one multiselect per filter (empty means
all), the chart metric and the log scale, each starting from the link's values."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl
import streamlit as st

from explorer import compare


def filters(runs: pl.DataFrame, initial: compare.Selection, params: Mapping[str, list[str]]
            ) -> tuple[compare.Selection, bool]:
    """The selection the filters make, and whether the charts use a log scale."""
    st.header("Filters")
    st.caption("Empty means all: nothing is filtered that is not shown here.")
    picked = {}
    run_labels = compare.run_labels(runs) if initial.filters.get("run") else {}
    for key, label in compare.FILTER_LABELS.items():
        if key == "run" and not initial.filters.get("run"):
            continue  # shown only when a link picks runs (New run's "see these runs")
        opts = compare.options(runs, key)
        picked[key] = tuple(st.multiselect(label, opts, default=[v for v in initial.filters.get(key, ()) if v in opts],
                                           key=f"f_{key}", placeholder="all",
                                           format_func=(lambda r: run_labels.get(r, r)) if key == "run" else str))
    metric_key = st.selectbox("Chart metric", list(compare.METRICS), index=list(compare.METRICS).index(initial.metric),
                              format_func=lambda k: compare.METRICS[k].label, key="metric")
    log_scale = st.toggle("Log scale", key="log", value=params.get("log", ["0"])[0] == "1",
                          help="For values that span orders of magnitude (828 ms beside 11 ms)")
    return compare.Selection({k: v for k, v in picked.items() if v}, metric_key), log_scale
