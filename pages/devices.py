"""Devices: the catalog with specs and prices, exchange rates; edits are checked and kept in a history."""

import polars as pl
import streamlit as st

from db.queries import EDITABLE_DEVICE_COLUMNS
from explorer import data
from explorer.markdown import md
from explorer.tables import styled
from explorer.text import human_field
from joulebench.errors import JouleBenchError

st.title("Devices")
path = data.db_path()
catalog, modes = data.or_stop(data.devices, path)

kinds = st.multiselect("Kind", ["gpu", "jetson", "cpu"], default=["gpu", "jetson", "cpu"], key="kinds")
shown = catalog.filter(pl.col("kind").is_in(kinds))
st.caption(f"{shown.height} devices. Editable: TDP (W, above 0), memory (GB, above 0), price (0 or more) with its "
           "currency (a three-letter code), kind, source and date, and notes. Specs cite their source.")
locked = [c for c in shown.columns if c not in EDITABLE_DEVICE_COLUMNS]
headers = {c: human_field(c) for c in shown.columns}
edited = st.data_editor(shown, disabled=locked, hide_index=True, key="catalog", width="stretch", column_config={
    **headers,
    "device_name": st.column_config.TextColumn("Device"),
    "tdp_w": st.column_config.NumberColumn("TDP (W)", min_value=0.001, help="Above 0"),
    "memory_gb": st.column_config.NumberColumn("Memory (GB)", min_value=0.001, help="Above 0"),
    "price_amount": st.column_config.NumberColumn("Price", min_value=0.0, help="0 or more, in the price's currency"),
    "price_currency": st.column_config.TextColumn("Currency", help="A three-letter code: USD, EUR, CAD, ..."),
    "memory_bandwidth_gbs": st.column_config.NumberColumn("Memory bandwidth (GB/s)"),
    "runs": st.column_config.NumberColumn("Runs"),
    "price_kind": st.column_config.TextColumn("Price kind", help="retail, market or list"),
    "launch_date": st.column_config.TextColumn("Launch date"),
})

changed = data.changed_rows(shown, edited)
if changed.height:
    st.caption(f"{changed.height} device(s) edited: " + md(", ".join(changed["device_name"].to_list())))
    if st.button("Save changes", type="primary"):
        try:
            data.save_device_edits(path, changed)
        except JouleBenchError as e:
            st.error(md(e.format_message()))
        else:
            st.success(f"Saved {changed.height} device(s); the change is in the edit history below.")
            st.rerun()

st.subheader("Exchange rates")
st.caption("Prices are converted into the display currency with these rates, never added across currencies. "
           "Each rate holds for its date and names its source; edit or add rows, then save.")
rates = data.exchange_rates(path).drop("updated_at")
rates_edited = st.data_editor(rates, num_rows="dynamic", hide_index=True, key="rates", width="stretch",
                              column_config={
                                  "from_currency": st.column_config.TextColumn("From", help="e.g. CAD"),
                                  "to_currency": st.column_config.TextColumn("To", help="e.g. USD"),
                                  "rate": st.column_config.NumberColumn("Rate", min_value=0.0, format="%.6g",
                                                                        help="1 From = rate To"),
                                  "rate_date": st.column_config.TextColumn("Date", help="YYYY-MM-DD"),
                                  "source": st.column_config.TextColumn("Source", width="large")})
if not rates_edited.equals(rates) and st.button("Save exchange rates", type="primary"):
    try:
        data.save_exchange_rates(path, rates_edited)
    except JouleBenchError as e:
        st.error(md(e.format_message()))
    else:
        st.success(f"Saved {rates_edited.height} exchange rate(s).")
        st.rerun()

with st.expander("Edit history"):
    history = data.device_history(path)
    if history.is_empty():
        st.caption("No edits yet.")
    else:
        st.dataframe(history.rename({"edited_at": "When", "device_name": "Device", "column_name": "Field",
                                     "old_value": "Before", "new_value": "After"}), hide_index=True, width="stretch")

st.subheader("Jetson power modes")
st.dataframe(styled(modes.rename({c: human_field(c) for c in modes.columns})), hide_index=True, width="stretch")
