"""What the power-log formats share: the parsed log (`PowerLog`), its error, the rules of several formats.

The runner (`--power-log`), the importers (a log imported on its own) and a log attached to
imported runs all read logs with the parsers beside this module (one module per format,
`importers.powerlogs.detect.read_power_log` picks one), so the rail choice (a Jetson's input
rail, never a sum of the rails it feeds: `jetson_log`, applying the board table of
`energy.rails`), the units (mW -> W, MiB -> MB) and the times are the same everywhere.

Times: the tools write local time without a zone, read as this machine's local time; a meter
CSV may give Unix seconds or ISO 8601 (with or without zone). A log without times (old
tegrastats) has `start_wall_s` None and cannot be aligned to a window.

A malformed log raises `PowerLogError(where, reason)`, `where` naming the line or column.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from energy.rails import BOARDS, FLAG_SUM_OF_RAILS, module_power, modules_for
from energy.trace import PowerTrace, median_period_s, trapezoid_j, window_j
from importers.base import W_PER_MW

JETSON_MAX_W = 200.0  # no Jetson module draws more (AGX Thor's carrier input is rated 168 W): a larger "W" is mW
SINGLE_DEVICE_MAX_W = 1500.0  # no single GPU or module rail draws more (B200 1000 W, GB300 1400 W)
FLAG_ASSUMED_1S = "sample_interval_assumed_1s"


class PowerLogError(ValueError):
    """A power log that cannot be read: `where` is the line or column, `reason` what is wrong."""

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = reason
        super().__init__(f"{where}: {reason}")


@dataclass
class PowerLog:
    """A parsed power log: per-domain traces on one time axis (s from the first sample)."""

    fmt: str  # nvidia-smi | tegrastats | jtop | meter-csv
    traces: list[PowerTrace]
    totals: list[str]  # domains whose energies add up to the device's, never overlapping
    boundary: str  # where the total domains measure
    started: datetime | None  # the first sample's time as written (naive: local time); None: no times
    samples: int = 0
    device_name: str | None = None
    gpu_count: int | None = None
    power_limit_w: float | None = None
    mem_used_mb: float | None = None
    memory_gb: float | None = None
    flags: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    total_column: str | None = None  # the column or rail the totals come from
    start_wall_s: float | None = None  # Unix time of t = 0; from `started` (naive: local time) when not given
    counter_j: float | None = None  # energy from the devices' own counters over the log (DCGM TOTEC), when given
    cpu_cores: int | None = None  # CPU cores the log lists (a Jetson log's CPU [...] or per-core columns)
    ram_total_mb: float | None = None  # total RAM the log prints ('RAM 11283/62841MB')
    power_mode: str | None = None  # the Jetson power mode (nvpmodel) the log records, when one for the whole log

    def __post_init__(self) -> None:
        if self.start_wall_s is None and self.started is not None:
            self.start_wall_s = self.started.timestamp()

    def trace(self, domain: str) -> PowerTrace:
        return next(t for t in self.traces if t.domain == domain)

    def period_s(self) -> float | None:
        """Median sample interval of the first total domain."""
        return median_period_s(self.trace(self.totals[0]).t_s) if self.totals else None

    def module_offer(self) -> str | None:
        """The Jetson modules a log's CPU cores and RAM total fit, as a phrase to offer the user
        (never stored as the device: a log does not name its module)."""
        fits = modules_for(self.cpu_cores, self.ram_total_mb, [t.domain for t in self.traces])
        if not fits:
            return None
        evidence = " and ".join(x for x in (f"{self.cpu_cores} CPU cores" if self.cpu_cores else "",
                                            f"{self.ram_total_mb:,.0f} MB of RAM" if self.ram_total_mb else "") if x)
        names = fits[0] if len(fits) == 1 else ", ".join(fits[:-1]) + " or " + fits[-1]
        return f"its {evidence} fit {names}"

    def common_span_s(self) -> tuple[float, float] | None:
        """The window every total domain covers (GPUs of a multi-GPU log start and stop being
        sampled at different times); None when they share no positive span."""
        spans = [(ts[0], ts[-1]) for d in self.totals if len(ts := self.trace(d).t_s) >= 2]
        if not spans or len(spans) < len(self.totals):
            return None
        start, end = max(a for a, _ in spans), min(b for _, b in spans)
        return (start, end) if end > start else None

    def duration_s(self) -> float | None:
        if self.totals:
            span = self.common_span_s()
            return span[1] - span[0] if span else None
        ts = self.traces[0].t_s if self.traces else []
        return ts[-1] - ts[0] if len(ts) >= 2 and ts[-1] > ts[0] else None

    def total_j(self) -> float | None:
        """Energy of the log over the window every total domain covers (one domain: trapezoid over
        all its samples), summed over the domains; None without totals or a common window."""
        span = self.common_span_s() if self.totals else None
        if span is None:
            return None
        if len(self.totals) == 1:
            return trapezoid_j(self.trace(self.totals[0]).t_s, self.trace(self.totals[0]).power_w)
        return sum(window_j(self.trace(d).t_s, self.trace(d).power_w, *span) for d in self.totals)

    def span_note(self) -> str | None:
        """Say which samples the common window leaves out, when the domains' spans differ."""
        span = self.common_span_s()
        if span is None or len(self.totals) < 2:
            return None
        def beyond(ts: list[float]) -> bool:  # a whole sample period or more outside, not sampling phase
            period = median_period_s(ts) or 0.0
            return span[0] - ts[0] >= period or ts[-1] - span[1] >= period

        outside = [d for d in self.totals if beyond(self.trace(d).t_s)]
        if not outside:
            return None
        return (f"energy and average power are over the {span[1] - span[0]:g} s all {len(self.totals)} traces "
                f"cover ({span[0]:g} to {span[1]:g} s from the first sample); the samples of "
                f"{', '.join(outside)} outside it are left out")

    def energy_j(self, start_wall_s: float, end_wall_s: float) -> float | None:
        """Energy between two Unix times; None when the log does not cover them."""
        origin = self.start_wall_s
        if origin is None or not self.totals:
            return None
        a, b = start_wall_s - origin, end_wall_s - origin
        total = 0.0
        for d in self.totals:
            ts = self.trace(d).t_s
            if not ts or a < ts[0] or b > ts[-1]:
                return None
            total += window_j(ts, self.trace(d).power_w, a, b)
        return total

    def covered_wall_s(self) -> tuple[float, float] | None:
        origin = self.start_wall_s
        if origin is None or not self.totals:
            return None
        ts = self.trace(self.totals[0]).t_s
        return origin + ts[0], origin + ts[-1]


# --- reading bytes and CSV ------------------------------------------------------------------------

def head_text(data: bytes) -> str:
    """The first 16 KiB as text for sniffing; empty for a binary file."""
    chunk = data[:16384]
    if b"\x00" in chunk[:4096]:
        return ""
    return chunk.decode("utf-8-sig", errors="replace")


def csv_rows(text: str) -> list[list[str]]:
    try:
        return list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as e:  # a stray carriage return or NUL inside a field
        raise PowerLogError("(whole file)", f"not a readable CSV ({e})") from e


# --- columns of telemetry CSVs: time, power, units ---------------------------------------------------

TIME_COLUMNS = ("time", "timestamp", "system-time", "datetime", "date_time", "t_ms", "time (ms)", "t_s",
                "epoch", "unix_time")
METER_TIME_COLUMNS = ("timestamp", "time", "datetime", "date", "t", "unix_s", "epoch")
MODE_COLUMNS = ("nvp model", "nvpmodel", "nvp_model", "nvp mode", "power mode", "power_mode", "nvp_mode")
AVERAGE_WORD = re.compile(r"(?i)(?:^|[^a-z])(avg|average|mean|max|min|peak|warn|crit)(?:[^a-z]|$)")
_DURATION = re.compile(r"(?i)duration|runtime|elapsed|latency|_time_s$|time_per|seconds")
_ROW_IDENTITY = ("model", "models", "model_name", "run", "run_id", "experiment", "tag", "dataset", "network", "appname",
                 "app_name", "application", "arg", "args", "command", "cmd", "benchmark", "workload", "model_id",
                 "batch_size")  # a row an experiment ('appName', 'arg': a command's), never a sample of a trace


def _jetson_rail_names() -> set[str]:
    names: set[str] = set()
    for board in BOARDS:
        names |= set(board.rails) | set(board.aliases)
    return names


KNOWN_RAILS = _jetson_rail_names()
GENERIC_RAIL_WORDS = frozenset({"GPU", "CPU", "SOC", "CV", "IN", "SYS", "SYSTEM"})


def looks_like_power_table(header: list[str]) -> bool:
    """A time series of power, not a table of experiments (those name a model or run and a duration per row)."""
    low = [h.strip().lower() for h in header]
    return not any(_DURATION.search(h) for h in low) and not any(h in _ROW_IDENTITY for h in low)


def jetson_unit(col: str, top: float, jetson: bool, flags: list[str], notes: list[str]) -> float:
    """W per unit of a rail column: mW when the header says so or, for a Jetson, when it says nothing
    (INA3221 and tegrastats report mW); W as stated, unless a Jetson 'W' column reaches what no Jetson
    draws. A column whose unit neither the header nor the board tells is read as mW only when its values
    are too large for watts; otherwise the file is refused rather than read 1000x off."""
    if re.search(r"(?i)\(mw\)|\[mw\]|(?:^|[_ ])mw$|milliwatt", col):
        return W_PER_MW
    says_w = bool(re.search(r"\[W\]|\(W\)|_w$|_watts?$|\bW$", col))
    if says_w and top <= JETSON_MAX_W:
        return 1.0
    if says_w and not jetson and top <= SINGLE_DEVICE_MAX_W:
        return 1.0
    if says_w or (not jetson and top > SINGLE_DEVICE_MAX_W):
        why = "no Jetson draws that" if jetson else "no single device rail draws that"
        notes.append(f"'{col}' reaches {top:g}{' W' if says_w else ''}: {why}, so it is read as mW")
        if "unit_corrected_mw" not in flags:
            flags.append("unit_corrected_mw")
        return W_PER_MW
    if jetson:
        return W_PER_MW
    raise PowerLogError(col, "the unit is not stated and the board is not known, so mW and W cannot be told apart: "
                             "name the Jetson module (e.g. --device 'Jetson Orin Nano'), whose rails are logged in mW")


# a Unix time below each bound is in that unit: seconds until the year 5138, then ms, us, ns
_EPOCH_UNITS = ((1.0, 1e11), (1e3, 1e14), (1e6, 1e17), (1e9, 1e20))
_EPOCH_NAMES = {1e3: "milliseconds", 1e6: "microseconds", 1e9: "nanoseconds"}


def csv_times(values: list[str], column: str) -> tuple[np.ndarray, datetime | None, float | None, list[str]]:
    """Seconds from the first sample, the first sample's time (None: not known) and its Unix time."""
    notes: list[str] = []
    low = column.lower()
    cleaned = [v.strip() for v in values]
    if low in ("t_ms", "time (ms)"):
        t = np.array([float(v) for v in cleaned]) / 1000.0
        notes.append(f"'{column}' is milliseconds from the start; the wall-clock time is not in the file")
        return t - t[0], None, None, notes
    try:
        numbers = np.array([float(v) for v in cleaned])
    except ValueError:
        numbers = None
    if numbers is not None:
        if not np.all(np.isfinite(numbers)):
            raise PowerLogError(column, "a time that is not a finite number")
        if numbers[0] > 1e9:  # Unix time (UTC): its size says its unit, seconds to nanoseconds
            per_s = next((f for f, top in _EPOCH_UNITS if numbers[0] < top), None)
            if per_s is None:
                raise PowerLogError(column, f"{numbers[0]:.6g} is too large for a Unix time, even in nanoseconds")
            numbers = numbers / per_s
            if per_s != 1:
                notes.append(f"'{column}' is Unix time in {_EPOCH_NAMES[per_s]} (by its size)")
            started = datetime.fromtimestamp(float(numbers[0]), UTC)
            return numbers - numbers[0], started, float(numbers[0]), notes
        notes.append(f"'{column}' is seconds from the start; the wall-clock time is not in the file")
        return numbers - numbers[0], None, None, notes
    if all(re.fullmatch(r"\d{1,2}:\d{1,2}:\d{1,2}(\.\d+)?", v) for v in cleaned):  # HWiNFO: 6:0:0.517
        secs = []
        for v in cleaned:
            h, m, sec = v.split(":")
            secs.append(int(h) * 3600 + int(m) * 60 + float(sec))
        t = np.array(secs, dtype=float)
        t = t + 86400.0 * np.cumsum(np.concatenate([[0], np.diff(t) < -43200]))  # past midnight
        notes.append(f"'{column}' holds times of day without a date: the log cannot be aligned to runs")
        return t - t[0], None, None, notes
    parsed: list[datetime] = []
    for v in cleaned:
        try:
            parsed.append(datetime.fromisoformat(v.replace("Z", "+00:00").replace("/", "-")))
        except ValueError as e:
            raise PowerLogError(f"{column}", f"{v[:40]!r} is not a time (ISO 8601, Unix seconds or HH:MM:SS)") from e
    if len({p.tzinfo is None for p in parsed}) > 1:
        raise PowerLogError(column, "some times carry a zone and some do not")
    t = np.array([(p - parsed[0]).total_seconds() for p in parsed])
    return t, parsed[0], None, notes


# --- Jetson rails: one rule for tegrastats, jtop and wide CSVs ----------------------------------

def _module_totals(rails: list[str], device: str | None, boundary: str | None,
                   flags: list[str], notes: list[str]) -> tuple[list[str], str]:
    """The log's domains that add up to the module's power (energy.rails board table) and the boundary."""
    choice = module_power(rails, device)
    where = boundary or choice.boundary
    if choice.ok:
        notes.append(choice.note)
        if choice.summed and FLAG_SUM_OF_RAILS not in flags:
            flags.append(FLAG_SUM_OF_RAILS)
    else:
        notes.append(choice.missing_reason or "no module power in the log")
    return list(choice.rails), where


def jetson_log(fmt: str, rails: dict[str, np.ndarray], t: np.ndarray, started: datetime | None, count: int,
               boundary: str | None, device: str | None, flags: list[str], notes: list[str],
               start_wall_s: float | None = None) -> PowerLog:
    """A Jetson log from its rails (W): the module's power follows the board table (`energy.rails`)."""
    totals, where = _module_totals(list(rails), device, boundary, flags, notes)
    traces = []
    for rail, values in rails.items():
        keep = ~np.isnan(values)
        traces.append(PowerTrace(rail, where if rail in totals else None, "sampled", t[keep].tolist(),
                                 values[keep].tolist()))
    log = PowerLog(fmt, traces, totals, where, started, samples=count, flags=flags, notes=notes,
                   total_column=" + ".join(totals) or None, start_wall_s=start_wall_s)
    return log
