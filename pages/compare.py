"""Compare: devices, precisions and power settings side by side, with nothing narrowed unseen."""

from dataclasses import replace

import polars as pl
import streamlit as st

from explorer import charts, compare, cost, data, grade_legend, nav
from explorer.markdown import md
from explorer.metrics import pareto_front
from explorer.money import CostSettings
from explorer.tables import styled
from explorer.text import BASIS_NAMES, BOUNDARY_NAMES

st.title("Compare")



path = data.db_path()
all_runs = data.or_stop(data.runs, path)
findings = data.findings(path)
catalog, _ = data.devices(path)

params = {k: st.query_params.get_all(k) for k in st.query_params}
unknown = compare.unknown_values(all_runs, params)
settings, setting_problems = CostSettings.from_query(params)
if settings.currency not in data.currencies(path):
    setting_problems.append(f"currency {settings.currency!r}")
    settings = replace(settings, currency=CostSettings().currency)  # the other settings stand
if unknown or setting_problems:
    st.warning(md("This link asks for " + "; ".join(unknown + setting_problems) + ", not in this database: "
                   "not applied. The filters show what is applied."))
initial = compare.Selection.from_query(params)

prices, price_missing = cost.converted_prices(catalog, data.rates(path), settings.currency)
runs = cost.with_cost(all_runs, prices, price_missing, cost.idle_power_by_device(all_runs), settings)

with st.sidebar:
    st.header("Filters")
    st.caption("Empty means all: nothing is filtered that is not shown here.")
    picked = {}
    run_labels = compare.run_labels(runs) if initial.filters.get("run") else {}
    for key, label in compare.FILTER_LABELS.items():
        if key == "run" and not initial.filters.get("run"):
            continue  # shown only when a link picks runs (New run's "see these runs")
        opts = compare.options(runs, key)
        picked[key] = tuple(st.multiselect(label, opts, default=[v for v in initial.filters.get(key, ()) if v in opts],
                                           key=f"f_{key}", placeholder="all",
                                           format_func=(lambda r: run_labels.get(r, r)) if key == "run" else str))
    metric_key = st.selectbox("Chart metric", list(compare.METRICS), index=list(compare.METRICS).index(initial.metric),
                              format_func=lambda k: compare.METRICS[k].label, key="metric")
    log_scale = st.toggle("Log scale", key="log", value=params.get("log", ["0"])[0] == "1",
                          help="For values that span orders of magnitude (828 ms beside 11 ms)")
selection = compare.Selection({k: v for k, v in picked.items() if v}, metric_key)
metric = compare.METRICS[metric_key]
chosen = compare.apply(runs, selection)
device_choices = sorted(chosen.filter(pl.col("mode") != "idle")["device_name"].unique().to_list())
named_devices = list(selection.filters.get("device", ())) or device_choices  # whose stated findings to show
with st.sidebar:
    wanted_ref = params.get("ref", [None])[0]
    ref_options = ["none", *device_choices]
    reference = st.selectbox("Relative to", ref_options, key="ref",
                             index=ref_options.index(wanted_ref) if wanted_ref in ref_options else 0,
                             help="Adds the chart metric of each row divided by this device's on the same "
                                  "configuration (same workload, mode, precision, batch, sequence length)")
query = selection.to_query()
if reference != "none":
    query["ref"] = [reference]
if log_scale:
    query["log"] = ["1"]
if params.get("currency"):
    query.update(settings.to_query())
st.query_params.from_dict(query)

applied = "; ".join(f"{compare.FILTER_LABELS[k].lower()}: {', '.join(v)}" for k, v in selection.filters.items())
st.caption(md(f"{chosen.height} of {runs.height} runs: " + (applied if applied else "no filter, every run")
               + ". Change the filters in the sidebar."))

with st.expander("What the data holds: devices × workloads × metrics (run counts)",
                 expanded=not (selection.filters.get("device") or selection.filters.get("workload"))):
    st.caption("How many runs measured each metric; stated findings are ratios a source states for the device. "
               "Pick devices and workloads in the filters from here.")
    st.dataframe(styled(compare.coverage(chosen, compare.findings_for(findings, named_devices))),
                 hide_index=True, width="stretch")

measured = chosen.filter(pl.col("mode") != "idle")
st.subheader("All devices, several metrics")
table = compare.config_table(measured, None if reference == "none" else reference, metric, settings.currency)
shown_table = table.head(compare.MAX_TABLE_ROWS)
if table.height > shown_table.height:
    st.caption(f"Showing the first {shown_table.height:,} of {table.height:,} rows (sorted by "
               f"{metric.label.lower()}); narrow the filters for the rest.")
st.caption(f"Sorted by {metric.label.split(' (')[0].lower()}, {'highest' if metric.higher_is_better else 'lowest'} "
           f"first; click a "
           f"header to sort by it. Cost at {md(settings.describe())}, catalog prices in {settings.currency}.")
help_texts = compare.table_help(settings.currency)
st.dataframe(styled(shown_table, not_stated=("Sequence length", "GPUs")), hide_index=True, width="stretch",
             column_config={k: st.column_config.Column(help=v) for k, v in help_texts.items()})

st.subheader(metric.title())
labelled, shared = compare.with_labels(measured)
labelled, series_left = compare.limit(labelled, "series", compare.MAX_SERIES)
labelled, configs_left = compare.limit(labelled, "config", compare.MAX_CONFIGS)
if series_left or configs_left:
    st.caption(f"The chart shows the {compare.MAX_SERIES} series and {compare.MAX_CONFIGS} configurations with the "
               f"most runs ({series_left} series and {configs_left} configurations more match); narrow the filters.")
bar_frame = compare.bars(labelled, metric)
if bar_frame.is_empty():
    have = [f"{m.label.lower()} ({n} runs)" for m in compare.METRICS.values()
            if m.column in measured.columns and (n := measured[m.column].is_not_null().sum())]
    stated = compare.findings_for(findings, named_devices)
    st.info(f"No run in this selection measured {metric.label.lower()}. "
            + (f"This selection has: {', '.join(have)}" if have else "This selection has no measured metric")
            + (f"; and {stated.height} stated findings (below)." if stated.height else ".")
            + " Pick another chart metric in the sidebar.")
else:
    if shared:
        st.caption(f"All bars: {md(shared)}.")
    st.caption("Each bar is the mean of a configuration's repeats; error bars are its 95 % confidence interval "
               "(Student's t; none for a single run); the grade on the bar is its trust grade. Hover for n, the "
               "interval, basis, boundary and source.")
    boundaries = compare.mixed_boundaries(labelled, metric)
    if len(boundaries) > 1:
        st.warning(f"This comparison mixes measurement boundaries ({', '.join(boundaries)}): wall power includes the "
                   "whole machine, board power only the GPU. Filter to one boundary for a like-for-like comparison.")
    label = metric.label if metric.column != "cost_per_1m_samples" else f"{metric.label} ({settings.currency})"
    st.plotly_chart(charts.metric_bars(bar_frame, label, metric.higher_is_better, log_scale), width="stretch")
    grade_legend.legend("A bar's grade is the weakest of the configurations behind it (window against the sensor's "
                        "update period, steady state, repeats and their spread, counter vs trace, throttling, "
                        "boundary, origin); a ratio's, the weaker of its two sides.")
    ratios = compare.ratio_table(bar_frame, metric)
    st.subheader("Ratios, like for like")
    if ratios.is_empty():
        st.caption("No two series were measured on the same configuration, so no ratio is stated.")
    else:
        st.markdown("\n".join(f"- {md(line)}" for line in ratios["Statement"].head(6)))
        weak = compare.low_grade_note(ratios)
        if weak:
            st.warning(weak)  # built with every name escaped (explorer.markdown.md)
        st.dataframe(styled(ratios), hide_index=True)

stated = compare.findings_for(findings, named_devices)
if not stated.is_empty():
    st.subheader("What the sources state")
    st.caption("Ratios and percentages the sources give where they give no absolute pair of figures; each with its "
               "quote and citation.")
    for f in stated.head(8).iter_rows(named=True):
        st.markdown(f"- {md(compare.finding_sentence(f))}: “{md(f['quote'])}” — *{md(f['citation'])}*")
    if stated.height > 8:
        st.caption(f"{stated.height - 8} more in the table below.")
    ratio_bars = compare.stated_ratio_bars(stated)
    if not ratio_bars.is_empty():
        st.plotly_chart(charts.stated_ratios(ratio_bars, log_scale), width="stretch")
    with st.expander(f"All {stated.height} stated findings for these devices"):
        st.dataframe(styled(compare.findings_table(stated)), hide_index=True)

left, right = st.columns(2)
with left:
    st.subheader("Average power vs throughput")
    if labelled.drop_nulls(["avg_power_w", "throughput_sps"]).is_empty():
        st.caption("No run here measured both average power and throughput.")
    else:
        st.plotly_chart(charts.power_vs_throughput(labelled, log_scale), width="stretch")
with right:
    st.subheader("Energy vs time per example")
    points = compare.energy_time_points(labelled)
    if points.is_empty():
        st.caption("No run here measured both energy and throughput.")
    else:
        st.plotly_chart(charts.energy_vs_time(points, pareto_front(points, "s_per_sample", "j_per_sample"), log_scale),
                        width="stretch")

st.subheader("Runs")
if labelled.is_empty():
    st.caption("No run matches the filters.")
else:
    shown = labelled.select(
        (pl.lit(nav.RUN_DETAIL_URL + "?run_id=") + pl.col("run_id")).alias("Run"), pl.col("series").alias("Series"),
        pl.col("config").alias("Configuration"), pl.col("status").alias("Status"),
        pl.col(metric.column).alias(metric.label),
        pl.col("energy_boundary").replace_strict(BOUNDARY_NAMES, default=None).alias("Energy measured at"),
        pl.col("energy_method").alias("Energy method"),
        pl.col("source_kind").replace_strict(BASIS_NAMES, default=pl.col("source_kind")).alias("Basis"),
        pl.col("trust_grade").fill_null("not graded").alias("Trust grade"), pl.col("citation").alias("Citation"))
    st.dataframe(styled(shown), hide_index=True,
                 column_config={"Run": st.column_config.LinkColumn("Run", display_text="open")})
ids = tuple(chosen["run_id"].to_list())
c1, c2 = st.columns(2)
c1.download_button("Download selection (CSV)", lambda: data.selection_csv(chosen),
                   "joulebench-selection.csv", "text/csv", on_click="ignore")
c2.download_button("Download selection (result file)", lambda: data.selection_document(path, ids),
                   "joulebench-selection.json.gz", "application/gzip", on_click="ignore")
st.caption(f"The downloads hold every run the filters select ({len(ids):,}).")
