"""Power logs read from bytes: nvidia-smi CSV, tegrastats, jtop CSV and a wall meter's CSV.

The runner (`--power-log`), the importers (a log imported on its own) and a log attached to
imported runs all read logs here, so the rail choice (a Jetson's input rail, never a sum of the
rails it feeds), the units (mW -> W, MiB -> MB) and the times are the same everywhere.

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
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from energy.rails import INPUT_RAILS
from energy.trace import PowerTrace, median_period_s, trapezoid_j, window_j

W_PER_MW = 1e-3
MB_PER_MIB = 1.048576

METER_TIME_COLUMNS = ("timestamp", "time", "datetime", "date", "t", "unix_s", "epoch")
METER_WATT_COLUMNS = ("watts", "power_w", "power", "w", "power [w]", "power (w)", "active_power_w")


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

    def __post_init__(self) -> None:
        if self.start_wall_s is None and self.started is not None:
            self.start_wall_s = self.started.timestamp()

    def trace(self, domain: str) -> PowerTrace:
        return next(t for t in self.traces if t.domain == domain)

    def period_s(self) -> float | None:
        """Median sample interval of the first total domain."""
        return median_period_s(self.trace(self.totals[0]).t_s) if self.totals else None

    def duration_s(self) -> float | None:
        ts = self.trace(self.totals[0]).t_s if self.totals else (self.traces[0].t_s if self.traces else [])
        return ts[-1] - ts[0] if len(ts) >= 2 and ts[-1] > ts[0] else None

    def total_j(self) -> float | None:
        """Energy of the whole log (trapezoid over each total domain, summed); None without totals."""
        if not self.totals:
            return None
        return sum(trapezoid_j(self.trace(d).t_s, self.trace(d).power_w) for d in self.totals)

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


# --- detection ------------------------------------------------------------------------------

def sniff(head: str) -> str | None:
    """The log format of a file from its first lines, or None."""
    first = head.split("\n", 1)[0].lower()
    if "power.draw" in first and "," in first:
        return "nvidia-smi"
    lines = [line for line in head.splitlines()[:5] if line.strip()]
    if lines and all("RAM " in line and ("CPU [" in line or "EMC_FREQ" in line) for line in lines[:3]):
        return "tegrastats"
    cols = [c.strip() for c in first.split(",")]
    if (("time" in cols or "timestamp" in cols) and any("power" in c for c in cols)
            and any(c.startswith(("ram", "cpu", "gpu")) for c in cols)):
        return "jtop"
    return None


def read_power_log(data: bytes, boundary: str | None = None) -> PowerLog:
    """Any supported log: nvidia-smi, tegrastats, jtop, else a meter's time,watts CSV."""
    head = _head(data)
    fmt = sniff(head)
    if fmt is None:
        return parse_meter_csv(data, boundary)
    return PARSERS[fmt](data, boundary)


def _head(data: bytes) -> str:
    chunk = data[:16384]
    if b"\x00" in chunk[:4096]:
        return ""
    return chunk.decode("utf-8-sig", errors="replace")


# --- polars helpers ---------------------------------------------------------------------------

def _frame(data: bytes, columns: list[str] | None = None, n_rows: int | None = None) -> pl.DataFrame:
    """Columns as text, header names stripped (nvidia-smi pads with ', '). `columns` (stripped
    names) reads only those: a long log's other columns are never materialised."""
    try:
        raw_names = None
        if columns is not None:
            raw = {c.strip(): c for c in pl.read_csv(io.BytesIO(data), n_rows=0, infer_schema=False).columns}
            raw_names = [raw[c] for c in columns if c in raw]
        frame = pl.read_csv(
            io.BytesIO(data), infer_schema=False, truncate_ragged_lines=False, has_header=True, quote_char='"',
            columns=raw_names, n_rows=n_rows,
        )
    except Exception as e:  # polars raises its own exception types for malformed CSV
        raise PowerLogError("CSV", f"cannot be read: {str(e).splitlines()[0][:200]}") from e
    return frame.rename({c: c.strip() for c in frame.columns})


def _first_true(mask: pl.Series, column: str) -> int:
    row = mask.arg_max()
    if row is None:
        raise PowerLogError(column, "no rows")
    return int(row)


_MISSING_CELLS = ["", "[N/A", "N/A", "[Not Supported]", "[Not Supported", "[Unknown Error]", "[Unknown Error"]


def _numbers(frame: pl.DataFrame, column: str) -> np.ndarray:
    """A column's numbers with units stripped; NaN for the tools' 'not available' cells."""
    raw = frame[column].str.strip_chars()
    cleaned = raw.str.strip_chars_end(" WmMiBHzC%").str.strip_chars_end()
    values = cleaned.cast(pl.Float64, strict=False)
    missing_text = cleaned.is_null() | cleaned.is_in(_MISSING_CELLS)
    bad = values.is_null() & ~missing_text
    if bad.any():
        row = _first_true(bad, column)
        raise PowerLogError(f"line {row + 2}: {column}", f"{raw[row][:40]!r} is not a number")
    out: np.ndarray = values.to_numpy()
    if not np.isfinite(out[~np.isnan(out)]).all():
        raise PowerLogError(column, "non-finite value")
    return out


def _times(frame: pl.DataFrame, column: str, formats: tuple[str, ...]) -> tuple[np.ndarray, datetime]:
    raw = frame[column].str.strip_chars()
    parsed = None
    for fmt in formats:
        attempt = raw.str.strptime(pl.Datetime("us"), fmt, strict=False, cache=False)
        if attempt.null_count() == 0:
            parsed = attempt
            break
    if parsed is None:
        attempt = raw.str.strptime(pl.Datetime("us"), formats[0], strict=False)
        row = _first_true(attempt.is_null(), column)
        raise PowerLogError(f"line {row + 2}: {column}", f"{raw[row]!r} is not a time like {formats[0]}")
    micros = parsed.cast(pl.Int64).to_numpy()
    t = (micros - micros[0]) / 1e6
    if np.any(np.diff(t) < 0):
        row = int(np.argmax(np.diff(t) < 0)) + 1
        raise PowerLogError(f"line {row + 2}: {column}", "time goes backwards; is the log from several runs?")
    return t, parsed[0]


# --- nvidia-smi -------------------------------------------------------------------------------

def parse_nvidia_smi(data: bytes, boundary: str | None = None) -> PowerLog:
    """`nvidia-smi --query-gpu=timestamp,...,power.draw --format=csv` (units in header or cells)."""
    first = _frame(data, n_rows=1)  # every column, one row: names and first-row facts
    cols = {c.split(" [")[0].strip(): c for c in first.columns}
    power_col = cols.get("power.draw") or cols.get("power.draw.instant") or cols.get("power.draw.average")
    if power_col is None:
        raise PowerLogError("line 1", "no power.draw column")
    if first.height == 0:
        raise PowerLogError("line 2", "no samples after the header")
    if "timestamp" not in cols:
        raise PowerLogError("line 1", "no timestamp column: add 'timestamp' to --query-gpu so samples can be timed")
    gpu_key = cols.get("index") or cols.get("uuid") or cols.get("pci.bus_id")
    per_sample = [c for c in (power_col, gpu_key, cols["timestamp"], cols.get("memory.used")) if c]
    frame = _frame(data, columns=per_sample)
    scale = W_PER_MW if "[mW]" in power_col else 1.0
    if gpu_key:
        ids_col = frame[gpu_key].str.strip_chars().fill_null("")
        order = ids_col.unique(maintain_order=True).to_list()
        codes = ids_col.replace_strict(order, list(range(len(order))), return_dtype=pl.Int32).to_numpy()
    else:
        order, codes = ["0"], np.zeros(frame.height, dtype=np.int32)
    power = _numbers(frame, power_col) * scale
    t, started = _times(frame, cols["timestamp"], ("%Y/%m/%d %H:%M:%S%.f", "%Y/%m/%d %H:%M:%S"))
    where = boundary or "gpu_board"
    traces = []
    for n in range(len(order)):
        mask = codes == n
        tt, pp = (t, power) if len(order) == 1 else (t[mask], power[mask])
        keep = ~np.isnan(pp)
        traces.append(PowerTrace(f"gpu{n}", where, "sampled", tt[keep].tolist(), pp[keep].tolist()))
    log = PowerLog("nvidia-smi", traces, [t.domain for t in traces], where, started, samples=frame.height,
                   gpu_count=len(order), total_column=power_col)
    names = first[cols["name"]].str.strip_chars().to_list() if "name" in cols else []
    log.device_name = (names[0] or None) if names else None
    if "power.limit" in cols:
        limits = _numbers(first, cols["power.limit"])
        if len(limits) and not np.isnan(limits[0]) and limits[0] > 0:
            log.power_limit_w = float(limits[0]) * scale
    if "memory.used" in cols:
        used = _numbers(frame, cols["memory.used"])
        if np.any(~np.isnan(used)):
            mib = "MiB" in cols["memory.used"] or frame[cols["memory.used"]].str.ends_with("MiB").any()
            log.mem_used_mb = float(np.nanmax(used)) * (MB_PER_MIB if mib else 1.0)
    if "memory.total" in cols:
        totals = _numbers(first, cols["memory.total"])
        if len(totals) and not np.isnan(totals[0]) and totals[0] > 0:
            log.memory_gb = float(totals[0]) * MB_PER_MIB / 1e3
    log.notes.append(f"nvidia-smi log, {frame.height} samples from {len(order)} GPU(s)")
    return log


# --- tegrastats -------------------------------------------------------------------------------

_TEGRA_RAIL = re.compile(
    r"\b([A-Z][A-Z0-9_]*(?:IN|GPU|CPU|SOC|CV|VDDRQ|SYS5V|SYS_5V0|DDR|VDD_[A-Z0-9_]+|5V_[A-Z]+)"
    r"|VDD_[A-Z0-9_]+|VIN_[A-Z0-9_]+|POM_[A-Z0-9_]+) (\d+)(mW)?/(\d+)(mW)?"
)
_TEGRA_TIME = re.compile(r"^(\d{2}-\d{2}-\d{4} \d{2}:\d{2}:\d{2})\s+")
FLAG_ASSUMED_1S = "sample_interval_assumed_1s"


def parse_tegrastats(data: bytes, boundary: str | None = None) -> PowerLog:
    """Old (`POM_5V_IN 2793/1750`, mW without unit) and new (`VDD_IN 5012mW/5012mW`) rails, with or
    without a leading `MM-DD-YYYY HH:MM:SS` time."""
    text = data.decode("utf-8-sig", errors="replace")
    rails: dict[str, list[float]] = {}
    times: list[datetime] = []
    count = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if "RAM " not in line:
            raise PowerLogError(f"line {lineno}", "not a tegrastats line (no 'RAM used/totalMB')")
        tm = _TEGRA_TIME.match(line)
        if tm:
            try:
                times.append(datetime.strptime(tm.group(1), "%m-%d-%Y %H:%M:%S"))
            except ValueError as e:
                raise PowerLogError(f"line {lineno}", f"bad timestamp {tm.group(1)!r}") from e
        found = {m.group(1): float(m.group(2)) * W_PER_MW for m in _TEGRA_RAIL.finditer(line)}
        if count and set(found) != set(rails):
            raise PowerLogError(f"line {lineno}", f"power rails change from {sorted(rails)} to {sorted(found)}")
        for rail, watts in found.items():
            rails.setdefault(rail, []).append(watts)
        count += 1
    if not rails:
        raise PowerLogError("(whole file)", "no power rails (e.g. 'POM_5V_IN 2793/1750' or 'VDD_IN 5012mW/5012mW')")
    flags: list[str] = []
    notes = [f"tegrastats log, {count} samples"]
    started: datetime | None = None
    if times and len(times) == count:
        t = np.array([(x - times[0]).total_seconds() for x in times])
        if np.any(np.diff(t) < 0):
            raise PowerLogError("timestamps", "time goes backwards")
        started = times[0]
    else:
        t = np.arange(count, dtype=float)
        flags.append(FLAG_ASSUMED_1S)
        notes.append("tegrastats lines carry no time: samples are taken as 1 s apart "
                     "(tegrastats' default --interval 1000)")
    where = boundary or "jetson_module"
    total = next((r for r in INPUT_RAILS if r in rails), None)
    traces = [PowerTrace(rail, where if rail == total else None, "sampled", t.tolist(), values)
              for rail, values in rails.items()]
    return PowerLog("tegrastats", traces, [total] if total else [], where, started, samples=count, flags=flags,
                    notes=notes, total_column=total)


# --- jtop -------------------------------------------------------------------------------------

_JTOP_DOMAIN = re.compile(r"(?i)_?power(_inst)?|\s*\[.*\]")
_JTOP_TOTAL = re.compile(r"(?i)tot|system|vdd_in|^power cur")


def parse_jtop(data: bytes, boundary: str | None = None) -> PowerLog:
    """jtop / jetson-stats CSV logs: a time column and power columns in mW (or W when the header says)."""
    frame = _frame(data)
    if frame.height == 0:
        raise PowerLogError("line 2", "no samples after the header")
    time_col = next(c for c in frame.columns if c.lower() in ("time", "timestamp"))
    t, started = _times(frame, time_col, ("%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%d %H:%M:%S"))
    where = boundary or "jetson_module"
    traces: list[PowerTrace] = []
    total_col: str | None = None
    total_domain: str | None = None
    for col in (c for c in frame.columns if "power" in c.lower() and "avg" not in c.lower()):
        values = _numbers(frame, col)
        if np.all(np.isnan(values)):
            continue  # an empty column ('Extra Power')
        scale = 1.0 if re.search(r"\[W\]|\(W\)", col) else W_PER_MW
        keep = ~np.isnan(values)
        domain = (_JTOP_DOMAIN.sub("", col).strip(" _") or col)[:100]
        is_total = total_col is None and bool(_JTOP_TOTAL.search(col))
        if is_total:
            total_col, total_domain = col, domain
        traces.append(PowerTrace(domain, where if is_total else None, "sampled", t[keep].tolist(),
                                 (values[keep] * scale).tolist()))
    if not traces:
        raise PowerLogError("line 1", "no power column with values")
    notes = [f"jtop log, {frame.height} samples, power in mW converted to W; total from '{total_col}'"]
    return PowerLog("jtop", traces, [total_domain] if total_domain else [], where, started, samples=frame.height,
                    notes=notes, total_column=total_col)


# --- a wall meter's CSV -----------------------------------------------------------------------

def _meter_time(text: str) -> float:
    text = text.strip()
    try:
        return float(text)  # Unix seconds
    except ValueError:
        pass
    return datetime.fromisoformat(text.replace("/", "-")).timestamp()  # naive: local time


def parse_meter_csv(data: bytes, boundary: str | None = None) -> PowerLog:
    """A wall meter's CSV: a header with a time column and a watts column."""
    text = data.decode("utf-8-sig", errors="replace")
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise PowerLogError("(whole file)", "empty")
    header = [h.strip().lower() for h in rows[0]]
    t_col = next((header.index(c) for c in METER_TIME_COLUMNS if c in header), None)
    w_col = next((header.index(c) for c in METER_WATT_COLUMNS if c in header), None)
    if t_col is None or w_col is None:
        raise PowerLogError("line 1", f"expected a time column ({', '.join(METER_TIME_COLUMNS)}) and a watts column "
                                      f"({', '.join(METER_WATT_COLUMNS)}); found {', '.join(header) or 'nothing'}")
    wall: list[float] = []
    watts: list[float] = []
    for lineno, row in enumerate(rows[1:], 2):
        if not row or not "".join(row).strip():
            continue
        try:
            wall.append(_meter_time(row[t_col]))
            watts.append(float(row[w_col].strip().removesuffix("W").strip()))
        except (ValueError, IndexError, OverflowError) as e:
            raise PowerLogError(f"line {lineno}", f"not a time and a number of watts ({e})") from e
    if len(wall) < 2:
        raise PowerLogError("(whole file)", "fewer than 2 samples")
    if any(b < a for a, b in zip(wall, wall[1:])):
        raise PowerLogError("time column", "time goes backwards")
    where = boundary or "wall"
    trace = PowerTrace("wall", where, "sampled", [w - wall[0] for w in wall], watts)
    return PowerLog("meter-csv", [trace], ["wall"], where, datetime.fromtimestamp(wall[0]), samples=len(wall),
                    total_column=header[w_col], start_wall_s=wall[0])


PARSERS: dict[str, Any] = {"nvidia-smi": parse_nvidia_smi, "tegrastats": parse_tegrastats, "jtop": parse_jtop}
