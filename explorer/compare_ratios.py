"""Compare's ratios: each series against each other on the configurations both measured (like for like,
with the 95 % interval of the repeats and the weakest grade behind it), the warning when they rest on low
grades, and the ratios the sources state where they give no absolute pair of figures."""

from __future__ import annotations

import math

import polars as pl

from decision.aggregates import LOW_GRADES, SETTLE_IT, low_grade_warning, worst_grade
from decision.markdown import md
from decision.text import count, in_sentence, ratio, sig
from energy.grades import GRADE_MEANINGS
from energy.stats import RatioInterval, ratio_interval
from explorer import memo
from explorer.compare import Metric

GROUP_LOW_PAIRS_OVER = 6  # more low-grade ratios than this: the warning groups them by grade
NAMED_DEVICES = 8  # devices a grouped warning names per grade


@memo.shared(max_entries=32)
def ratio_table(bar_frame: pl.DataFrame, metric: Metric) -> pl.DataFrame:
    """Each series against each other over the configurations both measured: only like for like,
    never across sequence lengths, precisions or batch sizes. On one configuration the ratio of the
    means carries its 95 % interval from the repeats (energy.stats.ratio_interval); over several,
    the geometric mean of the per-configuration ratios with their range (each configuration a point of every
    field of joulebench.configuration's COMPARE view: never two loads, two length shapes or two engines).
    Either way the row says whether the difference is within the noise and the weakest trust grade behind it."""
    # an overloaded serving point is never the basis of a ratio (it measured what arrived, not its load)
    cells = {(r["series"], r["config"]): r for r in bar_frame.iter_rows(named=True) if not r.get("overloaded")}
    series = sorted({s for s, _ in cells})
    configs = sorted({c for _, c in cells})
    rows = []
    for a in series:
        for b in series:
            if a == b:
                continue
            shared = [c for c in configs if (a, c) in cells and (b, c) in cells]
            per_config = [(c, ratio_interval(cells[(a, c)]["values"], cells[(b, c)]["values"])) for c in shared]
            found = [(c, r) for c, r in per_config if r is not None]
            if not found:
                continue
            geo = math.exp(sum(math.log(r.ratio) for _, r in found) / len(found))
            if (geo >= 1) != metric.higher_is_better and not math.isclose(geo, 1):
                continue  # state each pair once, from the better side
            noise = [r.within_noise for _, r in found]
            grade = worst_grade([cells[(s, c)]["grade"] for c, _ in found for s in (a, b)])
            names = [c for c, _ in found]
            rows.append({"A": a, "B": b, "Ratio (A ÷ B)": round(geo, 3),
                         "95 % interval": _interval_text(found),
                         "Within the noise": _noise_text(noise),
                         "Like-for-like configurations": len(found),
                         "Configurations": ", ".join(names[:6]) + (" …" if len(names) > 6 else ""),
                         "Trust grade": grade or "not graded",
                         "Statement": _statement(a, b, geo, found, metric)})
    return pl.DataFrame(rows, schema={"A": pl.String, "B": pl.String, "Ratio (A ÷ B)": pl.Float64,
                                      "95 % interval": pl.String, "Within the noise": pl.String,
                                      "Like-for-like configurations": pl.Int64, "Configurations": pl.String,
                                      "Trust grade": pl.String, "Statement": pl.String})


def low_grade_note(ratios: pl.DataFrame) -> str | None:
    """The warning (Markdown, names escaped) when a stated ratio rests on grade C or D figures,
    naming the pairs (decision.aggregates.low_grade_warning)."""
    pairs = {f"{r['A']} vs {r['B']}": r["Trust grade"] for r in ratios.iter_rows(named=True)}
    low = ratios.filter(pl.col("Trust grade").is_in(list(LOW_GRADES)))
    if low.height <= GROUP_LOW_PAIRS_OVER:
        return low_grade_warning(pairs, "A ratio here")
    # many pairs: grouped by grade, each grade's devices named once (a paragraph of 150 pairs does not read)
    groups = []
    for grade in LOW_GRADES:
        of_grade = low.filter(pl.col("Trust grade") == grade)
        if of_grade.height:
            devices = sorted(set(of_grade["A"].to_list()) | set(of_grade["B"].to_list()))
            shown = ", ".join(f"**{md(d)}**" for d in devices[:NAMED_DEVICES])
            more = f" and {len(devices) - NAMED_DEVICES:,} more" if len(devices) > NAMED_DEVICES else ""
            groups.append(f"- grade {grade} ({md(GRADE_MEANINGS[grade])}): {count(of_grade.height, 'ratio')}, "
                          f"between {count(len(devices), 'device')}: {shown}{more}")
    return (f"**Low trust grades:** {low.height:,} of the {count(ratios.height, 'ratio')} here rest on figures "
            f"graded C or D (the table's Trust grade column says which):\n\n" + "\n".join(groups)
            + f"\n\n{md(SETTLE_IT)}")


def _interval_text(found: list[tuple[str, RatioInterval]]) -> str:
    if len(found) > 1:
        low, high = min(r.ratio for _, r in found), max(r.ratio for _, r in found)
        return f"per configuration {low:.2f}x to {high:.2f}x"
    r = found[0][1]
    if r.low is None or r.high is None:
        return f"none: n {r.n_a} and {r.n_b} (an interval needs 2 or more repeats on each side)"
    return f"{r.low:.2f}x to {r.high:.2f}x"


def _noise_text(noise: list[bool | None]) -> str:
    known = [n for n in noise if n is not None]
    if not known:
        return "unknown: single runs"
    within = sum(known)
    if len(noise) == 1:
        return "yes: the interval includes 1x" if within else "no"
    return f"{within} of {len(known)} configurations with repeats" if within else "no"


def _amount(r: float, low: float | None, high: float | None, metric: Metric) -> str:
    """'is 1.95x (1.91-1.99) faster than' or, for lower-is-better figures, 'needs 0.60x (0.58-0.62)
    the energy per example (J) (1.7x better) of'; without an interval the ratio to two figures."""
    value = f"{ratio(r)}" if low is None or high is None else f"{r:.2f}x ({low:.2f}-{high:.2f})"
    if metric.column == "throughput_sps":
        return "is about as fast as" if ratio(r) == "1.0x" and low is None else f"is {value} faster than"
    what = in_sentence(metric.label)  # "energy per example (J)": units keep their case
    if metric.higher_is_better:
        return f"has {value} the {what} of"
    return f"needs {value if low is not None else f'{r:.2f}x'} the {what} ({ratio(1 / r)} better) of"


def _statement(a: str, b: str, geo: float, found: list[tuple[str, RatioInterval]], metric: Metric) -> str:
    if len(found) == 1:
        r = found[0][1]
        if r.within_noise:
            what = metric.label.split(" (")[0].lower()
            return (f"{a} and {b} are level on {what}: {a} ÷ {b} = {r.as_text()}, within the noise "
                    f"(the 95 % interval includes 1x, so no difference is shown)")
        tail = " (single runs: no interval)" if r.low is None else ""
        return f"{a} {_amount(r.ratio, r.low, r.high, metric)} {b}{tail}"
    ratios = [r.ratio for _, r in found]
    noisy = sum(1 for _, r in found if r.within_noise)
    tail = f"; within the noise on {noisy} of them" if noisy else ""
    return (f"{a} {_amount(geo, None, None, metric)} {b} (geometric mean over {len(found)} like-for-like "
            f"configurations, per configuration {min(ratios):.2f}x to {max(ratios):.2f}x{tail})")


# --- what the sources state --------------------------------------------------------------------

_RELATION_WORDS = {"throughput_sps": "throughput", "j_per_iteration": "energy per iteration",
                   "j_per_sample": "energy per example", "iterations_per_s": "iterations per second",
                   "avg_power_w": "average power"}


def finding_sentence(f: dict) -> str:
    """A stated finding as a sentence (plain text; the page escapes it)."""
    what = _RELATION_WORDS.get(f["metric"], f["metric"])
    subject, baseline = f.get("subject_device") or "", f.get("baseline_device") or ""
    s_desc, b_desc = f.get("subject_desc") or "", f.get("baseline_desc") or ""
    value = float(f["value"])
    if f["relation"] == "scale_factor":
        return f"{subject}: {s_desc}: scale factor {value:g} per added GPU"
    if f["relation"] == "ratio":
        amount = f"{sig(value)}x the {what} of"
    elif value == 0:
        amount = f"the same {what} as"
    else:
        amount = f"{abs(value):g}% {'more' if value > 0 else 'less'} {what} than"
    if subject and subject == baseline:
        return f"{subject}: {s_desc} has {amount} {b_desc}"
    return f"{subject or 'the subject'} ({s_desc}) has {amount} {baseline or 'the baseline'} ({b_desc})"


def findings_for(findings: pl.DataFrame, devices: list[str]) -> pl.DataFrame:
    """Findings that name any of the devices (as subject or baseline); those between two of the
    devices first, then those between two settings of one device."""
    chosen = findings.filter(pl.col("subject_device").is_in(devices) | pl.col("baseline_device").is_in(devices))
    return (chosen.with_columns((pl.col("subject_device") == pl.col("baseline_device")).fill_null(True).alias("_same"))
            .sort(["_same", "metric", "finding_id"]).drop("_same"))


def findings_table(findings: pl.DataFrame) -> pl.DataFrame:
    return findings.select(
        pl.col("subject_device").alias("Subject"), pl.col("subject_desc").alias("Subject configuration"),
        pl.col("baseline_device").alias("Baseline"), pl.col("baseline_desc").alias("Baseline configuration"),
        pl.col("metric").replace_strict(_RELATION_WORDS, default=pl.col("metric")).alias("Metric"),
        pl.col("relation").replace_strict({"ratio": "ratio (×)", "change_pct": "change (%)",
                                           "scale_factor": "scale factor"}, default=pl.col("relation"))
        .alias("Stated as"), pl.col("value").alias("Value"), pl.col("quote").alias("Quote"),
        pl.col("citation").alias("Citation"))


def stated_ratio_bars(findings: pl.DataFrame) -> pl.DataFrame:
    """The stated ratios as bars: one per finding, labelled subject vs baseline and its scope."""
    ratios = findings.filter((pl.col("relation") == "ratio") & (pl.col("subject_device") != pl.col("baseline_device")))
    return ratios.select(
        (pl.col("subject_device") + " vs " + pl.col("baseline_device")).alias("pair"),
        pl.col("metric").replace_strict(_RELATION_WORDS, default=pl.col("metric")).alias("metric"),
        pl.col("value"), pl.col("subject_desc").alias("scope"),
        pl.col("subject_desc").str.slice(0, 48).alias("finding"), pl.col("citation"))
