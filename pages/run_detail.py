"""Run detail: trust grade and reasons, configuration and its repeats, environment, power
timeline, step times, validity, provenance."""

import streamlit as st

from decision.markdown import md
from decision.text import as_fields, count, flag_text, sig
from explorer import charts, data, detail, grade_legend, request_charts
from explorer.label_form import label_form
from explorer.tables import picker_options
from joulebench.metrics import RunKind, run_kind

st.title("Run detail")
runs = data.or_stop(data.runs, data.db_path())
st.caption(data.store_line(data.db_path()))

ids = runs["run_id"].to_list()
wanted = st.query_params.get("run_id")
labels = dict(zip(ids, (runs["device_name"] + " · " + runs["workload"] + " · " + runs["mode"] + " · "
                        + runs["precision"].fill_null("precision not stated") + " · batch "
                        + runs["batch_size"].cast(str).fill_null("not stated") + " · grade "
                        + runs["trust_grade"].fill_null("not graded") + " · " + runs["run_id"]).to_list()))
if wanted is not None and wanted not in labels:
    st.error(f"No run with id {md(wanted)} in this database. Pick a run below.")
known = wanted if wanted in labels else None
ids, left_out = picker_options(ids, known)  # a store of 100,000 runs: the picker sends 1,000
run_id = st.selectbox("Run", ids, index=ids.index(known) if known else None, format_func=lambda r: labels[r],
                      key="run", placeholder="pick a run")
if left_out:
    st.caption(left_out)
if run_id is None:
    st.info("Pick a run to see its configuration, power timeline, step times and provenance.")
    st.stop()
st.query_params["run_id"] = run_id
found = data.run_detail(data.db_path(), run_id)
run = found.run
if run is None:
    st.error(f"No run with id {md(run_id)} in this database.")
    st.stop()
# an importer's words for the command line ('name the module with --device ...'), said with the page's field names
run = {**run, **{k: as_fields(run[k]) for k in ("energy_missing_reason", "error", "notes") if run.get(k)}}

status = run["status"]
(st.success if status == "ok" else st.error)(f"Status: {status}" + (f" — {md(run['error'])}" if run["error"] else ""))
if run["flags"]:
    st.warning("Validity flags: " + md(", ".join(flag_text(f) for f in run["flags"])))
if withheld_note := detail.withheld_text(run):
    st.warning("Latency percentiles (TTFT, ITL, TPOT, end-to-end) " + md(withheld_note))

label, color = detail.badge(run["trust_grade"])
st.badge(label, color=color)
pushed = detail.pushed_line(run)
if pushed:
    st.caption(pushed)
if run["trust_grade"] in detail.GRADE_MEANINGS:
    st.caption(f"**{run['trust_grade']}**: {detail.GRADE_MEANINGS[run['trust_grade']]}")
with st.expander("Why this grade", expanded=run["trust_grade"] != "A"):
    st.dataframe(detail.reason_rows(run["trust_reasons"]), hide_index=True, width="stretch")
grade_legend.legend("The run's checks are listed above, and its configuration's below.")

config = data.configuration(data.db_path(), run["config_key"]) if run["config_key"] else None
headline = detail.headline(run)  # the figures of the run's kind, labelled by the metric catalogue
for start in range(0, len(headline), 5):
    for col, (label, key) in zip(st.columns(5), headline[start:start + 5]):
        agg = detail.configuration_aggregate(config, key) if config else None
        withheld = detail.withheld_text(run) if key in detail.WITHHOLDABLE else None
        col.metric(label, sig(run.get(key), 4) if run.get(key) is not None or not withheld else "withheld",
                   help=None if run.get(key) is not None else
                   md(withheld or run.get("energy_missing_reason") or "the run or its source did not measure it"))
        if agg is not None and agg.n > 1:
            col.caption(f"configuration: {agg.as_text(4)}")
if run["energy_j"] is not None:
    st.caption(f"Energy measured at boundary **{md(run['energy_boundary'] or 'not stated')}** "
               f"by method **{md(run['energy_method'])}**.")
elif run["energy_missing_reason"]:
    st.caption(f"Energy not measured: {md(run['energy_missing_reason'])}")

if run["weak_scaling_as_printed"] is not None:
    st.caption(f"Weak scaling {run['weak_scaling']:g}, corrected: the source printed "
               f"{run['weak_scaling_as_printed']:g} (see the notes).")

gaps = data.source_gaps(data.db_path(), run["source_id"])
if gaps is not None and (run["labels_not_stated"] or "label_run_source_done" in st.session_state):
    if run["labels_not_stated"]:
        st.subheader("Not stated by its file")
    label_form(gaps, key="label_run_source", via="run_detail_page")

panels = [("Power timeline", found.samples, "No power samples stored for this run.", charts.power_timeline),
          ("Step times", found.steps, "No per-step times stored for this run.", charts.step_time_histogram)]
for col, (title, frame, empty, chart) in zip(st.columns(2), panels):
    with col:
        st.subheader(title)
        if frame.is_empty():
            st.caption(empty)
        else:
            st.plotly_chart(chart(frame), width="stretch")

requests = data.requests_of(data.db_path(), run_id)
if not requests.is_empty() or run_kind(run) is RunKind.SERVING:
    st.subheader("Requests")
    if requests.is_empty():
        st.caption("This serving point keeps no requests: its source gave only its aggregate figures, so no "
                   "timeline or distribution can be drawn and goodput is known only under the SLO it was measured "
                   "with. serve-bench, vLLM's --save-detailed and LLMPerf's individual responses keep them.")
    else:
        st.caption(md(request_charts.summary(requests)))
        left, right = st.columns(2)
        left.plotly_chart(request_charts.timeline(requests), width="stretch")
        right.plotly_chart(request_charts.distributions(requests), width="stretch")

if config is not None:
    st.subheader(f"This configuration: {config['ok_run_count']:,} of {count(config['run_count'], 'run')} ok")
    c_label, c_color = detail.badge(config["trust_grade"])
    st.badge(f"Aggregate {c_label[0].lower()}{c_label[1:]}", color=c_color)
    st.caption("Mean and 95 % confidence interval (Student's t) over the configuration's repeats.")
    st.dataframe(detail.configuration_rows(config), hide_index=True, width="stretch")
    st.dataframe(detail.reason_rows(config["trust_reasons"]), hide_index=True, width="stretch")

for title, section in detail.sections(run, found.supplied).items():
    corrected = title == "Performance" and run["weak_scaling_as_printed"] is not None
    with st.expander(title, expanded=title in ("Configuration", "Provenance") or corrected):
        st.dataframe(detail.as_rows(section), hide_index=True, width="stretch")
if run["notes"]:
    st.info(md(run["notes"]))
