"""AMD uProf's power profile report (`AMDuProfCLI timechart --event power ...`, its CSV report): a banner
(`AMDPROFILER POWER PROFILE REPORT`), PROFILE DETAILS (`Profile Start Time:,Jun-21-2025_13-22-05`), the PROFILED
COUNTERS table (id, name, category, UNIT, description), then PROFILE RECORDS: `RecordId,Timestamp,<counter>,...`,
one row per sample, the time of day written `H:M:S:ms` without padding (`13:22:5:382`).

Learned from the report uProf 5.x writes: each counter's unit is stated once, in the counters table (W for the
socket and core powers); `socketN-package-power` is the whole package's power (the sum over sockets is the CPU's),
the `coreN-power` counters are parts of it and kept as traces of their own, never added to it. Where it measures is
the CPU package (RAPL-like estimates from the SMU). The report names the CPU by family and model numbers only,
never the device that ran the work (an NPU beside it, a GPU): the device is asked for.
"""

from __future__ import annotations

import re
from datetime import datetime

import numpy as np

from energy.trace import PowerTrace
from importers.powerlogs.log import PowerLog, PowerLogError, csv_rows
from joulebench import units

BANNER = "AMDPROFILER POWER PROFILE REPORT"
_CLOCK = re.compile(r"(\d{1,2}):(\d{1,2}):(\d{1,2}):(\d{1,3})")
_SOCKET = re.compile(r"socket(\d{1,3})-package-power", re.IGNORECASE)
_STARTED = re.compile(r"Profile Start Time:\s*,\s*([A-Za-z]{3}-\d{1,2}-\d{4}_\d{1,2}-\d{1,2}-\d{1,2})")
MAX_COUNTERS = 512


def is_uprof(head: str) -> bool:
    return head.lstrip().startswith(BANNER)


def _sections(rows: list[list[str]]) -> tuple[dict[str, str], list[list[str]]]:
    """({counter name: unit} from PROFILED COUNTERS, the PROFILE RECORDS rows from its header on)."""
    counter_units: dict[str, str] = {}
    section = ""
    for i, row in enumerate(rows):
        first = row[0].strip() if row else ""
        if first in ("PROFILED COUNTERS", "PROFILE RECORDS", "PROFILE DETAILS"):
            section = first
            if section == "PROFILE RECORDS":
                return counter_units, rows[i + 1:]
            continue
        if section == "PROFILED COUNTERS" and len(row) >= 4 and first.upper() != "COUNTER ID":
            if len(counter_units) < MAX_COUNTERS:
                counter_units[row[1].strip().lower()] = row[3].strip()
    raise PowerLogError("(whole file)", "no PROFILE RECORDS section: the report holds no samples")


def _seconds(cell: str, where: str) -> float:
    m = _CLOCK.fullmatch(cell.strip())
    if m is None:
        raise PowerLogError(where, f"{cell.strip()[:40]!r} is not a time of day written H:M:S:ms")
    h, mi, s, ms = (int(g) for g in m.groups())
    return h * 3600 + mi * 60 + s + ms / 1000


def parse_uprof(data: bytes, boundary: str | None) -> PowerLog:
    text = data.decode("utf-8-sig", errors="replace")
    rows = [r for r in csv_rows(text) if "".join(r).strip()]
    counter_units, records = _sections(rows)
    if len(records) < 3:
        raise PowerLogError("PROFILE RECORDS", "fewer than 2 samples after the header")
    header = [c.strip() for c in records[0]]
    if len(header) < 3 or header[1].lower() != "timestamp":
        raise PowerLogError("PROFILE RECORDS", "expected RecordId, Timestamp and counter columns")
    body = records[1:]
    clock = np.array([_seconds(r[1] if len(r) > 1 else "", f"record {j + 1}: Timestamp") for j, r in enumerate(body)])
    t = np.unwrap(clock - clock[0], period=86_400.0)  # a profile that runs past midnight
    if np.any(np.diff(t) < 0):
        raise PowerLogError("Timestamp", "time goes backwards; is the report from several profiles?")
    traces: list[PowerTrace] = []
    sockets: list[str] = []
    for i, name in enumerate(header[2:MAX_COUNTERS + 2], start=2):
        unit = units.find_unit(counter_units.get(name.lower(), ""))
        if unit is None or unit.kind != "power":
            continue  # a counter of another kind (temperature, frequency), or one the counters table does not list
        values = np.full(len(body), np.nan)
        for j, row in enumerate(body):
            cell = row[i].strip() if i < len(row) else ""
            if cell:
                try:
                    values[j] = float(cell) * unit.factor
                except ValueError as e:
                    raise PowerLogError(f"record {j + 1}: {name}", f"{cell[:40]!r} is not a number") from e
        keep = ~np.isnan(values)
        if keep.sum() < 2:
            continue
        package = _SOCKET.fullmatch(name) is not None
        traces.append(PowerTrace(name[:60], (boundary or "cpu_package") if package else None, "sampled",
                                 t[keep].tolist(), values[keep].tolist()))
        if package:
            sockets.append(name[:60])
    if not traces:
        raise PowerLogError("PROFILE RECORDS", "no power counter with 2 samples or more (the counters table states "
                                               "each counter's unit)")
    started = None
    if (m := _STARTED.search(text[:20_000])) is not None:
        try:
            started = datetime.strptime(m.group(1), "%b-%d-%Y_%H-%M-%S")  # local time, to the second
        except ValueError:
            started = None
    log = PowerLog("amd-uprof", traces, sockets, (boundary or "cpu_package") if sockets else "", started,
                   samples=len(body), total_column=" + ".join(sockets) or None)
    others = [tr.domain for tr in traces if tr.domain not in sockets]
    log.notes = [f"AMD uProf power profile, {len(body)} samples of {len(traces)} power counter(s)",
                 (f"{' + '.join(sockets)} is the CPU package's power (the energy is taken from it)" if sockets else
                  "no socket package power counter: no energy is taken from the per-core counters (parts of it)")
                 + (f"; {', '.join(others)[:200]} kept as traces of their own (parts of the package)" if others
                    else "")]
    return log


__all__ = ["BANNER", "is_uprof", "parse_uprof"]
