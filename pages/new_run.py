"""New run: measure workloads on this machine from the browser (one run or sweep at a time)."""

from pathlib import Path

import polars as pl
import streamlit as st

from decision.markdown import md
from decision.text import count
from explorer import charts, data, jobs, nav, serve_form
from explorer.jobs import FORM_LABELS as LABEL
from explorer.tables import styled
from joulebench import defaults
from joulebench.errors import JouleBenchError
from joulebench.ranges import RUN_OPTIONS

st.title("New run")
st.caption("Runs on this machine, in its own process: the runner writes a result file after every run "
           "and imports it when the sweep ends. Comma lists make a sweep.")
db = Path(data.db_path())
if data.team_store_notice(str(db)):
    st.stop()


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
        st.progress(state.fraction_done, text=md(state.describe()))
        st.caption(f"Started {md(job.started_at[:19].replace('T', ' '))}"
                   + (f"; plus {count(job.planned_idle, 'idle baseline')}, not counted as runs" if job.planned_idle
                      else ""))
        if st.button("Cancel run", type="secondary", key="cancel"):
            jobs.cancel(db, wait_s=10)
            st.rerun()
    elif job.cancelled:
        st.warning(f"Cancelled: {state.recorded()}; the one in progress is marked interrupted.")
    elif job.exit_code not in (None, 0):
        st.error(f"The run ended with exit code {job.exit_code}; see the log below. Failed runs are recorded.")
    else:
        st.success(f"Done: {state.recorded()}.")
    if state.runs:
        st.dataframe(styled(pl.DataFrame(jobs.summary_rows(state.runs), infer_schema_length=None),
                            not_stated=("Sequence length", "Batch")), hide_index=True)
        traces = [t for t in state.runs[-1].get("power_traces", [])]
        if traces:
            samples = pl.concat([pl.DataFrame({"domain": t["domain"], "t_s": t["t_s"], "power_w": t["power_w"]})
                                 for t in traces])
            st.caption("Power, last finished run")
            st.plotly_chart(charts.power_timeline(samples), width="stretch")
    with st.expander("Runner output", expanded=not state.running and job.exit_code not in (None, 0)):
        st.code("\n".join(state.log_tail) or "(no output yet)", language=None)
    if not state.running and state.runs:
        run_ids = [r["run_id"] for r in state.runs if r.get("run_id")]
        st.page_link(nav.COMPARE, label=f"See {'this run' if len(run_ids) == 1 else f'these {len(run_ids):,} runs'} "
                     "in Compare", icon=":material/bar_chart:",
                     query_params={"run": run_ids})
        st.page_link(nav.RUN_DETAIL, label="Open the last run's detail", icon=":material/search:",
                     query_params={"run_id": run_ids[-1]})


def _given(key: str, default: str) -> str:
    """A form default from the link (Decide's 'measure it' links prefill the form)."""
    value = st.query_params.get(key)
    return value if value is not None else default


def _number(key: str, default: float) -> float:
    try:
        return float(st.query_params.get(key, default))
    except ValueError:
        return default


progress()
running = jobs.running(db)
if any(k in st.query_params for k in ("workload", "mode", "precision", "batch", "seq", "new", "rate")):
    st.info("The form is filled in from the link you followed; check it, then start.")
with st.form("new_run"):
    c = st.columns(3)
    workload = c[0].text_input(LABEL["--workload"], _given("workload", defaults.WORKLOAD),
                               help="e.g. bert-base-ner,gpt2; see `joulebench workloads`", key="workload")
    mode = c[1].text_input(LABEL["--mode"], _given("mode", defaults.MODE), help="train, infer or train,infer",
                           key="mode")
    precision = c[2].text_input(LABEL["--precision"], _given("precision", defaults.PRECISION), key="precision",
                                help="fp32, tf32, fp16, bf16, fp16-weights; CPU: fp32, bf16")
    c = st.columns(3)
    batch = c[0].text_input(LABEL["--batch-size"], _given("batch", str(defaults.BATCH_SIZE)), key="batch")
    seq = c[1].text_input(LABEL["--seq-len"], _given("seq", ""), help="empty: the workload's default", key="seq")
    tag = c[2].text_input(LABEL["--tag"], "", key="tag")
    c = st.columns(3)
    new_tokens = c[0].text_input(LABEL["--max-new-tokens"], _given("new", ""), key="new",
                                 help="generation workloads (llm-*) only: tokens generated per request, exactly; the "
                                      "sequence length is the prompt; empty: the workload's default")
    rate = c[1].text_input(LABEL["--request-rate"], _given("rate", ""), key="rate",
                           help="generation workloads only: requests arriving per second (Poisson); the batch size "
                                "is then the most served together; empty: batches generated back to back")
    st.caption(f"Leave steps, warmup and repeats empty for the defaults: with a power sensor (NVIDIA GPU, Jetson, "
               f"RAPL) each window lasts at least {defaults.MIN_WINDOW_S:g} s after a warmup that ends when power "
               f"and step time are steady, {defaults.SENSOR_REPEATS} repeats; without one (energy estimated) "
               f"{defaults.STEPS} steps after {defaults.WARMUP_STEPS} warmup steps, {defaults.REPEATS} repeat.")
    c = st.columns(5)
    steps = c[0].number_input(LABEL["--steps"], 1, int(RUN_OPTIONS["--steps"].range.high or 1), None, key="steps",
                              placeholder="automatic")
    min_window = c[1].number_input(LABEL["--min-window"], 0.0, 3600.0, None, key="min_window",
                                   placeholder=f"{defaults.MIN_WINDOW_S:g} with a sensor",
                                   help="without a step count, measure this long; 0 switches the minimum off")
    warmup = c[2].number_input(LABEL["--warmup"], 0, 10_000, None, key="warmup", placeholder="until steady",
                               help=f"empty: until power and step time are steady (at most {defaults.WARMUP_MAX_S:g}"
                                    f" s) with a sensor, {defaults.WARMUP_STEPS} steps without")
    repeats = c[3].number_input(LABEL["--repeats"], 1, 100, None, key="repeats", placeholder="automatic",
                                help=f"empty: {defaults.SENSOR_REPEATS} with a sensor, {defaults.REPEATS} without")
    idle_default = min(600.0, max(0.0, _number("idle", defaults.IDLE_S)))
    idle = c[4].number_input(LABEL["--idle-seconds"], 0.0, 600.0, idle_default,
                             help="Idle power measured at each power setting before its runs, for net J/example and "
                                  "the cost of idle time", key="idle")
    c = st.columns(2)
    limits = c[0].text_input(LABEL["--power-limit"], "", help="e.g. 100,125,150; needs an NVIDIA GPU and the "
                             "privilege to set it (the runner says which command to run if it lacks it)",
                             key="power_limit")
    modes = c[1].text_input(LABEL["--power-mode"], "", help="nvpmodel mode ids, e.g. 0,6; Jetson only",
                            key="power_mode")
    submitted = st.form_submit_button("Start", type="primary", disabled=running)
if running:
    st.info("A run is in progress: one at a time. Cancel it above or wait for it to finish.")
if submitted:
    request = jobs.RunRequest(
        workload=workload, mode=mode, precision=precision, batch_size=batch, seq_len=seq, max_new_tokens=new_tokens,
        request_rate=rate,
        steps=None if steps is None else int(steps), warmup=None if warmup is None else int(warmup),
        repeats=None if repeats is None else int(repeats), tag=tag, idle_seconds=float(idle), power_limit=limits,
        power_mode=modes, min_window_s=None if min_window is None else float(min_window))
    try:
        jobs.start(db, request)
    except JouleBenchError as e:
        st.error(md(e.format_message()))
    else:
        st.rerun()

serve_form.render(db, running, _given("target", ""), _given("sb_rate", ""))
