"""Data functions for the pages: each opens the store briefly, returns polars frames, and is
cached until an import or a run calls `invalidate()`."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
import streamlit as st

from db import Store
from db.queries import HEADLINE, overview_counts, runs_for_chart
from joulebench.paths import resolve_db_path


def db_path() -> str:
    return str(resolve_db_path(None))


@dataclass(frozen=True)
class Overview:
    db_path: str
    runs: int
    devices: int
    findings: int
    inbox_pending: int
    runs_by_source_kind: pl.DataFrame
    runs_by_device: pl.DataFrame
    sources: pl.DataFrame
    workloads: pl.DataFrame


@st.cache_data(max_entries=8, show_spinner=False)
def overview(path: str) -> Overview:
    with Store.open(path) as store:
        info = store.info()
        workloads = overview_counts(store)
    return Overview(str(info.path), info.runs, info.devices, info.findings, info.inbox_pending,
                    info.runs_by_source_kind, info.runs_by_device, info.sources, workloads)


@st.cache_data(max_entries=8, show_spinner=False)
def headline_runs(path: str) -> pl.DataFrame:
    with Store.open(path) as store:
        return runs_for_chart(store, **HEADLINE)


def invalidate() -> None:
    """Call after an import or a run so every page reads the new data."""
    st.cache_data.clear()
