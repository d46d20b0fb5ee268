"""Run detail: configuration, environment, power timeline, step times, validity, provenance."""

import streamlit as st

from explorer import charts, data, detail
from explorer.text import esc, sig

st.title("Run detail")
runs = data.or_stop(data.runs, data.db_path())

ids = runs["run_id"].to_list()
wanted = st.query_params.get("run_id")
labels = dict(zip(ids, (runs["device_name"] + " · " + runs["workload"] + " · " + runs["mode"] + " · "
                        + runs["precision"].fill_null("precision not stated") + " · batch "
                        + runs["batch_size"].cast(str).fill_null("not stated") + " · " + runs["run_id"]).to_list()))
if wanted is not None and wanted not in labels:
    st.error(f"No run with id {esc(wanted)} in this database. Pick a run below.")
known = wanted if wanted in labels else None
run_id = st.selectbox("Run", ids, index=ids.index(known) if known else None, format_func=lambda r: labels[r],
                      key="run", placeholder="pick a run")
if run_id is None:
    st.info("Pick a run to see its configuration, power timeline, step times and provenance.")
    st.stop()
st.query_params["run_id"] = run_id
run, samples, steps = data.run_detail(data.db_path(), run_id)
if run is None:
    st.error(f"No run with id {esc(run_id)} in this database.")
    st.stop()

status = run["status"]
(st.success if status == "ok" else st.error)(f"Status: {status}" + (f" — {esc(run['error'])}" if run["error"] else ""))
if run["flags"]:
    st.warning("Validity flags: " + esc(", ".join(run["flags"])))
headline = [("Throughput (samples/s)", "throughput_sps"), ("p99 latency (ms)", "latency_p99_ms"),
            ("Energy per example (J)", "j_per_sample"), ("Average power (W)", "avg_power_w")]
for col, (label, key) in zip(st.columns(4), headline):
    col.metric(label, sig(run[key], 4), help=None if run[key] is not None else
               esc(run.get("energy_missing_reason") or "the run or its source did not measure it"))
if run["j_per_sample"] is not None:
    st.caption(f"Energy measured at boundary **{esc(run['energy_boundary'])}** by method "
               f"**{esc(run['energy_method'])}**.")
elif run["energy_missing_reason"]:
    st.caption(f"Energy not measured: {esc(run['energy_missing_reason'])}")

panels = [("Power timeline", samples, "No power samples stored for this run.", charts.power_timeline),
          ("Step times", steps, "No per-step times stored for this run.", charts.step_time_histogram)]
for col, (title, frame, empty, chart) in zip(st.columns(2), panels):
    with col:
        st.subheader(title)
        if frame.is_empty():
            st.caption(empty)
        else:
            st.plotly_chart(chart(frame), width="stretch")

for title, section in detail.sections(run).items():
    with st.expander(title, expanded=title in ("Configuration", "Provenance")):
        missing = "not measured" if title in detail.MEASURED_SECTIONS else "not stated"
        st.dataframe(detail.as_rows(section, missing), hide_index=True, width="stretch")
if run["notes"]:
    st.info(esc(run["notes"]))
