"""Compare: devices, precisions and power settings side by side."""

import polars as pl
import streamlit as st

from explorer import charts, compare, data
from explorer.markdown import md
from explorer.metrics import CostInputs, pareto_front, with_cost

st.title("Compare")
runs = with_cost(data.or_stop(data.runs, data.db_path()), CostInputs())

initial = compare.Selection.from_query({k: st.query_params.get_all(k) for k in st.query_params})
with st.sidebar:
    st.header("Filters")
    picked = {}
    for key, label in compare.FILTER_LABELS.items():
        opts = compare.options(runs, key)
        picked[key] = tuple(st.multiselect(label, opts, default=[v for v in initial.filters.get(key, ()) if v in opts],
                                           key=f"f_{key}", placeholder="all"))
    metric_key = st.selectbox("Metric", list(compare.METRICS), index=list(compare.METRICS).index(initial.metric),
                              format_func=lambda k: compare.METRICS[k].label, key="metric")
selection = compare.Selection({k: v for k, v in picked.items() if v}, metric_key)
st.query_params.from_dict(selection.to_query())
metric = compare.METRICS[metric_key]
scoped = compare.default_selection(runs, selection)
implied = {k: v for k, v in scoped.filters.items() if k not in selection.filters}
if implied:
    st.caption("Showing " + ", ".join(f"{compare.FILTER_LABELS[k].lower()} {md(v[0])}" for k, v in implied.items())
               + " (the most common); pick others in the filters.")

chosen, left_out = compare.limit_series(compare.with_series(compare.apply(runs, scoped)))
if left_out:
    st.caption(f"{left_out} more series match; showing the {compare.MAX_SERIES} with the most runs. "
               "Narrow the filters.")
bar_frame = compare.bars(chosen, metric)
if bar_frame.is_empty():
    st.info(f"No run in this selection measured {metric.label.lower()} "
            f"({chosen.height} runs match the filters). Widen the filters or pick another metric: "
            "reference tables measured throughput and latency; energy comes from the blog's figures and local runs.")
    st.stop()

boundaries = compare.mixed_boundaries(chosen, metric)
if len(boundaries) > 1:
    st.warning(f"This comparison mixes measurement boundaries ({', '.join(boundaries)}): wall power includes the "
               "whole machine, board power only the GPU. Filter to one boundary for a like-for-like comparison.")
if metric.column == "cost_per_1m_samples":
    st.caption("Cost uses the defaults of the Cost & buying guide (0.15 per kWh, PUE 1.0, 3 years, 50% "
               "utilisation) and catalog prices in their own currency.")

st.subheader(metric.label)
st.plotly_chart(charts.metric_bars(bar_frame, metric.label), width="stretch")
st.dataframe(bar_frame.rename({"value": metric.label}), hide_index=True)

st.subheader("Ratios")
ratios = compare.ratio_table(bar_frame, metric)
if ratios.is_empty():
    st.caption("No two series share a batch size, so no ratio can be stated.")
else:
    st.markdown("\n".join(f"- {md(line)}" for line in ratios["statement"].head(6)))
    st.dataframe(ratios, hide_index=True)
stated = data.findings(data.db_path()).filter(
    pl.col("subject_device").is_in(chosen["device_name"].unique().to_list()))
if not stated.is_empty():
    with st.expander(f"Ratios stated by the sources for these devices ({stated.height})"):
        st.dataframe(stated, hide_index=True)

left, right = st.columns(2)
with left:
    st.subheader("Average power vs throughput")
    if chosen.drop_nulls(["avg_power_w", "throughput_sps"]).is_empty():
        st.caption("No run here measured both average power and throughput.")
    else:
        st.plotly_chart(charts.power_vs_throughput(chosen), width="stretch")
with right:
    st.subheader("Energy vs time per example")
    points = compare.energy_time_points(chosen)
    if points.is_empty():
        st.caption("No run here measured both energy and throughput.")
    else:
        st.plotly_chart(charts.energy_vs_time(points, pareto_front(points, "s_per_sample", "j_per_sample")),
                        width="stretch")

st.subheader("Runs")
shown = chosen.select(
    (pl.lit("/run_detail?run_id=") + pl.col("run_id")).alias("detail"), "series", "batch_size", "status",
    metric.column, "energy_boundary", "energy_method", "source_kind", "citation")
st.dataframe(shown, hide_index=True, column_config={"detail": st.column_config.LinkColumn("run", display_text="open")})
ids = tuple(chosen["run_id"].to_list())
c1, c2 = st.columns(2)
c1.download_button("Download selection (CSV)", lambda: chosen.drop("flags").write_csv().encode(),
                   "joulebench-selection.csv", "text/csv", on_click="ignore")
c2.download_button("Download selection (result file)", lambda: data.selection_document(data.db_path(), ids),
                   "joulebench-selection.json.gz", "application/gzip", on_click="ignore")
