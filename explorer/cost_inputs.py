"""The sidebar's "Your numbers" and "Constraints", shared by Decide and Cost: read from the link
(`params.UrlReader`), shown as inputs, returned as CostSettings and Constraints."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from decision.cost import Constraints
from decision.money import CostSettings
from explorer.params import UrlReader
from joulebench.metrics import label


def cost_settings(url: UrlReader, currencies: Sequence[str], *, util_help: str | None = None,
                  suffix: str = "") -> CostSettings:
    """Currency, electricity price, PUE, lifetime and utilisation, starting from the link's
    (`suffix` on every widget key: a new suffix makes new widgets that start from the link again)."""
    given = url.cost_settings(currencies)
    st.header("Your numbers")
    currency = st.selectbox("Currency", currencies, index=list(currencies).index(given.currency),
                            key=f"currency{suffix}",
                            help="Every amount on this page is in this currency; catalog prices are converted with "
                                 "the exchange rates on the Devices page, never added across currencies.")
    kwh = st.number_input(f"Electricity price ({currency} per kWh)", 0.0, 10.0, given.electricity_per_kwh, 0.01,
                          key=f"kwh{suffix}")
    pue = st.number_input("PUE (facility overhead, 1 = none)", 1.0, 3.0, given.pue, 0.05, key=f"pue{suffix}")
    years = st.number_input("Lifetime (years)", 0.25, 15.0, given.lifetime_years, 0.25, key=f"years{suffix}")
    as_hours = st.radio("Utilisation as", ["% of the time", "hours a day"], horizontal=True,
                        key=f"util_as{suffix}") == "hours a day"
    if as_hours:  # '8 hours a day' typed as it is said
        start_h = min(24.0, max(0.25, round(given.utilisation * 24, 2)))
        hours = st.number_input("Busy (hours a day)", 0.25, 24.0, start_h, 0.5, key=f"util_hours{suffix}",
                                help=util_help)
        return CostSettings(currency, kwh, pue, years, hours / 24)
    util_pct = st.number_input("Utilisation (% of the time busy)", 1, 100, round(given.utilisation * 100), 5,
                               key=f"util{suffix}", help=util_help)
    return CostSettings(currency, kwh, pue, years, util_pct / 100)


def constraints(url: UrlReader, currency: str, *, power_key: str, suffix: str = "") -> Constraints:
    """Budget, power cap, memory and p99 latency, 0 meaning none, starting from the link's."""
    st.header("Constraints")
    st.caption("0 means no constraint.")
    budget = st.number_input(f"Budget per device ({currency})", 0.0, 1e7,
                             url.number("budget", "budget", 0, 1e7) or 0.0, 50.0, key=f"budget{suffix}")
    max_w = st.number_input("Power cap (W)", 0.0, 5000.0, url.number("max_w", "power cap", 0, 5000) or 0.0,
                            10.0, key=f"{power_key}{suffix}")
    min_mem = st.number_input("Memory at least (GB)", 0.0, 1000.0,
                              url.number("min_mem", "memory", 0, 1000) or 0.0, 1.0, key=f"min_mem{suffix}")
    max_p99 = st.number_input(f"{label('latency_p99_ms')}: at most", 0.0, 1e6,
                              url.number("max_p99", "p99", 0, 1e6) or 0.0, 1.0, key=f"max_p99{suffix}")
    return Constraints(max_w or None, min_mem or None, max_p99 or None, budget or None)
