"""Power settings: which power limit (GPU) or power mode (Jetson) for your goal, measured and predicted."""

from pathlib import Path

import streamlit as st

from decision.markdown import md
from decision.money import CostSettings
from decision.text import count
from explorer import data, jobs, nav
from explorer import power_charts as charts
from explorer import power_settings as ps
from explorer.params import UrlReader
from explorer.tables import styled
from joulebench.errors import JouleBenchError
from tuning import GOALS, Constraints

st.title("Power settings")
st.caption("Measured settings of one device and workload, the settings between them predicted from a model "
           "checked by leave-one-out, the Pareto front of time vs energy, and the setting for your goal.")
path = data.db_path()
choices = data.or_stop(data.power_setting_choices, path)
profiled = choices.filter(choices["profiled"] > 0)
url = UrlReader.of(st.query_params)
device = workload = None
if profiled.is_empty():
    st.info(ps.no_profile_text(choices))
    c = st.columns(2)
    c[0].page_link(nav.UPLOAD, label="Upload a power-limit or power-mode profile", icon=":material/upload:")
    c[1].page_link(nav.NEW_RUN, label="Measure one on this machine (below, or New run)", icon=":material/play_arrow:")
else:
    c = st.columns(2)
    devices = profiled["device_name"].unique(maintain_order=True).to_list()
    device = c[0].selectbox("Device", devices, key="ps_device",
                            index=devices.index(url.one("device", devices, "device") or devices[0]))
    of_device = profiled.filter(profiled["device_name"] == device)
    labels = {r["workload"]: f"{r['workload']} ({ps.settings_text(r)})" for r in of_device.iter_rows(named=True)}
    options = list(labels)
    workload = c[1].selectbox("Workload", options, format_func=labels.__getitem__, key=f"ps_workload_{device}",
                              index=options.index(url.one("workload", options, "workload") or options[0]))
    unprofiled = ps.without_profile(choices)
    if unprofiled:
        st.caption(md(unprofiled))
warning = url.warning()
if warning:
    st.warning(md(warning))

if device and workload:
    loaded = data.or_stop(data.power_settings, path, device, workload)
    c = st.columns(4)
    goal_name = c[0].radio("Goal", GOALS, horizontal=True, key="ps_goal",
                           index=GOALS.index(url.one("goal", GOALS, "goal") or GOALS[0]),
                           help="energy: fewest joules; speed: most throughput; balanced: Zeus's eta x energy + "
                                "(1 - eta) x max power x time; cost: electricity + hardware")
    eta = c[1].slider("eta (balanced)", 0.0, 1.0, 0.5, 0.05, key="ps_eta", disabled=goal_name != "balanced")
    max_power = c[2].number_input("Max average power (W), 0 = none", 0.0, 5000.0, 0.0, key="ps_max_power")
    min_rate = c[3].number_input("Min throughput (samples/s), 0 = none", 0.0, 1e9, 0.0, key="ps_min_rate")
    st.query_params.from_dict({"device": device, "workload": workload, "goal": goal_name})
    try:
        inputs = CostSettings()
        price = ps.catalog_price(loaded, data.rates(path), inputs.currency) if goal_name == "cost" else None
        goal = ps.make_goal(goal_name, eta, inputs, price)
        rec = ps.recommendation(loaded, goal, Constraints(max_power or None, min_rate or None))
    except JouleBenchError as e:
        st.info(md(e.format_message()))
        rec = None
    if rec is not None:
        profile = rec.profile
        st.subheader(md(f"{profile.device}: {profile.describe()}"))
        st.markdown(f"**Recommendation:** {ps.escape(rec.sentence())}")
        for note in rec.notes:
            st.caption(ps.escape(note))
        (st.info if rec.model is None else st.caption)(ps.escape(ps.model_summary(rec)))
        frame = ps.candidates_frame(rec)
        time_label, rate_label, energy_label = ps.units_of(profile)
        st.plotly_chart(charts.settings_curves(frame, rate_label, energy_label, profile.kind == "power_limit"),
                        width="stretch")
        st.plotly_chart(charts.pareto(frame, time_label, energy_label), width="stretch")
        st.caption("Pareto front, fastest first: " + ps.escape(", ".join(p.label for p in rec.front)))
        st.dataframe(styled(ps.shown_table(rec, frame)), hide_index=True)
        for line in [*profile.left_out, *rec.not_predicted]:
            st.caption(ps.escape(f"Left out: {line}"))

st.subheader("Profile this machine")
st.caption("Every setting measured in one process on one built model: change, settle, measure, go on. "
           "Changing a GPU power limit needs the privilege (the runner names the command otherwise); "
           "a dry run records the settings and changes nothing.")
db = Path(path)
running = jobs.running(db)
with st.form("profile"):
    c = st.columns(4)
    p_workload = c[0].text_input("Workload", workload or "bert-tiny", key="ps_run_workload")
    p_mode = c[1].text_input("Mode", "infer", key="ps_run_mode")
    p_precision = c[2].text_input("Precision", "fp32", key="ps_run_precision")
    p_batch = c[3].text_input("Batch size", "8", key="ps_run_batch")
    c = st.columns(4)
    p_limits = c[0].text_input("GPU power limits (W)", "100,125,150,170", key="ps_run_limits")
    p_modes = c[1].text_input("or Jetson power modes", "", key="ps_run_modes")
    p_steps = c[2].number_input("Measured steps per setting", 1, 100_000, 20, key="ps_run_steps")
    p_dry = c[3].checkbox("Dry run (change nothing)", False, key="ps_run_dry")
    start = st.form_submit_button("Start profiling", type="primary", disabled=running)
if running:
    st.info("A run is in progress; follow it on the New run page.")
if start:
    request = jobs.RunRequest(workload=p_workload, mode=p_mode, precision=p_precision, batch_size=p_batch,
                              steps=int(p_steps), power_limit="" if p_modes.strip() else p_limits,
                              power_mode=p_modes, profile=True, power_dry_run=p_dry)
    try:
        job = jobs.start(db, request)
    except JouleBenchError as e:
        st.error(md(e.format_message()))
    else:
        st.success(f"Profiling started: {count(job.planned_runs, 'setting')} to measure; follow it on New run.")
