"""Upload: import result files from other people and other tools."""

import streamlit as st

import importers
from explorer import data, nav, upload
from explorer.text import esc
from joulebench.errors import JouleBenchError

st.title("Upload results")
st.write("Drop one or several result files. Each file is imported whole or not at all; a file imported "
         "before adds nothing.")
files = st.file_uploader("Result files", accept_multiple_files=True, key="files")
with st.expander("What the files cannot say (used only where a file is silent)"):
    c = st.columns(4)
    device = c[0].text_input("Device", key="h_device", placeholder="e.g. A100 80GB")
    boundary = c[1].selectbox("Measured at", ["", "gpu_board", "jetson_module", "cpu_package", "system", "wall"],
                              key="h_boundary")
    precision = c[2].selectbox("Precision", ["", "fp32", "tf32", "fp16", "bf16", "fp16-weights"], key="h_precision")
    mode = c[3].selectbox("Mode", ["", "train", "infer", "idle"], key="h_mode")
with st.expander("Attach a power log (optional)"):
    st.caption("A wall meter's CSV (time, watts), an nvidia-smi, tegrastats or jtop log written while the "
               "runs of one uploaded result file ran; aligned to each run's start and end time.")
    log_file = st.file_uploader("Power log", key="power_log")
    log_boundary = st.selectbox("The log measures", ["", "wall", "system", "gpu_board", "jetson_module",
                                                     "cpu_package"], key="log_boundary",
                                help="empty: wall for a meter CSV, else what the log says")
if not files:
    st.info("Known formats: " + esc("; ".join(importers.known_formats())))
    st.stop()
try:
    given = upload.hints(device, boundary, precision, mode)
except JouleBenchError as e:
    st.error(esc(e.format_message()))
    st.stop()
log = upload.PowerLog(log_file.name, log_file.getvalue(), log_boundary or None) if log_file else None
if log and len(files) > 1:
    st.error(f"{esc(log.name)}: a power log attaches to the runs of one result file; upload one file with it.")
    st.stop()

previews = [(f, upload.preview(f.name, f.getvalue(), given, log)) for f in files]
for _file, p in previews:
    with st.container(border=True):
        if p.error:
            st.error(esc(p.error))
            continue
        st.markdown(f"**{esc(p.name)}** — {esc(p.format)}: {p.runs} run(s)")
        st.caption(f"Devices: {esc(', '.join(p.devices)) or 'not stated'} · "
                   f"Workloads: {esc(', '.join(p.workloads)) or 'not stated'}")
        if p.missing_fields:
            st.caption("Not in this file: " + esc(", ".join(p.missing_fields)))
        for warning in p.warnings:
            st.caption(f"⚠ {esc(warning)}")

importable = [f for f, p in previews if not p.error]
if importable and st.button(f"Import {len(importable)} file(s)", type="primary"):
    for file in importable:
        try:
            report = upload.import_upload(file.name, file.getvalue(), data.db_path(), given, log)
        except JouleBenchError as e:
            st.error(esc(e.format_message()))
            continue
        if report.status == "queued":
            st.warning(f"{esc(file.name)}: {esc(report.message)}")
        elif report.status == "already_imported":
            st.info(f"{esc(file.name)}: imported before; nothing added.")
        else:
            st.success(f"{esc(file.name)}: {report.runs_added} run(s) added, {report.runs_duplicate} already present.")
            for run_id in report.run_ids[:20]:
                st.page_link(nav.RUN_DETAIL, label=f"Run {esc(run_id)}", query_params={"run_id": run_id})
