"""Cost & buying guide: $ per 1M samples and J/example under your prices and constraints."""

import polars as pl
import streamlit as st

from explorer import charts, compare, cost, data
from explorer.markdown import md
from explorer.metrics import COST_FORMULA, CostInputs

st.title("Cost & buying guide")
runs = data.or_stop(data.runs, data.db_path())

c1, c2, c3 = st.columns(3)
workload = c1.selectbox("Workload", compare.options(runs, "workload"), key="workload")
of_workload = runs.filter(pl.col("workload") == workload)
mode = c2.selectbox("Mode", compare.options(of_workload, "mode"), key="mode")
chosen = of_workload.filter(pl.col("mode") == mode)
estimate = c3.toggle("Estimate missing energy from TDP", key="tdp",
                     help="Where a run has no measured energy, use TDP ÷ throughput (an upper bound), labelled.")

with st.sidebar:
    st.header("Your numbers")
    price_kwh = st.number_input("Electricity price per kWh", 0.0, 10.0, 0.15, 0.01, key="kwh")
    pue = st.number_input("PUE (facility overhead)", 1.0, 3.0, 1.0, 0.05, key="pue")
    years = st.number_input("Lifetime (years)", 0.25, 15.0, 3.0, 0.25, key="years")
    util = st.slider("Utilisation", 0.05, 1.0, 0.5, 0.05, key="util")
    st.header("Constraints")
    max_power = st.number_input("Max power (W), 0 = none", 0.0, 5000.0, 0.0, key="max_power")
    min_mem = st.number_input("Min memory (GB), 0 = none", 0.0, 1000.0, 0.0, key="min_mem")
    max_p99 = st.number_input("Max p99 latency (ms), 0 = none", 0.0, 1e6, 0.0, key="max_p99")
    budget = st.number_input("Budget per device, 0 = none", 0.0, 1e7, 0.0, key="budget")

catalog, _ = data.devices(data.db_path())
in_use = catalog.filter(pl.col("device_name").is_in(chosen["device_name"].unique().to_list()))
with st.expander("Device prices", expanded=True):
    st.caption("Defaults from the catalog, in the currency shown; 0 means unknown. Use one currency throughout.")
    prices = {}
    grid = st.columns(3)
    for i, dev in enumerate(in_use.iter_rows(named=True)):
        label = f"{dev['device_name']} ({dev['price_currency'] or 'no catalog price'})"
        value = grid[i % 3].number_input(label, 0.0, 1e7, float(dev["price_amount"] or 0.0), 50.0,
                                         key=f"price_{dev['device_name']}")
        prices[dev["device_name"]] = value or None

inputs = CostInputs(price_kwh, pue, years, util)
limits = cost.Constraints(max_power or None, min_mem or None, max_p99 or None, budget or None)
ranked = cost.rank(chosen, inputs, prices, limits, estimate)
st.subheader(f"Ranking for {md(workload)} ({md(mode)})")
if ranked.is_empty():
    st.info("No device meets these constraints for this workload. Relax a constraint.")
    st.stop()
st.dataframe(ranked, hide_index=True)
costed = ranked.filter(pl.col("cost_per_1m_samples").is_not_null())
if costed.is_empty():
    st.info("No device here has both a price and an energy figure, so no total cost can be ranked. "
            "Enter prices above, or estimate missing energy from TDP.")
else:
    best = costed.row(0, named=True)
    st.markdown(f"**Cheapest: {md(best['device_name'])}** at {best['cost_per_1m_samples']:.4g} per 1M samples "
                f"({best['precision']}, batch {best['batch_size']}, {best['power_setting']}; "
                f"energy {best['energy_basis']}).")
    st.plotly_chart(charts.cost_ranking(costed), width="stretch")
    st.subheader("How the ranking moves")
    which = st.radio("Vary", ["electricity price", "utilisation"], horizontal=True, key="vary")
    param, values = (("electricity_per_kwh", [0.05 * i for i in range(1, 11)]) if which == "electricity price"
                     else ("utilisation", [0.1 * i for i in range(1, 11)]))
    moves = cost.sensitivity(chosen, inputs, prices, limits, estimate, param, values)
    st.plotly_chart(charts.cost_sensitivity(moves, which), width="stretch")
st.subheader("Formula")
st.code(COST_FORMULA, language=None)
