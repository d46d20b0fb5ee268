"""A simulated NVIDIA GPU behind `pynvml`, on a `ManualClock`: no hardware, no waiting.

The board behaves as the H100 evidence shows (../shared/evidence/h100): its true power ramps
linearly from idle to load over `rise_s` when work starts (and back when it stops), with a
little fast noise (and, if asked, a slow swing that never settles). The sensor updates every
`update_s` (100 ms); at each update it latches the energy counter (mJ, the exact integral of
the true power so far), the instantaneous power (mW) and the averaged power reading (mW, the
mean over the last `average_s`: a one-second lag). Reads between updates return the latched values, as NVML does.

`patched_pynvml(gpu)` patches `runner.sensors.nvml.pynvml` (autospec, as tests/test_sensors.py
does) with reads from the simulation. A step of the workload is `gpu.step(seconds)`: the board
is busy while the clock advances.
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any
from unittest import mock

import pynvml as real_pynvml

from runner.clock import ManualClock


class SimulatedGpu:
    def __init__(self, clock: ManualClock, *, idle_w: float = 120.0, load_w: float = 420.0, rise_s: float = 2.0,
                 update_s: float = 0.1, average_s: float = 1.0, noise_pct: float = 3.0, phase_s: float = 0.037,
                 dt_s: float = 0.001, seed: int = 7, instant_field: bool = True, swing_pct: float = 0.0,
                 swing_period_s: float = 4.0) -> None:
        self.clock = clock
        self.idle_w, self.load_w, self.rise_s = idle_w, load_w, rise_s
        self.update_s, self.dt_s = update_s, dt_s
        self.noise_pct = noise_pct
        self.swing_pct, self.swing_period_s = swing_pct, swing_period_s  # a slow swing: a board that never settles
        self.instant_field = instant_field
        self.rng = random.Random(seed)
        self.busy = False
        self.t = 0.0
        self.base_w = idle_w  # the ramped power, before noise
        self.energy_j = 0.0  # the true energy so far
        self._noise = 1.0
        self._next_noise = 0.0
        self._recent: deque[float] = deque(maxlen=max(1, round(average_s / dt_s)))
        self._recent_sum = 0.0
        self._next_update = phase_s
        self.counter_mj = 0
        self.instant_mw = round(idle_w * 1000)
        self.average_mw = round(idle_w * 1000)
        self.reads = 0
        clock.listeners.append(self._advance_to)

    def _advance_to(self, t: float) -> None:
        rate = (self.load_w - self.idle_w) / self.rise_s
        while self.t + self.dt_s <= t + 1e-12:
            target = self.load_w if self.busy else self.idle_w
            if self.base_w < target:
                self.base_w = min(target, self.base_w + rate * self.dt_s)
            elif self.base_w > target:
                self.base_w = max(target, self.base_w - rate * self.dt_s)
            if self.t >= self._next_noise:  # fast noise, piecewise constant over 10 ms
                self._noise = 1.0 + self.rng.uniform(-self.noise_pct, self.noise_pct) / 100.0
                self._next_noise += 0.01
            swing = 1.0 + self.swing_pct / 100.0 * math.sin(2 * math.pi * self.t / self.swing_period_s)
            power = self.base_w * self._noise * swing
            self.energy_j += power * self.dt_s
            if len(self._recent) == self._recent.maxlen:
                self._recent_sum -= self._recent[0]
            self._recent.append(power)
            self._recent_sum += power
            self.t += self.dt_s
            if self.t >= self._next_update:  # the sensor updates: latch what NVML will report
                self.counter_mj = int(self.energy_j * 1000)
                self.instant_mw = round(power * 1000)
                self.average_mw = round(self._recent_sum / len(self._recent) * 1000)
                self._next_update += self.update_s

    def step(self, seconds: float) -> None:
        """One step of work: the board is busy while the clock moves."""
        self.busy = True
        self.clock.advance(seconds)

    def rest(self, seconds: float) -> None:
        """Nothing runs (a model being built, a gap between repeats)."""
        self.busy = False
        self.clock.advance(seconds)

    # --- what pynvml returns ----------------------------------------------------------------
    def total_energy_mj(self, handle: Any) -> int:
        self.reads += 1
        return self.counter_mj

    def power_usage_mw(self, handle: Any) -> int:
        self.reads += 1
        return self.average_mw

    def field_values(self, handle: Any, field_ids: list[int]) -> list[SimpleNamespace]:
        self.reads += 1
        out = []
        for field_id in field_ids:
            ok = self.instant_field and field_id == real_pynvml.NVML_FI_DEV_POWER_INSTANT
            out.append(SimpleNamespace(
                fieldId=field_id, nvmlReturn=real_pynvml.NVML_SUCCESS if ok else real_pynvml.NVML_ERROR_NOT_SUPPORTED,
                valueType=real_pynvml.NVML_VALUE_TYPE_UNSIGNED_INT, value=SimpleNamespace(uiVal=self.instant_mw)))
        return out


@contextmanager
def patched_pynvml(gpu: SimulatedGpu) -> Iterator[Any]:
    with mock.patch("runner.sensors.nvml.pynvml", autospec=True) as m:
        for name in dir(real_pynvml):  # exception classes and constants stay real
            if name.startswith(("NVMLError", "NVML_", "nvmlClocks")):
                setattr(m, name, getattr(real_pynvml, name))
        m.nvmlDeviceGetHandleByIndex.return_value = "gpu0"
        m.nvmlDeviceGetTotalEnergyConsumption.side_effect = gpu.total_energy_mj
        m.nvmlDeviceGetPowerUsage.side_effect = gpu.power_usage_mw
        m.nvmlDeviceGetFieldValues.side_effect = gpu.field_values
        m.nvmlDeviceGetClockInfo.side_effect = lambda h, clock: 1980 if clock == real_pynvml.NVML_CLOCK_SM else 2619
        m.nvmlDeviceGetCurrentClocksEventReasons.return_value = 0
        yield m
