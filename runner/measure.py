"""The timed loop: warmup, then a measured window with the device synchronised at both edges.

Per-step times come from CUDA events on a GPU (no synchronisation between steps, so timing
does not slow the loop) and from `time.perf_counter` on a CPU. The window's wall time, which
throughput uses, is `perf_counter` between the two synchronisations.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from energy import EnergyReading
from runner.devices import synchronize
from runner.power import PowerMeter


class StepClock:
    """Marks step boundaries; `step_times_ms()` is read after the final synchronisation."""

    def __init__(self, device: torch.device) -> None:
        self.cuda = device.type == "cuda"
        self._marks: list = []
        self._mark = self._cuda_mark if self.cuda else self._cpu_mark

    def _cpu_mark(self) -> None:
        self._marks.append(time.perf_counter())

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


@dataclass
class Window:
    """One measured window."""

    steps: int
    duration_s: float
    step_times_ms: list[float]
    energy: EnergyReading = field(default_factory=EnergyReading)


def run_window(step: Callable[[], object], device: torch.device, *, warmup: int, steps: int | None,
               duration_s: float | None, meter: PowerMeter,
               on_step: Callable[[int], None] | None = None) -> Window:
    """Run `warmup` unmeasured steps, then measure `steps` steps (or as many as fit `duration_s`)."""
    if (steps is None) == (duration_s is None):
        raise ValueError("give exactly one of steps and duration_s")
    for _ in range(warmup):
        step()
    clock = StepClock(device)
    synchronize(device)
    with meter.window() as energy:
        start = time.perf_counter()
        clock.mark()
        done = 0
        if steps is not None:
            for done in range(1, steps + 1):
                step()
                clock.mark()
                if on_step is not None:
                    on_step(done)
        else:
            assert duration_s is not None
            while True:
                step()
                clock.mark()
                done += 1
                if on_step is not None:
                    on_step(done)
                if time.perf_counter() - start >= duration_s:
                    break
        synchronize(device)
        elapsed = time.perf_counter() - start
    return Window(steps=done, duration_s=elapsed, step_times_ms=clock.step_times_ms(), energy=energy)


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
