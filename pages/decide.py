"""Decide: which device to buy for a job, answered in sentences, then the figures and their basis."""


import streamlit as st

from decision import answer as decision
from decision import inputs, scope, tables
from decision.best_settings import profile_workloads
from decision.inputs import DecideInputs
from decision.markdown import md
from decision.money import COST_FORMULA
from decision.text import precision_name
from explorer import cost_inputs, data, decide_view, goodput_section, grade_legend, nav, token_section
from explorer.params import UrlReader
from explorer.tables import styled
from joulebench.metrics import label
from tuning import GOALS

st.title("Decide what to buy")
st.caption(inputs.INTRO)
path = data.db_path()
runs = data.or_stop(data.runs, path)
findings = data.findings(path)
catalog, modes = data.devices(path)
rates = data.rates(path)

# the widgets' keys carry a generation: loading the example starts a new one, so every widget is
# made anew from the example's link (the browser would keep showing the old widgets' values)
gen = st.session_state.get("decide_gen", 0)
sfx = f"_{gen}" if gen else ""
url = UrlReader.of(st.query_params)
device_options = sorted(catalog["device_name"].to_list())
picked_from_url = url.many("device", device_options, "device")
mode_from_url = url.one("mode", ["train", "infer"], "mode")
currencies = data.currencies(path)

top = st.columns([3, 1])
devices = top[0].multiselect("Candidate devices (2 to 6)", device_options, default=picked_from_url,
                             max_selections=scope.MAX_DEVICES, key=f"devices{sfx}", placeholder="pick devices")
mode = top[1].radio("Job", ["train", "infer"], index=0 if mode_from_url != "infer" else 1, key=f"mode{sfx}",
                    format_func=lambda m: "Training" if m == "train" else "Inference", horizontal=True)
scope_options = ["auto", *scope.scopes(runs, mode)]
auto_scope = scope.default_scope(runs, devices, mode)
row = st.columns(2)
job_scope = row[0].selectbox(
    "Model size class or workload", scope_options,
    index=scope_options.index(url.one("job", scope_options, "job") or "auto"), key=f"scope_{mode}{sfx}",
    format_func=lambda s: (f"auto: {scope.scope_label(auto_scope)}" if auto_scope else "auto") if s == "auto"
    else scope.scope_label(s))
precisions = ["any", *sorted(runs.filter(runs["mode"] == mode)["precision"].drop_nulls().unique().to_list())]
precision = row[1].selectbox("Precision", precisions, index=precisions.index(
    url.one("precision", precisions, "precision") or "any"), key=f"precision_{mode}{sfx}",
    format_func=lambda p: "any precision" if p == "any" else precision_name(p))

seq_options = ["any", *[str(n) for n in scope.input_sizes(runs, devices,
                                                          scope.chosen_job(mode, job_scope, auto_scope, precision))]]
seq = st.selectbox("Input size (sequence length, tokens)", seq_options, key=f"seq_{mode}{sfx}",
                   index=seq_options.index(url.one("seq", seq_options, "input size") or "any"),
                   format_func=lambda n: "any: each figure states its own" if n == "any" else f"{n} tokens",
                   help=inputs.SEQ_HELP)
if seq == "any" and len(seq_options) > 2:
    st.caption(md(scope.mixed_sizes_note(seq_options[1:])))
row = st.columns([2, 3])
best_on = row[0].toggle("Each device at its best power setting", key=f"best{sfx}",
                        value=url.params.get("best", ["0"])[0] == "1", help=inputs.BEST_HELP)
goal_url = url.one("goal", list(GOALS), "goal")
goal = row[1].radio("Goal for the power setting", GOALS, index=GOALS.index(goal_url or "energy"),
                    key=f"goal{sfx}", horizontal=True, disabled=not best_on, help=inputs.GOAL_HELP)

with st.sidebar:
    settings = cost_inputs.cost_settings(url, currencies, util_help="The share of its lifetime the device works on "
                                         "the job; idle the rest, drawing its idle power.", suffix=sfx)
    constraints = cost_inputs.constraints(url, settings.currency, power_key="max_w", suffix=sfx)
currency = settings.currency

warning = url.warning()
if warning:
    st.warning(md(warning))

asked = DecideInputs(tuple(devices), mode, job_scope, precision, seq, best_on, goal, settings, constraints)
query = asked.to_query()
st.query_params.from_dict(query)

if len(devices) < 2:
    st.info("Pick at least two devices to compare. For example, a student choosing a card for fine-tuning BERT:")
    if st.button("GeForce RTX 3060 vs Jetson AGX Xavier, training, 0.30 USD per kWh, 3 years",
                 icon=":material/arrow_forward:", key="example"):
        st.session_state["decide_gen"] = gen + 1
        st.query_params.from_dict(inputs.EXAMPLE)
        st.rerun()
    st.caption("Not sure what the data holds? Compare shows a coverage table of devices, workloads and metrics.")
    st.page_link(nav.COMPARE, label="Coverage in Compare", icon=":material/bar_chart:")
    st.stop()

job = asked.job(runs)
best = None
if best_on:
    profiled = tuple((d, w) for d, w in profile_workloads(runs, devices, job).items() if w)
    best = data.or_stop(data.best_settings, path, profiled, goal, 0.5,
                        settings, constraints.max_power_w, mode, job.precision)
with st.spinner("Working out the answer…", show_time=True):  # a visible working state while it computes
    decided = decision.answer(asked, decision.DecideData(runs, findings, catalog, modes, rates, best=best))
answer = decided.answer

st.subheader(f"The answer for {md(job.describe())}")
st.caption(inputs.ANSWER_CAPTION)
if best_on:
    for line in decided.at_best:
        st.markdown(f"**Best power setting for {goal}:** {line}")
    for line in decided.stays:
        st.caption(line)
for line in decided.sentences:
    st.markdown(line)
if decided.grade_warning:
    st.warning(decided.grade_warning)  # built with every name escaped (decision.markdown.md)

decide_view.gaps(answer, data.devices_here(path))
decide_view.cost_and_figures(answer, settings)

st.subheader("Every figure, with its basis")
columns = {k: st.column_config.Column(help=v) for k, v in tables.FIGURE_COLUMN_HELP.items()}
columns["Boundary"] = st.column_config.Column(label("energy_boundary"), help=tables.FIGURE_COLUMN_HELP["Boundary"])
columns["Source or derivation"] = st.column_config.Column("Source, derivation or why missing", width="large")
st.dataframe(styled(decided.figure_table), hide_index=True, width="stretch", column_config=columns)
grade_legend.legend("Every measured figure carries its configuration's trust grade (reference tables are graded "
                    "too, at most C); a ratio a source states has none.")
st.subheader("Formula")
st.code(COST_FORMULA, language=None)
st.caption("Each device's cost with its numbers (check it by hand):")
st.code("\n".join(tables.cost_workings(answer)), language=None)

if mode == "infer":
    token_section.render(path, asked, catalog, rates, url, query, sfx)
    goodput_section.render(path, goodput_section.inference_of(runs, devices), url, sfx,
                           "the candidates' inference runs")
