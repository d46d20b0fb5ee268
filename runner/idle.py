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
from typing import Any

from runner import devices, environment
from runner.interrupts import InterruptGuard, SweepInterrupted, signal_name
from runner.measure import energy_metrics
from runner.power import EnergyReading, PowerMeter
from runner.record import now_iso, requested_setting


def measure_idle(meter: PowerMeter, seconds: float, device_spec: str, *, guard: InterruptGuard | None = None,
                 requested: dict[str, Any] | None = None, tag: str | None = None) -> dict[str, Any]:
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
            duration = time.perf_counter() - t0
    except (SweepInterrupted, KeyboardInterrupt) as e:
        signum = e.signum if isinstance(e, SweepInterrupted) else int(signal.SIGINT)
        status, error = "interrupted", f"interrupted by {signal_name(signum)} during the idle measurement"
    flags = list(reading.flags)
    requested_setting(requested, captured, flags)
    config: dict[str, Any] = {"workload": "idle", "mode": "idle", "power_limit_w": captured.power_limit_w,
                              "power_mode": captured.power_mode, "tag": tag, **(requested or {})}
    if device.type == "cuda":
        config["gpu_count"] = 1
    metrics: dict[str, Any]
    if status == "ok":
        metrics = {"duration_s": duration, "examples": 0,
                   **energy_metrics(reading, examples=0, optimizer_steps=0, duration_s=duration)}
        if metrics.get("avg_power_w"):
            metrics["idle_power_w"] = metrics["avg_power_w"]
    else:
        metrics = {"energy_missing_reason": "the idle measurement was interrupted"}
    record: dict[str, Any] = {
        "run_id": str(uuid.uuid4()), "status": status, "error": error, "started_at": started, "ended_at": now_iso(),
        "device": captured.device,
        "environment": {k: v for k, v in captured.environment.items() if v is not None},
        "config": {k: v for k, v in config.items() if v is not None},
        "metrics": {k: v for k, v in metrics.items() if v is not None},
        "flags": sorted(set(flags)),
        "notes": f"idle baseline: {seconds:g} s with nothing running",
    }
    traces = [{"domain": t.domain, "boundary": t.boundary, "method": t.method, "t_s": t.t_s, "power_w": t.power_w}
              for t in reading.traces] if status == "ok" else []
    if traces:
        record["power_traces"] = traces
    if error is None:
        del record["error"]
    return record


def idle_power_w(record: dict[str, Any]) -> float | None:
    value = record.get("metrics", {}).get("idle_power_w")
    return float(value) if value else None
