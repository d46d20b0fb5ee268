"""Upload: import result files from other people and other tools."""

import streamlit as st

from explorer import data, upload
from joulebench.errors import JouleBenchError

st.title("Upload results")
st.write("Drop one or several result files. Each file is imported whole or not at all; a file imported "
         "before adds nothing.")
files = st.file_uploader("Result files", accept_multiple_files=True, key="files")
if not files:
    st.info("Supported: JouleBench result files (.json, .json.gz), as written by `joulebench run` and "
            "`joulebench export` or the Compare page's download.")
    st.stop()

previews = [(f, upload.preview(f.name, f.getvalue())) for f in files]
for _file, p in previews:
    with st.container(border=True):
        if p.error:
            st.error(p.error)
            continue
        st.markdown(f"**{p.name}** — {p.format}: {p.runs} run(s)")
        st.caption(f"Devices: {', '.join(p.devices) or '—'} · Workloads: {', '.join(p.workloads) or '—'}")
        if p.missing_fields:
            st.caption("Not in this file: " + ", ".join(p.missing_fields))

importable = [f for f, p in previews if not p.error]
if importable and st.button(f"Import {len(importable)} file(s)", type="primary"):
    for file in importable:
        try:
            report = upload.import_upload(file.name, file.getvalue(), data.db_path())
        except JouleBenchError as e:
            st.error(e.format_message())
            continue
        if report.status == "queued":
            st.warning(f"{file.name}: {report.message}")
        elif report.status == "already_imported":
            st.info(f"{file.name}: imported before; nothing added.")
        else:
            st.success(f"{file.name}: {report.runs_added} run(s) added, {report.runs_duplicate} already present.")
            for run_id in report.run_ids[:20]:
                st.page_link("pages/run_detail.py", label=f"Run {run_id}", query_params={"run_id": run_id})
    data.invalidate()
