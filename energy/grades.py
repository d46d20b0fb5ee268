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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

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


def grade_run(f: RunFacts) -> Grade:
    """The grade of one run, with a reason per check."""
    reasons = [_origin(f)]
    if f.status != "ok":
        reasons.append(Reason("outcome", "D", f"the run ended {f.status}: it has no figures to trust "
                                              "(the outcome itself is recorded)"))
        return _grade(reasons)
    reasons += [_boundary(f), _window(f), _steady(f)]
    reasons += [r for r in (_agreement(f), _throttling(f)) if r is not None]
    reasons += _flags(f)
    return _grade(reasons)


def _origin(f: RunFacts) -> Reason:
    if f.origin_kind == "local":
        return Reason("origin", "A", "measured here by the JouleBench runner")
    if f.origin_kind == "reference":
        return Reason("origin", "C", "transcribed from a published table: one figure, without its window, "
                                     "sensor or spread")
    if f.origin_format == JOULEBENCH_FORMAT and (f.origin_tool in (None, "joulebench")):
        return Reason("origin", "A", "a JouleBench result file measured elsewhere: graded on the window, sensor "
                                     "and checks it records")
    what = f.origin_format or "another tool's file"
    return Reason("origin", "B", f"imported from {what}: how it warmed up, sampled and cut its window is not "
                                 "all known")


def _has_energy(f: RunFacts) -> bool:
    return f.energy_j is not None


def _estimated(f: RunFacts) -> bool:
    return f.energy_boundary == "estimated" or f.energy_method == "estimated"


def _boundary(f: RunFacts) -> Reason:
    if not _has_energy(f):
        return Reason("boundary", "A", "no energy figure: the grade covers throughput and latency only")
    if _estimated(f):
        return Reason("boundary", "D", "energy estimated from utilisation x TDP: not a measurement")
    if f.energy_boundary in ("wall", "system"):
        return Reason("boundary", "A", f"measured at the {f.energy_boundary} (the whole host): compare it only "
                                       "with other figures taken there")
    return Reason("boundary", "A", f"measured at {f.energy_boundary or 'an unstated boundary'} "
                                   f"({f.energy_method or 'method not stated'})")


def _window(f: RunFacts) -> Reason:
    d = f.duration_s
    if d is None:
        return Reason("window", "C", "window length not recorded")
    if not _has_energy(f) or _estimated(f):  # a throughput window
        if d >= DECISION_WINDOW_S:
            return Reason("window", "A", f"{d:.3g} s")
        if d >= THROUGHPUT_WINDOW_C_S:
            return Reason("window", "B", f"{d:.3g} s, under the {DECISION_WINDOW_S:g} s minimum")
        return Reason("window", "C", f"{d:.3g} s: throughput over under {THROUGHPUT_WINDOW_C_S:g} s moves with "
                                     "launch jitter and clock ramps")
    period = f.sensor_update_period_s or f.sample_period_s
    if not period:
        if d >= DECISION_WINDOW_S:
            return Reason("window", "B", f"{d:.3g} s, but the sensor's update period is not recorded")
        return Reason("window", "C", f"{d:.3g} s, under the {DECISION_WINDOW_S:g} s minimum, sensor update "
                                     "period not recorded")
    updates = d / period
    which = "updates every" if f.sensor_update_period_s else "was sampled every"
    base = f"{d:.3g} s is {updates:.3g} updates of a sensor that {which} {period:.3g} s"
    if updates < WINDOW_UPDATES_C:
        return Reason("window", "D", f"{base}: the window's edges are the measurement")
    if updates < WINDOW_UPDATES_B:
        return Reason("window", "C", f"{base} (at least {WINDOW_UPDATES_B} for B)")
    if updates < WINDOW_UPDATES_A or d < DECISION_WINDOW_S:
        return Reason("window", "B", f"{base} (at least {WINDOW_UPDATES_A} and {DECISION_WINDOW_S:g} s for A)")
    return Reason("window", "A", base)


def _drift_cap(drift: float) -> str:
    return "A" if drift <= DRIFT_OK_PCT else ("C" if drift <= DRIFT_D_PCT else "D")


def _steady(f: RunFacts) -> Reason:
    parts: list[tuple[str, str]] = []  # (cap, text)
    if f.warmup_steady is True:
        parts.append(("A", "warmup ended when power and step time were steady"))
    elif f.warmup_steady is False:
        parts.append(("B", "warmup hit its time cap before power and step time were steady"))
    what, drift = "power", f.power_drift_pct
    if len(f.trace_t_s) >= 4:
        drift = drift_pct(f.trace_t_s, f.trace_power_w)
    if drift is None:
        what, drift = "step time", f.step_time_drift_pct
        if len(f.step_times_ms) >= 4:
            ms = np.asarray(f.step_times_ms, dtype=float)
            drift = drift_pct(np.concatenate(([0.0], np.cumsum(ms[:-1]) / 1000.0)), ms)  # at each step's start
    if drift is not None:
        # a workload's window that begins before power has risen reads low: rising halves count;
        # a fall is the workload's own (throughput, power cap) and shows in the spread. An idle
        # baseline must be flat either way.
        idle = f.mode == "idle"
        change = abs(drift) if idle else drift
        if what == "step time" and not idle:
            change = -drift  # step times fall as a workload warms up
        cap = _drift_cap(max(change, 0.0))
        verdict = "steady" if cap == "A" else ("still settling" if idle else "still warming up")
        parts.append((cap, f"{what} {verdict} in the window (second half {drift:+.2g} % against the first)"))
    if not parts:
        return Reason("steady state", "B", "not recorded, and no power trace or step times to judge it")
    cap = _worst(Reason("", c, "") for c, _ in parts)
    return Reason("steady state", cap, "; ".join(text for _, text in parts))


def _agreement(f: RunFacts) -> Reason | None:
    if not _has_energy(f) or _estimated(f):
        return None
    pct = f.energy_disagreement_pct
    if pct is None:
        return Reason("agreement", "A", "one energy source only: not cross-checked")
    text = f"energy counter and power trace differ by {pct:.2g} %"
    if pct <= DISAGREEMENT_LIMIT_PCT:
        return Reason("agreement", "A", text)
    if pct <= DISAGREE_D_PCT:
        return Reason("agreement", "C", f"{text} (over {DISAGREEMENT_LIMIT_PCT:g} %)")
    return Reason("agreement", "D", f"{text} (over {DISAGREE_D_PCT:g} %): the window is too short or "
                                    "not steady for this sensor")


def _throttling(f: RunFacts) -> Reason | None:
    reasons = [r for r in (f.throttle_reasons or "").split(",") if r]
    hardware = [r for r in reasons if r in HW_THROTTLE]
    if hardware:
        return Reason("throttling", "B", f"clocks slowed by {', '.join(hardware)}: the figures reflect this "
                                         "machine's cooling or power delivery")
    if "sw_power_cap" in reasons:
        return Reason("throttling", "A", "held at its power limit (sw_power_cap): the figures are those of "
                                         "this limit")
    if reasons:
        return Reason("throttling", "A", f"clock events: {', '.join(reasons)}")
    if f.gpu_clock_avg_mhz is not None:
        return Reason("throttling", "A", "none reported in the window")
    return None


def _flags(f: RunFacts) -> list[Reason]:
    out = []
    if "net_energy_nonpositive" in f.flags:
        out.append(Reason("flags", "C", "net energy came out at or below zero: the idle baseline does not fit "
                                        "this run"))
    if "power_setting_not_applied" in f.flags:
        out.append(Reason("flags", "A", "the requested power setting was not applied: the figures are for the "
                                        "setting in effect"))
    return out


# --- the aggregate of a configuration's repeats -------------------------------------------------

def grade_aggregate(run_grades: Sequence[str], statuses: Sequence[str], *, throughput: Aggregate | None,
                    energy: Aggregate | None, energy_label: str = "J/sample") -> Grade:
    """The grade of a configuration's repeats: its runs' grades (the lowest ok run's caps it),
    how many repeats measured it, and their spread. `run_grades` are those of the ok runs."""
    reasons: list[Reason] = []
    failed = [s for s in statuses if s != "ok"]
    ok = len(statuses) - len(failed)
    if ok == 0:
        kinds = ", ".join(sorted(set(failed)))
        return _grade([Reason("runs", "D", f"no run finished ({len(failed)} ended {kinds}): no figures")])
    worst = lowest(run_grades) if run_grades else "D"
    counts = ", ".join(f"{run_grades.count(g)} {g}" for g in GRADES if g in run_grades)
    reasons.append(Reason("runs", worst, f"the runs are graded {counts}"))
    if failed:
        reasons.append(Reason("runs", "B", f"{len(failed)} of {len(statuses)} runs ended "
                                           f"{', '.join(sorted(set(failed)))}"))
    n = max((a.n for a in (throughput, energy) if a is not None), default=ok)
    if n < 2:
        reasons.append(Reason("repeats", "B", "one run: its spread and interval are unknown"))
    elif n < REPEATS_A:
        reasons.append(Reason("repeats", "B", f"{n} runs: the 95 % interval is wide; {REPEATS_A} or more for A"))
    else:
        reasons.append(Reason("repeats", "A", f"{n} repeats"))
    if energy is not None and energy.cov_pct is not None:
        a, b, c = ENERGY_COV_PCT
        cov = energy.cov_pct
        cap = "A" if cov <= a else "B" if cov <= b else "C" if cov <= c else "D"
        reasons.append(Reason("spread", cap, f"{energy_label} varies by {cov:.2g} % (CoV) between repeats"
                                             + ("" if cap == "A" else f"; {a:g} % or less for A")))
    if throughput is not None and throughput.cov_pct is not None:
        a, b = THROUGHPUT_COV_PCT
        cov = throughput.cov_pct
        cap = "A" if cov <= a else "B" if cov <= b else "C"
        reasons.append(Reason("spread", cap, f"throughput varies by {cov:.2g} % (CoV) between repeats"
                                             + ("" if cap == "A" else f"; {a:g} % or less for A")))
    return _grade(reasons)
