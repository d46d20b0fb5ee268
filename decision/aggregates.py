"""Per-configuration aggregates for the pages (pure polars, no torch): one point per
configuration with its mean, 95 % interval, n and trust grade, and ratio statements that carry
their interval and say when a difference is within the noise.

Two sources, the same numbers (both use `energy.stats`):
- `stored(configs, metric)`: the aggregates ingest stored per configuration
  (`data.configurations`), for the figures the store aggregates (db.grading.STAT_METRICS);
- `by_configuration(runs, column)`: computed from a filtered runs frame (`data.runs`, which
  carries each run's `config_key` and its configuration's grade), for any per-run column a page
  derives, such as cost per sample.

Grades: `GRADE_COLORS` and `GRADE_MEANINGS` give a badge and its legend.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

from db.grading import STAT_METRICS
from decision.markdown import md
from energy.grades import GRADE_MEANINGS, GRADES, Reason
from energy.stats import RatioInterval, aggregate, ratio_interval
from joulebench.configuration import NAMES

__all__ = ["GRADES", "GRADE_COLORS", "GRADE_MEANINGS", "LOW_GRADES", "NOT_GRADED", "SETTLE_IT", "by_configuration",
           "grade_legend", "low_grade_warning", "ratio_statement", "reason_rows", "stored", "worst_grade",
           "worst_grade_expr"]

GRADE_COLORS = {"A": "green", "B": "blue", "C": "orange", "D": "red"}
LOW_GRADES = ("C", "D")  # a ranking or ratio resting on these is flagged: differences under ~25 % are not settled
NOT_GRADED = "not graded"  # a figure with no stored grade (a stated ratio, the catalog): never a letter made up
SETTLE_IT = ("What would settle it: a longer, repeated measurement. A New run with the default settings on a device "
             "with a power sensor measures windows of at least 10 s, 3 repeats; run it on each device (or import "
             "such runs from whoever owns one) and the figures can reach grade A.")
AGGREGATE_COLUMNS = {"n": pl.Int64, "mean": pl.Float64, "ci95_low": pl.Float64, "ci95_high": pl.Float64,
                     "std": pl.Float64, "cov_pct": pl.Float64}
# how a configuration's device and source are named beside its fields (columns of data.runs, the same for its runs)
_NAMED_BESIDE = ("device_kind", "system_name", "power_setting", "energy_method", "source_kind", "citation")


def stored(configs: pl.DataFrame, metric: str) -> pl.DataFrame:
    """The stored aggregate of `metric` (e.g. "j_per_sample") per configuration that measured it:
    the configuration's columns, n, mean, ci95_low, ci95_high, std, cov_pct, grade, reasons."""
    prefix = f"{metric}_"
    if f"{prefix}mean" not in configs.columns:
        raise KeyError(f"no stored aggregate for {metric!r}")
    renames = {f"{prefix}{k}": k for k in AGGREGATE_COLUMNS}
    others = {f"{m}_{k}" for m in STAT_METRICS for k in AGGREGATE_COLUMNS} - set(renames)
    keep = [c for c in configs.columns if c not in others]
    return (configs.select(keep).rename(renames).rename({"trust_grade": "grade", "trust_reasons": "reasons"})
            .filter(pl.col("mean").is_not_null()))


def by_configuration(runs: pl.DataFrame, column: str) -> pl.DataFrame:
    """One row per configuration (`config_key`) among the ok runs that measured `column`: the
    configuration's columns, n, mean, ci95_low, ci95_high, std, cov_pct, its stored grade and
    reasons, and the run ids. Missing values are left out, never counted as 0."""
    measured = runs.filter((pl.col("status") == "ok") & pl.col(column).is_not_null() & pl.col(column).is_finite())
    about = [c for c in (*NAMES, *_NAMED_BESIDE) if c in runs.columns]
    rows: list[dict[str, Any]] = []
    for (key,), group in measured.partition_by("config_key", as_dict=True, maintain_order=True).items():
        agg = aggregate(group[column].to_list())
        if agg is None:
            continue
        first = group.row(0, named=True)
        rows.append({"config_key": key, **{c: first[c] for c in about},
                     "n": agg.n, "mean": agg.mean, "ci95_low": agg.ci95_low, "ci95_high": agg.ci95_high,
                     "std": agg.std, "cov_pct": agg.cov_pct,
                     "grade": first.get("config_grade"), "reasons": first.get("config_reasons"),
                     "run_ids": group["run_id"].to_list()})
    schema: dict[str, Any] = {"config_key": pl.String, **{c: runs.schema[c] for c in about}, **AGGREGATE_COLUMNS,
                              "grade": pl.String, "reasons": pl.List(pl.String), "run_ids": pl.List(pl.String)}
    return pl.DataFrame(rows, schema=schema)


def ratio_statement(a_label: str, a_values: list[float], b_label: str, b_values: list[float], *, what: str,
                    higher_is_better: bool) -> tuple[str, RatioInterval | None]:
    """'A is 1.95x (1.92-1.98) faster than B' with the interval, or that the difference is within
    the noise, or that single runs give no interval. `what` names the figure ("faster",
    "the energy per example of"); the ratio is A's mean over B's."""
    r = ratio_interval(a_values, b_values)
    if r is None:
        return f"{a_label} and {b_label}: no ratio (a side has no positive figure)", None
    text = r.as_text()
    if r.within_noise:
        return f"{a_label} vs {b_label}: {text}, within the noise (the 95 % interval includes 1x)", r
    if r.low is None:
        return f"{a_label} is {text} {what} {b_label}: single runs, no interval", r
    better = (r.ratio > 1) == higher_is_better
    return f"{a_label} is {text} {what} {b_label} ({'better' if better else 'worse'})", r


def reason_rows(reasons: Iterable[str] | None) -> list[dict[str, str]]:
    """Stored reasons (a list, or a polars list cell) as rows for a table: check, the best grade it
    allows, and why (limiting first)."""
    parsed = [Reason.parse(r) for r in (list(reasons) if reasons is not None else [])]
    parsed.sort(key=lambda r: -GRADES.index(r.cap))
    return [{"Check": r.check, "Best grade it allows": r.cap, "Why": r.text} for r in parsed]


def grade_legend() -> list[dict[str, str]]:
    return [{"Grade": g, "Meaning": GRADE_MEANINGS[g]} for g in GRADES]


def worst_grade(grades: Iterable[str | None]) -> str | None:
    """The lowest of the grades (a figure built from several is no better than its weakest);
    None when none is graded."""
    known = [g for g in grades if g in GRADES]
    return max(known, key=GRADES.index) if known else None


assert list(GRADES) == sorted(GRADES)  # worst_grade_expr takes the greatest letter as the weakest grade


def worst_grade_expr(column: str) -> pl.Expr:
    """`worst_grade` as a polars aggregation of a group's grades in `column` (one pass over 80,000 groups instead
    of a Python call each): the grades are letters, A best, so the weakest is the greatest of those graded; null
    when none is graded."""
    return pl.col(column).filter(pl.col(column).is_in(list(GRADES))).max()


def low_grade_warning(grades: Mapping[str, str | None], what: str) -> str | None:
    """A warning (Markdown, names escaped) when any of `grades` (device -> the worst grade of the
    figures `what` rests on) is C or D: which devices, which grades, and what would settle it.
    None when every graded figure is A or B."""
    low = {d: g for d, g in grades.items() if g in LOW_GRADES}
    if not low:
        return None
    named = ", ".join(f"**{md(d)}** (grade {g})" for d, g in low.items())
    meanings = "; ".join(f"{g}: {GRADE_MEANINGS[g]}" for g in LOW_GRADES if g in low.values())
    return (f"**Low trust grades:** {what} rests on figures graded {' and '.join(sorted(set(low.values())))}: "
            f"{named}. {md(meanings)}. {md(SETTLE_IT)}")
