"""Cost & buying guide: cost per 1M samples in one currency, with the duty cycle, ranked."""

import polars as pl
import streamlit as st

from decision import aggregates, cost
from decision.markdown import md
from decision.money import COST_FORMULA, busy_text
from decision.text import money
from explorer import charts, compare, cost_inputs, data, grade_legend, nav
from explorer.params import UrlReader
from explorer.tables import styled

st.title("Cost & buying guide")
st.caption("Cost per 1M samples of every device's cheapest configuration for a workload, in one currency: "
           "electricity while busy, electricity while idle (the duty cycle) and the purchase price spread over "
           "the samples of its lifetime. To weigh a few candidates for a job, use Decide.")
path = data.db_path()
runs = data.or_stop(data.runs, path)
catalog, power_modes = data.devices(path)
budgets = cost.mode_budgets(power_modes)
currencies = data.currencies(path)

url = UrlReader.of(st.query_params)
workloads = compare.options(runs.filter(pl.col("mode") != "idle"), "workload")
workload_url = url.one("workload", workloads, "workload")

c1, c2, c3 = st.columns(3)
workload = c1.selectbox("Workload", workloads, key="workload",
                        index=workloads.index(workload_url) if workload_url else 0)
of_workload = runs.filter(pl.col("workload") == workload)
modes = compare.options(of_workload, "mode")
mode_url = url.one("mode", ["train", "infer"], "mode")
mode = c2.selectbox("Mode", modes, key="mode", index=modes.index(mode_url) if mode_url in modes else 0,
                    format_func=lambda m: "training" if m == "train" else "inference")
estimate = c3.toggle("Fill gaps with labelled estimates", key="tdp", value=url.params.get("tdp", ["0"])[0] == "1",
                     help="Energy = TDP ÷ throughput where a run measured none (an upper bound); throughput = the "
                          "setting's power cap (plus idle power for figures at the wall) ÷ J/example where a source "
                          "gives energy but no throughput. Both are labelled 'estimate' in the ranking.")

with st.sidebar:
    settings = cost_inputs.cost_settings(url, currencies)
    limits = cost_inputs.constraints(url, settings.currency, power_key="max_power")
currency = settings.currency

warning = url.warning()
if warning:
    st.warning(md(warning))
query = {"workload": [workload], "mode": [mode], **settings.to_query(), **limits.to_query()}
if estimate:
    query["tdp"] = ["1"]
st.query_params.from_dict(query)

chosen = of_workload.filter(pl.col("mode") == mode)
in_use = catalog.filter(pl.col("device_name").is_in(chosen["device_name"].unique().to_list()))
base_prices, price_missing = cost.converted_prices(in_use, data.rates(path), currency)
with st.expander(f"Device prices ({currency})", expanded=False):
    st.caption(f"Catalog prices converted to {currency}; change one here for this page only (0 = unknown), or "
               "edit the catalog and exchange rates on the Devices page.")
    overrides: dict[str, float | None] = {}
    grid = st.columns(3)
    for i, row in enumerate(in_use.iter_rows(named=True)):
        name = row["device_name"]
        start = cost.price_box(base_prices.get(name))
        value = grid[i % 3].number_input(f"{md(name)} ({currency})", 0.0, cost.PRICE_INPUT_MAX, start, 50.0,
                                         key=f"price_{currency}_{name}",
                                         help=md(cost.price_help(row, price_missing.get(name))))
        overrides[name] = base_prices.get(name) if value == start else (value or None)
        if name in base_prices:
            grid[i % 3].caption(md(cost.price_help(row, None)))
with st.spinner("Costing every configuration…", show_time=True):  # a visible working state while it computes
    prices, price_missing = cost.converted_prices(in_use, data.rates(path), currency, overrides)
    costed = cost.with_cost(chosen, prices, price_missing, cost.idle_power_by_device(runs), settings, estimate,
                            budgets)
    ranked, not_ranked = cost.rank(costed, limits)
    unpriced = cost.electricity_only(costed, limits)

mode_word = "training" if mode == "train" else "inference"
st.subheader(f"Ranking for {md(workload)}, {mode_word}")
if ranked.is_empty():
    st.info("No device here has a throughput, an energy figure and a price in " + currency
            + (" that meets the constraints" if limits.any() else "")
            + ", so nothing can be ranked. See why below; enter prices above, or fill gaps with labelled estimates.")
else:
    best = ranked.row(0, named=True)
    split = cost.split_of(best, settings)
    st.markdown(f"**Cheapest: {md(best['device_name'])}** at {md(money(split.total, currency))} per 1M samples = "
                f"{md(split.text().split(' = ')[0])} "
                f"({md(cost.setting_text(best))}; throughput {md(best['throughput_basis'])}, energy "
                f"{md(best['energy_basis'])}; trust grade {md(best['trust_grade'] or aggregates.NOT_GRADED)}) "
                f"at {md(busy_text(settings.utilisation))}.")
    st.caption(md("; ".join(split.workings)))
    st.dataframe(styled(cost.ranking_table(ranked, currency)), hide_index=True, column_config={
        "Trust grade": st.column_config.TextColumn("Trust grade", help="the lower of the grades of the throughput "
                                                   "and the energy figure the cost uses (A best .. D unreliable; an "
                                                   "estimate is not graded); see 'What the grades mean' below"),
    })
    if ranked["throughput_basis"].str.starts_with("estimate").any():
        st.caption("Throughput 'estimate: power cap ÷ J/example' is used where a source gives energy but no "
                   "throughput: the setting's power cap (plus idle power when the energy is at the wall) ÷ its "
                   "J/example, the most it can be. A source's stated speed ratio may disagree; Decide compares two "
                   "devices by the stated ratio where one exists and says which throughput each cost uses.")
    low_grades = cost.grade_warning(ranked)
    if low_grades:
        st.warning(low_grades)  # built with every name escaped (decision.markdown.md)
    grade_legend.legend("A cost is no better than the figures it uses: the lower of its throughput's and its "
                        "energy's configuration grade (reference tables are graded too, at most C).")
    st.plotly_chart(charts.cost_ranking(ranked, currency), width="stretch")
    flips = cost.crossovers(ranked, settings)
    for low, high, u in flips:
        st.markdown(f"**Crossover:** below {u * 100:.0f}% utilisation **{md(low)}** is cheaper per sample; above "
                    f"it, **{md(high)}**.")
    if len(ranked) > 1 and not flips:
        st.caption(f"No crossover: {md(best['device_name'])} stays the cheapest from 1% to 100% utilisation.")
    st.subheader("How the ranking moves")
    which = st.radio("Vary", ["utilisation", "electricity price"], horizontal=True, key="vary")
    if which == "utilisation":
        st.plotly_chart(charts.cost_vs_utilisation(cost.utilisation_curve(ranked, settings), currency,
                                                   settings.utilisation, flips), width="stretch")
    else:
        moves = cost.sensitivity(chosen, prices, price_missing, cost.idle_power_by_device(runs), settings, limits,
                                 estimate, [0.05 * i for i in range(1, 11)], budgets)
        st.plotly_chart(charts.cost_sensitivity(moves, f"electricity price ({currency} per kWh)", currency),
                        width="stretch")
if not unpriced.is_empty():
    st.subheader("Electricity only: no device price")
    st.caption(f"Without a device price there is no total to rank, but the electricity part is known: at "
               f"{md(settings.describe())}.")
    for row in unpriced.iter_rows(named=True):
        parts = [cost.split_of(row, settings)]
        if row.get("electricity_cost_per_1m_tokens") is not None:
            parts.append(cost.split_of(row, settings, "output tokens"))
        st.markdown(f"**{md(row['device_name'])}** ({md(cost.setting_text(row))}): "
                    + "; ".join(md(p.text()) for p in parts) + ".")
        st.caption(md("; ".join(w for p in parts for w in p.workings)))
    st.dataframe(styled(cost.electricity_table(unpriced, currency)), hide_index=True)
    st.page_link(nav.DEVICES, label="Add a price (Devices) for the hardware part", icon=":material/memory:")
if not not_ranked.is_empty():
    st.subheader("Not ranked, and why")
    st.dataframe(styled(not_ranked.rename({"device_name": "Device", "why": "Why not ranked", "runs": "Runs"})),
                 hide_index=True)
    st.page_link(nav.DEVICES, label="Enter prices and exchange rates (Devices)", icon=":material/memory:")
st.subheader("Formula")
st.code(COST_FORMULA, language=None)
