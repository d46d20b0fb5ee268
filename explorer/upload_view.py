"""The Upload page's review of one file it read: its format and runs, what it does not state, the figures it lacks,
the first runs as a table and the reader's warnings (explorer.upload.Preview, drawn)."""

from __future__ import annotations

import polars as pl
import streamlit as st

from decision.markdown import md
from decision.text import count
from explorer.tables import styled
from explorer.upload import Preview


def preview(p: Preview) -> None:
    st.markdown(f"**{md(p.name)}** — {md(p.format)}: {count(p.runs, 'run')}")
    st.caption(f"Devices: {md(', '.join(p.devices) or '—')} · Workloads: {md(', '.join(p.workloads) or '—')}")
    if p.not_stated:
        st.caption(f"Not stated in this file: {md(p.not_stated)} (fill in after the import)")
    if p.missing_fields:
        st.caption("Figures not in this file: " + md(", ".join(p.missing_fields)))
    if p.figures:
        st.dataframe(styled(pl.DataFrame(p.figures, infer_schema_length=None), not_stated=("Batch",)),
                     hide_index=True)
        if p.runs > len(p.figures):
            st.caption(f"The first {len(p.figures)} of {count(p.runs, 'run')}.")
    for warning in p.warnings:
        st.caption(f"⚠ {md(warning)}")
