"""Trust grades: how far a run's figures, and a configuration's aggregate, can settle a decision.

Every run gets a grade A-D with its reasons, and so does every aggregate of a configuration's
repeats. Each check gives a reason and the best grade it allows (its cap); the grade is the
lowest cap. The checks, thresholds and why are explained in docs/trust-grades.md; the numbers
live here, once, and the runner (CLI summary), the store (at ingest, for every path: local
runs, imports, reference data) and the explorer all use this module.

Per run: outcome, origin, boundary, window (against the sensor's update period and the
minimum window), steady state, counter-vs-trace agreement, throttling, validity flags.
Per aggregate: the runs' grades, the number of repeats, and their spread (CoV).

A reason is stored as text: ``[C] window: 0.38 s is 3.8 updates of a sensor that updates
every 0.1 s (at least 20 for B, 50 and 10 s for A)``; the letter is the cap that check allows,
``[A]`` when it limits nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from energy.figures import DISAGREEMENT_LIMIT_PCT, MIN_SENSOR_PERIODS
from energy.stats import Aggregate
from energy.steady import drift_pct

GRADES = ("A", "B", "C", "D")
GRADE_MEANINGS = {
    "A": "decision grade: long enough for the sensor, steady, cross-checked, repeated with a small spread",
    "B": "good: fine for differences above about 10 %; one check short of decision grade",
    "C": "indicative: a rough figure; differences under about 25 % are not settled by it",
    "D": "unreliable: do not decide on it (too short for the sensor, not steady, estimated or failed)",
}

# --- thresholds (docs/trust-grades.md says why) -------------------------------------------------
DECISION_WINDOW_S = 10.0  # the minimum window for A (and the runner's default minimum window)
WINDOW_UPDATES_A = 50  # sensor updates in the window for A: edge error under ~1 %
WINDOW_UPDATES_B = 20  # for B: edge error under ~2.5 %
WINDOW_UPDATES_C = MIN_SENSOR_PERIODS  # under 3 updates the edges are the measurement: D
THROUGHPUT_WINDOW_C_S = 1.0  # a throughput window under 1 s: C (launch jitter, clock ramps)
DRIFT_OK_PCT = 5.0  # power rising by at most 5 % between the window's halves: steady
DRIFT_D_PCT = 20.0  # rising by more than 20 %: a transient, D
DISAGREE_D_PCT = 20.0  # counter vs trace beyond 20 %: D (over 5 %: C)
ENERGY_COV_PCT = (2.0, 5.0, 10.0)  # J/sample spread over repeats: A, B, C limits (beyond: D)
THROUGHPUT_COV_PCT = (10.0, 20.0)  # throughput spread over repeats: A, B limits (beyond: C)
REPEATS_A = 3
HW_THROTTLE = ("hw_slowdown", "hw_thermal", "sw_thermal", "hw_power_brake")
JOULEBENCH_FORMAT = "joulebench-result"
# a run whose energy the tool that wrote it partly modelled rather than measured (CodeCarbon's CPU power from TDP,
# RAM power from its size): graded C and shown as partly estimated on every page
FLAG_PARTLY_ESTIMATED = "energy_partly_estimated"
PARTLY_ESTIMATED = "partly estimated"

_REASON = re.compile(r"^\[([ABCD])\] ([a-z ]+): (.*)$", re.DOTALL)


@dataclass(frozen=True)
class Reason:
    check: str  # outcome, origin, boundary, window, steady state, agreement, throttling, flags, runs, repeats, spread
    cap: str  # the best grade this check allows ("A": it limits nothing)
    text: str

    def __str__(self) -> str:
        return f"[{self.cap}] {self.check}: {self.text}"

    @classmethod
    def parse(cls, stored: str) -> Reason:
        """A stored reason back into its parts (text that does not parse is kept as an A note)."""
        m = _REASON.match(stored)
        return cls(m.group(2), m.group(1), m.group(3)) if m else cls("note", "A", stored)


@dataclass(frozen=True)
class Grade:
    grade: str
    reasons: tuple[Reason, ...] = ()

    @property
    def texts(self) -> list[str]:
        """The reasons as stored (every check, the limiting ones first)."""
        return [str(r) for r in sorted(self.reasons, key=lambda r: -GRADES.index(r.cap))]

    @property
    def limiting(self) -> list[Reason]:
        """The checks that set the grade (empty for A)."""
        return [r for r in self.reasons if r.cap == self.grade and self.grade != "A"]


def _worst(reasons: Iterable[Reason]) -> str:
    return max((r.cap for r in reasons), key=GRADES.index, default="A")


def _grade(reasons: list[Reason]) -> Grade:
    return Grade(_worst(reasons), tuple(reasons))


def lowest(grades: Iterable[str]) -> str:
    return max(grades, key=GRADES.index, default="D")


# --- one run ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RunFacts:
    """What the grade of one run looks at (a stored row or a result-file run, flattened)."""

    status: str = "ok"
    mode: str | None = None
    origin_kind: str | None = None  # local | upload | reference
    origin_format: str | None = None
    origin_tool: str | None = None
    duration_s: float | None = None
    energy_j: float | None = None
    energy_boundary: str | None = None
    energy_method: str | None = None
    sample_period_s: float | None = None
    sensor_update_period_s: float | None = None
    energy_disagreement_pct: float | None = None
    throttle_reasons: str | None = None
    gpu_clock_avg_mhz: float | None = None
    warmup_steady: bool | None = None
    flags: tuple[str, ...] = ()
    trace_t_s: Sequence[float] = field(default_factory=tuple)  # the boundary's power trace, if any
    trace_power_w: Sequence[float] = field(default_factory=tuple)
    step_times_ms: Sequence[float] = field(default_factory=tuple)
    requests_completed: float | None = None  # a serving point's requests in its window, and those that failed
    requests_failed: float | None = None
    # or, instead of the series, their drifts already computed (energy.steady.drift_pct: the store
    # computes them in the database for traces of millions of samples)
    power_drift_pct: float | None = None
    step_time_drift_pct: float | None = None

    @classmethod
    def from_fields(cls, row: Mapping[str, Any], **extra: Any) -> RunFacts:
        """From a mapping holding (some of) the field names; unknown keys are ignored."""
        names = cls.__dataclass_fields__
        values = {k: row[k] for k in names if k in row and row[k] is not None}
        values.update({k: v for k, v in extra.items() if v is not None})
        if "flags" in values:
            values["flags"] = tuple(values["flags"])
        return cls(**values)

    @classmethod
    def from_result_run(cls, run: Mapping[str, Any], *, origin_kind: str, origin_format: str = JOULEBENCH_FORMAT,
                        origin_tool: str | None = "joulebench") -> RunFacts:
        """From a result-file run (config, metrics, flags, power traces, step times)."""
        prov = run.get("provenance") or {}
        trace = next((t for t in run.get("power_traces", []) if t.get("boundary")), None)
        return cls.from_fields(
            {"status": run["status"], **run.get("config", {}), **run.get("metrics", {}), "flags": run.get("flags", ())},
            origin_kind=prov.get("source_kind") or origin_kind, origin_format=prov.get("format") or origin_format,
            origin_tool=prov.get("tool") or origin_tool,
            trace_t_s=trace["t_s"] if trace else None, trace_power_w=trace["power_w"] if trace else None,
            step_times_ms=run.get("step_times_ms") or None)


# The rules of one run are polars expressions over a frame of facts (FACT_SCHEMA: one row per run), so one
# definition grades a single run (`grade_run`: the CLI summary, the New run page) and 100,000 runs at once
# in the store (`grade_frame`, db.grading), without a Python function per row. Numbers in reason texts are
# written as Python's format() writes them (".3g", "+.2g"); the caller supplies the writer
# (`NumberText`): `python_numbers` here, DuckDB's format() (the same output) in the store.

FACT_SCHEMA: dict[str, pl.DataType] = {
    "status": pl.String(), "mode": pl.String(), "origin_kind": pl.String(), "origin_format": pl.String(),
    "origin_tool": pl.String(), "duration_s": pl.Float64(), "energy_j": pl.Float64(),
    "energy_boundary": pl.String(), "energy_method": pl.String(), "sample_period_s": pl.Float64(),
    "sensor_update_period_s": pl.Float64(), "energy_disagreement_pct": pl.Float64(),
    "throttle_reasons": pl.String(), "gpu_clock_avg_mhz": pl.Float64(), "warmup_steady": pl.Boolean(),
    "flags": pl.List(pl.String()), "power_drift_pct": pl.Float64(), "step_time_drift_pct": pl.Float64(),
    "requests_completed": pl.Float64(), "requests_failed": pl.Float64()}

# {column written: (number column, format spec)}, and who writes them: Python's format() or an equal one
NumberText = Callable[[pl.DataFrame, Mapping[str, tuple[str, str]]], pl.DataFrame]


def python_numbers(frame: pl.DataFrame, specs: Mapping[str, tuple[str, str]]) -> pl.DataFrame:
    """The numbers written with Python's format(), a value at a time (for a few runs: `grade_run`)."""
    return frame.with_columns(
        pl.Series(out, [None if v is None else format(v, spec) for v in frame[col].to_list()], pl.String())
        for out, (col, spec) in specs.items())


_CAP_INDEX = {g: i for i, g in enumerate(GRADES)}


def _text(*parts: str | pl.Expr) -> pl.Expr:
    return pl.concat_str([pl.lit(p) if isinstance(p, str) else p for p in parts])


def _case(*cases: tuple[pl.Expr, str, pl.Expr | str], otherwise: tuple[str, pl.Expr | str] | None = None) -> pl.Expr:
    """The first case whose condition holds, as a (cap, text) struct; null when none does and no otherwise."""
    def reason(cap: str, text: pl.Expr | str) -> pl.Expr:
        return pl.struct(cap=pl.lit(cap), text=text if isinstance(text, pl.Expr) else pl.lit(text))

    chain: Any = pl
    for condition, cap, text in cases:
        chain = chain.when(condition).then(reason(cap, text))
    return chain.otherwise(reason(*otherwise) if otherwise else pl.lit(None))


def _or_else(column: str, default: str) -> pl.Expr:
    """Python's `value or default` for text: null and '' read as the default."""
    c = pl.col(column)
    return pl.when(c.is_null() | (c == "")).then(pl.lit(default)).otherwise(c)


def _truthy(column: str) -> pl.Expr:
    c = pl.col(column)
    return c.is_not_null() & (c != 0)


_has_energy = pl.col("energy_j").is_not_null()
_estimated = (pl.col("energy_boundary") == "estimated").fill_null(False) | (
    pl.col("energy_method") == "estimated").fill_null(False)
_clock_events = pl.col("throttle_reasons").fill_null("").str.split(",").list.eval(
    pl.element().filter(pl.element() != ""))
_hardware = _clock_events.list.eval(pl.element().filter(pl.element().is_in(HW_THROTTLE)))

# numbers computed before the texts are written (stage 1): the window's sensor period and updates, the drift
# that judges the steady state and what it was of
_NUMBERS = {
    "_period": pl.when(_truthy("sensor_update_period_s")).then(pl.col("sensor_update_period_s"))
                 .otherwise(pl.col("sample_period_s")),
    "_drift": pl.coalesce("power_drift_pct", "step_time_drift_pct"),
    "_drift_of": pl.when(pl.col("power_drift_pct").is_not_null()).then(pl.lit("power"))
                   .when(pl.col("step_time_drift_pct").is_not_null()).then(pl.lit("step time")),
}
_WRITTEN = {"_d_text": ("duration_s", ".3g"), "_updates_text": ("_updates", ".3g"),
            "_period_text": ("_period", ".3g"), "_drift_text": ("_drift", "+.2g"),
            "_pct_text": ("energy_disagreement_pct", ".2g")}


def _origin() -> pl.Expr:
    kind, fmt, tool = pl.col("origin_kind"), pl.col("origin_format"), pl.col("origin_tool")
    return _case(
        ((kind == "local").fill_null(False), "A", "measured here by the JouleBench runner"),
        ((kind == "reference").fill_null(False), "C", "transcribed from a published table: one figure, without "
                                                      "its window, sensor or spread"),
        ((fmt == JOULEBENCH_FORMAT).fill_null(False) & (tool.is_null() | (tool == "joulebench").fill_null(False)),
         "A", "a JouleBench result file measured elsewhere: graded on the window, sensor and checks it records"),
        otherwise=("B", _text("imported from ", _or_else("origin_format", "another tool's file"),
                              ": how it warmed up, sampled and cut its window is not all known")))


def _outcome() -> pl.Expr:
    return _case((pl.col("status") != "ok", "D", _text(
        "the run ended ", pl.col("status"), ": it has no figures to trust (the outcome itself is recorded)")))


def _boundary() -> pl.Expr:
    b = pl.col("energy_boundary")
    return _case(
        (~_has_energy, "A", "no energy figure: the grade covers throughput and latency only"),
        (_estimated, "D", "energy estimated from utilisation x TDP, or a reading scaled by an assumed "
                             "factor (a PUE): not a measurement"),
        (pl.col("flags").list.contains(FLAG_PARTLY_ESTIMATED).fill_null(False), "C",
         _text("partly estimated: the tool that wrote it modelled part of the energy at the ",
               _or_else("energy_boundary", "unstated boundary"), " (CPU or RAM power from TDP or memory size, "
               "not a sensor): differences under about 25 % are not settled by it")),
        (b.is_in(["wall", "system"]).fill_null(False), "A",
         _text("measured at the ", b, " (the whole host): compare it only with other figures taken there")),
        otherwise=("A", _text("measured at ", _or_else("energy_boundary", "an unstated boundary"), " (",
                              _or_else("energy_method", "method not stated"), ")")))


def _window() -> pl.Expr:
    d, period, updates = pl.col("duration_s"), pl.col("_period"), pl.col("_updates")
    ds = pl.col("_d_text")
    which = pl.when(_truthy("sensor_update_period_s")).then(pl.lit("updates every")).otherwise(
        pl.lit("was sampled every"))
    base = _text(ds, " s is ", pl.col("_updates_text"), " updates of a sensor that ", which, " ",
                 pl.col("_period_text"), " s")
    throughput_window = ~_has_energy | _estimated
    no_period = period.is_null() | (period == 0)
    return _case(
        (d.is_null(), "C", "window length not recorded"),
        (throughput_window & (d >= DECISION_WINDOW_S), "A", _text(ds, " s")),
        (throughput_window & (d >= THROUGHPUT_WINDOW_C_S), "B",
         _text(ds, f" s, under the {DECISION_WINDOW_S:g} s minimum")),
        (throughput_window, "C", _text(ds, f" s: throughput over under {THROUGHPUT_WINDOW_C_S:g} s moves with "
                                           "launch jitter and clock ramps")),
        (no_period & (d >= DECISION_WINDOW_S), "B", _text(ds, " s, but the sensor's update period is not recorded")),
        (no_period, "C", _text(ds, f" s, under the {DECISION_WINDOW_S:g} s minimum, sensor update period not "
                                   "recorded")),
        (updates < WINDOW_UPDATES_C, "D", _text(base, ": the window's edges are the measurement")),
        (updates < WINDOW_UPDATES_B, "C", _text(base, f" (at least {WINDOW_UPDATES_B} for B)")),
        ((updates < WINDOW_UPDATES_A) | (d < DECISION_WINDOW_S), "B",
         _text(base, f" (at least {WINDOW_UPDATES_A} and {DECISION_WINDOW_S:g} s for A)")),
        otherwise=("A", base))


def _steady() -> pl.Expr:
    warm = pl.col("warmup_steady")
    warmup = _case((warm.fill_null(False), "A", "warmup ended when power and step time were steady"),
                   ((~warm).fill_null(False), "B", "warmup hit its time cap before power and step time were steady"))
    # a workload's window that begins before power has risen reads low: rising halves count; a fall is the
    # workload's own (throughput, power cap) and shows in the spread. An idle baseline must be flat either
    # way; step times fall as a workload warms up.
    drift, what = pl.col("_drift"), pl.col("_drift_of")
    idle = (pl.col("mode") == "idle").fill_null(False)
    change = pl.when(idle).then(drift.abs()).when(what == "step time").then(-drift).otherwise(drift)
    change = pl.max_horizontal(change, pl.lit(0.0))
    cap = pl.when(change <= DRIFT_OK_PCT).then(pl.lit("A")).when(change <= DRIFT_D_PCT).then(pl.lit("C")).otherwise(
        pl.lit("D"))
    verdict = pl.when(cap == "A").then(pl.lit("steady")).when(idle).then(pl.lit("still settling")).otherwise(
        pl.lit("still warming up"))
    trend = pl.when(drift.is_not_null()).then(pl.struct(cap=cap, text=_text(
        what, " ", verdict, " in the window (second half ", pl.col("_drift_text"), " % against the first)")))
    texts = pl.concat_str(warmup.struct.field("text"), trend.struct.field("text"), separator="; ", ignore_nulls=True)
    worst = pl.max_horizontal(_cap_index(warmup.struct.field("cap")), _cap_index(trend.struct.field("cap")))
    return pl.when(worst.is_null()).then(pl.struct(
        cap=pl.lit("B"), text=pl.lit("not recorded, and no power trace or step times to judge it"))).otherwise(
        pl.struct(cap=_cap_letter(worst), text=texts))


def _cap_index(cap: pl.Expr) -> pl.Expr:
    return cap.replace_strict(_CAP_INDEX, default=None, return_dtype=pl.Int8)


def _cap_letter(index: pl.Expr) -> pl.Expr:
    return index.replace_strict(dict(enumerate(GRADES)), default=None, return_dtype=pl.String)


def _agreement() -> pl.Expr:
    pct = pl.col("energy_disagreement_pct")
    text = _text("energy counter and power trace differ by ", pl.col("_pct_text"), " %")
    return _case(
        (~_has_energy | _estimated, "A", pl.lit(None, pl.String)),  # no such check: dropped below
        (pct.is_null(), "A", "one energy source only: not cross-checked"),
        (pct <= DISAGREEMENT_LIMIT_PCT, "A", text),
        (pct <= DISAGREE_D_PCT, "C", _text(text, f" (over {DISAGREEMENT_LIMIT_PCT:g} %)")),
        otherwise=("D", _text(text, f" (over {DISAGREE_D_PCT:g} %): the window is too short or not steady for this "
                                    "sensor")))


def _throttling() -> pl.Expr:
    return _case(
        (_hardware.list.len() > 0, "B", _text("clocks slowed by ", _hardware.list.join(", "),
                                              ": the figures reflect this machine's cooling or power delivery")),
        (_clock_events.list.contains("sw_power_cap"), "A",
         "held at its power limit (sw_power_cap): the figures are those of this limit"),
        (_clock_events.list.len() > 0, "A", _text("clock events: ", _clock_events.list.join(", "))),
        (pl.col("gpu_clock_avg_mhz").is_not_null(), "A", "none reported in the window"))


REQUESTS_C = 30  # a serving point's percentiles over fewer requests than this: C (under REQUESTS_D: D)
REQUESTS_D = 10
FAILED_D_PCT = 10.0  # more than this share of a point's requests failed: D (any failed: C)


def _requests() -> pl.Expr:
    """A serving point is graded on how many requests its figures rest on, and how many failed."""
    done, failed = pl.col("requests_completed"), pl.col("requests_failed").fill_null(0.0)
    share = failed / (done.fill_null(0.0) + failed) * 100.0
    counted = _text(done.cast(pl.Int64).cast(pl.String), " requests completed")
    lost = _text(failed.cast(pl.Int64).cast(pl.String), " of ",
                 (done.fill_null(0.0) + failed).cast(pl.Int64).cast(pl.String), " requests failed")
    return _case(
        ((failed > 0) & (share > FAILED_D_PCT), "D", _text(lost, ": the figures are of the requests the server "
                                                                 "answered, not of the load it was offered")),
        (done.is_not_null() & (done < REQUESTS_D), "D", _text(counted, ": percentiles and rates of so few "
                                                                       "requests are noise")),
        (failed > 0, "C", _text(lost, ": the figures leave the failed ones out")),
        (done.is_not_null() & (done < REQUESTS_C), "C", _text(counted, f": under {REQUESTS_C}, a p90 rests on "
                                                                       "the slowest few")),
        (done.is_not_null(), "A", _text(counted, ", none failed")))


FLAG_INCONSISTENT = "inconsistent: "  # ingest.plausibility: a stated figure its own counts contradict
FLAG_IMPLAUSIBLE = "implausible: "  # ingest.plausibility: a figure beyond what one system can give


def _plausibility() -> pl.Expr:
    """A figure that ingest.plausibility flagged (its file's other numbers contradict it, or no system gives it): D,
    with the flags' own texts (which name both numbers) as the reason."""
    found = pl.col("flags").list.eval(pl.element().filter(
        pl.element().str.starts_with(FLAG_INCONSISTENT) | pl.element().str.starts_with(FLAG_IMPLAUSIBLE)))
    return _case(((found.list.len() > 0).fill_null(False), "D", found.list.join("; ")))


def _flag(flag: str, cap: str, text: str) -> pl.Expr:
    return _case((pl.col("flags").list.contains(flag).fill_null(False), cap, text))


FLAG_CLIENT_BOUND = "client_bound"  # runner.serve_bench.lag: the serving client fell behind its schedule


def _client() -> pl.Expr:
    """A serving point whose client fell behind its schedule (send lag p99 past 5 % of TTFT p50 or 10 ms): C, its
    latencies include the client's own delay and the load sent was not the one asked (the figures are in the notes)."""
    return _flag(FLAG_CLIENT_BOUND, "C", "the client fell behind its schedule (send lag p99 past 5 % of TTFT p50 or "
                                         "10 ms; the figures are in the notes): the latencies include the client's "
                                         "own delay and the load sent was not the one asked")


# every check of a run, in the order its reasons are listed: (name, the (cap, text) it gives, or null)
RUN_CHECKS: tuple[tuple[str, Callable[[], pl.Expr]], ...] = (
    ("origin", _origin), ("outcome", _outcome), ("boundary", _boundary), ("window", _window),
    ("steady state", _steady), ("agreement", _agreement), ("throttling", _throttling), ("requests", _requests),
    ("plausibility", _plausibility),
    ("flags", lambda: _flag("net_energy_nonpositive", "C", "net energy came out at or below zero: the idle "
                                                          "baseline does not fit this run")),
    ("flags", lambda: _flag("power_setting_not_applied", "A", "the requested power setting was not applied: the "
                                                             "figures are for the setting in effect")),
    ("client", _client),
    ("flags", lambda: _flag("usage_disagrees_with_stream", "D", "the server's token counts disagreed with its "
                                                               "stream and were not believed: the figures use the "
                                                               "client's count")),
    ("flags", lambda: _flag("prompt_tokens_differ_from_server", "C", "the server counted the prompts more than 5 % "
                                                                    "apart from the client's tokenizer: the prompt "
                                                                    "length is uncertain")))
_ONLY_WHEN_OK = {"boundary", "window", "steady state", "agreement", "throttling", "requests", "flags", "client"}


def grade_frame(facts: pl.DataFrame, numbers: NumberText = python_numbers) -> pl.DataFrame:
    """Grade every run of `facts` (FACT_SCHEMA columns; missing ones read as not recorded) at once: the
    frame with `trust_grade` and `trust_reasons` (stored texts, the limiting ones first) added, and each
    check's `_cap_<i>` and `_text_<i>` (RUN_CHECKS order). NaN reads as not recorded."""
    missing = [pl.lit(None, dtype).alias(c) for c, dtype in FACT_SCHEMA.items() if c not in facts.columns]
    frame = facts.with_columns(missing).with_columns(
        [pl.col(c).cast(dtype) for c, dtype in FACT_SCHEMA.items()]).with_columns(
        *[pl.col(c).fill_nan(None) for c, dtype in FACT_SCHEMA.items() if dtype == pl.Float64()],
        pl.col("status").fill_null("ok")).with_columns(**_NUMBERS)
    frame = frame.with_columns(_updates=pl.col("duration_s") / pl.col("_period"))
    frame = numbers(frame, _WRITTEN)
    ok = pl.col("status") == "ok"
    checks = []
    for name, rule in RUN_CHECKS:
        reason = rule()
        checks.append((name, pl.when(ok).then(reason) if name in _ONLY_WHEN_OK else reason))
    return _graded(frame, checks)


def _facts_row(f: RunFacts) -> dict[str, Any]:
    """The frame row of one run: its drifts computed from its series when it has them."""
    power = f.power_drift_pct
    if len(f.trace_t_s) >= 4:
        power = drift_pct(f.trace_t_s, f.trace_power_w)
    step = f.step_time_drift_pct
    if len(f.step_times_ms) >= 4:
        ms = np.asarray(f.step_times_ms, dtype=float)
        step = drift_pct(np.concatenate(([0.0], np.cumsum(ms[:-1]) / 1000.0)), ms)  # at each step's start
    row = {c: getattr(f, c) for c in FACT_SCHEMA if hasattr(f, c)}
    return {**row, "flags": list(f.flags), "power_drift_pct": power, "step_time_drift_pct": step}


def grade_run(f: RunFacts) -> Grade:
    """The grade of one run, with a reason per check."""
    return _one(grade_frame(pl.DataFrame([_facts_row(f)], schema=FACT_SCHEMA)), RUN_CHECKS)


# --- the aggregate of a configuration's repeats -------------------------------------------------

# The aggregate's rules, like the run's, are polars expressions over a frame (AGGREGATE_SCHEMA: one row per
# configuration), for one configuration (`grade_aggregate`) or all of them at once (db.grading).
AGGREGATE_SCHEMA: dict[str, pl.DataType] = {
    "run_count": pl.Int64(), "ok_run_count": pl.Int64(), "failed_kinds": pl.List(pl.String()),
    **{f"graded_{g}": pl.Int64() for g in GRADES},
    "energy_n": pl.Int64(), "energy_cov_pct": pl.Float64(), "energy_label": pl.String(),
    "throughput_n": pl.Int64(), "throughput_cov_pct": pl.Float64()}
_AGGREGATE_WRITTEN = {"_energy_cov_text": ("energy_cov_pct", ".2g"),
                      "_throughput_cov_text": ("throughput_cov_pct", ".2g")}


def _spread(cov: pl.Expr, written: str, what: pl.Expr | str, limits: tuple[float, ...]) -> pl.Expr:
    cases = [(cov <= limit, cap, _text(what, " varies by ", pl.col(written), " % (CoV) between repeats",
                                       "" if cap == "A" else f"; {limits[0]:g} % or less for A"))
             for cap, limit in zip(GRADES, limits, strict=False)]
    worst = GRADES[len(limits)]
    return _case((cov.is_null(), "A", pl.lit(None, pl.String)), *cases,
                 otherwise=(worst, _text(what, " varies by ", pl.col(written), " % (CoV) between repeats; "
                                         f"{limits[0]:g} % or less for A")))


def grade_aggregate_frame(facts: pl.DataFrame, numbers: NumberText = python_numbers) -> pl.DataFrame:
    """Grade every configuration of `facts` (AGGREGATE_SCHEMA) at once: `trust_grade`, `trust_reasons`
    (stored texts, the limiting ones first) and each check's `_cap_<i>`, `_text_<i>` added."""
    frame = numbers(facts.with_columns(pl.col(c).cast(t) for c, t in AGGREGATE_SCHEMA.items()), _AGGREGATE_WRITTEN)
    ok, total = pl.col("ok_run_count"), pl.col("run_count")
    failed, kinds = total - ok, pl.col("failed_kinds").list.join(", ")
    graded = [pl.col(f"graded_{g}") for g in GRADES]
    worst = pl.coalesce([pl.when(n > 0).then(pl.lit(g)) for g, n in reversed(list(zip(GRADES, graded)))]
                        + [pl.lit("D")])
    counts = pl.concat_list([pl.when(n > 0).then(pl.format("{} " + g, n)) for g, n in zip(GRADES, graded)]
                            ).list.drop_nulls().list.join(", ")
    n = pl.coalesce(pl.max_horizontal("energy_n", "throughput_n"), ok)
    none_ok = ok == 0
    checks = [
        ("runs", _case((none_ok, "D", pl.format("no run finished ({} ended {}): no figures", failed, kinds)))),
        ("runs", pl.struct(cap=worst, text=_text("the runs are graded ", counts))),
        ("runs", _case((failed > 0, "B", pl.format("{} of {} runs ended {}", failed, total, kinds)))),
        ("repeats", _case((n < 2, "B", "one run: its spread and interval are unknown"),
                          (n < REPEATS_A, "B", pl.format(f"{{}} runs: the 95 % interval is wide; {REPEATS_A} or more "
                                                         "for A", n)),
                          otherwise=("A", pl.format("{} repeats", n)))),
        ("spread", _spread(pl.col("energy_cov_pct"), "_energy_cov_text", pl.col("energy_label"), ENERGY_COV_PCT)),
        ("spread", _spread(pl.col("throughput_cov_pct"), "_throughput_cov_text", "throughput", THROUGHPUT_COV_PCT)),
    ]
    return _graded(frame, [(name, r if i == 0 else pl.when(~none_ok).then(r)) for i, (name, r) in enumerate(checks)])


AGGREGATE_CHECKS = (("runs", None), ("runs", None), ("runs", None), ("repeats", None), ("spread", None),
                    ("spread", None))


def _graded(frame: pl.DataFrame, checks: Sequence[tuple[str, pl.Expr]]) -> pl.DataFrame:
    """`trust_grade` (the lowest cap), `trust_reasons` (as stored, the limiting ones first) and, per check in
    order, `_cap_<i>` and `_text_<i>` (null where the check does not apply), from (check, (cap, text)) pairs."""
    frame = frame.with_columns(
        *[r.struct.field("cap").alias(f"_cap_{i}") for i, (_, r) in enumerate(checks)],
        *[r.struct.field("text").alias(f"_text_{i}") for i, (_, r) in enumerate(checks)]).with_columns(
        *[pl.when(pl.col(f"_text_{i}").is_not_null()).then(pl.col(f"_cap_{i}")).alias(f"_cap_{i}")
          for i in range(len(checks))])
    frame = frame.with_columns(trust_grade=_cap_letter(pl.max_horizontal(*[_cap_index(pl.col(f"_cap_{i}"))
                                                                            for i in range(len(checks))])))
    # the reasons as a long frame (one row per run and check that applies), ordered worst cap first, then by
    # check, and gathered back into a list per run: a list built from one expression per (check, cap) took
    # polars a second for 100,000 runs, this a fifth of one
    indexed = frame.select(pl.int_range(pl.len(), dtype=pl.UInt32).alias("_row"),
                           *[f"_cap_{i}" for i in range(len(checks))], *[f"_text_{i}" for i in range(len(checks))])
    long = pl.concat([indexed.select("_row", _check=pl.lit(i, pl.Int16), _rank=-_cap_index(pl.col(f"_cap_{i}")),
                                     _reason=pl.format(f"[{{}}] {name}: {{}}", pl.col(f"_cap_{i}"),
                                                       pl.col(f"_text_{i}")))
                      for i, (name, _) in enumerate(checks)]).filter(pl.col("_reason").is_not_null())
    reasons = long.sort("_row", "_rank", "_check").group_by("_row", maintain_order=True).agg(
        trust_reasons=pl.col("_reason"))
    listed = indexed.select("_row").join(reasons, on="_row", how="left", maintain_order="left")["trust_reasons"]
    return frame.with_columns(trust_reasons=pl.when(listed.is_null()).then(pl.lit([], pl.List(pl.String)))
                              .otherwise(listed))


def _one(graded: pl.DataFrame, checks: Sequence[tuple[str, Any]]) -> Grade:
    """The Grade of a frame's single row (grade_run, grade_aggregate)."""
    row = graded.row(0, named=True)
    return Grade(row["trust_grade"], tuple(Reason(name, row[f"_cap_{i}"], row[f"_text_{i}"])
                                           for i, (name, _) in enumerate(checks) if row[f"_text_{i}"] is not None))


def grade_aggregate(run_grades: Sequence[str], statuses: Sequence[str], *, throughput: Aggregate | None,
                    energy: Aggregate | None, energy_label: str = "J/sample") -> Grade:
    """The grade of a configuration's repeats: its runs' grades (the lowest ok run's caps it),
    how many repeats measured it, and their spread. `run_grades` are those of the ok runs."""
    failed = sorted({s for s in statuses if s != "ok"})
    row = {"run_count": len(statuses), "ok_run_count": sum(s == "ok" for s in statuses), "failed_kinds": failed,
           **{f"graded_{g}": list(run_grades).count(g) for g in GRADES},
           "energy_n": energy.n if energy else None, "energy_cov_pct": energy.cov_pct if energy else None,
           "energy_label": energy_label, "throughput_n": throughput.n if throughput else None,
           "throughput_cov_pct": throughput.cov_pct if throughput else None}
    return _one(grade_aggregate_frame(pl.DataFrame([row], schema=AGGREGATE_SCHEMA)), AGGREGATE_CHECKS)
