"""Devices: the catalog with specs and prices; edits persist in the database."""

import polars as pl
import streamlit as st

from db.queries import EDITABLE_DEVICE_COLUMNS
from explorer import data
from explorer.markdown import md
from joulebench.errors import JouleBenchError

st.title("Devices")
catalog, modes = data.or_stop(data.devices, data.db_path())

kinds = st.multiselect("Kind", ["gpu", "jetson", "cpu"], default=["gpu", "jetson", "cpu"], key="kinds")
shown = catalog.filter(pl.col("kind").is_in(kinds))
st.caption(f"{shown.height} devices. Editable: {', '.join(EDITABLE_DEVICE_COLUMNS)}. Specs cite their source.")
locked = [c for c in shown.columns if c not in EDITABLE_DEVICE_COLUMNS]
edited = st.data_editor(shown, disabled=locked, hide_index=True, key="catalog", width="stretch")

changed = data.changed_rows(shown, edited)
if changed.height:
    st.caption(f"{changed.height} device(s) edited: " + md(", ".join(changed["device_name"].to_list())))
    if st.button("Save changes", type="primary"):
        try:
            data.save_device_edits(data.db_path(), changed)
        except JouleBenchError as e:
            st.error(md(e.format_message()))
        else:
            st.success(f"Saved {changed.height} device(s).")
            st.rerun()

st.subheader("Jetson power modes")
st.dataframe(modes, hide_index=True, width="stretch")
