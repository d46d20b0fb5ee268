"""The timed loop: a warmup until steady, then a measured window with the device synchronised at
both edges.

Warmup (`WindowPlan.warmup_steps` None): a few steps (compilation, first allocations), then
steps in chunks of a quarter span with the device synchronised after each, until the rolling
means of the step time and of the sensor's power over the last three spans agree within the
tolerance (`energy.steady.is_steady`), or the time cap is reached (then the run is flagged
`warmup_not_steady`). A fixed number of warmup steps (`--warmup N`) skips this.
On a sensor, the window then starts after a random extra time in [0, one sensor update
period), so repeats sample the sensor at different phases and its edge errors average out.

Window: `steps` steps, or `duration_s` seconds, or (neither given) until `min_window_s` has
passed; a window shorter than `min_window_s` is flagged `window_under_minimum`.

Per-step times come from CUDA events on a GPU (no synchronisation between steps, so timing
does not slow the loop) and from the clock on a CPU. The window's wall time, which throughput
uses, is the clock between the two synchronisations. Time comes from a `runner.clock.Clock`,
so a simulated sensor on a `ManualClock` replays minutes of measurement in a test.
"""

from __future__ import annotations

import contextlib
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from energy import EnergyReading
from energy.steady import is_steady
from joulebench import defaults
from runner.clock import REAL_CLOCK, Clock
from runner.devices import synchronize
from runner.power import PowerMeter

FLAG_UNDER_MINIMUM = "window_under_minimum"
FLAG_NOT_STEADY = "warmup_not_steady"


class StepClock:
    """Marks step boundaries; `step_times_ms()` is read after the final synchronisation."""

    def __init__(self, device: torch.device, clock: Clock = REAL_CLOCK) -> None:
        self.cuda = device.type == "cuda"
        self.clock = clock
        self._marks: list = []
        self._mark = self._cuda_mark if self.cuda else self._cpu_mark

    def _cpu_mark(self) -> None:
        self._marks.append(self.clock.now())

    def _cuda_mark(self) -> None:
        event = torch.cuda.Event(enable_timing=True)
        event.record()
        self._marks.append(event)

    def mark(self) -> None:
        self._mark()

    def step_times_ms(self) -> list[float]:
        m = self._marks
        if self.cuda:
            return [float(a.elapsed_time(b)) for a, b in zip(m, m[1:])]
        return [(b - a) * 1000.0 for a, b in zip(m, m[1:])]


@dataclass(frozen=True)
class WindowPlan:
    """How long to warm up and to measure. Exactly one of: `steps`, `duration_s`, or neither
    (then the window lasts `min_window_s`)."""

    steps: int | None = None
    duration_s: float | None = None
    min_window_s: float = 0.0  # 0: no minimum (and nothing flagged)
    warmup_steps: int | None = defaults.WARMUP_STEPS  # None: until power and step time are steady
    warmup_min_steps: int = defaults.WARMUP_MIN_STEPS
    warmup_span_s: float = defaults.WARMUP_SPAN_S
    warmup_tolerance_pct: float = defaults.WARMUP_TOLERANCE_PCT
    warmup_max_s: float = defaults.WARMUP_MAX_S
    random_offset: bool = False  # start the window at a random offset within one sensor update period

    def __post_init__(self) -> None:
        if self.steps is not None and self.duration_s is not None:
            raise ValueError("give at most one of steps and duration_s")
        if self.steps is None and self.duration_s is None and not self.min_window_s > 0:
            raise ValueError("without steps or duration_s the window needs a positive min_window_s")


@dataclass
class Warmup:
    steps: int = 0
    duration_s: float = 0.0
    steady: bool | None = None  # None: a fixed number of steps, steadiness not judged
    start_offset_s: float | None = None


@dataclass
class Window:
    """One measured window."""

    steps: int
    duration_s: float
    step_times_ms: list[float]
    energy: EnergyReading = field(default_factory=EnergyReading)
    warmup: Warmup = field(default_factory=Warmup)
    flags: list[str] = field(default_factory=list)


def _power_watch(meter: PowerMeter) -> contextlib.AbstractContextManager[Any]:
    watch = getattr(meter, "watch", None)
    return watch() if watch is not None else contextlib.nullcontext(None)


def warm_up(step: Callable[[], object], sync: Callable[[], None], plan: WindowPlan, meter: PowerMeter,
            clock: Clock, rng: random.Random) -> Warmup:
    """Run the warmup the plan asks for, then the random start offset; the device is synchronised."""
    t0 = clock.now()
    out = Warmup()
    if plan.warmup_steps is not None:
        for _ in range(plan.warmup_steps):
            step()
        out.steps = plan.warmup_steps
    else:
        for _ in range(plan.warmup_min_steps):
            step()
        out.steps = plan.warmup_min_steps
        sync()
        chunk_s = plan.warmup_span_s / 4
        with _power_watch(meter) as watch:
            begin = clock.now()
            points_t: list[float] = []  # end of each chunk, s since `begin`
            points_ms: list[float] = []  # mean step time of the chunk
            while True:
                c0, k = clock.now(), 0
                while True:
                    step()
                    k += 1
                    if clock.now() - c0 >= chunk_s:
                        break
                sync()
                c1 = clock.now()
                out.steps += k
                points_t.append(c1 - begin)
                points_ms.append((c1 - c0) * 1000.0 / k)
                steady = is_steady(points_t, points_ms, span_s=plan.warmup_span_s,
                                   tolerance_pct=plan.warmup_tolerance_pct)
                if steady and watch is not None:
                    power_t, power_w = watch.power_w()
                    steady = is_steady(power_t, power_w, span_s=plan.warmup_span_s,
                                       tolerance_pct=plan.warmup_tolerance_pct)
                if steady or c1 - begin >= plan.warmup_max_s:
                    out.steady = bool(steady)
                    break
    period = float(getattr(meter, "update_period_s", 0.0) or 0.0)  # observed by the watch when one ran
    if plan.random_offset and period > 0:
        out.start_offset_s = rng.uniform(0.0, period)
        sync()
        o0 = clock.now()
        while clock.now() - o0 < out.start_offset_s:  # keep the device busy: no idle dip before the window
            step()
            out.steps += 1
    sync()
    out.duration_s = clock.now() - t0
    return out


def run_window(step: Callable[[], object], device: torch.device, *, plan: WindowPlan, meter: PowerMeter,
               on_step: Callable[[int], None] | None = None, clock: Clock = REAL_CLOCK,
               rng: random.Random | None = None, sync: Callable[[], None] | None = None,
               on_start: Callable[[], None] | None = None) -> Window:
    """Warm up as the plan says, then measure one window around the steps (`on_start` is called as
    the window opens, after the warmup)."""
    sync = sync or (lambda: synchronize(device))
    warmup = warm_up(step, sync, plan, meter, clock, rng or random.Random())
    steps_clock = StepClock(device, clock)
    target_s = plan.duration_s if plan.duration_s is not None else plan.min_window_s
    if on_start is not None:
        on_start()
    with meter.window() as energy:
        start = clock.now()
        steps_clock.mark()
        done = 0
        if plan.steps is not None:
            for done in range(1, plan.steps + 1):
                step()
                steps_clock.mark()
                if on_step is not None:
                    on_step(done)
        else:
            while True:
                step()
                steps_clock.mark()
                done += 1
                if on_step is not None:
                    on_step(done)
                if clock.now() - start >= target_s:
                    break
        sync()
        elapsed = clock.now() - start
    flags = [FLAG_UNDER_MINIMUM] if plan.min_window_s > 0 and elapsed < plan.min_window_s else []
    if warmup.steady is False:
        flags.append(FLAG_NOT_STEADY)
    return Window(steps=done, duration_s=elapsed, step_times_ms=steps_clock.step_times_ms(), energy=energy,
                  warmup=warmup, flags=flags)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) with linear interpolation between ranks (NumPy's default)."""
    if not sorted_values:
        raise ValueError("no values")
    rank = (len(sorted_values) - 1) * q / 100.0
    lo, hi = math.floor(rank), math.ceil(rank)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (rank - lo)


def latency_stats(step_times_ms: Sequence[float]) -> dict[str, float | None]:
    keys = ("latency_avg_ms", "latency_p50_ms", "latency_p90_ms", "latency_p95_ms", "latency_p99_ms",
            "latency_max_ms")
    if not step_times_ms:
        return dict.fromkeys(keys)
    s = sorted(step_times_ms)
    return {
        "latency_avg_ms": sum(s) / len(s),
        "latency_p50_ms": percentile(s, 50),
        "latency_p90_ms": percentile(s, 90),
        "latency_p95_ms": percentile(s, 95),
        "latency_p99_ms": percentile(s, 99),
        "latency_max_ms": s[-1],
    }
