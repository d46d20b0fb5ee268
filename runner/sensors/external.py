"""An external power log (`--power-log FILE`), aligned to each run window by timestamp.

The log is written by something else while the run goes on: a wall meter's CSV (a time column
and a watts column), an nvidia-smi `--query-gpu` CSV, a tegrastats log or a jtop CSV, parsed
by `importers.powerlogs` (the same rail choice and units as an import). The file is read when a window
closes; the window's energy is the trapezoid integral of the total domains' power between the
window's wall-clock edges, the power at each edge interpolated.

Times: the tools write local time without a zone, read here as this machine's local time; a
meter CSV may give Unix seconds or ISO 8601 (with or without zone). A log without times (old
tegrastats) cannot be aligned to a window: its windows report energy missing, with that reason.
Boundary: as the user states (`--power-log-boundary`), else `wall` for a meter CSV, else the
log's own (gpu_board for nvidia-smi, jetson_module for tegrastats / jtop).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

from energy import EnergyReading, PowerTrace
from energy.figures import FLAG_SHORT_WINDOW, window_is_short
from importers.powerlogs.detect import read_power_log
from importers.powerlogs.log import PowerLog, PowerLogError
from runner.sensors.base import SensorError


def read_log(path: Path | str, boundary: str | None = None, device: str | None = None) -> PowerLog:
    """Read any supported power log from a path; SensorError names the file and the line. `device`
    names the Jetson board when a hand-rolled log's columns do not (energy.rails)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise SensorError(f"--power-log {path}: cannot read it ({e.strerror})") from e
    try:
        return read_power_log(data, boundary, device)
    except PowerLogError as e:
        raise SensorError(f"--power-log {path.name}: {e}") from e


class ExternalLogMeter:
    """A `PowerMeter` that reads `--power-log FILE` when each window closes."""

    name = "power-log"
    method = "sampled"

    def __init__(self, path: Path | str, boundary: str | None = None, *,
                 clock: Callable[[], float] = time.time, device: str | None = None) -> None:
        self.path = Path(path)
        self.device = device
        self.stated_boundary = boundary
        self.clock = clock
        if not self.path.exists():
            raise SensorError(f"--power-log {self.path}: no such file")
        self.boundary = boundary or "wall"

    def describe(self) -> str:
        return f"power log {self.path} ({self.boundary}, sampled)"

    def close(self) -> None:
        pass

    @contextlib.contextmanager
    def window(self) -> Iterator[EnergyReading]:
        reading = EnergyReading(method="sampled")
        start = self.clock()
        reading.started_wall_s = start
        try:
            yield reading
        finally:
            end = self.clock()
            reading.duration_s = end - start
            self._finish(reading, start, end)

    def _finish(self, reading: EnergyReading, start: float, end: float) -> None:
        try:
            log = read_log(self.path, self.stated_boundary, self.device)
        except SensorError as e:
            reading.missing_reason = e.format_message()
            return
        reading.boundary = log.boundary
        if not log.totals:
            why = next((n for n in log.notes if "rail" in n), "e.g. no Jetson module power")
            reading.missing_reason = f"--power-log {self.path.name}: no total power ({why})"
            return
        covered = log.covered_wall_s()
        if log.start_wall_s is None or covered is None:
            reading.missing_reason = (f"--power-log {self.path.name}: the log has no timestamps, so it cannot be "
                                      "aligned to the run window (run tegrastats with --logfile on a newer L4T, "
                                      "or log with times)")
            return
        energy = log.energy_j(start, end)
        if energy is None:
            first, last = covered
            reading.missing_reason = (
                f"--power-log {self.path.name} covers {datetime.fromtimestamp(first)} to "
                f"{datetime.fromtimestamp(last)}, not the whole run window {datetime.fromtimestamp(start)} to "
                f"{datetime.fromtimestamp(end)}; keep the logger running for the whole sweep")
            return
        reading.energy_j = energy
        period = log.period_s()
        if period:
            reading.metrics["sample_period_s"] = period
            if window_is_short(end - start, period):
                reading.flags.append(FLAG_SHORT_WINDOW)
        a, b = start - log.start_wall_s, end - log.start_wall_s
        for trace in log.traces:
            inside = [(t - a, p) for t, p in zip(trace.t_s, trace.power_w) if a <= t <= b]
            if inside:
                reading.traces.append(PowerTrace(trace.domain, log.boundary if trace.domain in log.totals else None,
                                                 "sampled", [t for t, _ in inside], [p for _, p in inside]))
