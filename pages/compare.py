"""Compare: devices, precisions and power settings side by side, with nothing narrowed unseen."""

import streamlit as st

from decision.markdown import md
from explorer import charts, compare, compare_inputs, compare_ratios, compare_view, data, grade_legend, nav
from explorer import goodput_section as goodput
from explorer.params import UrlReader
from explorer.tables import styled

st.title("Compare")
path = data.db_path()
with st.spinner("Reading the runs…", show_time=True):  # a visible working state while the page computes
    all_runs = data.or_stop(data.runs, path)
    findings = data.findings(path)
    catalog, _ = data.devices(path)

url = UrlReader.of(st.query_params)
params = url.params
settings = url.cost_settings(data.currencies(path))
problems = compare.unknown_values(all_runs, params) + url.problems
if problems:
    st.warning(md("This link asks for " + "; ".join(problems) + ", not in this database: "
                   "not applied. The filters show what is applied."))
initial = compare.Selection.from_query(params)

with st.spinner("Costing every run…", show_time=True):
    runs = compare_view.costed(all_runs, catalog, data.rates(path), settings)

with st.sidebar:
    selection, log_scale = compare_inputs.filters(runs, initial, params)
metric = compare.METRICS[selection.metric]
chosen = compare.apply(runs, selection)
device_choices, named_devices = compare.devices_of(chosen, selection)
with st.sidebar:
    wanted_ref = params.get("ref", [None])[0]
    ref_options = ["none", *device_choices]
    reference = st.selectbox("Relative to", ref_options, key="ref", help=compare.REFERENCE_HELP,
                             index=ref_options.index(wanted_ref) if wanted_ref in ref_options else 0)
st.query_params.from_dict(selection.to_query(None if reference == "none" else reference, log_scale,
                                             settings if params.get("currency") else None))

st.caption(md(compare.applied_text(selection, chosen.height, runs.height)))

view = compare_view.view(chosen, named_devices, findings, metric, None if reference == "none" else reference,
                         settings.currency)
stated = view.stated
with st.expander("What the data holds: devices × workloads × metrics (run counts)",
                 expanded=not (selection.filters.get("device") or selection.filters.get("workload"))):
    st.caption(compare.COVERAGE_CAPTION)
    st.dataframe(styled(view.coverage), hide_index=True, width="stretch")

st.subheader("All devices, several metrics")
shown_table = view.table.head(compare.MAX_TABLE_ROWS)
for note in compare.table_notes(metric, settings, shown_table.height, view.table.height):
    st.caption(md(note))
help_texts = compare.table_help(settings.currency)
st.dataframe(styled(shown_table, not_stated=("Sequence length", "GPUs")), hide_index=True, width="stretch",
             column_config={k: st.column_config.Column(help=v) for k, v in help_texts.items()})

st.subheader(metric.title())
labelled, bar_frame = view.labelled, view.bar_frame
if view.left_out:
    st.caption(view.left_out)
if bar_frame.is_empty():
    st.info(compare.nothing_measured(view.measured, metric, stated.height))
else:
    if view.shared:
        st.caption(f"All bars: {md(view.shared)}.")
    st.caption(compare.BAR_CAPTION)
    mixed = compare.mixed_boundaries_warning(labelled, metric)
    if mixed:
        st.warning(mixed)
    show_all = bar_frame.height > compare.MAX_DEFAULT_BARS and st.toggle(
        f"Show every configuration ({bar_frame.height:,})", key="all_bars")
    bars_chart, cut = compare_view.bar_figure(view, settings.currency, show_all, log_scale)
    if cut:
        st.caption(cut)
    st.plotly_chart(bars_chart, width="stretch")
    grade_legend.legend(compare.BAR_GRADES)
    ratios = view.ratios
    st.subheader("Ratios, like for like")
    if ratios.is_empty():
        st.caption("No two series were measured on the same configuration, so no ratio is stated.")
    else:
        st.markdown("\n".join(f"- {md(line)}" for line in ratios["Statement"].head(6)))
        weak = compare_ratios.low_grade_note(ratios)
        if weak:
            st.warning(weak)  # built with every name escaped (decision.markdown.md)
        st.dataframe(styled(ratios), hide_index=True)

if not stated.is_empty():
    st.subheader("What the sources state")
    st.caption(compare.STATED_CAPTION)
    for f in stated.head(8).iter_rows(named=True):
        st.markdown(f"- {md(compare_ratios.finding_sentence(f))}: “{md(f['quote'])}” — *{md(f['citation'])}*")
    if stated.height > 8:
        st.caption(f"{stated.height - 8} more in the table below.")
    ratio_bars = compare_ratios.stated_ratio_bars(stated)
    if not ratio_bars.is_empty():
        st.plotly_chart(charts.stated_ratios(ratio_bars, log_scale), width="stretch")
    with st.expander(f"All {stated.height} stated findings for these devices"):
        st.dataframe(styled(compare_ratios.findings_table(stated)), hide_index=True)

left, right = st.columns(2)
with left:
    st.subheader("Average power vs throughput")
    power_chart = compare_view.power_figure(view, log_scale)
    if power_chart is None:
        st.caption("No run here measured both average power and throughput.")
    else:
        st.plotly_chart(power_chart, width="stretch")
with right:
    st.subheader("Energy vs time per example")
    energy_chart = compare_view.energy_figure(view, log_scale)
    if energy_chart is None:
        st.caption("No run here measured both energy and throughput.")
    else:
        st.plotly_chart(energy_chart, width="stretch")

goodput.render(path, chosen, url, "", "the runs the filters select")

st.subheader("Runs")
if labelled.is_empty():
    st.caption("No run matches the filters.")
else:
    st.dataframe(styled(compare.runs_table(labelled, metric, nav.RUN_DETAIL_URL)), hide_index=True,
                 column_config={"Run": st.column_config.LinkColumn("Run", display_text="open")})
ids = tuple(chosen["run_id"].to_list())
c1, c2 = st.columns(2)
c1.download_button("Download selection (CSV)", lambda: data.selection_csv(chosen),
                   "joulebench-selection.csv", "text/csv", on_click="ignore")
c2.download_button("Download selection (result file)", lambda: data.selection_document(path, ids),
                   "joulebench-selection.json.gz", "application/gzip", on_click="ignore")
st.caption(f"The downloads hold every run the filters select ({len(ids):,}).")
