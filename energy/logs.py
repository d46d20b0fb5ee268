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
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import polars as pl

from energy.rails import (
    BOARDS,
    FLAG_SUM_OF_RAILS,
    board_for_device,
    boards_for_rails,
    module_power,
    modules_for,
    rail_key,
)
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


# --- detection ------------------------------------------------------------------------------

def sniff(head: str) -> str | None:
    """The log format of a file from its first lines, or None."""
    if dcgm_kind(head):
        return "dcgm"
    first = head.split("\n", 1)[0].lower()
    if "power.draw" in first and "," in first:
        return "nvidia-smi"
    lines = [line for line in head.splitlines()[:8] if line.strip()]
    tegra = [line for line in lines if _is_tegrastats_line(line)]
    if tegra and len(tegra) >= min(2, len(lines)) and len(lines) - len(tegra) <= 3:
        return "tegrastats"
    if jetson_csv_header(head.rsplit("\n", 1)[0] if len(head) >= 16000 else head) is not None:
        return "jtop"
    if _gpu_power_header(first):
        return "gpu-power-csv"
    if _TEGRA_JSON_HEAD.match(head) and any(_record_rail(k) for k in re.findall(r'"([^"]{1,60})"', head[:4000])):
        return "tegrastats-json"
    return None


def read_power_log(data: bytes, boundary: str | None = None, device: str | None = None) -> PowerLog:
    """Any supported log: nvidia-smi, tegrastats, jtop / Jetson CSV, DCGM, else a meter's time,watts CSV.
    `device` (the device the runs used) names a Jetson board whose rails a hand-rolled log does not."""
    head = _head(data)
    fmt = sniff(head)
    if fmt is None:
        return parse_meter_csv(data, boundary)
    parse = PARSERS[fmt]
    return parse(data, boundary, device) if fmt in JETSON_FORMATS else parse(data, boundary)


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


_ZONED_FORMATS = ("%Y-%m-%dT%H:%M:%S%.f%z", "%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%d %H:%M:%S%.f%z", "%Y-%m-%d %H:%M:%S%z")
_ISO_FORMATS = ("%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S")


def _times(frame: pl.DataFrame, column: str, formats: tuple[str, ...]) -> tuple[np.ndarray, datetime]:
    """Seconds from the first sample and the first sample's time: naive (local) for the tools' own
    formats, UTC when the text carries an offset (ISO 8601 written by wrappers)."""
    raw = frame[column].str.strip_chars()
    parsed = None
    for fmt in (*formats, *_ISO_FORMATS):
        attempt = raw.str.strptime(pl.Datetime("us"), fmt, strict=False, cache=False)
        if attempt.null_count() == 0:
            parsed = attempt
            break
    if parsed is None and raw.str.contains(r"[+-]\d{2}:?\d{2}$|Z$").all():
        for fmt in _ZONED_FORMATS:
            attempt = raw.str.replace(r"Z$", "+00:00").str.strptime(pl.Datetime("us", "UTC"), fmt, strict=False,
                                                                     cache=False)
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
    cols = {re.split(r" ?[\[(]", c)[0].strip(): c for c in first.columns}  # `power.draw [W]`, `power.draw(W)`
    power_col = cols.get("power.draw") or cols.get("power.draw.instant") or cols.get("power.draw.average")
    if power_col is None:
        raise PowerLogError("line 1", "no power.draw column")
    if first.height == 0:
        raise PowerLogError("line 2", "no samples after the header")
    if "timestamp" not in cols:
        raise PowerLogError("line 1", "no timestamp column: add 'timestamp' to --query-gpu so samples can be timed")
    id_cols = [cols[k] for k in ("gpu", "index", "uuid", "pci.bus_id") if k in cols]
    per_sample = [c for c in (power_col, *id_cols, cols["timestamp"], cols.get("memory.used")) if c]
    frame = _frame(data, columns=per_sample)
    # the column that tells GPUs apart: a wrapper may write a constant 'index' and the ids in 'gpu'
    gpu_key = max(id_cols, key=lambda c: frame[c].n_unique(), default=None)
    scale = W_PER_MW if "[mW]" in power_col or "(mW)" in power_col else 1.0
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


# --- Jetson rails: one rule for tegrastats, jtop and wide CSVs ----------------------------------

JETSON_MAX_W = 200.0  # no Jetson module draws more (AGX Thor's carrier input is rated 168 W): a larger "W" is mW
SINGLE_DEVICE_MAX_W = 1500.0  # no single GPU or module rail draws more (B200 1000 W, GB300 1400 W)
FLAG_TIMES_SPREAD = "sample_times_spread_within_second"
FLAG_TIMES_NOMINAL = "sample_times_nominal"


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


def _jetson_log(fmt: str, rails: dict[str, np.ndarray], t: np.ndarray, started: datetime | None, count: int,
                boundary: str | None, device: str | None, flags: list[str], notes: list[str],
                start_wall_s: float | None = None) -> PowerLog:
    totals, where = _module_totals(list(rails), device, boundary, flags, notes)
    traces = []
    for rail, values in rails.items():
        keep = ~np.isnan(values)
        traces.append(PowerTrace(rail, where if rail in totals else None, "sampled", t[keep].tolist(),
                                 values[keep].tolist()))
    log = PowerLog(fmt, traces, totals, where, started, samples=count, flags=flags, notes=notes,
                   total_column=" + ".join(totals) or None, start_wall_s=start_wall_s)
    return log


# --- tegrastats -------------------------------------------------------------------------------

# `NAME cur/avg` (mW, L4T 28/32), `NAME curmW/avgmW` (L4T 34-36), `NAME a mW/b mW/c mW` (L4T 39)
_TEGRA_RAIL = re.compile(r"(?<![\w@])([A-Z][A-Z0-9_]*) (\d+)(?:mW)?/(\d+)(?:mW)?(?:/(\d+)(?:mW)?)?(?![\w%@])")
_TEGRA_NOT_RAILS = frozenset({"RAM", "SWAP", "IRAM", "LFB", "EMC_FREQ", "GR3D_FREQ", "APE"})
_TEGRA_TIME = re.compile(r"^(\d{2}-\d{2}-\d{4} \d{2}:\d{2}:\d{2})\s+")
_DATE_LINE = re.compile(r"^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} ([A-Z]{2,5}) \d{4}$")
FLAG_ASSUMED_1S = "sample_interval_assumed_1s"


def _is_tegrastats_line(line: str) -> bool:
    return "RAM " in line and ("CPU [" in line or "EMC_FREQ" in line or "EMC " in line)


def _spread_within_seconds(stamps: list[datetime]) -> np.ndarray:
    """Seconds from the first stamp; k lines sharing one whole-second stamp are spread 1/k s apart."""
    t = np.array([(x - stamps[0]).total_seconds() for x in stamps])
    out = t.copy()
    i = 0
    while i < len(t):
        j = i
        while j + 1 < len(t) and t[j + 1] == t[i]:
            j += 1
        k = j - i + 1
        if k > 1:
            out[i:j + 1] = t[i] + np.arange(k) / k
        i = j + 1
    return out


def parse_tegrastats(data: bytes, boundary: str | None = None, device: str | None = None) -> PowerLog:
    """tegrastats output of every L4T: rails without a unit (`POM_5V_IN 2793/1750`, mW), with `mW`, or with
    three values (L4T 39); with or without a leading `MM-DD-YYYY HH:MM:SS`; a `date` line before
    untimed lines anchors them (and gives the zone). Lines that are not tegrastats output (a shell
    prompt pasted with the log) are skipped. The module's power follows the board table (energy.rails)."""
    text = data.decode("utf-8-sig", errors="replace")
    rails: dict[str, list[float]] = {}
    cores: int | None = None
    ram_mb: float | None = None
    times: list[datetime] = []
    anchor: datetime | None = None
    count = skipped = 0
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if not _is_tegrastats_line(line):
            m = _DATE_LINE.match(line)
            if m and count == 0 and anchor is None:
                try:
                    anchor = datetime.strptime(line.replace(m.group(1), "").replace("  ", " "), "%a %b %d %H:%M:%S %Y")
                except ValueError:
                    anchor = None
                if anchor is not None and m.group(1) in ("UTC", "GMT"):
                    anchor = anchor.replace(tzinfo=UTC)
            else:
                skipped += 1
            continue
        tm = _TEGRA_TIME.match(line)
        if tm:
            try:
                times.append(datetime.strptime(tm.group(1), "%m-%d-%Y %H:%M:%S"))
            except ValueError as e:
                raise PowerLogError(f"line {lineno}", f"bad timestamp {tm.group(1)!r}") from e
        if count == 0:
            cores, ram_mb = _tegra_cores_ram(line)
        found = {m.group(1): float(m.group(2)) * W_PER_MW for m in _TEGRA_RAIL.finditer(line)
                 if m.group(1) not in _TEGRA_NOT_RAILS}
        if count and set(found) != set(rails):
            raise PowerLogError(f"line {lineno}", f"power rails change from {sorted(rails)} to {sorted(found)}")
        for rail, watts in found.items():
            rails.setdefault(rail, []).append(watts)
        count += 1
    if not rails:
        raise PowerLogError("(whole file)", "no power rails (e.g. 'POM_5V_IN 2793/1750' or 'VDD_IN 5012mW/5012mW')")
    flags: list[str] = []
    notes = [f"tegrastats log, {count} samples"]
    if skipped:
        notes.append(f"{skipped} line(s) that are not tegrastats output skipped")
    started: datetime | None = None
    if times and len(times) == count:
        if any(b < a for a, b in zip(times, times[1:])):
            raise PowerLogError("timestamps", "time goes backwards")
        t = _spread_within_seconds(times)
        if len(set(times)) < len(times):
            flags.append(FLAG_TIMES_SPREAD)
            notes.append("several lines share each 1-second timestamp (tegrastats --interval under 1000 ms): "
                         "they are spread evenly within their second, in line order")
        started = times[0]
    else:
        t = np.arange(count, dtype=float)
        flags.append(FLAG_ASSUMED_1S)
        notes.append("tegrastats lines carry no time: samples are taken as 1 s apart "
                     "(tegrastats' default --interval 1000)")
        if anchor is not None:
            started = anchor
            notes.append(f"times counted from the `date` line before the log ({anchor.isoformat(sep=' ')})")
    arrays = {rail: np.asarray(values) for rail, values in rails.items()}
    log = _jetson_log("tegrastats", arrays, t, started, count, boundary, device, flags, notes)
    log.cpu_cores, log.ram_total_mb = cores, ram_mb
    return log


_TEGRA_RAM = re.compile(r"\bRAM (\d+)/(\d+)MB")
_TEGRA_CPU = re.compile(r"\bCPU \[([^\]]*)\]")


def _tegra_cores_ram(line: str) -> tuple[int | None, float | None]:
    """CPU cores ('CPU [2%@1190,off,...]' lists every core, 'off' included) and RAM total (MB)."""
    cpu, ram = _TEGRA_CPU.search(line), _TEGRA_RAM.search(line)
    cores = len(cpu.group(1).split(",")) if cpu and cpu.group(1).strip() else None
    return cores, float(ram.group(2)) if ram and int(ram.group(2)) > 0 else None


# --- jtop and other Jetson telemetry CSVs --------------------------------------------------------

_TIME_COLUMNS = ("time", "timestamp", "system-time", "datetime", "date_time", "t_ms", "time (ms)", "t_s",
                 "epoch", "unix_time")
_JTOP_TOTAL = ("power tot", "power cur")  # jtop's own total (its meaning changed across versions)
_POWER_WORD = re.compile(r"(?i)power|pwr|(?:^|[_ ])mw(?:$|[_ )])|\(mw\)|\[mw\]")
_AVERAGE = re.compile(r"(?i)(?:^|[^a-z])(avg|average|mean|max|min|peak|warn|crit)(?:[^a-z]|$)")
_DURATION = re.compile(r"(?i)duration|runtime|elapsed|latency|_time_s$|time_per|seconds")
_ROW_IDENTITY = ("model", "models", "model_name", "run", "run_id", "experiment", "tag", "dataset", "network")


def _jetson_rail_names() -> set[str]:
    names: set[str] = set()
    for board in BOARDS:
        names |= set(board.rails) | set(board.aliases)
    return names


_KNOWN_RAILS = _jetson_rail_names()
_GENERIC_RAIL_WORDS = frozenset({"GPU", "CPU", "SOC", "CV", "IN", "SYS", "SYSTEM"})


def _rail_column(col: str) -> str | None:
    """The rail a column measures (instant power), or None: averages, maxima, currents and voltages
    of a rail are not its power. 'VDD_GPU_SOC-IN_POWER' -> VDD_GPU_SOC; 'POM_5V_IN_CUR' -> POM_5V_IN."""
    name = col.strip()
    if "-" in name and re.search(r"(?i)-(in_power|power)$", name):
        return name.rsplit("-", 1)[0]
    if "-" in name:
        return None  # tegra wide CSVs: NAME-IN_VOLTAGE, NAME-AVG_POWER, ...
    low = name.lower()
    if _AVERAGE.search(low) or "voltage" in low or ("current" in low and "power" not in low):
        return None
    key = rail_key(name)
    if not key:
        return None
    if _POWER_WORD.search(name) or (key in _KNOWN_RAILS and key not in _GENERIC_RAIL_WORDS):
        return name  # a bare 'GPU' or 'CPU' column is a temperature or a load as often as a rail
    return None


_DOMAIN_NOISE = re.compile(r"(?i)(?:^|[ _])(?:power|pwr)(?:[ _]inst)?|\s*[\[(]m?W[\])]|[_ ](?:cur|mw|w)$")


def _domain(column: str) -> str:
    """A short domain name for a rail column: 'CPU_Power_Inst' -> CPU, 'Power VDD_IN' -> VDD_IN,
    'VDD_GPU_SOC-IN_POWER' -> VDD_GPU_SOC, 'Current VDD_IN Power Consumption (mW)' -> VDD_IN."""
    if "-" in column:
        return column.rsplit("-", 1)[0][:100]
    name = _DOMAIN_NOISE.sub("", column).strip(" _")
    return (rail_key(column) if " " in name or not name else name)[:100]


def _looks_like_power_table(header: list[str]) -> bool:
    """A time series of power, not a table of experiments (those name a model or run and a duration per row)."""
    low = [h.strip().lower() for h in header]
    return not any(_DURATION.search(h) for h in low) and not any(h in _ROW_IDENTITY for h in low)


def _jetson_unit(col: str, top: float, jetson: bool, flags: list[str], notes: list[str]) -> float:
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


def jetson_csv_header(text: str) -> tuple[list[list[str]], int] | None:
    """The rows of a Jetson telemetry CSV and the index of its header row (after a quoted preamble),
    when the file is one: a time column and at least one Jetson rail or jtop power column."""
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error:
        return None
    for i, row in enumerate(rows[:4]):
        cells = [c.strip() for c in row]
        if len(cells) < 2:
            continue
        low = [c.lower() for c in cells]
        if not any(c in _TIME_COLUMNS or c.startswith("time (") for c in low):
            return None
        rails = [c for c in cells if _rail_column(c)]
        jtop = any(c in _JTOP_TOTAL or c.startswith("power ") for c in low)
        known = any(rail_key(c.rsplit("-", 1)[0]) in _KNOWN_RAILS for c in cells if _rail_column(c))
        if rails and (known or jtop) and _looks_like_power_table(cells):
            return rows, i
        return None
    return None


def _csv_times(values: list[str], column: str) -> tuple[np.ndarray, datetime | None, float | None, list[str]]:
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
        if numbers[0] > 1e9:  # Unix seconds (UTC)
            started = datetime.fromtimestamp(float(numbers[0]), UTC)
            return numbers - numbers[0], started, float(numbers[0]), notes
        notes.append(f"'{column}' is seconds from the start; the wall-clock time is not in the file")
        return numbers - numbers[0], None, None, notes
    if all(re.fullmatch(r"\d{1,2}:\d{2}:\d{2}(\.\d+)?", v) for v in cleaned):
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


def parse_jtop(data: bytes, boundary: str | None = None, device: str | None = None) -> PowerLog:
    """jtop (jetson-stats) CSV logs and the other Jetson telemetry CSVs (sysfs loggers, parsed
    tegrastats, NAME-FIELD wide tables): a time column and rail power columns in mW unless the header
    says W. Rails are matched by name and the module's power follows the board table (energy.rails);
    jtop's own 'Power TOT' is used only when no rail tells the board (its meaning changed across
    jtop versions). A trailing summary row that does not fit the header is dropped."""
    text = data.decode("utf-8-sig", errors="replace")
    found = jetson_csv_header(text)
    if found is None:
        raise PowerLogError("line 1", "expected a time column and Jetson rail power columns (e.g. 'Power VDD_IN', "
                                      "'POM_5V_IN_CUR', 'VDD_GPU_SOC-IN_POWER')")
    rows, h = found
    header = [c.strip() for c in rows[h]]
    flags: list[str] = []
    notes: list[str] = []
    preamble = [" ".join(r).strip() for r in rows[:h] if "".join(r).strip()]
    body = [r for r in rows[h + 1:] if "".join(r).strip()]
    width = len(header)
    while header and header[-1] == "" and width > 1:
        width -= 1
    if body and len([c for c in body[-1] if c.strip()]) > width:
        notes.append(f"last row ({','.join(body[-1])[:60]}) is a summary, not a sample: dropped")
        body = body[:-1]
    if not body:
        raise PowerLogError("line 2", "no samples after the header")
    time_col = next(i for i, c in enumerate(header) if c.lower() in _TIME_COLUMNS or c.lower().startswith("time ("))
    t, started, start_wall, time_notes = _csv_times([r[time_col] if time_col < len(r) else "" for r in body],
                                                    header[time_col])
    notes += time_notes
    if preamble and started is None and header[time_col].lower().startswith(("time (", "t_ms")):
        notes.append(f"preamble kept as text: {preamble[0][:60]}")
    if np.any(np.diff(t) < 0):
        row = int(np.argmax(np.diff(t) < 0)) + 1
        raise PowerLogError(f"line {h + row + 2}: {header[time_col]}",
                            "time goes backwards; is the log from several runs?")
    steps = np.diff(t)
    if len(steps) > 5 and np.all(np.abs(steps - steps[0]) < 1e-9):
        flags.append(FLAG_TIMES_NOMINAL)
        notes.append(f"every interval is exactly {steps[0]:g} s: the times look computed (index x interval), not "
                     "measured, so energy over them may be off by the logger's real period")
    columns: dict[str, tuple[str, np.ndarray]] = {}
    jtop_total: str | None = None
    for i, col in enumerate(header):
        rail = _rail_column(col) if i != time_col else None
        if col.lower() in _JTOP_TOTAL:
            jtop_total = col
            rail = col
        if not rail:
            continue
        cells = [(r[i].strip() if i < len(r) else "") for r in body]
        values = np.full(len(cells), np.nan)
        for j, c in enumerate(cells):
            c = c.removesuffix("mW").removesuffix("W").strip()
            if c in ("", "-", "N/A", "nan"):
                continue
            try:
                values[j] = float(c)
            except ValueError as e:
                raise PowerLogError(f"line {h + j + 2}: {col}", f"{cells[j][:40]!r} is not a number") from e
        if not np.all(np.isnan(values)):  # an empty column ('Extra Power') is dropped
            columns[col] = ("TOT" if col == jtop_total else _domain(rail)), values
    if not columns:
        raise PowerLogError("line 1", "no power column with values")
    jetson = board_for_device(device) is not None or bool(boards_for_rails(d for d, _ in columns.values()))
    rails: dict[str, np.ndarray] = {}
    for col, (domain, values) in columns.items():
        rails[domain] = values * _jetson_unit(col, float(np.nanmax(values)), jetson, flags, notes)
    fmt = "jtop" if jtop_total or any(c.lower().startswith("power ") for c in header) else "jetson-csv"
    names = [d for d in rails if d != "TOT"]
    if jtop_total and "TOT" in rails and not module_power(names, device).ok:
        notes.append(f"total from jtop's '{jtop_total}' column: jtop reports the input rail where the board has "
                     "one and a sum of rails (or, before 4.2, one rail) where it has not")
        where = boundary or "jetson_module"
        traces = [PowerTrace(d, where if d == "TOT" else None, "sampled", t[~np.isnan(v)].tolist(),
                             v[~np.isnan(v)].tolist()) for d, v in rails.items()]
        tot_log = PowerLog(fmt, traces, ["TOT"], where, started, samples=len(body), flags=flags, notes=notes,
                           total_column=jtop_total, start_wall_s=start_wall)
        _jetson_facts(tot_log, header, body)
        return tot_log
    rails.pop("TOT", None)
    log = _jetson_log(fmt, rails, t, started, len(body), boundary, device, flags, notes, start_wall_s=start_wall)
    log.notes.insert(0, f"{fmt} log, {len(body)} samples")
    _jetson_facts(log, header, body)
    return log


_CORE_COLUMN = re.compile(r"(?i)^cpu[ _-]?(?:util[ _-]?)?(?:core[ _-]?)?(\d+)(?:[ _-]?(?:util|usage|load|%))?$")
_MODE_COLUMNS = ("nvp model", "nvpmodel", "nvp_model", "nvp mode", "power mode", "power_mode", "nvp_mode")
_RAM_CELL = re.compile(r"^\s*\d+(?:\.\d+)?\s*/\s*(\d+(?:\.\d+)?)\s*([kMG])B\s*$")
_RAM_SCALE = {"k": 1e-3, "M": 1.0, "G": 1e3}


def _jetson_facts(log: PowerLog, header: list[str], body: list[list[str]]) -> None:
    """What a Jetson CSV says of the module besides power: CPU cores (one column per core), the RAM
    total ('11283/62841MB' cells) and the power mode (jtop's 'nvp model': MAXN, 15W, ...)."""
    cores = {m.group(1) for c in header if (m := _CORE_COLUMN.match(c))}
    log.cpu_cores = len(cores) or None
    for i, col in enumerate(header):
        cells = [r[i].strip() for r in body if i < len(r) and r[i].strip()]
        if not cells:
            continue
        if "ram" in col.lower() and (m := _RAM_CELL.match(cells[0])):
            log.ram_total_mb = float(m.group(1)) * _RAM_SCALE[m.group(2)]
        if col.lower() in _MODE_COLUMNS:
            modes = list(dict.fromkeys(cells))
            if len(modes) == 1:
                log.power_mode = modes[0][:60]
            else:
                log.notes.append(f"the power mode changes during the log ({', '.join(m[:20] for m in modes[:5])}): "
                                 "no one power mode is stored")


# --- parsed tegrastats records as JSON ------------------------------------------------------------
# Scripts that parse tegrastats lines often save them as a JSON array: one record per line with an ISO
# timestamp, each rail's power in mW under its lowercased name ('vdd_gpu_soc', or '_current' and
# '_average' keys), the RAM used and total in MB; or one record per rail and line ('timestamp', 'type',
# 'value'). Either becomes a Jetson CSV read by parse_jtop, so the rail choice, units and module offer
# are those of every other Jetson log. A record's list of CPU loads is not a core count: such parsers
# drop the cores tegrastats prints as 'off'.

_RECORD_TIME_KEYS = ("timestamp", "time", "datetime", "date_time", "ts", "epoch", "unix_time")
_INSTANT_SUFFIX = re.compile(r"(?i)[_ ](?:current|curr|cur|inst|instant|now|power|power_mw|mw)$")
_AVERAGE_SUFFIX = re.compile(r"(?i)[_ ](?:average|avg|mean|max|min)$")
_INSTANT_KEYS = ("power", "cur", "curr", "current", "inst", "instant", "now")
_TEGRA_JSON_HEAD = re.compile(r'^\s*\[\s*\{[^\]]*?"(?:' + "|".join(_RECORD_TIME_KEYS) + r')"\s*:', re.I)
_LONG_KEYS = (("type", "value"), ("rail", "value"), ("rail", "power"), ("name", "value"))


def _record_rail(key: str) -> str | None:
    """The known rail a record key holds the instant power of ('vdd_gpu_soc_current' -> VDD_GPU_SOC), or None."""
    if _AVERAGE_SUFFIX.search(key):
        return None
    name = _INSTANT_SUFFIX.sub("", key).upper()
    return name if name in _KNOWN_RAILS and name not in _GENERIC_RAIL_WORDS else None


def _instant(value: Any) -> Any:
    """A rail's instant power from a record value: a number, {'cur': .., 'avg': ..} or [cur, avg]."""
    if isinstance(value, dict):
        value = next((value[k] for k in value if str(k).lower() in _INSTANT_KEYS), None)
    elif isinstance(value, list):
        value = value[0] if value else None
    return None if isinstance(value, bool) else value


def _wide_records(records: list[dict[str, Any]], time_key: str) -> list[dict[str, Any]]:
    """One record per time from one record per rail and time ({'timestamp', 'type': 'vdd_gpu_soc', 'value'})."""
    name_key, value_key = next((n, v) for n, v in _LONG_KEYS if n in records[0] and v in records[0])
    wide: dict[Any, dict[str, Any]] = {}
    for r in records:
        name = r.get(name_key)
        if isinstance(name, str) and _record_rail(name):
            wide.setdefault(r.get(time_key), {time_key: r.get(time_key)})[name] = r.get(value_key)
    return list(wide.values())


def tegrastats_json_records(data: bytes) -> tuple[list[dict[str, Any]], str] | None:
    """The records of a JSON array of parsed tegrastats samples (one per time) and their time key, or
    None when the file is not one: objects with a time key and a known Jetson rail as a key or a 'type'."""
    if not _TEGRA_JSON_HEAD.match(_head(data)):
        return None
    try:
        records = json.loads(data.decode("utf-8-sig", errors="replace"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(records, list) or not records or not all(isinstance(r, dict) for r in records):
        return None
    time_key = next((k for k in records[0] if k.lower() in _RECORD_TIME_KEYS), None)
    if time_key is None:
        return None
    if any(n in records[0] and v in records[0] for n, v in _LONG_KEYS):
        records = _wide_records(records, time_key)
    if not records or not any(_record_rail(k) for r in records[:50] for k in r):
        return None
    return records, time_key


def _tegrastats_json_csv(records: list[dict[str, Any]], time_key: str) -> str:
    """The records as a Jetson CSV: a time column, one column per rail (mW), 'RAM' cells like
    '11283/62841MB' and the power mode when the records name one."""
    rails: dict[str, str] = {}  # record key -> rail
    for r in records[:50]:
        for k in r:
            if k not in rails and (rail := _record_rail(k)):
                rails[k] = rail
    ram = "ram_total" in records[0]
    mode_key = next((k for k in records[0] if k.lower() in _MODE_COLUMNS), None)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["timestamp", *rails.values(), *(["RAM"] if ram else []), *(["nvp model"] if mode_key else [])])
    for n, r in enumerate(records):
        when = r.get(time_key)
        if not isinstance(when, (str, int, float)) or isinstance(when, bool):
            raise PowerLogError(f"record {n + 1}: {time_key}", "missing or not a time")
        row: list[Any] = [when, *("" if (v := _instant(r.get(k))) is None else v for k in rails)]
        if ram:
            row.append(f"{r.get('ram_used', 0)}/{r['ram_total']}MB" if r.get("ram_total") is not None else "")
        if mode_key:
            row.append(r.get(mode_key, ""))
        writer.writerow(row)
    return out.getvalue()


def parse_tegrastats_json(data: bytes, boundary: str | None = None, device: str | None = None) -> PowerLog:
    """A JSON array of parsed tegrastats records (see above), read as the Jetson CSV it holds."""
    found = tegrastats_json_records(data)
    if found is None:
        raise PowerLogError("item 1", "expected a JSON array of records with a time key and Jetson rail keys "
                                      "(e.g. 'timestamp' and 'vdd_gpu_soc' in mW) or 'type'/'value' pairs")
    log = parse_jtop(_tegrastats_json_csv(*found).encode(), boundary, device)
    log.fmt = "tegrastats-json"
    log.notes = [n.replace("jetson-csv log", "parsed tegrastats records (JSON array)", 1) for n in log.notes]
    log.notes.append("rails read as mW, the unit tegrastats prints them in; '_average' keys (tegrastats' running "
                     "means) are not used")
    return log

# --- DCGM: `dcgmi dmon` text and the C API's long CSV ----------------------------------------------

_DCGM_POWER_FIELDS = {"power": "POWER", "powinst": "POWINST", "power_usage": "POWER", "power_usage_instant": "POWINST",
                      "dcgm_fi_dev_power_usage": "POWER", "dcgm_fi_dev_power_usage_instant": "POWINST",
                      "155": "POWER", "157": "POWINST"}
_DCGM_ENTITY = re.compile(r"^(GPU-CI|GPU-I|GPU|CPU-CORE|CPU|SW|NVSWITCH)\s+(\d+)(?:\s+LINK\s+\d+)?\s+(.*)$")
_EPOCH_PREFIX = re.compile(r"^(\d{9,11}(?:\.\d+)?)\s+(.*)$")


def dcgm_kind(head: str) -> str | None:
    """'dmon' for `dcgmi dmon` text, 'long' for GPUId,TimeStampUs,Field,Values; None otherwise."""
    first = head.split("\n", 1)[0].strip()
    if [c.strip().lower() for c in first.split(",")][:4] == ["gpuid", "timestampus", "field", "values"]:
        return "long"
    for line in head.splitlines()[:6]:
        body = _EPOCH_PREFIX.sub(r"\2", line.strip())
        if re.match(r"^#\s*Entity\s", body):
            return "dmon"
    return None


def parse_dcgm(data: bytes, boundary: str | None = None) -> PowerLog:
    """DCGM power: `dcgmi dmon` text (DeviceMonitor.cpp: a `#Entity` header with each field's short name, a unit
    line starting `ID`, reprinted every 14 rounds; one row per entity per round; `N/A` for no value; no times
    unless a wrapper prefixes epoch seconds) or the C API's long CSV (`GPUId,TimeStampUs,Field,Values`, µs
    epoch, rows grouped by GPU). POWER / POWINST are W per GPU; TOTEC is each GPU's energy counter in mJ."""
    text = data.decode("utf-8-sig", errors="replace")
    kind = dcgm_kind(text[:16384])
    where = boundary or "gpu_board"
    if kind == "long":
        return _dcgm_long(text, where)
    if kind != "dmon":
        raise PowerLogError("line 1", "not a dcgmi dmon log ('#Entity' header) or a GPUId,TimeStampUs,Field,Values CSV")
    fields: list[str] = []
    power: dict[str, list[tuple[float, float]]] = {}
    energy: dict[str, list[float]] = {}
    rounds: dict[str, int] = {}
    stamped = True
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        m = _EPOCH_PREFIX.match(line)
        stamp = float(m.group(1)) if m else None
        body = m.group(2) if m else line
        if re.match(r"^#\s*Entity\s", body):
            fields = body.lstrip("#").split()[1:]
            continue
        if body.startswith("ID") or not fields:
            continue
        e = _DCGM_ENTITY.match(body)
        if not e:
            continue  # 'dmon was stopped due to receiving a signal', errors
        if e.group(1) != "GPU":
            continue  # MIG instances and CPUs report no board power of their own
        gpu = f"gpu{e.group(2)}"
        values = e.group(3).split()
        if len(values) != len(fields):
            raise PowerLogError(f"line {lineno}", f"{len(values)} values for {len(fields)} fields ({' '.join(fields)})")
        row = dict(zip(fields, values))
        n = rounds.get(gpu, 0)
        rounds[gpu] = n + 1
        stamped = stamped and stamp is not None
        t = stamp if stamp is not None else float(n)
        for name in ("POWINST", "POWER"):
            if name in row:
                v = _dmon_number(row[name], lineno, name)
                if v is not None:
                    power.setdefault(gpu, []).append((t, v))
                break
        if "TOTEC" in row:
            v = _dmon_number(row["TOTEC"], lineno, "TOTEC")
            if v is not None:
                energy.setdefault(gpu, []).append(v)
    if not fields:
        raise PowerLogError("(whole file)", "no '#Entity' header line")
    if not power and not energy:
        raise PowerLogError("line 1", f"a dcgmi dmon log without power fields ({' '.join(fields)}): nothing to "
                                      "measure energy with (record POWER, field 155, or TOTEC, field 156)")
    flags: list[str] = []
    notes = [f"dcgmi dmon log, {max(rounds.values(), default=0)} rounds of {len(rounds)} GPU(s)"]
    started = None
    if not stamped:
        flags.append(FLAG_ASSUMED_1S)
        notes.append("dcgmi dmon writes no times: rounds are taken as 1 s apart (its default -d 1000)")
    traces = []
    origin = min(p[0][0] for p in power.values()) if power else 0.0
    if stamped and power:
        started = datetime.fromtimestamp(origin, UTC)
    for gpu, samples in sorted(power.items()):
        traces.append(PowerTrace(gpu, where, "sampled", [t - origin for t, _ in samples], [w for _, w in samples]))
    log = PowerLog("dcgm", traces, [t.domain for t in traces], where, started, samples=sum(rounds.values()),
                   gpu_count=len(rounds), flags=flags, notes=notes, total_column="POWER",
                   start_wall_s=origin if stamped and power else None)
    deltas = [vals[-1] - vals[0] for vals in energy.values() if len(vals) >= 2]
    if deltas and all(d >= 0 for d in deltas) and len(deltas) == len(energy):
        log.counter_j = sum(deltas) / 1000.0  # mJ -> J
        log.notes.append("energy from each GPU's TOTEC counter (last - first, mJ)")
    return log


def _dmon_number(text: str, lineno: int, field: str) -> float | None:
    if text == "N/A":
        return None
    try:
        return float(text)
    except ValueError as e:
        raise PowerLogError(f"line {lineno}: {field}", f"{text[:40]!r} is not a number") from e


def _csv_rows(text: str) -> list[list[str]]:
    try:
        return list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as e:  # a stray carriage return or NUL inside a field
        raise PowerLogError("(whole file)", f"not a readable CSV ({e})") from e


def _dcgm_long(text: str, where: str) -> PowerLog:
    rows = _csv_rows(text)
    series: dict[str, list[tuple[float, float]]] = {}
    for lineno, row in enumerate(rows[1:], 2):
        if not row or not "".join(row).strip():
            continue
        if len(row) < 4:
            raise PowerLogError(f"line {lineno}", "expected GPUId,TimeStampUs,Field,Values")
        field = _DCGM_POWER_FIELDS.get(row[2].strip().lower())
        if field is None:
            continue
        try:
            t_us, watts = float(row[1]), float(row[3])
        except ValueError as e:
            raise PowerLogError(f"line {lineno}", f"not a time (µs) and a number of watts ({e})") from e
        series.setdefault(f"gpu{row[0].strip()}", []).append((t_us / 1e6, watts))
    if not series:
        raise PowerLogError("(whole file)", "no power field (power_usage, power_usage_instant) in the log")
    origin = min(t for samples in series.values() for t, _ in samples)
    traces = []
    for gpu, samples in sorted(series.items(), key=lambda kv: int(kv[0][3:]) if kv[0][3:].isdigit() else 0):
        samples.sort()
        traces.append(PowerTrace(gpu, where, "sampled", [t - origin for t, _ in samples], [w for _, w in samples]))
    notes = [f"DCGM field log, {sum(len(s) for s in series.values())} power samples of {len(series)} GPU(s), "
             "sorted by time per GPU"]
    return PowerLog("dcgm", traces, [t.domain for t in traces], where, datetime.fromtimestamp(origin, UTC),
                    samples=sum(len(s) for s in series.values()), gpu_count=len(series), notes=notes,
                    total_column="power_usage", start_wall_s=origin)


# --- a wall meter's CSV -----------------------------------------------------------------------

def _meter_time(text: str) -> float:
    text = text.strip()
    try:
        return float(text)  # Unix seconds
    except ValueError:
        pass
    return datetime.fromisoformat(text.replace("/", "-")).timestamp()  # naive: local time


_GPU_ID = re.compile(r"(?:gpu|cuda|device)[ _:#-]?(\d+)")
_GPU_POWER_WORD = re.compile(r"power|pwr|watt|(?:^|[ _\[(])m?w(?:$|[\])])")


def _gpu_power_index(column: str) -> int | None:
    """The GPU a column gives the instant power of ('GPU_0_power_w', 'gpu1 power (W)'), else None."""
    low = column.strip().lower()
    m = _GPU_ID.search(low)
    if m is None or _AVERAGE.search(low) or re.search(r"energy|limit|cap|joule|_j$|\bj\b", low):
        return None
    rest = (low[:m.start()] + " " + low[m.end():]).strip(" _-")
    return int(m.group(1)) if _GPU_POWER_WORD.search(rest) else None


def _gpu_power_header(first_line: str) -> bool:
    cells = [c.strip().strip('"') for c in first_line.split(",")]
    low = [c.lower() for c in cells]
    has_time = any(c in _TIME_COLUMNS or c in METER_TIME_COLUMNS for c in low)
    return has_time and any(_gpu_power_index(c) is not None for c in cells) and _looks_like_power_table(cells)


def parse_gpu_power_csv(data: bytes, boundary: str | None = None) -> PowerLog:
    """A wide GPU power log written with NVML (pynvml) or a wrapper: a time column (Unix seconds,
    seconds from any origin, or ISO 8601) and one instant-power column per GPU ('GPU_0_power_w')."""
    text = data.decode("utf-8-sig", errors="replace")
    rows = [r for r in _csv_rows(text) if "".join(r).strip()]
    if len(rows) < 3:
        raise PowerLogError("(whole file)", "fewer than 2 samples after the header")
    header = [c.strip() for c in rows[0]]
    low = [c.lower() for c in header]
    time_col = next(i for i, c in enumerate(low) if c in _TIME_COLUMNS or c in METER_TIME_COLUMNS)
    gpu_cols = {i: idx for i, c in enumerate(header) if (idx := _gpu_power_index(c)) is not None}
    body = rows[1:]
    t, started, start_wall, notes = _csv_times([r[time_col] if time_col < len(r) else "" for r in body],
                                               header[time_col])
    if np.any(np.diff(t) < 0):
        raise PowerLogError(header[time_col], "time goes backwards; is the log from several runs?")
    where = boundary or "gpu_board"
    flags: list[str] = []
    traces = []
    for i, gpu in sorted(gpu_cols.items(), key=lambda kv: kv[1]):
        values = np.full(len(body), np.nan)
        for j, row in enumerate(body):
            cell = row[i].strip().removesuffix("W").strip() if i < len(row) else ""
            if cell in ("", "N/A", "nan"):
                continue
            try:
                values[j] = float(cell)
            except ValueError as e:
                raise PowerLogError(f"line {j + 2}: {header[i]}", f"{cell[:40]!r} is not a number") from e
        if np.all(np.isnan(values)):
            continue
        values = values * _jetson_unit(header[i], float(np.nanmax(values)), False, flags, notes)
        keep = ~np.isnan(values)
        traces.append(PowerTrace(f"gpu{gpu}", where, "sampled", t[keep].tolist(), values[keep].tolist()))
    if not traces:
        raise PowerLogError("line 1", "no GPU power column with values")
    log = PowerLog("gpu-power-csv", traces, [tr.domain for tr in traces], where, started, samples=len(body),
                   gpu_count=len(traces), flags=flags, start_wall_s=start_wall,
                   total_column=" + ".join(header[i] for i in gpu_cols))
    log.notes = [f"GPU power log, {len(body)} samples of {len(traces)} GPU(s)", *notes]
    return log


def parse_meter_csv(data: bytes, boundary: str | None = None) -> PowerLog:
    """A wall meter's CSV: a header with a time column and a watts column."""
    text = data.decode("utf-8-sig", errors="replace")
    rows = _csv_rows(text)
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


PARSERS: dict[str, Any] = {"nvidia-smi": parse_nvidia_smi, "tegrastats": parse_tegrastats, "jtop": parse_jtop,
                           "dcgm": parse_dcgm, "gpu-power-csv": parse_gpu_power_csv,
                           "tegrastats-json": parse_tegrastats_json}
JETSON_FORMATS = ("tegrastats", "jtop", "tegrastats-json")
