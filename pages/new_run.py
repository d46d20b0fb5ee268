"""New run: measure workloads on this machine from the browser (one run or sweep at a time)."""

from pathlib import Path

import polars as pl
import streamlit as st

from explorer import charts, data, jobs, nav
from joulebench import defaults
from joulebench.errors import JouleBenchError

st.title("New run")
st.caption("Runs on this machine, in its own process: the runner writes a result file after every run "
           "and imports it when the sweep ends. Comma lists make a sweep.")
db = Path(data.db_path())


@st.fragment(run_every=1.0)
def progress() -> None:
    state = jobs.status(db)
    if state is None:
        return
    job = state.job
    if st.session_state.get("job_running") and not state.running:
        st.session_state["job_running"] = False
        st.rerun(scope="app")  # the run ended: redraw the whole page (form enabled, fresh data)
    st.session_state["job_running"] = state.running
    if state.running:
        st.progress(state.fraction_done, text=f"{len(state.runs)} of {job.planned_runs} run(s) done "
                                               f"(started {job.started_at}, PID {job.pid})")
        if st.button("Cancel run", type="secondary", key="cancel"):
            jobs.cancel(db, wait_s=10)
            st.rerun()
    elif job.cancelled:
        st.warning(f"Cancelled: {len(state.runs)} run(s) recorded; the one in progress is marked interrupted.")
    elif job.exit_code not in (None, 0):
        st.error(f"The run ended with exit code {job.exit_code}; see the log below. Failed runs are recorded.")
    else:
        st.success(f"Done: {len(state.runs)} run(s) recorded.")
    if state.runs:
        st.dataframe(pl.DataFrame(jobs.summary_rows(state.runs), infer_schema_length=None), hide_index=True)
        traces = [t for t in state.runs[-1].get("power_traces", [])]
        if traces:
            samples = pl.concat([pl.DataFrame({"domain": t["domain"], "t_s": t["t_s"], "power_w": t["power_w"]})
                                 for t in traces])
            st.caption("Power, last finished run")
            st.plotly_chart(charts.power_timeline(samples), width="stretch")
    with st.expander("Runner output", expanded=not state.running and job.exit_code not in (None, 0)):
        st.code("\n".join(state.log_tail) or "(no output yet)", language=None)
    if not state.running and state.runs:
        if st.session_state.get("refreshed_after") != job.pid:  # new runs: read the database afresh, once
                    st.session_state["refreshed_after"] = job.pid
        st.page_link(nav.COMPARE, label="See these runs in Compare", icon=":material/bar_chart:",
                     query_params={"source": "local", "workload": state.runs[0]["config"]["workload"]})


progress()
running = jobs.running(db)
with st.form("new_run"):
    c = st.columns(3)
    workload = c[0].text_input("Workload(s)", defaults.WORKLOAD, key="workload",
                               help="e.g. bert-base-ner,gpt2; see `joulebench workloads`")
    mode = c[1].text_input("Mode(s)", defaults.MODE, help="train, infer or train,infer", key="mode")
    precision = c[2].text_input("Precision(s)", defaults.PRECISION, key="precision",
                                help="fp32, tf32, fp16, bf16, fp16-weights; CPU: fp32, bf16")
    c = st.columns(3)
    batch = c[0].text_input("Batch size(s)", str(defaults.BATCH_SIZE), key="batch")
    seq = c[1].text_input("Sequence length(s)", "", help="empty: the workload's default", key="seq")
    tag = c[2].text_input("Tag", "", key="tag")
    st.caption(f"Leave steps, warmup and repeats empty for the defaults: with a power sensor (NVIDIA GPU, Jetson, "
               f"RAPL) each window lasts at least {defaults.MIN_WINDOW_S:g} s after a warmup that ends when power "
               f"and step time are steady, {defaults.SENSOR_REPEATS} repeats; without one (energy estimated) "
               f"{defaults.STEPS} steps after {defaults.WARMUP_STEPS} warmup steps, {defaults.REPEATS} repeat.")
    c = st.columns(5)
    steps = c[0].number_input("Measured steps", 1, 10_000_000, None, key="steps", placeholder="automatic")
    min_window = c[1].number_input("Minimum window (s)", 0.0, 3600.0, None, key="min_window",
                                   placeholder=f"{defaults.MIN_WINDOW_S:g} with a sensor",
                                   help="without a step count, measure this long; 0 switches the minimum off")
    warmup = c[2].number_input("Warmup steps", 0, 10_000, None, key="warmup", placeholder="until steady",
                               help=f"empty: until power and step time are steady (at most {defaults.WARMUP_MAX_S:g}"
                                    f" s) with a sensor, {defaults.WARMUP_STEPS} steps without")
    repeats = c[3].number_input("Repeats", 1, 100, None, key="repeats", placeholder="automatic",
                                help=f"empty: {defaults.SENSOR_REPEATS} with a sensor, {defaults.REPEATS} without")
    idle = c[4].number_input("Idle baseline (s), 0 = off", 0.0, 600.0, defaults.IDLE_S,
                             help="Idle power measured at each power setting before its runs, for net J/example",
                             key="idle")
    c = st.columns(2)
    limits = c[0].text_input("GPU power limit(s), W", "", help="e.g. 100,125,150; needs an NVIDIA GPU and the "
                             "privilege to set it (the runner says which command to run if it lacks it)",
                             key="power_limit")
    modes = c[1].text_input("Jetson power mode(s)", "", help="nvpmodel mode ids, e.g. 0,6; Jetson only",
                            key="power_mode")
    submitted = st.form_submit_button("Start", type="primary", disabled=running)
if running:
    st.info("A run is in progress: one at a time. Cancel it above or wait for it to finish.")
if submitted:
    request = jobs.RunRequest(workload, mode, precision, batch, seq, None if steps is None else int(steps),
                              None if warmup is None else int(warmup), None if repeats is None else int(repeats), tag,
                              float(idle), limits, modes, None if min_window is None else float(min_window))
    try:
        jobs.start(db, request)
    except JouleBenchError as e:
        st.error(e.format_message())
    else:
        st.rerun()
