"""Data functions for the pages: each opens the store briefly, returns polars frames, and is
cached until an import or a run calls `invalidate()`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import polars as pl
import streamlit as st

from db import Store, queries
from db.queries import HEADLINE, overview_counts, runs_for_chart
from joulebench.errors import JouleBenchError
from joulebench.paths import resolve_db_path

T = TypeVar("T")


def db_path() -> str:
    return str(resolve_db_path(None))


def or_stop(load: Callable[..., T], *args: Any) -> T:
    """Call a data function; on the project's own error show it and stop the page (no traceback)."""
    try:
        return load(*args)
    except JouleBenchError as e:
        st.error(e.format_message())
        st.stop()
        raise  # st.stop() raises; this line only tells type checkers so


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
        return runs_for_chart(store, HEADLINE)


def invalidate() -> None:
    """Call after an import or a run so every page reads the new data."""
    st.cache_data.clear()


@st.cache_data(max_entries=4, show_spinner=False)
def runs(path: str) -> pl.DataFrame:
    with Store.open(path) as store:
        return queries.runs_table(store)


@st.cache_data(max_entries=4, show_spinner=False)
def findings(path: str) -> pl.DataFrame:
    with Store.open(path) as store:
        return queries.findings(store)


@st.cache_data(max_entries=64, show_spinner=False)
def run_detail(path: str, run_id: str) -> tuple[dict | None, pl.DataFrame, pl.DataFrame]:
    with Store.open(path) as store:
        run = queries.run_detail(store, run_id)
        return run, queries.power_samples(store, run_id), queries.step_times(store, run_id)


@st.cache_data(max_entries=4, show_spinner=False)
def devices(path: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    with Store.open(path) as store:
        return queries.devices(store), queries.power_modes(store)


def changed_rows(before: pl.DataFrame, after: pl.DataFrame) -> pl.DataFrame:
    """Rows of `after` (same order as `before`) where any cell differs, nulls compared as values."""
    if before.height != after.height:
        return after
    differs = pl.Series([False] * after.height)
    for column in after.columns:
        differs = differs | after[column].ne_missing(before[column].cast(after[column].dtype, strict=False))
    return after.filter(differs)


def save_device_edits(path: str, edits: pl.DataFrame) -> int:
    with Store.open(path) as store:
        changed = queries.update_devices(store, edits)
    invalidate()
    return changed


def selection_document(path: str, run_ids: tuple[str, ...]) -> bytes:
    """A result file (gzip) of the given runs, for download."""
    import gzip
    import json

    from db.export import Selection, build_document

    with Store.open(path) as store:
        document = build_document(store, Selection(run_ids=run_ids))
    return gzip.compress(json.dumps(document).encode(), mtime=0)
