"""macOS `powermetrics` text output (`sudo powermetrics -i 100 --samplers cpu_power,gpu_power > log.txt`): a header
(`Machine model: Mac14,7`), then one block per sample, each opened by `*** Sampled system activity (Mon Oct  7
15:45:46 2024 +0200) (103.12ms elapsed) ***` and holding lines such as `CPU Power: 349 mW`, `GPU Power: 14740 mW`,
`ANE Power: 0 mW` and `Combined Power (CPU + GPU + ANE): 15089 mW` (Apple silicon), or `Intel energy model derived
package power (CPUs+GT+SA): 3.12W` (Intel Macs).

Learned from the tool's output: each figure is the average over its block's window (the `elapsed` time), so a block
is stored as a step (its power at the start and the end of its window) and the energy is exactly the sum of power
times window; the windows follow one another. The combined (or package) power is the SoC's own estimate from its
energy counters, the CPU package boundary: no DRAM, display or power-supply losses. The other power lines are its
parts and kept as traces of their own, never added to it; a line written twice in a block (`GPU Power` again in the
GPU section, rounded differently) is read once, at its first place. The header names the Mac by its model identifier
only (`Mac14,7`), not the chip: the device is asked for, and the identifier said.
"""

from __future__ import annotations

import re
from datetime import datetime

import numpy as np

from energy.trace import PowerTrace
from importers.powerlogs.log import PowerLog, PowerLogError
from joulebench import units

BLOCK = "*** Sampled system activity ("
_BLOCK = re.compile(r"^\*\*\* Sampled system activity \((.{10,60}?)\) \((\d{1,9}(?:\.\d{1,6})?)\s?ms elapsed\) \*\*\*",
                    re.MULTILINE)
_POWER = re.compile(r"^([A-Za-z][\w .,()+/-]{0,80}?power(?: \([^)\n]{1,40}\))?):"
                    r"\s*(\d{1,9}(?:\.\d{1,6})?)\s?(mW|W)\s*$", re.IGNORECASE | re.MULTILINE)
_TOTALS = ("combined power", "package power")  # the SoC's whole, before its parts
_MODEL = re.compile(r"^Machine model:\s*(\S{1,40})", re.MULTILINE)
MAX_DOMAINS = 32


def is_powermetrics(head: str) -> bool:
    return BLOCK in head[:8000] and ("Machine model:" in head[:2000] or head.lstrip().startswith(BLOCK))


def machine_model(head: str) -> str | None:
    m = _MODEL.search(head[:2000])
    return m.group(1) if m else None


def _started(text: str) -> datetime | None:
    for fmt in ("%a %b %d %H:%M:%S %Y %z", "%a %b %d %H:%M:%S %Y"):
        try:
            return datetime.strptime(re.sub(r"\s+", " ", text.strip()), fmt)
        except ValueError:
            continue
    return None


def parse_powermetrics(data: bytes, boundary: str | None) -> PowerLog:
    text = data.decode("utf-8", errors="replace")
    blocks = list(_BLOCK.finditer(text))
    if len(blocks) < 2:
        raise PowerLogError("(whole file)", "fewer than 2 sample blocks ('*** Sampled system activity ...')")
    ends = [*(b.start() for b in blocks[1:]), len(text)]
    windows: list[float] = []
    values: dict[str, list[float]] = {}
    for n, (block, end) in enumerate(zip(blocks, ends, strict=True)):
        elapsed_s = float(block.group(2)) / 1000.0
        if not 0 < elapsed_s < 86_400:
            raise PowerLogError(f"sample {n + 1}", f"an elapsed time of {block.group(2)} ms")
        windows.append(elapsed_s)
        seen: set[str] = set()
        for m in _POWER.finditer(text, block.end(), end):
            name = re.sub(r"\s+", " ", m.group(1)).strip()
            if name in seen or name not in values and len(values) >= MAX_DOMAINS:
                continue  # 'GPU Power' again under '**** GPU usage ****': the block's first line of a name is read
            seen.add(name)
            watts = float(m.group(2)) * units.UNITS["mW" if m.group(3).lower() == "mw" else "W"].factor
            values.setdefault(name, [np.nan] * n).append(watts)
        for series in values.values():
            series += [np.nan] * (n + 1 - len(series))
    if not values:
        raise PowerLogError("(whole file)", "no 'Power: N mW' line in any sample (run powermetrics with "
                                            "--samplers cpu_power,gpu_power)")
    edges = np.concatenate([[0.0], np.cumsum(windows)])
    t = np.repeat(edges, 2)[1:-1]  # each window's start and end: its average held over it
    traces = []
    for name, series in values.items():
        power = np.repeat(np.array(series, dtype=float), 2)
        keep = ~np.isnan(power)
        if keep.sum() < 2:
            continue
        traces.append(PowerTrace(name[:60], None, "sampled", t[keep].tolist(), power[keep].tolist()))
    total = next((tr for key in _TOTALS for tr in traces if tr.domain.lower().startswith(key) or key in
                  tr.domain.lower()), None)
    if total is not None:
        total.boundary = boundary or "cpu_package"
    log = PowerLog("powermetrics", traces, [total.domain] if total else [], (total.boundary or "") if total else "",
                   _started(blocks[0].group(1)), samples=len(blocks), total_column=total.domain if total else None)
    others = [tr.domain for tr in traces if tr is not total]
    log.notes = [f"macOS powermetrics, {len(blocks)} samples ({sum(windows):.3g} s) of {len(traces)} power line(s)",
                 (f"{total.domain} is the SoC's power (the energy is taken from it; each sample is the average over "
                  "its window)" if total else "no combined or package power line: no energy is taken from the parts")
                 + (f"; {', '.join(others)[:200]} kept as traces of their own (parts of it)" if others and total
                    else "")]
    return log


__all__ = ["is_powermetrics", "machine_model", "parse_powermetrics"]
