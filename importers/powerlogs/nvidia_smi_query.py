"""`nvidia-smi -q` reports (`nvidia-smi -q -d POWER`, `nvidia-smi -q -l 1`, or a script calling it in a loop), one
after another, read as a power log: each report's `Timestamp` is a sample time and each GPU's power draw then is a
sample of that GPU's trace.

    ==============NVSMI LOG==============
    Timestamp                                 : Thu Jun 30 19:31:42 2022
    Driver Version                            : 510.47.03
    Attached GPUs                             : 1
    GPU 00000000:2B:00.0
        Product Name                          : NVIDIA GeForce RTX 3090     (absent with -d POWER)
        Power Readings                        (driver 530+: 'GPU Power Readings')
            Power Draw                        : 37.44 W  (550+: 'Average Power Draw', 'Instantaneous Power Draw')
            Power Limit                       : 350.00 W (530+: 'Current Power Limit')
        Power Samples                         (the driver's own min/max/avg over its last samples: not used)
            Avg                               : 44.80 W

Learned from NVIDIA's output as drivers print it (nvidia-smi(1): `-q` prints `Key : value` lines indented under
their section, a `GPU <bus id>` line opening each GPU): the GPU's draw is `Power Draw`, else the instantaneous, else
the one-second average draw, as the CSV reader prefers power.draw, power.draw.instant, power.draw.average; `GPU
Memory Power Readings` and `Module Power Readings` (a Grace Hopper module, its CPU included) are other boundaries and
are not read. One trace per GPU (by bus id, in the order the reports list them), `gpuN` as in `nvidia_smi`; the
device is the `Product Name` when the reports give one (never guessed from the power limit); the power limit is the
first report's `Power Limit` / `Current Power Limit`. Times are the machine's local time (nvidia-smi writes no
zone), to the second. Lines between the reports that hold no letters ('!!!!!1', '-----') are separators; any other
line is not part of a report and is left out, said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from energy.trace import PowerTrace
from importers.base import MB_PER_MIB
from importers.powerlogs.log import PowerLog, PowerLogError
from joulebench import units

MAX_LINE_CHARS = 500
_BANNER = re.compile(r"=+\s{0,5}NVSMI LOG\s{0,5}=+")
_GPU = re.compile(r"GPU\s{1,5}(?P<id>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])")
_KV = re.compile(r"(?P<key>\S[^:\n]{0,80}?)\s{1,80}:(?:\s(?P<value>[^\n]{0,200}))?")
_HEADER = re.compile(r"[A-Za-z][\w .()/-]{0,80}")  # a section: 'Power Readings', 'GPU Memory Power Readings '
_DRAWS = ("Power Draw", "Instantaneous Power Draw", "Average Power Draw")  # in the order read
_LIMITS = ("Power Limit", "Current Power Limit", "Enforced Power Limit")
_POWER_SECTIONS = ("Power Readings", "GPU Power Readings")
_TIME_FORMAT = "%a %b %d %H:%M:%S %Y"  # 'Thu Jun 30 19:31:42 2022' (C locale, as nvidia-smi writes it)


@dataclass
class _Gpu:
    name: str | None = None
    draws: dict[str, float] = field(default_factory=dict)
    limit_w: float | None = None
    memory_total_mib: float | None = None
    memory_used_mib: float | None = None


@dataclass
class _Report:
    line: int  # the banner's
    time: datetime | None = None
    time_line: int = 0
    gpus: dict[str, _Gpu] = field(default_factory=dict)


def is_query_log(head: str) -> bool:
    """Whether a file is nvidia-smi -q output: its first line (after one command line naming nvidia-smi) is the
    NVSMI LOG banner, and every line of its head is a report's line or a separator."""
    lines = [line for line in head.splitlines()[:-1] if line.strip()] if "\n" in head else []
    if lines and "nvidia-smi" in lines[0] and not _BANNER.fullmatch(lines[0].strip()):
        lines = lines[1:]
    if not lines or not _BANNER.fullmatch(lines[0].strip()):
        return False
    return all(_kind(line) != "other" for line in lines)


def _kind(line: str) -> str:
    text = line.strip()
    if len(line) > MAX_LINE_CHARS:
        return "other"
    if _BANNER.fullmatch(text):
        return "banner"
    indent = len(line) - len(line.lstrip())
    if indent == 0 and _GPU.fullmatch(text):
        return "gpu"
    if " :" in line and _KV.fullmatch(text):
        return "value"
    if indent > 0 and _HEADER.fullmatch(text):
        return "section"
    return "separator" if not re.search(r"[A-Za-z]", text) else "other"


def _watts(value: str, line: int, key: str) -> float | None:
    if not re.match(r"\s*[-+]?[\d.]", value):
        return None  # 'N/A', '[Not Supported]', 'Unknown Error': no reading
    try:
        q = units.parse(value)
    except units.UnitError as e:
        raise PowerLogError(f"line {line}: {key}", f"{value.strip()[:40]!r} is not a power") from e
    if q is None or q.unit is None or q.unit.kind != "power":
        raise PowerLogError(f"line {line}: {key}", f"{value.strip()[:40]!r} is not a power in W")
    return q.unit.to(units.unit("W"), q.value)


def _mib(value: str) -> float | None:
    m = re.fullmatch(r"\s*(\d{1,9}(?:\.\d{1,6})?)\s*MiB\s*", value)
    return float(m.group(1)) if m else None


def _reports(text: str) -> tuple[list[_Report], list[str]]:
    """The reports of the text, and the lines that are no part of one ('line N: text')."""
    reports: list[_Report] = []
    other: list[str] = []
    gpu: _Gpu | None = None
    path: list[tuple[int, str]] = []  # (indent, section) of the sections the line is under
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        kind = _kind(raw)
        indent = len(raw) - len(raw.lstrip())
        if kind == "banner":
            reports.append(_Report(n))
            gpu, path = None, []
            continue
        if kind in ("other", "separator") or not reports:
            if kind == "other" or (not reports and kind != "separator"):
                other.append(f"line {n}: {raw.strip()[:60]!r}")
            continue
        report = reports[-1]
        while path and path[-1][0] >= indent:
            path.pop()
        if kind == "gpu":
            gpu = report.gpus.setdefault(raw.strip().split()[-1].upper(), _Gpu())
            continue
        if kind == "section":
            path.append((indent, raw.strip()))
            continue
        m = _KV.fullmatch(raw.strip())
        assert m is not None
        key, value = m.group("key").strip(), (m.group("value") or "").strip()
        if indent == 0:
            gpu = None
            if key == "Timestamp":
                try:
                    report.time, report.time_line = datetime.strptime(" ".join(value.split()), _TIME_FORMAT), n
                except ValueError as e:
                    raise PowerLogError(f"line {n}: Timestamp", f"{value[:40]!r} is not a time as nvidia-smi writes "
                                        "it (Thu Jun 30 19:31:42 2022)") from e
            continue
        if gpu is None:
            continue
        section = path[-1][1] if path else ""
        if not section and key == "Product Name":
            gpu.name = value or None
        elif section in _POWER_SECTIONS and key in _DRAWS:
            if (watts := _watts(value, n, key)) is not None:
                gpu.draws.setdefault(key, watts)
        elif section in _POWER_SECTIONS and key in _LIMITS and gpu.limit_w is None:
            gpu.limit_w = _watts(value, n, key)
        elif section == "FB Memory Usage" and key in ("Total", "Used"):
            if key == "Total":
                gpu.memory_total_mib = _mib(value)
            else:
                gpu.memory_used_mib = _mib(value)
    return reports, other


def parse_nvidia_smi_query(data: bytes, boundary: str | None = None) -> PowerLog:
    """One trace per GPU from the reports' Timestamp and each GPU's power draw (W)."""
    text = data.decode("utf-8-sig", errors="replace")
    reports, other = _reports(text)
    if not reports:
        raise PowerLogError("(whole file)", "no '==============NVSMI LOG==============' report")
    untimed = next((r for r in reports if r.time is None), None)
    if untimed is not None:
        raise PowerLogError(f"line {untimed.line}", "a report without its 'Timestamp' line: its samples cannot be "
                                                    "timed")
    ids: list[str] = []
    for r in reports:
        ids.extend(i for i in r.gpus if i not in ids)
    if not ids:
        raise PowerLogError("(whole file)", "the reports list no GPU ('GPU 00000000:01:00.0')")
    first = reports[0].time
    assert first is not None
    where = boundary or "gpu_board"
    traces: list[PowerTrace] = []
    previous = 0.0
    for r in reports:
        assert r.time is not None
        t = (r.time - first).total_seconds()
        if t < previous:
            raise PowerLogError(f"line {r.time_line}: Timestamp", "time goes backwards; is the log from several runs?")
        previous = t
    for i, gpu_id in enumerate(ids):
        ts: list[float] = []
        watts: list[float] = []
        for r in reports:
            gpu = r.gpus.get(gpu_id)
            draw = next((gpu.draws[k] for k in _DRAWS if gpu is not None and k in gpu.draws), None)
            if draw is not None and r.time is not None:
                ts.append((r.time - first).total_seconds())
                watts.append(draw)
        traces.append(PowerTrace(f"gpu{i}", where, "sampled", ts, watts))
    if not any(tr.t_s for tr in traces):
        raise PowerLogError("(whole file)", "no report gives a GPU's Power Draw (every one is N/A)")
    gpus = [g for r in reports for g in r.gpus.values()]
    log = PowerLog("nvidia-smi-q", traces, [tr.domain for tr in traces], where, first, samples=len(reports),
                   gpu_count=len(ids), total_column="Power Draw")
    names = {g.name for g in gpus if g.name}
    log.device_name = names.pop() if len(names) == 1 else None
    log.power_limit_w = next((g.limit_w for g in gpus if g.limit_w), None)
    totals = [g.memory_total_mib for g in gpus if g.memory_total_mib]
    used = [g.memory_used_mib for g in gpus if g.memory_used_mib is not None]
    log.memory_gb = totals[0] * MB_PER_MIB / 1e3 if totals else None
    log.mem_used_mb = max(used) * MB_PER_MIB if used else None
    samples = sum(len(tr.t_s) for tr in traces)
    log.notes.append(f"nvidia-smi -q log, {len(reports)} report(s) with {samples} power sample(s) from "
                     f"{len(ids)} GPU(s) ({', '.join(ids[:8])})")
    if len(names) > 1:
        log.notes.append(f"the GPUs are of different products ({', '.join(sorted(names)[:4])}): the device is not "
                         "stated")
    if "Power Samples" in text:
        log.notes.append("each report's 'Power Samples' (the driver's min/max/avg over its last samples) is not "
                         "read: the trace is each report's Power Draw")
    if other:
        log.notes.append(f"{len(other)} line(s) not part of an nvidia-smi -q report, left out: "
                         + "; ".join(other[:5]))
    return log
