"""Linux `perf stat` counting RAPL energy (`perf stat -a -e power/energy-pkg/,power/energy-ram/ ...`), as its
display writes it (tools/perf/util/stat-display.c): the energy each event counted, in Joules, over the whole command

    Performance counter stats for 'system wide':
                 35.43 Joules power/energy-pkg/
                  1.82 Joules power/energy-ram/
          10.002233912 seconds time elapsed

or, with `-I MS`, over each interval (a line per interval and event: time since the start in s, the interval's
Joules; not a running total). perf prints a count in the locale's digits ('18,14' with a decimal comma, '1,310.43'
with a thousands comma).

RAPL's domains: `energy-pkg` the CPU package (its cores and uncore), `energy-ram` the memory beside it, both
measured, neither inside the other; `energy-cores` (PP0) and `energy-gpu` (PP1) are parts of the package, never
added to it; `energy-psys` is the whole SoC platform. The run's energy is the package's and the memory's (boundary
cpu_package), or the platform's (system); a log of the cores alone states no package energy, said.
"""

from __future__ import annotations

import re
from typing import Any

from energy.figures import energy_figures
from energy.trace import PowerTrace
from importers.base import Conversion, Importer, Source

_COUNT = r"(?P<count>[\d.,]{1,30})\s+Joules\s+(?P<event>power/energy-(?P<domain>[a-z]{1,10})/)"
_INTERVAL = re.compile(r"^\s*(?P<time>\d{1,9}\.\d{1,12})\s+" + _COUNT)
_TOTAL = re.compile(r"^\s*" + _COUNT)
_ELAPSED = re.compile(r"^\s*(?P<s>[\d.,]{1,30})\s+seconds time elapsed")
_WHOLE = ("pkg", "ram")  # measured side by side: their sum is the package's and its memory's energy
_PARTS = {"cores": "the CPU cores (PP0, inside the package)", "gpu": "the integrated GPU (PP1, inside the package)"}


def joules(text: str) -> float:
    """A count as perf prints it in any locale: '18,14' (a decimal comma), '1,310.43', '1.310,43'."""
    if "," in text and "." in text:
        text = text.replace(",", "") if text.rfind(".") > text.rfind(",") else text.replace(".", "").replace(",", ".")
    elif re.fullmatch(r"\d{1,3}(?:,\d{3})+", text) is None:
        text = text.replace(",", ".")
    else:
        text = text.replace(",", "")
    return float(text)


class PerfStatImporter(Importer):
    NAME = "perf-stat"
    TOOL = "Linux perf stat (RAPL)"
    DESCRIPTION = "perf stat's RAPL energy counts (power/energy-pkg/, -ram/, -cores/, -psys/), whole or per -I interval"

    def sniff(self, source: Source) -> bool:
        return "Joules power/energy-" in source.head

    def convert(self, conv: Conversion) -> dict[str, Any]:
        per_event: dict[str, list[tuple[float, float]]] = {}  # domain -> (interval end s, J)
        totals: dict[str, float] = {}
        elapsed = None
        for n, line in enumerate((conv.source.text or "").splitlines(), 1):
            m = _INTERVAL.match(line) or _TOTAL.match(line)
            if m is not None:
                try:
                    j = joules(m.group("count"))
                except ValueError as e:
                    raise conv.fail(f"line {n}", f"{m.group('count')!r} is not a count of Joules") from e
                if "time" in m.groupdict() and m.group("time") is not None:
                    per_event.setdefault(m.group("domain"), []).append((float(m.group("time")), j))
                else:
                    totals[m.group("domain")] = totals.get(m.group("domain"), 0.0) + j
            elif (took := _ELAPSED.match(line)) is not None:
                elapsed = joules(took.group("s"))
        traces: list[PowerTrace] = []
        for domain, samples in per_event.items():
            totals[domain] = sum(j for _, j in samples)
            starts = [0.0] + [t for t, _ in samples[:-1]]
            watts = [j / (t - a) if t > a else 0.0 for (t, j), a in zip(samples, starts, strict=True)]
            traces.append(PowerTrace(domain, "cpu_package" if domain == "pkg" else None, "counter",
                                     [t for t, _ in samples], watts))
            elapsed = max(elapsed or 0.0, samples[-1][0])
        if not totals:
            raise conv.fail("(whole file)", "no 'N Joules power/energy-...' count")
        metrics, notes = _energy(totals, elapsed)
        run = {
            "run_id": conv.run_id(0),
            "status": "ok",
            "device": conv.device(None, "cpu", where="(whole file; perf counts the machine's RAPL domains and names "
                                                     "no CPU)"),
            "config": {"workload": conv.hints.workload or "power-log",
                       "mode": conv.mode(None, "(whole file; perf stat does not say what ran: pass --mode)"),
                       "precision": conv.hints.precision, "batch_size": conv.hints.batch_size},
            "metrics": metrics,
            "flags": ["standalone_power_trace"],
            "power_traces": [t.to_json() for t in traces],
            "notes": "; ".join(["perf stat RAPL counts", *notes]),
        }
        return conv.document([run])


def _energy(totals: dict[str, float], elapsed: float | None) -> tuple[dict[str, Any], list[str]]:
    notes = [f"{d}: {j:,.2f} J" for d, j in totals.items()]
    if "psys" in totals:
        whole, boundary, what = totals["psys"], "system", "the platform (psys)"
    elif "pkg" in totals:
        whole = sum(totals[d] for d in _WHOLE if d in totals)
        boundary, what = "cpu_package", " and ".join(d for d in _WHOLE if d in totals)
    else:
        parts = ", ".join(_PARTS.get(d, d) for d in totals)
        return ({"duration_s": elapsed, "energy_missing_reason": f"only {parts} counted: no package or platform "
                 "energy (count power/energy-pkg/ too)"} if elapsed else {
                    "energy_missing_reason": f"only {parts} counted"}), notes
    metrics = {"duration_s": elapsed, **energy_figures(whole, boundary=boundary, method="counter",
                                                        duration_s=elapsed, what=f"perf's count of {what}")}
    left = [d for d in totals if d in _PARTS]
    if left:
        notes.append(f"{', '.join(_PARTS[d] for d in left)}: parts of the package, not added")
    return {k: v for k, v in metrics.items() if v is not None}, notes
