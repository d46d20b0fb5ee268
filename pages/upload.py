"""Upload: import result files from other people and other tools, then fill what they do not state."""

import polars as pl
import streamlit as st

import importers
from decision.markdown import md
from decision.text import count
from explorer import data, nav, upload
from explorer.label_form import label_form
from explorer.tables import styled
from joulebench.errors import JouleBenchError

st.title("Upload results")
if data.team_store_notice(data.db_path()):
    st.stop()
st.write("Drop one or several result files. Each file is imported whole or not at all; a file imported "
         "before adds nothing. What a file does not say (device, mode, precision, batch size) is imported as "
         "'not stated': fill it in below, after the import, or here beforehand.")
files = st.file_uploader("Result files", accept_multiple_files=True, key="files")
with st.expander("What the files cannot say (used only where a file is silent)"):
    c = st.columns(4)
    device = c[0].text_input("Device", key="h_device", placeholder="e.g. A100 80GB")
    boundary = c[1].selectbox("Measured at", ["", "gpu_board", "jetson_module", "cpu_package", "system", "wall"],
                              key="h_boundary")
    precision = c[2].selectbox("Precision", ["", "fp32", "tf32", "fp16", "bf16", "fp16-weights"], key="h_precision")
    mode = c[3].selectbox("Mode", ["", "train", "infer", "idle"], key="h_mode")
    units = st.text_input("Units of columns", key="h_units", placeholder="e.g. PWR_IN_AVG=mW, energy=kWh",
                          help="for a table whose column names do not state the unit: COLUMN=UNIT, comma-separated "
                               "(J, kJ, mWh, Wh, kWh, mW, W, kW, ms, s, min, h)")
with st.expander("Attach a power log (optional)"):
    st.caption("A wall meter's CSV (time, watts), an nvidia-smi, tegrastats or jtop log written while the "
               "runs of one uploaded result file ran; aligned to each run's start and end time.")
    log_file = st.file_uploader("Power log", key="power_log")
    log_boundary = st.selectbox("The log measures", ["", "wall", "system", "gpu_board", "jetson_module",
                                                     "cpu_package"], key="log_boundary",
                                help="empty: wall for a meter CSV, else what the log says")
imported_sources: dict[int, str] = st.session_state.setdefault("imported_sources", {})
if not files and not imported_sources:
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

uploaded = upload.units([(f.name, f.getvalue()) for f in files or []])
previews = [((name, blob), upload.preview(name, blob, given, log)) for name, blob in uploaded]
for _unit, p in previews:
    with st.container(border=True):
        if p.error:
            st.error(md(p.error))
            continue
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

importable = [unit for unit, p in previews if not p.error]
if importable and st.button(f"Import {count(len(importable), 'file')}", type="primary"):
    for name, blob in importable:
        try:
            reports = upload.import_upload(name, blob, data.db_path(), given, log)
        except JouleBenchError as e:
            st.error(md(e.format_message()))
            continue
        for report in reports:
            if report.source_id is not None:
                imported_sources[report.source_id] = report.file_name
            if report.status == "queued":
                st.warning(f"{md(report.file_name)}: {md(report.message)} Fill what it does not state on Run "
                           "detail once it is in.")
            elif report.status == "already_imported":
                st.info(f"{md(report.file_name)}: imported before; nothing added.")
            elif report.status == "rejected":
                st.warning(f"{md(report.file_name)}: skipped: {md(report.message)}")
            else:
                st.success(f"{md(report.file_name)}: {count(report.runs_added, 'run')} added, "
                           f"{report.runs_duplicate:,} already present.")
                for run_id in report.run_ids[:20]:
                    st.page_link(nav.RUN_DETAIL, label=md(f"Run {run_id}"), query_params={"run_id": run_id})

reviews = [g for g in (data.source_gaps(data.db_path(), sid) for sid in imported_sources) if g is not None]
if reviews:
    st.subheader("Review: what the imported files do not state")
    for gaps in reviews:
        with st.container(border=True):
            st.markdown(f"**{md(gaps.file_name)}** — {md(gaps.format)}, {count(gaps.runs, 'run')}, "
                        f"source {gaps.source_id}")
            if not gaps.not_stated:
                st.caption("States everything it needs (or it has been filled in).")
            label_form(gaps, key=f"label_source_{gaps.source_id}", via="upload_page")
