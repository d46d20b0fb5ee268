"""Decide's tables and chart data: every figure with its basis, the cost against utilisation, and the
figures each device's cost rests on."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import polars as pl

from decision.aggregates import NOT_GRADED, worst_grade
from decision.decide import Answer
from decision.figures import DeviceAnswer, Figure
from decision.money import NO_PRICE, CostSettings, CostSplit, cost_split
from decision.text import count, in_sentence, sig
from joulebench.metrics import label

N_COLUMN, CI_COLUMN, GRADE_COLUMN = "Repeats (n)", "95% interval", "Trust grade"
OPTIONAL_COLUMNS = (N_COLUMN, CI_COLUMN, GRADE_COLUMN)
# what each column of the figure table holds, for its header's help
FIGURE_COLUMN_HELP = {
    "Value": "'not measured': the reason is in the last column",
    "Basis": "measured here (a run on this machine), imported (an uploaded file), reference table (shipped with the "
             "app), stated ratio (a source's ratio), estimate (derived with the assumption stated), catalog; with the "
             "best-setting toggle: measured at a setting, or predicted at it with the model's leave-one-out error",
    "Boundary": "where the power was measured",
    N_COLUMN: "runs of the configuration that measured the figure; the value is their mean",
    CI_COLUMN: "95% confidence interval of the mean (Student's t), with two or more repeats",
    GRADE_COLUMN: "A best .. D unreliable; see 'What the grades mean' below",
}


def _grade_cell(f: Figure) -> str | None:
    """The figure's stored grade; 'not graded' for a figure from data that stores none (a stated
    ratio, an estimate); empty for the catalog and what is not measured."""
    if not f.known:
        return None
    if f.grade is not None:
        return f.grade
    return None if f.basis == "catalog" else NOT_GRADED


def _interval_cell(f: Figure) -> str | None:
    if f.ci_low is None or f.ci_high is None:
        return None
    return f"{sig(f.ci_low)}–{sig(f.ci_high)} {f.unit}".strip()


def figure_table(answer: Answer) -> pl.DataFrame:
    """One row per figure and device, with basis, boundary, configuration and source; the
    optional columns (repeats n, 95% interval, trust grade) appear when any figure carries them."""
    u = answer.settings.utilisation
    cur = answer.settings.currency
    rows: list[dict[str, Any]] = []
    for d in answer.devices:
        ans = answer.per_device[d]
        figs = ans.figures(answer.job.mode == "infer" or answer.constraints.max_p99_ms is not None)
        if ans.cost_throughput is not ans.throughput:
            figs.insert(1, replace(ans.cost_throughput, what="Throughput used for cost"))
        if ans.cost_energy is not ans.j_per_sample:
            figs.insert(2, replace(ans.cost_energy, what="Energy per example used for cost"))
        cost = ans.cost_at(u)
        split = device_split(ans, answer.settings)
        basis = " and ".join(sorted({ans.cost_throughput.basis, ans.cost_energy.basis}))
        electricity, hardware = (*split.workings, "", "")[:2] if split.electricity is not None else ("", "")
        figs.append(Figure(d, label("electricity_cost_per_1m"), split.electricity, cur,
                           basis if split.electricity is not None else "not measured",
                           source=electricity, missing_reason=split.electricity_missing,
                           grade=ans.cost_energy.grade))
        figs.append(Figure(d, "Hardware per 1M samples", split.hardware, cur,
                           ans.price.basis if split.hardware is not None else "not measured", source=hardware,
                           missing_reason=split.hardware_missing, grade=ans.cost_throughput.grade))
        figs.append(Figure(d, f"Cost per 1M samples at {u * 100:.0f}% utilisation", cost, cur,
                           basis if cost is not None else "not measured",
                           source=f"{split.text()}; its grade is the lower of the throughput's and the energy's",
                           missing_reason=ans.cost_missing,
                           grade=worst_grade([ans.cost_throughput.grade, ans.cost_energy.grade])))
        for f in figs:
            rows.append({"Device": d, "Figure": f.what, "Value": f.shown(), "Basis": f.basis,
                         "Boundary": f.boundary, "Configuration": f.config,
                         "Source or derivation": f.source if f.known else f.missing_reason,
                         N_COLUMN: f.n if f.known else None, CI_COLUMN: _interval_cell(f),
                         GRADE_COLUMN: _grade_cell(f)})
        if ans.ooms:
            rows.append({"Device": d, "Figure": "Out of memory (a recorded outcome)", "Value": "; ".join(ans.ooms[:4]),
                         "Basis": ans.oom_basis, "Boundary": "", "Configuration": "",
                         "Source or derivation": f"{count(len(ans.ooms), 'configuration')} ran out of memory"})
    frame = pl.DataFrame(rows, schema={"Device": pl.String, "Figure": pl.String, "Value": pl.String,
                                       "Basis": pl.String, "Boundary": pl.String, "Configuration": pl.String,
                                       "Source or derivation": pl.String, N_COLUMN: pl.Int64, CI_COLUMN: pl.String,
                                       GRADE_COLUMN: pl.String})
    empty = [c for c in OPTIONAL_COLUMNS if frame[c].is_null().all()]
    return frame.drop(empty)


def device_split(ans: DeviceAnswer, settings: CostSettings) -> CostSplit:
    """A candidate's cost per 1M samples as electricity + hardware, from the figures its cost uses: the
    electricity whenever its energy figure is known, even without a price; the hardware with a price."""
    if not ans.cost_energy.known:
        return CostSplit(None, None, settings.currency, electricity_missing=ans.cost_energy.missing_reason
                         or ans.cost_missing or "no energy figure")
    reason = ans.price.missing_reason or ""
    price_missing = NO_PRICE if not reason or reason.startswith("no price in the catalog") else reason
    if ans.price.known and not ans.cost_throughput.known:
        price_missing = ans.cost_missing
    return cost_split(ans.cost_energy.value, ans.cost_throughput.value, ans.idle_power.value, ans.price.value,
                      settings, price_missing=price_missing)


def cost_workings(answer: Answer) -> list[str]:
    """Each candidate's cost per 1M samples split as electricity + hardware, with both formulas and their
    numbers (plain text, names as stored): what the page and `joulebench decide` print beside the formula."""
    lines = []
    for d in answer.devices:
        split = device_split(answer.per_device[d], answer.settings)
        lines.append(f"{d}: {split.text()}")
        lines += [f"  {w}" for w in split.workings]
        if split.hardware is None and split.electricity is not None:
            lines.append(f"  hardware: {split.hardware_missing}")
    return lines


def cost_curve(answer: Answer, start_pct: int = 5) -> pl.DataFrame:
    """Cost per 1M samples against utilisation (`start_pct`% to 100%) for each costed device."""
    rows = []
    for d in answer.costed():
        terms = answer.per_device[d].terms
        assert terms is not None
        for percent in range(start_pct, 101):
            u = percent / 100
            rows.append({"device": d, "utilisation": u, "cost": terms.at(u)})
    return pl.DataFrame(rows, schema={"device": pl.String, "utilisation": pl.Float64, "cost": pl.Float64})


def device_bars(answer: Answer) -> pl.DataFrame:
    """The throughput and J/example each costed figure rests on, per device, for the bar chart:
    value, a short label (value, unit, input size, grade) and a hover text with the basis."""
    rows = []
    for d in answer.devices:
        ans = answer.per_device[d]
        for what, fig in (("Throughput", ans.cost_throughput), ("Energy per example", ans.cost_energy)):
            if not fig.known:
                continue
            size = next((p for p in f"{fig.setting} · {fig.config}".split(" · ") if p.startswith("seq ")),
                        "input size not stated")
            grade = f"grade {fig.grade}" if fig.grade else NOT_GRADED
            rows.append({"device": d, "figure": what, "value": fig.value,
                         "label": f"{fig.shown()}, {size}, {grade}",
                         "hover": f"{d}: {in_sentence(what)} {fig.shown()} ({fig.basis}); {fig.setting or fig.config}; "
                                  f"{grade}"})
    return pl.DataFrame(rows, schema={"device": pl.String, "figure": pl.String, "value": pl.Float64,
                                      "label": pl.String, "hover": pl.String})
