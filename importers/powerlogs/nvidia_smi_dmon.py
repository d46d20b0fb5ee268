"""`nvidia-smi dmon` output: the device monitor's columns, one row per GPU per round.

The monitor prints two `#` lines, the field names (`# gpu pwr gtemp mtemp sm mem ...`) and their units
(`# Idx W C C % % ...`), and prints them again every few dozen rounds; `-o D` / `-o T` put a `Date`
(YYYYMMDD) and a `Time` (HH:MM:SS) column before `gpu`; `--format csv` separates the cells by commas. A field
the GPU does not report is `-`. Without a Time column the rounds carry no time: they are `-d` seconds apart,
1 s unless the command said otherwise, and that is flagged. Power is `pwr` in the unit its units line names
(W); every other field (temperatures, utilisation, clocks, memory) is left unread. `nvidia-smi pmon` (per
process, no power) has the same header shape and is refused with that reason.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from energy.trace import PowerTrace
from importers.powerlogs.log import FLAG_ASSUMED_1S, PowerLog, PowerLogError

_HEADER = re.compile(r"^#\s*(?:Date[\s,]+)?(?:Time[\s,]+)?gpu\b", re.I)
_UNITS = re.compile(r"^#\s*(?:YYYYMMDD[\s,]+)?(?:HH:MM:SS[\s,]+)?Idx\b", re.I)
_WATTS = {"w": 1.0, "mw": 1e-3}


def _cells(line: str) -> list[str]:
    return [c for c in re.split(r"[\s,]+", line.strip().lstrip("#").strip()) if c]


def is_dmon(head: str) -> bool:
    """True when the text's first lines hold dmon's field line followed by its units line."""
    lines = [line.strip() for line in head.splitlines()[:12] if line.strip()]
    return any(_HEADER.match(a) and _UNITS.match(b) for a, b in zip(lines, lines[1:]))


def _time(date: str | None, clock: str | None, where: str) -> datetime | None:
    if clock is None:
        return None
    try:
        if date is not None:
            return datetime.strptime(f"{date} {clock}", "%Y%m%d %H:%M:%S")
        return datetime.strptime(clock, "%H:%M:%S")
    except ValueError as e:
        raise PowerLogError(where, f"{date or ''} {clock} is not dmon's YYYYMMDD HH:MM:SS time") from e


def parse_nvidia_smi_dmon(data: bytes, boundary: str | None = None) -> PowerLog:
    """GPU board power per GPU from `nvidia-smi dmon` output (see the module's docstring)."""
    text = data.decode("utf-8-sig", errors="replace")
    fields: list[str] = []
    units: list[str] = []
    power: dict[str, list[tuple[datetime | float, float]]] = {}
    rounds: dict[str, int] = {}
    missing = 0
    days, before = 0, None  # a time of day without a date passes midnight when it falls below the one before
    lines = text.splitlines()
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for i, raw in enumerate(lines):
        line = raw.strip()
        if not line:
            continue
        if _HEADER.match(line):
            fields = [c.lower() for c in _cells(line)]
            if "pwr" not in fields:
                what = "per-process utilisation (nvidia-smi pmon)" if "pid" in fields else " ".join(fields)
                raise PowerLogError(f"line {i + 1}", f"an nvidia-smi monitor log without a pwr column ({what}): "
                                                     "nothing to measure energy with (record it with dmon -s p)")
            continue
        if _UNITS.match(line):
            units = [c.lower() for c in _cells(line)]
            continue
        cells = _cells(line)
        if not fields or not cells or not cells[0][:1].isdigit():
            continue  # a shell prompt, '^C', a wrapper's own line
        if len(cells) != len(fields):
            if i == last:
                break  # the monitor stopped mid-line
            raise PowerLogError(f"line {i + 1}", f"{len(cells)} values for {len(fields)} fields ({' '.join(fields)})")
        row = dict(zip(fields, cells))
        gpu = f"gpu{row['gpu']}"
        n = rounds.get(gpu, 0)
        rounds[gpu] = n + 1
        when = _time(row.get("date"), row.get("time"), f"line {i + 1}")
        if when is not None and "date" not in row:
            days += before is not None and when < before
            before = when
            when += timedelta(days=days)
        unit = units[fields.index("pwr")] if len(units) == len(fields) else "w"
        if unit not in _WATTS:
            raise PowerLogError(f"line {i + 1}: pwr", f"unit {unit!r} is not a power unit (W)")
        value = row["pwr"]
        if value == "-":
            missing += 1
            continue
        try:
            watts = float(value) * _WATTS[unit]
        except ValueError as e:
            raise PowerLogError(f"line {i + 1}: pwr", f"{value[:40]!r} is not a number") from e
        power.setdefault(gpu, []).append((when if when is not None else float(n), watts))
    if not fields:
        raise PowerLogError("(whole file)", "no dmon header line ('# gpu pwr ...')")
    if not power:
        raise PowerLogError("(whole file)", "every pwr cell is '-': the GPU reports no power draw")
    return _log(power, rounds, missing, boundary or "gpu_board")


def _log(power: dict[str, list[tuple[datetime | float, float]]], rounds: dict[str, int], missing: int,
         where: str) -> PowerLog:
    stamps = [t for samples in power.values() for t, _ in samples]
    timed = isinstance(stamps[0], datetime)
    flags: list[str] = []
    notes = [f"nvidia-smi dmon log, {max(rounds.values())} rounds of {len(rounds)} GPU(s)"]
    started: datetime | None = None
    traces = []
    if timed:
        origin = min(t for t in stamps if isinstance(t, datetime))
        dated = origin.year > 1900
        started = origin if dated else None
        for gpu, samples in sorted(power.items()):
            t_s = [(t - origin).total_seconds() for t, _ in samples if isinstance(t, datetime)]
            traces.append(PowerTrace(gpu, where, "sampled", t_s, [w for _, w in samples]))
        if not dated:
            notes.append("dmon wrote the time of day without a date (-o T): times are from the first round")
        notes.append("dmon's times are whole seconds")
    else:
        flags.append(FLAG_ASSUMED_1S)
        notes.append("dmon wrote no times (run without -o T): rounds are taken as 1 s apart, its default -d 1")
        for gpu, samples in sorted(power.items()):
            traces.append(PowerTrace(gpu, where, "sampled", [float(t) for t, _ in samples if isinstance(t, float)],
                                     [w for _, w in samples]))
    if missing:
        notes.append(f"{missing} round(s) with pwr '-' (not reported) left out")
    return PowerLog("nvidia-smi-dmon", traces, [t.domain for t in traces], where, started,
                    samples=sum(rounds.values()), gpu_count=len(rounds), flags=flags, notes=notes, total_column="pwr")

