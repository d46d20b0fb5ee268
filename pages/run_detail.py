"""Run detail: configuration, environment, power timeline, step times, validity, provenance."""

import streamlit as st

from explorer import charts, data, detail

st.title("Run detail")
runs = data.or_stop(data.runs, data.db_path())

ids = runs["run_id"].to_list()
wanted = st.query_params.get("run_id")
labels = dict(zip(ids, (runs["device_name"] + " · " + runs["workload"] + " · " + runs["mode"] + " · "
                        + runs["precision"].fill_null("-") + " · bs " + runs["batch_size"].cast(str).fill_null("-")
                        + " · " + runs["run_id"]).to_list()))
run_id = st.selectbox("Run", ids, index=ids.index(wanted) if wanted in ids else 0,
                      format_func=lambda r: labels[r], key="run")
st.query_params["run_id"] = run_id
run, samples, steps = data.run_detail(data.db_path(), run_id)
if run is None:
    st.error(f"No run with id {run_id!r} in this database.")
    st.stop()

status = run["status"]
(st.success if status == "ok" else st.error)(f"Status: {status}" + (f" — {run['error']}" if run["error"] else ""))
if run["flags"]:
    st.warning("Validity flags: " + ", ".join(run["flags"]))
cols = st.columns(4)
cols[0].metric("Throughput (samples/s)", "missing" if run["throughput_sps"] is None else f"{run['throughput_sps']:.4g}")
cols[1].metric("p99 latency (ms)", "missing" if run["latency_p99_ms"] is None else f"{run['latency_p99_ms']:.4g}")
cols[2].metric("Energy per example (J)", "missing" if run["j_per_sample"] is None else f"{run['j_per_sample']:.4g}")
cols[3].metric("Average power (W)", "missing" if run["avg_power_w"] is None else f"{run['avg_power_w']:.4g}")
if run["j_per_sample"] is not None:
    st.caption(f"Energy measured at boundary **{run['energy_boundary']}** by method **{run['energy_method']}**.")
elif run["energy_missing_reason"]:
    st.caption(f"Energy missing: {run['energy_missing_reason']}")

left, right = st.columns(2)
with left:
    st.subheader("Power timeline")
    if samples.is_empty():
        st.caption("No power samples stored for this run.")
    else:
        st.plotly_chart(charts.power_timeline(samples), width="stretch")
with right:
    st.subheader("Step times")
    if steps.is_empty():
        st.caption("No per-step times stored for this run.")
    else:
        st.plotly_chart(charts.step_time_histogram(steps), width="stretch")

for title, section in detail.sections(run).items():
    with st.expander(title, expanded=title in ("Configuration", "Provenance")):
        st.dataframe(detail.as_rows(section), hide_index=True, width="stretch")
if run["notes"]:
    st.info(run["notes"])
