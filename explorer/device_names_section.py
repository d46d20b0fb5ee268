"""The Devices page's device names met in imports (what each is stored as, changeable but on a read-only
store), and the Upload review's choice for a name that could be several catalog entries."""

from __future__ import annotations

import polars as pl
import streamlit as st

import db.device_names as device_names
from db import Store
from decision.markdown import md
from decision.text import count
from explorer import data, edits
from explorer.devices import name_choices, names_view
from explorer.tables import picker_options, styled
from joulebench.errors import JouleBenchError

OWN = "its own device"


@data.reads(max_entries=4)
def _mapping(store: Store) -> pl.DataFrame:
    return device_names.mapping(store)


@data.reads(max_entries=16)
def _waiting(store: Store, source_ids: tuple[int, ...]) -> pl.DataFrame:
    return device_names.waiting(store, source_ids)


def _flash() -> None:
    said = st.session_state.pop("device_name_saved", None)
    if said:
        st.success(said)


def _choice(path: str, source_name: str, candidates: list[str], catalog_names: list[str], key: str) -> None:
    options, left_out = picker_options(name_choices(source_name, candidates, catalog_names), keep=source_name)
    if left_out:
        st.caption(md(left_out))
    picked = st.selectbox(f"{source_name} is", options, key=f"{key}_pick",
                          format_func=lambda o: f"{o} ({OWN})" if o == source_name else o)
    if st.button("Save device name", key=f"{key}_save"):
        try:
            said = edits.save_device_name(path, source_name, picked)
        except JouleBenchError as e:
            st.error(md(e.format_message()))
        else:
            st.session_state["device_name_saved"] = md(said)
            st.rerun()


def mapping_section(path: str, read_only: str | None, catalog_names: list[str]) -> None:
    """Every device name met in imports and the catalog entry its runs are stored under."""
    st.subheader("Device names in imported files")
    _flash()
    mapping = _mapping(path)
    if mapping.is_empty():
        st.caption("No imported file has named a device outside the catalog.")
        return
    st.caption("A name a file states is stored as the catalog entry of the same part (family, memory, form "
               "factor: an SXM, PCIe or NVL card is another power class and never taken for another), else added "
               "once as its own device; a name that could be several entries waits for your choice.")
    st.dataframe(styled(names_view(mapping)), hide_index=True, width="stretch")
    if read_only:
        st.caption(md(f"Not changeable here: {read_only}."))
        return
    rows = list(mapping.iter_rows(named=True))
    with st.expander("Change what a name is stored as"):
        names = [r["source_name"] for r in rows]
        offered, left_out = picker_options(names)
        if left_out:
            st.caption(md(left_out))
        source_name = st.selectbox("Name in the files", offered, key="device_name_source")
        row = next(r for r in rows if r["source_name"] == source_name)
        _choice(path, source_name, list(row["candidates"] or []), catalog_names, key="device_name")


def choices_section(path: str, source_ids: list[int], catalog_names: list[str]) -> None:
    """The Upload review: each device name of these sources that could be several catalog entries, with the
    choice (nothing is mapped to one of them without it)."""
    _flash()
    waiting = _waiting(path, tuple(source_ids))
    for row in waiting.iter_rows(named=True):
        with st.container(border=True):
            st.markdown(md(f"The files name the device {row['source_name']!r} ({count(row['runs'], 'run')}): "
                           f"{row['reason'] or 'it could be several catalog entries'}. Which is it?"))
            _choice(path, row["source_name"], list(row["candidates"] or []), catalog_names,
                    key=f"device_choice_{row['source_name']}")
