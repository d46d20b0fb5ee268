"""NVIDIA DCGM power logs: `dcgmi dmon` text and the C API's long `GPUId,TimeStampUs,Field,Values`
CSV (power W per GPU, TOTEC energy counters in mJ). Job statistics tables are read by `importers.dcgm`.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from energy.trace import PowerTrace
from importers.powerlogs.log import FLAG_ASSUMED_1S, PowerLog, PowerLogError, csv_rows

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



def _dcgm_long(text: str, where: str) -> PowerLog:
    rows = csv_rows(text)
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
