"""An external power log (`--power-log FILE`), aligned to each run window by timestamp.

The log is written by something else while the run goes on: a wall meter's CSV (a time column
and a watts column), an nvidia-smi `--query-gpu` CSV, a tegrastats log or a jtop CSV. The last
three are parsed by the importers' own parsers (`importers.powerlogs.read_power_log`): the same
rail choice (the Jetson input rail, never a sum) and units (mW -> W) as an import. The file is
read when a window closes; the window's energy is the trapezoid integral of the total domains'
power between the window's wall-clock edges, the power at each edge interpolated.

Times: the tools write local time without a zone, read here as this machine's local time; a
meter CSV may give Unix seconds or ISO 8601 (with or without zone). A log without times (old
tegrastats) cannot be aligned to a window: its windows report energy missing, with that reason.
Boundary: as the user states (`--power-log-boundary`), else `wall` for a meter CSV, else the
log's own (gpu_board for nvidia-smi, jetson_module for tegrastats / jtop).
"""

from __future__ import annotations

import contextlib
import csv
import io
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from joulebench.errors import ResultFileError
from runner.power import EnergyReading, PowerTrace, trapezoid_j, window_j
from runner.sensors.base import SensorError

TIME_COLUMNS = ("timestamp", "time", "datetime", "date", "t", "unix_s", "epoch")
WATT_COLUMNS = ("watts", "power_w", "power", "w", "power [w]", "power (w)", "active_power_w")
MIN_LOG_PERIODS = 3


@dataclass
class PowerLog:
    """Samples on the Unix time axis (`wall_s` None when the log has no times)."""

    fmt: str
    t_s: dict[str, list[float]]  # per domain, seconds from the first sample
    power_w: dict[str, list[float]]
    totals: list[str]
    boundary: str
    start_wall_s: float | None  # Unix time of t_s = 0

    def period_s(self) -> float | None:
        """Median sample interval of the first total domain."""
        ts = self.t_s[self.totals[0]] if self.totals else []
        steps = sorted(b - a for a, b in zip(ts, ts[1:]) if b > a)
        return steps[len(steps) // 2] if steps else None

    def total_j(self) -> float:
        """Energy of the whole log (trapezoid over each total domain, summed)."""
        return sum(trapezoid_j(self.t_s[d], self.power_w[d]) for d in self.totals)

    def energy_j(self, start_wall_s: float, end_wall_s: float) -> float | None:
        """Energy between two Unix times; None when the log does not cover them."""
        if self.start_wall_s is None:
            return None
        a, b = start_wall_s - self.start_wall_s, end_wall_s - self.start_wall_s
        total = 0.0
        for d in self.totals:
            ts = self.t_s[d]
            if not ts or a < ts[0] or b > ts[-1]:
                return None
            total += window_j(ts, self.power_w[d], a, b)
        return total


def _meter_time(text: str) -> float:
    text = text.strip()
    try:
        return float(text)  # Unix seconds
    except ValueError:
        pass
    value = datetime.fromisoformat(text.replace("/", "-"))
    return value.timestamp()  # naive: local time


def read_meter_csv(data: bytes, name: str, boundary: str | None) -> PowerLog:
    """A wall meter's CSV: a header with a time column and a watts column."""
    text = data.decode("utf-8-sig", errors="replace")
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise ResultFileError(name, ["(whole file): empty"])
    header = [h.strip().lower() for h in rows[0]]
    t_col = next((header.index(c) for c in TIME_COLUMNS if c in header), None)
    w_col = next((header.index(c) for c in WATT_COLUMNS if c in header), None)
    if t_col is None or w_col is None:
        raise ResultFileError(name, [
            f"line 1: expected a time column ({', '.join(TIME_COLUMNS)}) and a watts column "
            f"({', '.join(WATT_COLUMNS)}); found {', '.join(header) or 'nothing'}"])
    wall: list[float] = []
    watts: list[float] = []
    for lineno, row in enumerate(rows[1:], 2):
        if not row or not "".join(row).strip():
            continue
        try:
            wall.append(_meter_time(row[t_col]))
            watts.append(float(row[w_col].strip().removesuffix("W").strip()))
        except (ValueError, IndexError) as e:
            raise ResultFileError(name, [f"line {lineno}: not a time and a number of watts ({e})"]) from e
    if len(wall) < 2:
        raise ResultFileError(name, ["(whole file): fewer than 2 samples"])
    if any(b < a for a, b in zip(wall, wall[1:])):
        raise ResultFileError(name, ["time column: time goes backwards"])
    t0 = wall[0]
    return PowerLog("meter-csv", {"wall": [w - t0 for w in wall]}, {"wall": watts}, ["wall"],
                    boundary or "wall", t0)


def read_log(path: Path | str, boundary: str | None = None) -> PowerLog:
    """Read any supported power log; ResultFileError names the line when it is malformed."""
    from importers.powerlogs import read_power_log

    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise SensorError(f"--power-log {path}: cannot read it ({e.strerror})") from e
    series = read_power_log(data, path.name, boundary)
    if series is None:
        return read_meter_csv(data, path.name, boundary)
    return PowerLog(
        series.fmt,
        {t["domain"]: list(t["t_s"]) for t in series.traces},
        {t["domain"]: list(t["power_w"]) for t in series.traces},
        list(series.totals),
        boundary or series.boundary or "system",
        series.started.timestamp() if series.started is not None else None,
    )


class ExternalLogMeter:
    """A `PowerMeter` that reads `--power-log FILE` when each window closes."""

    name = "power-log"
    method = "sampled"

    def __init__(self, path: Path | str, boundary: str | None = None, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
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
            log = read_log(self.path, self.stated_boundary)
        except (ResultFileError, SensorError) as e:
            reading.missing_reason = f"--power-log: {e.format_message()}"
            return
        reading.boundary = log.boundary
        if not log.totals:
            reading.missing_reason = f"--power-log {self.path.name}: no total power (e.g. no Jetson input rail)"
            return
        if log.start_wall_s is None:
            reading.missing_reason = (f"--power-log {self.path.name}: the log has no timestamps, so it cannot be "
                                      "aligned to the run window (run tegrastats with --logfile on a newer L4T, "
                                      "or log with times)")
            return
        energy = log.energy_j(start, end)
        if energy is None:
            first = log.start_wall_s + log.t_s[log.totals[0]][0]
            last = log.start_wall_s + log.t_s[log.totals[0]][-1]
            reading.missing_reason = (
                f"--power-log {self.path.name} covers {datetime.fromtimestamp(first)} to "
                f"{datetime.fromtimestamp(last)}, not the whole run window {datetime.fromtimestamp(start)} to "
                f"{datetime.fromtimestamp(end)}; keep the logger running for the whole sweep")
            return
        reading.energy_j = energy
        period = log.period_s()
        if period:
            reading.metrics["sample_period_s"] = period
            if end - start < MIN_LOG_PERIODS * period:
                reading.flags.append("window_short_for_sensor")
        a, b = start - log.start_wall_s, end - log.start_wall_s
        for domain, ts in log.t_s.items():
            inside = [(t - a, p) for t, p in zip(ts, log.power_w[domain]) if a <= t <= b]
            if inside:
                reading.traces.append(PowerTrace(domain, log.boundary if domain in log.totals else None, "sampled",
                                                 [t for t, _ in inside], [p for _, p in inside]))
