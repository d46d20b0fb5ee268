"""Upload: import result files from other people and other tools, then fill what they do not state."""

import streamlit as st

import importers
from decision.markdown import md
from decision.text import count
from explorer import data, mapping_form, nav, upload, upload_queue, upload_view
from explorer.device_names_section import choices_section
from explorer.label_form import label_form
from joulebench.errors import JouleBenchError
from joulebench.metrics import label

st.title("Upload results")
if data.team_store_notice(data.db_path()):
    st.stop()
st.write("Drop one or several result files. Each file is imported whole or not at all; a file imported "
         "before adds nothing. What a file does not say (device, mode, precision, batch size) is imported as "
         "'not stated': fill it in below, after the import, or here beforehand.")
upload_round = st.session_state.get("upload_round", 0)
files = st.file_uploader("Result files", accept_multiple_files=True,
                         key="files" if not upload_round else f"files_{upload_round}")
with st.expander("What the files cannot say (used only where a file is silent)"):
    c = st.columns(4)
    device = c[0].text_input("Device", key="h_device", placeholder="e.g. A100 80GB")
    boundary = c[1].selectbox(label("energy_boundary"),
                              ["", "gpu_board", "jetson_module", "cpu_package", "system", "wall"], key="h_boundary")
    precision = c[2].selectbox("Precision", ["", "fp32", "tf32", "fp16", "bf16", "fp16-weights"], key="h_precision")
    mode = c[3].selectbox("Mode", ["", "train", "infer", "idle"], key="h_mode")
    units = st.text_input("Units of columns", key="h_units", placeholder="e.g. PWR_IN_AVG=mW, energy=kWh",
                          help="for a table whose column names do not state the unit: COLUMN=UNIT, comma-separated "
                               "(J, kJ, mWh, Wh, kWh, mW, W, kW, ms, s, min, h)")
with st.expander("Attach a power log (optional)"):
    st.caption("A wall meter's CSV (time, watts), an nvidia-smi, tegrastats or jtop log written while the "
               "runs of one uploaded result file ran; aligned to each run's start and end time.")
    log_file = st.file_uploader("Power log", key="power_log" if not upload_round else f"power_log_{upload_round}")
    log_boundary = st.selectbox("The log measures", ["", "wall", "system", "gpu_board", "jetson_module",
                                                     "cpu_package"], key="log_boundary",
                                help="empty: wall for a meter CSV, else what the log says")


@st.fragment(run_every=1.0 if any(item.pending for item in upload_queue.uploads(data.db_path())) else None)
def upload_states() -> None:
    """Each file uploaded here in the last day and where it is (read from the server's queue, so it survives a
    reload and a closed tab); reruns itself every second while a file waits, the whole page once all are done."""
    items = upload_queue.uploads(data.db_path())
    if not items:
        return
    st.markdown("**Uploads of the last day** (on this server, newest first)")
    for item in items[:upload_queue.SHOWN_ITEMS]:
        kind, text = upload_queue.shown(item)
        getattr(st, kind)(md(text))
        for run_id in item.run_ids[:5] if item.state == upload_queue.IMPORTED else []:
            st.page_link(nav.RUN_DETAIL, label=md(f"Run {run_id}"), query_params={"run_id": run_id})
    if len(items) > upload_queue.SHOWN_ITEMS:
        st.caption(f"The newest {upload_queue.SHOWN_ITEMS} of {count(len(items), 'upload')}.")
    if st.session_state.get("upload_states_pending") and not any(item.pending for item in items):
        st.session_state["upload_states_pending"] = False
        st.rerun(scope="app")  # all done: the review below can read the database now
    st.session_state["upload_states_pending"] = any(item.pending for item in items)


def review(items: list[upload_queue.Upload]) -> None:
    """What the imported files do not state, with the form that fills it (after the imports: they hold the
    database)."""
    sources = [sid for item in items if item.state == upload_queue.IMPORTED for sid in item.source_ids]
    if any(item.pending for item in items):
        st.caption("The review of what the files do not state shows here once every file is imported.")
        return
    reviews = [g for g in (data.source_gaps(data.db_path(), sid) for sid in sources[:upload_queue.SHOWN_ITEMS])
               if g is not None]
    if reviews:
        st.subheader("Review: what the imported files do not state")
        for gaps in reviews:
            with st.container(border=True):
                st.markdown(f"**{md(gaps.file_name)}** — {md(gaps.format)}, {count(gaps.runs, 'run')}, "
                            f"source {gaps.source_id}")
                if not gaps.not_stated:
                    st.caption("States everything it needs (or it has been filled in).")
                label_form(gaps, key=f"label_source_{gaps.source_id}", via="upload_page")
    if sources:  # a device name that could be several catalog entries: the person picks
        choices_section(data.db_path(), sources[:upload_queue.SHOWN_ITEMS],
                        data.devices(data.db_path())[0]["device_name"].to_list())


upload_queue.start(data.db_path())  # files a stopped server left queued are imported now
waiting = st.session_state.pop("upload_waiting", None)
if waiting:  # just clicked: wait here a little (the import goes on without this page), then show where each is
    with st.status(f"Importing {count(len(waiting), 'file')}…", expanded=False) as busy:
        upload_queue.wait(data.db_path(), waiting, upload_queue.PAGE_WAIT_S)
        busy.update(label="Imports done." if upload_queue.done(data.db_path(), waiting)
                    else "Still importing: each file's state below updates by itself.", state="complete")
upload_states()
recent = upload_queue.uploads(data.db_path())
if not files:
    if recent:
        review(recent)
    else:
        st.info("JouleBench reads the result files of " + md(importers.known_tools()) + ".")
    st.stop()
try:
    given = upload.hints(device, boundary, precision, mode, units)
except JouleBenchError as e:
    st.error(md(e.format_message()))
    st.stop()
log = upload.PowerLog(log_file.name, log_file.getvalue(), log_boundary or None) if log_file else None
if log and len(files) > 1:
    st.error(f"{md(log.name)}: a power log attaches to the runs of one result file; upload one file with it.")
    st.stop()


def queued_now(queued: list[upload_queue.Upload]) -> None:
    st.session_state["upload_waiting"] = [item.token for item in queued]
    st.session_state["upload_round"] = upload_round + 1  # an empty uploader: the files are on the server now
    st.rerun()


uploaded = upload.units([(f.name, f.getvalue()) for f in files or []])
uploaded, by_mapping = mapping_form.with_saved(data.db_path(), uploaded)  # a saved mapping's shape: read by it
previews = [((name, blob), mapping_form.explained(upload.preview(name, blob, given, log), by_mapping.get(name)))
            for name, blob in uploaded]
for _unit, p in previews:
    with st.container(border=True):
        if p.error:
            st.error(md(p.error))
        else:
            upload_view.preview(p)
        if mapped_now := mapping_form.offer(data.db_path(), _unit, given, p, by_mapping):
            queued_now(mapped_now)

importable = [unit for unit, p in previews if not p.error]
if importable and st.button(f"Import {count(len(importable), 'file')}", type="primary"):
    try:  # queued beside the database first: the server imports them whether or not this page stays open
        queued = upload_queue.queue(data.db_path(), importable, given, log)
    except JouleBenchError as e:
        st.error(md(e.format_message()))
        st.stop()
    queued_now(queued)
