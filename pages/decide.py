"""Decide: which device to buy for a job, answered in sentences, then the figures and their basis."""

from dataclasses import replace

import streamlit as st

from explorer import charts, data, decide, grade_legend, nav
from explorer.markdown import md
from explorer.money import COST_FORMULA, CostSettings
from explorer.params import UrlReader
from explorer.text import precision_name
from tuning import GOALS

st.title("Decide what to buy")
st.caption("Pick two to six candidate devices and the job. The answer comes first in sentences, then every "
           "figure with its basis (measured here, imported, reference table, stated ratio, estimate), where it was "
           "measured and its source.")
path = data.db_path()
runs = data.or_stop(data.runs, path)
findings = data.findings(path)
catalog, modes = data.devices(path)
rates = data.rates(path)

url = UrlReader.of(st.query_params)
device_options = sorted(catalog["device_name"].to_list())
picked_from_url = url.many("device", device_options, "device")
mode_from_url = url.one("mode", ["train", "infer"], "mode")
currencies = data.currencies(path)
settings_from_url, setting_problems = CostSettings.from_query(
    {k: v for k, v in url.params.items() if k in CostSettings.QUERY})
url.problems += setting_problems
if settings_from_url.currency not in currencies:
    url.problems.append(f"currency {settings_from_url.currency!r} (no price or exchange rate in it)")
    settings_from_url = replace(settings_from_url, currency=CostSettings().currency)  # the other settings stand

top = st.columns([3, 1])
devices = top[0].multiselect("Candidate devices (2 to 6)", device_options, default=picked_from_url,
                             max_selections=decide.MAX_DEVICES, key="devices", placeholder="pick devices")
mode = top[1].radio("Job", ["train", "infer"], index=0 if mode_from_url != "infer" else 1, key="mode",
                    format_func=lambda m: "Training" if m == "train" else "Inference", horizontal=True)
scope_options = ["auto", *decide.scopes(runs, mode)]
auto_scope = decide.default_scope(runs, devices, mode)
row = st.columns(2)
scope = row[0].selectbox(
    "Model size class or workload", scope_options,
    index=scope_options.index(url.one("job", scope_options, "job") or "auto"), key=f"scope_{mode}",
    format_func=lambda s: (f"auto: {decide.scope_label(auto_scope)}" if auto_scope else "auto") if s == "auto"
    else decide.scope_label(s))
precisions = ["any", *sorted(runs.filter(runs["mode"] == mode)["precision"].drop_nulls().unique().to_list())]
precision = row[1].selectbox("Precision", precisions, index=precisions.index(
    url.one("precision", precisions, "precision") or "any"), key=f"precision_{mode}",
    format_func=lambda p: "any precision" if p == "any" else precision_name(p))

row = st.columns([2, 3])
best_on = row[0].toggle("Each device at its best power setting", key="best",
                        value=url.params.get("best", ["0"])[0] == "1",
                        help="For each device with runs of this workload at several GPU power limits or Jetson power "
                             "modes, take it at the setting recommended for the goal (measured, or predicted by a "
                             "model checked by leave-one-out, as on the Power settings page); the others stay at "
                             "their measured figures.")
goal_url = url.one("goal", list(GOALS), "goal")
goal = row[1].radio("Goal for the power setting", GOALS, index=GOALS.index(goal_url or "energy"), key="goal",
                    horizontal=True, disabled=not best_on,
                    help="energy: fewest joules; speed: most throughput; balanced: Zeus's 0.5 x energy + 0.5 x max "
                         "power x time; cost: electricity + hardware (needs the device's price). The power cap "
                         "constraint (sidebar) applies to the average power.")

with st.sidebar:
    st.header("Your numbers")
    currency = st.selectbox("Currency", currencies, index=currencies.index(settings_from_url.currency),
                            key="currency", help="Every amount on this page is in this currency; catalog prices "
                            "are converted with the exchange rates on the Devices page.")
    kwh = st.number_input(f"Electricity price ({currency} per kWh)", 0.0, 10.0,
                          settings_from_url.electricity_per_kwh, 0.01, key="kwh")
    pue = st.number_input("PUE (facility overhead, 1 = none)", 1.0, 3.0, settings_from_url.pue, 0.05, key="pue")
    years = st.number_input("Lifetime (years)", 0.25, 15.0, settings_from_url.lifetime_years, 0.25, key="years")
    util_pct = st.number_input("Utilisation (% of the time busy)", 1, 100,
                               round(settings_from_url.utilisation * 100), 5, key="util",
                               help="The share of its lifetime the device works on the job; idle the rest, "
                               "drawing its idle power.")
    st.header("Constraints")
    st.caption("0 means no constraint.")
    budget = st.number_input(f"Budget per device ({currency})", 0.0, 1e7,
                             url.number("budget", "budget", 0, 1e7) or 0.0, 50.0, key="budget")
    max_w = st.number_input("Power cap (W)", 0.0, 5000.0, url.number("max_w", "power cap", 0, 5000) or 0.0,
                            10.0, key="max_w")
    min_mem = st.number_input("Memory at least (GB)", 0.0, 1000.0,
                              url.number("min_mem", "memory", 0, 1000) or 0.0, 1.0, key="min_mem")
    max_p99 = st.number_input("p99 latency at most (ms)", 0.0, 1e6, url.number("max_p99", "p99", 0, 1e6) or 0.0,
                              1.0, key="max_p99")

warning = url.warning()
if warning:
    st.warning(md(warning))

settings = CostSettings(currency, kwh, pue, years, util_pct / 100)
constraints = decide.Constraints(budget or None, max_w or None, min_mem or None, max_p99 or None)
query = {"device": devices, "mode": [mode], "job": [scope], "precision": [precision], **settings.to_query()}
query.update({k: [f"{v:g}"] for k, v in (("budget", budget), ("max_w", max_w), ("min_mem", min_mem),
                                          ("max_p99", max_p99)) if v})
if best_on:
    query.update({"best": ["1"], "goal": [goal]})
st.query_params.from_dict(query)

if len(devices) < 2:
    st.info("Pick at least two devices to compare. For example, a student choosing a card for fine-tuning BERT:")
    st.page_link(nav.DECIDE, label="GeForce RTX 3060 vs Jetson AGX Xavier, training, 0.30 USD per kWh, 3 years",
                 icon=":material/arrow_forward:",
                 query_params={"device": ["GeForce RTX 3060", "Jetson AGX Xavier"], "mode": "train", "kwh": "0.3",
                               "years": "3", "util": "0.5", "currency": "USD"})
    st.caption("Not sure what the data holds? Compare shows a coverage table of devices, workloads and metrics.")
    st.page_link(nav.COMPARE, label="Coverage in Compare", icon=":material/bar_chart:")
    st.stop()

job = decide.job_from(mode, auto_scope if scope == "auto" else scope, None if precision == "any" else precision)
best = None
if best_on:
    profiled = tuple((d, w) for d, w in decide.profile_workloads(runs, devices, job).items() if w)
    best = data.or_stop(data.best_settings, path, profiled, goal, 0.5,
                        (currency, kwh, pue, years, util_pct / 100), max_w or None, mode, job.precision)
answer = decide.decide(runs, findings, catalog, modes, rates, devices, job, settings, constraints, best)

st.subheader(f"The answer for {md(job.describe())}")
st.caption("Single-device figures only (multi-GPU system rows are left out). Sources' ratios are used where no "
           "pair of absolute figures exists, and labelled so; estimates say how they were made.")
if best_on:
    at_best, stays = decide.best_setting_notes(answer)
    for line in at_best:
        st.markdown(f"**Best power setting for {goal}:** {line}")
    for line in stays:
        st.caption(line)
for line in decide.verdict(answer):
    st.markdown(line)
low_grades = decide.grade_warning(answer)
if low_grades:
    st.warning(low_grades)  # built with every name escaped (explorer.markdown.md)

if answer.gaps:
    st.subheader("What the data cannot answer yet")
    for gap in answer.gaps:
        cols = st.columns([3, 2])
        cols[0].markdown(f"**{md(gap.device)}**: {md(gap.what)}.")
        if gap.fill == "run":
            cols[1].page_link(nav.NEW_RUN, label="Measure it on this machine (New run, prefilled)",
                              icon=":material/play_arrow:", query_params=gap.prefill)
        elif gap.fill == "devices":
            cols[1].page_link(nav.DEVICES, label="Enter a price (Devices)", icon=":material/memory:")
    st.caption("Measured on another machine? Export its runs (`joulebench export`) and upload the file.")
    st.page_link(nav.UPLOAD, label="Upload a result file", icon=":material/upload:")

costed = answer.costed()
if costed:
    st.subheader("Cost per 1M samples as utilisation changes")
    log_y = st.toggle("Log scale", key="log_cost")
    st.plotly_chart(charts.cost_vs_utilisation(decide.cost_curve(answer), currency, settings.utilisation,
                                               answer.crossovers(), log_y), width="stretch")

st.subheader("Every figure, with its basis")
st.dataframe(decide.figure_table(answer), hide_index=True, width="stretch", column_config={
    "Value": st.column_config.TextColumn("Value", help="'not measured': the reason is in the last column"),
    "Basis": st.column_config.TextColumn("Basis", help="measured here (a run on this machine), imported (an "
                                         "uploaded file), reference table (shipped with the app), stated ratio (a "
                                         "source's ratio), estimate (derived with the assumption stated), catalog; "
                                         "with the best-setting toggle: measured at a setting, or predicted at it "
                                         "with the model's leave-one-out error"),
    "Boundary": st.column_config.TextColumn("Measured at", help="where the power was measured"),
    "Source or derivation": st.column_config.TextColumn("Source, derivation or why missing", width="large"),
    decide.N_COLUMN: st.column_config.NumberColumn(decide.N_COLUMN, help="runs of the configuration that measured "
                                                   "the figure; the value is their mean"),
    decide.CI_COLUMN: st.column_config.TextColumn(decide.CI_COLUMN, help="95% confidence interval of the mean "
                                                  "(Student's t), with two or more repeats"),
    decide.GRADE_COLUMN: st.column_config.TextColumn(decide.GRADE_COLUMN, help="A best .. D unreliable; see 'What "
                                                     "the grades mean' below and docs/trust-grades.md"),
})
grade_legend.legend("Every measured figure carries its configuration's trust grade (reference tables are graded "
                    "too, at most C); a ratio a source states has none.")
st.subheader("Formula")
st.code(COST_FORMULA, language=None)
