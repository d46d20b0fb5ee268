"""tegrastats output of every L4T: one line per sample, rails in mW (`POM_5V_IN 2793/1750`,
`VDD_IN 5012mW/5012mW`, three values on L4T 39), with or without a leading time; the module's
power follows the board table (`energy.rails`, through `log.jetson_log`).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import numpy as np

from importers.base import W_PER_MW
from importers.powerlogs.log import FLAG_ASSUMED_1S, PowerLog, PowerLogError, jetson_log

FLAG_TIMES_SPREAD = "sample_times_spread_within_second"

# `NAME cur/avg` (mW, L4T 28/32), `NAME curmW/avgmW` (L4T 34-36), `NAME a mW/b mW/c mW` (L4T 39)
_TEGRA_RAIL = re.compile(r"(?<![\w@])([A-Z][A-Z0-9_]*) (\d+)(?:mW)?/(\d+)(?:mW)?(?:/(\d+)(?:mW)?)?(?![\w%@])")
_TEGRA_NOT_RAILS = frozenset({"RAM", "SWAP", "IRAM", "LFB", "EMC_FREQ", "GR3D_FREQ", "APE"})
_TEGRA_TIME = re.compile(r"^(\d{2}-\d{2}-\d{4} \d{2}:\d{2}:\d{2})\s+")
_DATE_LINE = re.compile(r"^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} ([A-Z]{2,5}) \d{4}$")


def is_tegrastats_line(line: str) -> bool:
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
        if not is_tegrastats_line(line):
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
    log = jetson_log("tegrastats", arrays, t, started, count, boundary, device, flags, notes)
    log.cpu_cores, log.ram_total_mb = cores, ram_mb
    return log


_TEGRA_RAM = re.compile(r"\bRAM (\d+)/(\d+)MB")
_TEGRA_CPU = re.compile(r"\bCPU \[([^\]]*)\]")


def _tegra_cores_ram(line: str) -> tuple[int | None, float | None]:
    """CPU cores ('CPU [2%@1190,off,...]' lists every core, 'off' included) and RAM total (MB)."""
    cpu, ram = _TEGRA_CPU.search(line), _TEGRA_RAM.search(line)
    cores = len(cpu.group(1).split(",")) if cpu and cpu.group(1).strip() else None
    return cores, float(ram.group(2)) if ram and int(ram.group(2)) > 0 else None
