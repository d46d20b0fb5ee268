"""The form that fills what a source's file did not state, shared by the Upload review and Run
detail: one input per missing label, applied to every run of the source (`edits.fill_labels`)."""

from __future__ import annotations

import streamlit as st

from decision.markdown import md
from decision.text import as_fields, count
from explorer import data, edits
from explorer.devices import catalog_matches
from joulebench.errors import JouleBenchError
from joulebench.ranges import field_range
from joulebench.vocab import BOUNDARIES, DEVICE_KINDS, MODES, PRECISIONS

BATCH_RANGE = field_range("config", "batch_size")  # the schema's, as every edit path applies it


def label_form(gaps: data.SourceGaps, *, key: str, via: str) -> None:
    """Inputs for the labels `gaps` lists; on submit, label every run of the source and rerun.
    The outcome shows above the form on the next run."""
    done = st.session_state.pop(f"{key}_done", None)
    if done:
        st.success(md(done))
    if not gaps.not_stated:
        return
    read_only = data.location(data.db_path()).read_only_reason
    if read_only:  # a team store: what is missing is said, and where it is filled; no form to refuse later
        st.caption(md(f"Not stated in {gaps.file_name} (source {gaps.source_id}): {gaps.describe()}. "
                      f"Not editable here: {read_only}."))
        return
    st.caption(md(f"Not stated in {gaps.file_name} (source {gaps.source_id}): {gaps.describe()}. "
                  f"What you enter applies to all {count(gaps.runs, 'run')} of it that do not state it, "
                  "and is recorded as supplied by you."))
    missing = gaps.not_stated
    with st.form(key):
        cols = st.columns(3)
        device = kind = mode = precision = boundary = ""
        batch = 0
        new_device = False
        if "device" in missing:
            names = sorted(data.devices(data.db_path())[0]["device_name"].to_list())
            device = cols[0].text_input("Device", key=f"{key}_device", placeholder="as the catalog names it",
                                        help="A name the catalog holds (Devices page); a near match is offered")
            kind = cols[1].selectbox("Device kind", ["", *DEVICE_KINDS], key=f"{key}_kind",
                                     help="empty: from the device's name")
            new_device = cols[2].checkbox("A new device, not in the catalog", key=f"{key}_new",
                                          help="Tick to add a name the catalog does not hold")
        if "mode" in missing:
            mode = cols[2].selectbox("Mode", ["", *MODES], key=f"{key}_mode")
        if "precision" in missing:
            precision = cols[0].selectbox("Precision", ["", *PRECISIONS], key=f"{key}_precision")
        if "batch_size" in missing:
            batch = int(cols[1].number_input("Batch size (0 = not given)", 0, int(BATCH_RANGE.high or 1), 0,
                                             key=f"{key}_batch", help=f"0, or {BATCH_RANGE.describe()}"))
        if "energy_boundary" in missing:
            boundary = cols[2].selectbox("Energy measured at", ["", *BOUNDARIES], key=f"{key}_boundary")
        submitted = st.form_submit_button("Save labels", type="primary")
    if submitted and not (device or mode or precision or batch or boundary):
        st.error("Give at least one of the labels above (device, mode, precision, batch size or where energy was "
                 "measured), then save.")
        return
    if submitted and device and not new_device:
        matches = catalog_matches(device, names)
        if matches:
            st.error(md(f"'{device}' is not in the catalog. Did you mean {' or '.join(matches)}? Type that name, "
                        "or tick 'A new device, not in the catalog' to add this one."))
            return
    if submitted:
        try:
            message = edits.fill_labels(data.db_path(), gaps.source_id, device=device, device_kind=kind, mode=mode,
                                       precision=precision, batch_size=batch, boundary=boundary, via=via)
        except JouleBenchError as e:
            st.error(md(as_fields(e.format_message())))  # shared with `joulebench label`: fields, not its flags
            return
        st.session_state[f"{key}_done"] = message
        st.rerun()
