"""Comparisons between two candidates: like for like (same workload, precision, batch and sequence
length) where both were measured, else by the sources' stated ratios, else by the figures the costs
use (estimates), each with its basis, its 95 % interval where both sides have repeats, and the trust
grade of each side."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import polars as pl

from decision.aggregates import worst_grade
from decision.figures import ESTIMATE, STATED, DeviceAnswer, Figure
from decision.scope import Job, job_rows
from decision.text import basis_of, count, precision_name, sig
from energy.stats import ratio_interval

CONFIG_KEY = ("workload", "precision", "batch_size", "grad_accum_steps", "seq_len", "gpu_count")

@dataclass(frozen=True)
class Comparison:
    """`winner` is `factor` times better than `loser` on `what` (factor >= 1), with the 95 % interval
    `low`-`high` of the factor where both sides have repeats (energy.stats.ratio_interval), and the
    trust grade of each side's figures (None: nothing stored, e.g. a ratio a source states)."""

    what: str  # "faster" | "fewer joules"
    winner: str
    loser: str
    factor: float
    basis: str
    detail: str  # the figures or configurations compared, and the source
    quote: str = ""
    low: float | None = None
    high: float | None = None
    grades: tuple[tuple[str, str | None], ...] = ()  # (device, grade) for both sides
    noise: str = ""  # over several configurations: how many of their ratios are within the noise

    @property
    def within_noise(self) -> bool | None:
        """True when the interval holds 1 (no difference shown); None without an interval."""
        if self.low is None or self.high is None:
            return None
        return self.low <= 1.0 <= self.high

    def grade_of(self, device: str) -> str | None:
        return dict(self.grades).get(device)


def _oriented(r: float, low: float | None, high: float | None, first: str, second: str
              ) -> tuple[str, str, float, float | None, float | None]:
    """(winner, loser, factor >= 1, low, high) from a ratio `r` in favour of `first` when >= 1."""
    if r >= 1:
        return first, second, r, low, high
    return second, first, 1 / r, (1 / high if high else None), (1 / low if low else None)


_MODE_WORDS = {"train": ("training", "train", "fine-tuning"), "infer": ("inference", "infer")}
_PRECISION_WORDS = {"fp16": ("fp16", "mixed precision"), "fp32": ("fp32",), "tf32": ("tf32",), "bf16": ("bf16",)}


def finding_scope(desc: str | None) -> tuple[str | None, str | None]:
    """(mode, precision) a finding's description names, or None where it names none."""
    text = (desc or "").lower()
    mode = next((m for m, words in _MODE_WORDS.items() if any(re.search(rf"\b{w}\b", text) for w in words)), None)
    prec = next((p for p, words in _PRECISION_WORDS.items() if any(w in text for w in words)), None)
    return mode, prec


def _run_grade(runs: pl.DataFrame | None, run_id: str | None) -> str | None:
    """The stored grade of the run a finding cites (None when it cites none or it is not stored)."""
    if runs is None or not run_id or "trust_grade" not in runs.columns:
        return None
    found = runs.filter(pl.col("run_id") == run_id)["trust_grade"]
    return found[0] if found.len() else None


def stated_ratios(findings: pl.DataFrame, a: str, b: str, job: Job, metric: str = "throughput_sps",
                  runs: pl.DataFrame | None = None) -> list[Comparison]:
    """The sources' ratios between two devices for this job's mode (and precision, if chosen); a
    ratio's grade is that of the run it cites on each side, where it cites one (given `runs`)."""
    pair = findings.filter((pl.col("metric") == metric) & (pl.col("relation") == "ratio")
                           & (((pl.col("subject_device") == a) & (pl.col("baseline_device") == b))
                              | ((pl.col("subject_device") == b) & (pl.col("baseline_device") == a))))
    out = []
    for f in pair.iter_rows(named=True):
        mode, prec = finding_scope(f["subject_desc"])
        if mode is not None and mode != job.mode:
            continue
        if job.precision and prec is not None and prec != job.precision:
            continue
        value = float(f["value"])
        winner, loser = (f["subject_device"], f["baseline_device"]) if value >= 1 else \
            (f["baseline_device"], f["subject_device"])
        grades = ((f["subject_device"], _run_grade(runs, f.get("subject_run_id"))),
                  (f["baseline_device"], _run_grade(runs, f.get("baseline_run_id"))))
        out.append(Comparison("faster", winner, loser, value if value >= 1 else 1 / value, STATED,
                              f"{f['subject_desc']} vs {f['baseline_desc']}; {f['citation']}", f["quote"] or "",
                              grades=grades))
    return out


@dataclass(frozen=True)
class LikeForLike:
    """a/b over the configurations both measured (geometric mean of the per-configuration means)."""

    ratio: float
    count: int
    basis: str
    configs: str
    low: float | None  # the 95 % interval, for a single configuration measured with repeats on both sides
    high: float | None
    grade_a: str | None  # the worst grade of a's configurations compared
    grade_b: str | None
    noise: str  # several configurations: how many of their ratios are within the noise


def like_for_like(runs: pl.DataFrame, a: str, b: str, job: Job, column: str) -> LikeForLike | None:
    """Geometric mean of a/b over the configurations both measured, with its interval where it is
    one configuration with repeats on both sides, and each side's grade."""
    def per_config(device: str) -> pl.DataFrame:
        rows = job_rows(runs, device, job).filter((pl.col("status") == "ok") & pl.col(column).is_not_null())
        if "config_grade" not in rows.columns:
            rows = rows.with_columns(pl.lit(None, pl.String).alias("config_grade"))
        return rows.with_columns([pl.col(c).fill_null(-1) for c in ("batch_size", "grad_accum_steps", "seq_len",
                                                                   "gpu_count")]) \
            .group_by(list(CONFIG_KEY)).agg(pl.col(column).mean().alias("v"), pl.col(column).alias("vals"),
                                            pl.col("source_kind").first().alias("kind"),
                                            pl.col("config_grade").alias("grades"))
    joined = per_config(a).join(per_config(b), on=list(CONFIG_KEY), suffix="_b")
    if joined.is_empty():
        return None
    pairs = [(x, y, va, vb) for x, y, va, vb in zip(joined["v"], joined["v_b"], joined["vals"], joined["vals_b"])
             if x and y]
    if not pairs:
        return None
    logs = [math.log(x / y) for x, y, _, _ in pairs]
    intervals = [ratio_interval(va, vb) for _, _, va, vb in pairs]
    low = high = None
    noise = ""
    if len(pairs) == 1 and intervals[0] is not None and intervals[0].low is not None:
        low, high = intervals[0].low, intervals[0].high
    elif len(pairs) > 1:
        with_ci = [r for r in intervals if r is not None and r.low is not None]
        if with_ci:
            within = sum(1 for r in with_ci if r.within_noise)
            noise = (f"{within} of the {count(len(with_ci), 'configuration')} measured with repeats on both sides "
                     "differ within the noise")
    bases = sorted({basis_of(k) for k in joined["kind"].to_list() + joined["kind_b"].to_list()})
    precs = sorted({precision_name(p) for p in joined["precision"].drop_nulls()})
    batches = sorted(b for b in joined["batch_size"].to_list() if b != -1)
    seqs = sorted({s for s in joined["seq_len"].to_list() if s != -1})
    parts = [", ".join(sorted(set(joined["workload"].to_list())))]
    if precs:
        parts.append("/".join(precs))
    if batches:
        parts.append(f"batch {batches[0]}–{batches[-1]}" if batches[0] != batches[-1] else f"batch {batches[0]}")
    if seqs:
        parts.append("seq " + "/".join(map(str, seqs)))
    grade_a = worst_grade(g for gs in joined["grades"].to_list() for g in gs)
    grade_b = worst_grade(g for gs in joined["grades_b"].to_list() for g in gs)
    return LikeForLike(math.exp(sum(logs) / len(logs)), len(logs), " and ".join(bases), " · ".join(parts),
                       low, high, grade_a, grade_b, noise)


def _figure_ratio(what: str, fa: Figure, fb: Figure, a: str, b: str, basis: str, detail: str, quote: str = ""
                  ) -> Comparison:
    """Two figures compared ("faster": a/b of throughputs; "fewer joules": a/b of energies), with the
    interval of the ratio where both carry repeats."""
    assert fa.value is not None and fb.value is not None
    r = fa.value / fb.value
    interval = ratio_interval(fa.repeats, fb.repeats) if len(fa.repeats) > 1 and len(fb.repeats) > 1 else None
    low, high = (interval.low, interval.high) if interval is not None else (None, None)
    if what == "faster":
        winner, loser, f, low, high = _oriented(r, low, high, a, b)
    else:
        winner, loser, f, low, high = _oriented(r, low, high, b, a)
    return Comparison(what, winner, loser, f, basis, detail, quote, low, high, ((a, fa.grade), (b, fb.grade)))


def compare_speed(runs: pl.DataFrame, findings: pl.DataFrame, answers: dict[str, DeviceAnswer], a: str, b: str,
                  job: Job, at_best: frozenset[str] = frozenset()) -> list[Comparison]:
    """Like for like, else the sources' ratios, else the figures the costs use (when one is an
    estimate, or a device is taken at its best power setting: a source's ratio is for another)."""
    found = like_for_like(runs, a, b, job, "throughput_sps")
    if found:
        winner, loser, f, low, high = _oriented(found.ratio, found.low, found.high, a, b)
        return [Comparison("faster", winner, loser, f, found.basis,
                           f"geometric mean over {count(found.count, 'configuration')} both measured ({found.configs})",
                           low=low, high=high, grades=((a, found.grade_a), (b, found.grade_b)), noise=found.noise)]
    best = bool({a, b} & at_best)
    stated = [] if best else stated_ratios(findings, a, b, job, runs=runs)
    if stated:
        return stated
    ta, tb = answers[a].cost_throughput, answers[b].cost_throughput
    if ta.known and tb.known and (ESTIMATE in (ta.basis, tb.basis) or best):
        assert ta.value is not None and tb.value is not None
        basis = ESTIMATE if ESTIMATE in (ta.basis, tb.basis) else " and ".join(sorted({ta.basis, tb.basis}))
        return [_figure_ratio("faster", ta, tb, a, b, basis,
                              f"{sig(ta.value)} vs {sig(tb.value)} samples/s ({a}: {ta.source}; {b}: {tb.source})")]
    return []


def compare_energy(runs: pl.DataFrame, findings: pl.DataFrame, answers: dict[str, DeviceAnswer], a: str, b: str,
                   job: Job) -> list[Comparison]:
    found = like_for_like(runs, a, b, job, "j_per_sample")
    if found:
        winner, loser, f, low, high = _oriented(found.ratio, found.low, found.high, b, a)
        return [Comparison("fewer joules", winner, loser, f, found.basis,
                           f"J/example, geometric mean over {count(found.count, 'configuration')} both measured "
                           f"({found.configs})", low=low, high=high, grades=((a, found.grade_a), (b, found.grade_b)),
                           noise=found.noise)]
    fa, fb = answers[a], answers[b]
    quotes = [q for q in findings.filter(
        pl.col("metric").is_in(["j_per_iteration", "j_per_sample"]) & pl.col("subject_device").is_in([a, b])
        & pl.col("baseline_device").is_in([a, b]))["quote"].drop_nulls().to_list()]
    quote = quotes[0] if quotes else ""
    for pick in (lambda x: x.j_per_sample if x.j_per_sample.basis != ESTIMATE else None,
                 lambda x: x.j_per_iteration,
                 lambda x: x.j_per_sample):
        ga, gb = pick(fa), pick(fb)
        if ga is None or gb is None or not ga.known or not gb.known:
            continue
        assert ga.value is not None and gb.value is not None
        r = ga.value / gb.value
        w, lo = (gb, ga) if r >= 1 else (ga, gb)
        per = "per example" if ga.what == "Energy per example" else "per iteration"
        basis = " and ".join(sorted({ga.basis, gb.basis}))
        boundary = w.boundary if w.boundary == lo.boundary else f"{w.boundary} vs {lo.boundary}"
        detail = f"{sig(w.value)} vs {sig(lo.value)} J {per}, {boundary}; {w.setting} vs {lo.setting}"
        return [_figure_ratio("fewer joules", ga, gb, a, b, basis, detail, quote)]
    return []


def leader_of(devices: list[str], comparisons: dict[tuple[str, str], list[Comparison]]) -> str | None:
    wins = dict.fromkeys(devices, 0)
    seen = False
    for found in comparisons.values():
        if found:
            seen = True
            if found[0].within_noise is not True:  # a difference within the noise is no win
                wins[found[0].winner] += 1
    if not seen:
        return None
    return max(devices, key=lambda d: wins[d])
