"""Devices: the catalog with specs and prices, exchange rates; edits are checked and kept in a history."""

import polars as pl
import streamlit as st

from db.catalog_edits import EDITABLE_DEVICE_COLUMNS
from decision.markdown import md
from decision.text import count, human_field
from explorer import data, edits
from explorer.device_names_section import mapping_section
from explorer.devices import catalog_view, history_view, rates_view
from explorer.tables import styled
from joulebench.errors import JouleBenchError

st.title("Devices")
flash = st.session_state.get("devices_saved")
if flash:
    st.success(flash)  # the last save's confirmation, kept until the next edit
path = data.db_path()
catalog, modes = data.or_stop(data.devices, path)
read_only = data.location(path).read_only_reason  # a team store: shown, never offered for editing

kinds = st.multiselect("Kind", ["gpu", "jetson", "cpu"], default=["gpu", "jetson", "cpu"], key="kinds",
                       format_func=lambda k: {"gpu": "GPU", "jetson": "Jetson", "cpu": "CPU"}[k])
shown = catalog_view(catalog.filter(pl.col("kind").is_in(kinds)))
if read_only:
    st.caption(md(f"{count(shown.height, 'device')}. Not editable here: {read_only}."))
    st.dataframe(styled(shown.rename({c: human_field(c) for c in shown.columns})),
                 hide_index=True, width="stretch")
else:
    st.caption(f"{shown.height} devices. Editable: price (above 0) with its currency (a three-letter code), its kind, "
               "source and date (YYYY-MM-DD), TDP (W, above 0), memory (GB, above 0) and notes; every value is checked "
               "against the same ranges as a result file's, and a save with any value out of range is refused whole. "
               "A price you enter is labelled 'entered by you' with its date wherever it is used; specs cite their "
               "source.")
    locked = [c for c in shown.columns if c not in EDITABLE_DEVICE_COLUMNS]
    headers = {c: human_field(c) for c in shown.columns}
    edited = st.data_editor(shown, disabled=locked, hide_index=True, key="catalog", width="stretch", column_config={
        **headers,
        "device_name": st.column_config.TextColumn("Device"),
        "kind": st.column_config.TextColumn("Kind"),
        "tdp_w": st.column_config.TextColumn("TDP (W)", help="Above 0, up to 100,000"),
        "memory_gb": st.column_config.TextColumn("Memory (GB)", help="Above 0, up to 100,000"),
        "price_amount": st.column_config.TextColumn("Price", help="Above 0, in the price's currency"),
        "price_currency": st.column_config.TextColumn("Currency", help="A three-letter code: USD, EUR, CAD, ..."),
        "price_covers": st.column_config.TextColumn("Price covers", help="What the price buys: a GPU's is the bare "
                                                    "card (it needs a host PC), a Jetson's the developer kit"),
        "price_from": st.column_config.TextColumn("Price from", width="medium",
                                                  help="The published source, or 'entered by you' with the date"),
        "memory_bandwidth_gbs": st.column_config.TextColumn("Memory bandwidth (GB/s)"),
        "runs": st.column_config.TextColumn("Runs"),
        "price_kind": st.column_config.TextColumn("Price kind", help="retail, market or list"),
        "price_date": st.column_config.TextColumn("Price date", help="YYYY-MM-DD"),
        "launch_date": st.column_config.TextColumn("Launch date"),
    })

    changed = data.changed_rows(shown, edited)
    if changed.height:
        st.session_state.pop("devices_saved", None)
        st.caption(f"{count(changed.height, 'device')} edited: " + md(", ".join(changed["device_name"].to_list())))
        if st.button("Save changes", type="primary"):
            try:
                edits.save_device_edits(path, changed)
            except JouleBenchError as e:
                st.error(md(e.format_message()))
            else:
                st.session_state["devices_saved"] = (f"Saved {count(changed.height, 'device')}: "
                                                     + md(", ".join(changed["device_name"].to_list()))
                                                     + ". The change is in the edit history below.")
                st.rerun()

mapping_section(path, read_only, catalog["device_name"].to_list())

st.subheader("Exchange rates")
st.caption("Prices are converted into the display currency with these rates, never added across currencies. "
           "Each rate holds for its date and names its source"
           + ("." if read_only else "; edit or add rows, then save."))
if read_only:
    st.dataframe(styled(rates_view(data.exchange_rates(path))), hide_index=True, width="stretch")
else:
    rates = rates_view(data.exchange_rates(path))
    rates_edited = st.data_editor(rates, num_rows="dynamic", hide_index=True, key="rates", width="stretch",
                                  column_config={
                                      "from_currency": st.column_config.TextColumn("From", help="e.g. CAD"),
                                      "to_currency": st.column_config.TextColumn("To", help="e.g. USD"),
                                      "rate": st.column_config.TextColumn("Rate", help="1 From = rate To; above 0, "
                                                                          "up to 1,000,000"),
                                      "rate_date": st.column_config.TextColumn("Date", help="YYYY-MM-DD"),
                                      "source": st.column_config.TextColumn("Source", width="large")})
    if not rates_edited.equals(rates) and st.button("Save exchange rates", type="primary"):
        try:
            edits.save_exchange_rates(path, rates_edited)
        except JouleBenchError as e:
            st.error(md(e.format_message()))
        else:
            st.session_state["devices_saved"] = f"Saved {count(rates_edited.height, 'exchange rate')}."
            st.rerun()

with st.expander("Edit history"):
    history = data.device_history(path)
    if history.is_empty():
        st.caption("No edits yet.")
    else:
        st.dataframe(history_view(history), hide_index=True, width="stretch")

st.subheader("Jetson power modes")
st.dataframe(styled(modes.rename({c: human_field(c) for c in modes.columns})), hide_index=True, width="stretch")
