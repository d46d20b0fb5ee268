"""The idle baseline: the device's power doing nothing, at the current power setting.

`joulebench idle --seconds N` records one run (workload `idle`, mode `idle`); a sweep measures
one before the runs of each power setting (unless --no-idle) and every run of that setting
carries `idle_power_w` and `net_j_per_sample` = (energy_j - idle_power_w x duration_s) / examples
beside the gross `j_per_sample`.
"""

from __future__ import annotations

import contextlib
import signal
import time
import uuid
from collections.abc import Mapping
from typing import Any

import runner.devices as devices
import runner.environment as environment
from energy import EnergyReading
from runner.interrupts import InterruptGuard, SweepInterrupted, signal_name
from runner.power import PowerMeter
from runner.record import RunRecord, idle_record, now_iso


def measure_idle(meter: PowerMeter, seconds: float, device_spec: str, *, guard: InterruptGuard | None = None,
                 requested: dict[str, Any] | None = None, tag: str | None = None) -> RunRecord:
    """One idle run: the meter's window over `seconds` of sleep (the device synchronised first)."""
    started = now_iso()
    device = devices.resolve(device_spec)
    captured = environment.capture(device)
    devices.synchronize(device)
    status, error = "ok", None
    reading = EnergyReading()
    duration = 0.0
    armed = guard.armed() if guard is not None else contextlib.nullcontext()
    try:
        with armed, meter.window() as reading:
            t0 = time.perf_counter()
            time.sleep(seconds)
            if guard is not None:
                guard.check()  # a signal whose exception was dropped (runner.interrupts) still stops it
            duration = time.perf_counter() - t0
    except (SweepInterrupted, KeyboardInterrupt) as e:
        signum = e.signum if isinstance(e, SweepInterrupted) else int(signal.SIGINT)
        status, error = "interrupted", f"interrupted by {signal_name(signum)} during the idle measurement"
    return idle_record(run_id=str(uuid.uuid4()), status=status, error=error, started_at=started, ended_at=now_iso(),
                       captured=captured, gpu=device.type == "cuda", reading=reading, duration_s=duration,
                       seconds=seconds, requested=requested, tag=tag)


def idle_power_w(record: Mapping[str, Any]) -> float | None:
    value = record.get("metrics", {}).get("idle_power_w")
    return float(value) if value else None
