"""Comparisons between two candidates: like for like where both measured the same job (workload, precision,
input and load), each device at its best configuration for the figure (never a mean over configurations),
else by the sources' stated ratios (only between the settings they were stated for), else by the figures the costs
use (estimates), each with its basis, its 95 % interval where both sides have repeats, and the trust
grade of each side."""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from decision.aggregates import worst_grade
from decision.figures import ESTIMATE, STATED, DeviceAnswer, Figure
from decision.scope import Job, job_rows
from decision.text import basis_of, count, precision_name, ratio, setting_text, sig
from energy.stats import ratio_interval
from joulebench.configuration import LIKE_FOR_LIKE, OWN_COLUMNS, POWER_SETTING, SETTINGS_OF_A_DEVICE, label_parts


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
    sides: tuple[tuple[str, str], ...] = ()  # a stated ratio: (device, the setting the source states it at)

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
                              grades=grades, sides=((f["subject_device"], f["subject_desc"] or ""),
                                                    (f["baseline_device"], f["baseline_desc"] or ""))))
    return out


_PL = re.compile(r"\bPL (\d+(?:\.\d+)?) ?W\b")
_MODE = re.compile(r"\bmode (\w+)")


def power_setting_of(text: str) -> str:
    """The power setting a description or a configuration label names: 'PL 170 W', 'mode 6', or 'default'
    (a source's 'default PL 170 W', or nothing named)."""
    if re.search(r"\bdefault\b", text, re.IGNORECASE):
        return "default"
    if m := _PL.search(text):
        return f"PL {float(m.group(1)):g} W"
    if m := _MODE.search(text):
        return f"mode {m.group(1)}"
    return "default"


def stated_between(c: Comparison, settings: dict[str, str]) -> str | None:
    """None when the stated ratio `c` was stated for the settings the figures it would be applied to were
    measured at (`settings`: device -> a configuration label); else why it cannot be used between them."""
    wrong = [(d, power_setting_of(desc), power_setting_of(settings[d])) for d, desc in c.sides if d in settings]
    wrong = [w for w in wrong if w[1] != w[2]]
    if not wrong:
        return None
    return ("the source's stated ratio " + f"{ratio(c.factor)} is for "
            + " vs ".join(f"{d} at {power_setting_of(desc)}" for d, desc in c.sides)
            + ", not for " + " and ".join(f"{d} at {at}" for d, _, at in wrong)
            + ": a ratio is used only between the settings it was stated for")


@dataclass(frozen=True)
class LikeForLike:
    """a/b for one job both measured, each device at its best configuration for the figure (or at the one it
    was measured at): never a mean over configurations. `configs` says which configurations were compared."""

    ratio: float
    count: int  # configurations compared: 1 when both sides are the same configuration, else 2
    basis: str
    configs: str
    low: float | None  # the 95 % interval, where both configurations were measured with repeats
    high: float | None
    grade_a: str | None  # the grade of a's configuration compared
    grade_b: str | None
    noise: str  # how many configurations each device was measured at, when more than one


# The job a configuration measured (both sides must match on every one of these, nulls equal: the work, the load,
# the engine, the GPUs per system and where energy was measured), and the settings a buyer chooses on each device
# (its best is taken; the power limit and mode as one `power_setting`). Both come from joulebench.configuration's
# LIKE_FOR_LIKE view, which names what it leaves out and why: runs that differ in any other field are never pooled,
# and two configurations are never averaged.
_SETTINGS = tuple(f for f in LIKE_FOR_LIKE.fields if f in SETTINGS_OF_A_DEVICE)
JOB_FIELDS = tuple(f for f in LIKE_FOR_LIKE.fields if f not in _SETTINGS)
KNOB_FIELDS = tuple(dict.fromkeys("power_setting" if f in POWER_SETTING else f for f in _SETTINGS))


def knob_label(row: dict) -> str:
    """The settings a configuration was run at, for a sentence: 'batch 8 · PL 100 W · max_num_seqs 2048'."""
    parts = [setting_text(f, row) for f in ("batch_size", "compile") if row.get(f)]
    if row.get("power_setting") and row["power_setting"] != "default":
        parts.append(str(row["power_setting"]))
    if row.get("tag"):
        parts.append(str(row["tag"]))
    return " · ".join(parts) or "the one setting measured"


def _job_label(row: dict) -> str:
    """The job both sides ran, every field of it that is stated: 'llama-8b · FP16 · 1 GPU · rate 2/s · prompt 64
    tokens'."""
    parts = [str(row.get("workload") or "workload not stated")]
    if row.get("precision"):
        parts.append(precision_name(row["precision"]))
    return " · ".join(parts + label_parts(row, _JOB_DESCRIBED))


_JOB_DESCRIBED = tuple(f for f in JOB_FIELDS if f not in OWN_COLUMNS)


def _configurations(runs: pl.DataFrame, device: str, job: Job, column: str) -> pl.DataFrame:
    """The device's configurations for the job that measured `column`: one row each (its job and settings, the
    mean and the values of its repeats, basis, grade). A configuration is its stored key (every setting)."""
    rows = job_rows(runs, device, job).filter((pl.col("status") == "ok") & pl.col(column).is_not_null()
                                              & pl.col(column).is_finite())
    for c in (*JOB_FIELDS, *KNOB_FIELDS, "config_grade", "config_key"):
        if c not in rows.columns:
            rows = rows.with_columns(pl.lit(None, pl.String).alias(c))
    key = pl.coalesce("config_key", "run_id").alias("_key")
    return rows.group_by(key, maintain_order=True).agg(
        *[pl.col(c).first() for c in (*JOB_FIELDS, *KNOB_FIELDS)], pl.col(column).mean().alias("v"),
        pl.col(column).alias("vals"),
        pl.col("source_kind").first().alias("kind"), pl.col("config_grade").first().alias("grade"))


def like_for_like(runs: pl.DataFrame, a: str, b: str, job: Job, column: str, *,
                  higher_is_better: bool = True) -> list[LikeForLike]:
    """a/b for each job both devices measured (the same workload, precision, input and load: JOB_FIELDS), each
    device at its best configuration for `column` within that job (the highest, or lowest when lower is better),
    with the 95 % interval of the ratio where both configurations have repeats. The job with the most
    configurations measured comes first. Empty when no job was measured on both."""
    ca, cb = _configurations(runs, a, job, column), _configurations(runs, b, job, column)
    if ca.is_empty() or cb.is_empty():
        return []
    jobs_a = ca.select(JOB_FIELDS).unique(maintain_order=True)
    shared = jobs_a.join(cb.select(JOB_FIELDS).unique(), on=list(JOB_FIELDS), nulls_equal=True)
    found: list[tuple[int, LikeForLike]] = []
    for shape in shared.iter_rows(named=True):
        def of(frame: pl.DataFrame, shape: dict = shape) -> pl.DataFrame:
            match = pl.all_horizontal([pl.col(f).eq_missing(pl.lit(shape[f], frame.schema[f])) for f in JOB_FIELDS])
            return frame.filter(match).filter(pl.col("v") > 0).sort("v", descending=higher_is_better,
                                                                     maintain_order=True)
        in_a, in_b = of(ca), of(cb)
        if in_a.is_empty() or in_b.is_empty():
            continue
        best_a, best_b = in_a.row(0, named=True), in_b.row(0, named=True)
        r = ratio_interval(best_a["vals"], best_b["vals"])
        low, high = (r.low, r.high) if r is not None and r.low is not None else (None, None)
        same = all(best_a[k] == best_b[k] for k in KNOB_FIELDS)

        def side(device: str, row: dict, n: int) -> str:
            return f"{device} at {knob_label(row)}" + (f" (its best of {count(n, 'configuration')} measured)"
                                                       if n > 1 else "")
        if same and in_a.height == 1 and in_b.height == 1:
            configs = f"{_job_label(best_a)}; both at {knob_label(best_a)}"
        else:
            configs = f"{_job_label(best_a)}; {side(a, best_a, in_a.height)} vs {side(b, best_b, in_b.height)}"
        noise = "" if in_a.height == in_b.height == 1 else (
            "each device at its best configuration for this figure, never a mean over configurations")
        bases = sorted({basis_of(best_a["kind"]), basis_of(best_b["kind"])})
        found.append((in_a.height + in_b.height, LikeForLike(
            best_a["v"] / best_b["v"], 1 if same else 2, " and ".join(bases), configs, low, high,
            worst_grade([best_a["grade"]]), worst_grade([best_b["grade"]]), noise)))
    found.sort(key=lambda x: (-x[0], x[1].configs))  # the same order on every page and command
    return [f for _, f in found]


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
        out = []
        for one in found:
            winner, loser, f, low, high = _oriented(one.ratio, one.low, one.high, a, b)
            out.append(Comparison("faster", winner, loser, f, one.basis, one.configs, low=low, high=high,
                                  grades=((a, one.grade_a), (b, one.grade_b)), noise=one.noise))
        return out
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
    found = like_for_like(runs, a, b, job, "j_per_sample", higher_is_better=False)
    if found:
        out = []
        for one in found:
            winner, loser, f, low, high = _oriented(one.ratio, one.low, one.high, b, a)
            out.append(Comparison("fewer joules", winner, loser, f, one.basis, f"J/example, {one.configs}", low=low,
                                  high=high, grades=((a, one.grade_a), (b, one.grade_b)), noise=one.noise))
        return out
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
