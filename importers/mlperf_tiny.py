"""MLPerf Tiny results (mlcommons/tiny_results_*: `closed/<submitter>/results/<system>/<benchmark>/<mode>/`), as
the EnergyRunner host software writes them, a microcontroller or edge board running one inference at a time:

- energy mode, `results.txt`: 'Energy data for trial N' blocks of `Elapsed time` (seconds, unit not written),
  `Inferences`, `Power` (mW), `Total Energy` (uJ) and `Energy/Inf` (uJ/inf), then 'Median energy cost is X uJ/inf.',
  the benchmark's result: one run, its energy per inference that median, its power and time the median trial's;
  v1.0 writes 'Energy data for window N at time T for D sec.' blocks instead (`Energy` uJ, `Power` uW, `Energy/Inf.`),
  then the same windows' performance results, whose `# Inferences` each energy window is checked against;
- performance mode, `results.txt`: 'Performance results for window N' blocks (`Runtime` s, `Throughput` inf./sec.)
  and 'Median throughput is X inf./sec.' (the result), lines possibly opened by the runner's log prefix
  ('0809.200307 ulp-mlperf: '); `results.json`: one object per input window, `infer.throughput` =
  `iterations` / `elapsed_time` (microseconds): the median of the windows' throughputs;
- accuracy mode holds no performance figure: refused saying so.

Each trial's figures are checked against each other (power x time = energy, energy / inferences = energy per
inference; iterations / elapsed = throughput): a file whose figures disagree is refused naming the line. The device
is the system folder's name where a path gives one (a submission's system name, not a catalog device: kept as
stated), else not stated; the benchmark (kws, ic, vww, ad, sww) is the workload where a folder names it. The energy is
measured at the device under test's supply (MLPerf Tiny's EnergyRunner): the boundary is the system.
"""

from __future__ import annotations

import re
import statistics
from typing import Any

from importers.base import Conversion, Importer, Source, as_dict, num, positive

_PREFIX = re.compile(r"^\s*\d{1,6}\.\d{3,6}\s+[\w-]+:\s?")  # '0809.200307 ulp-mlperf: ', '00141.596 ulp-ml: '
_TRIAL = re.compile(r"^Energy data for trial (\d+)")
# v1.0's energy mode: 'Energy data for window 2 at time 10.88 for 12.50 sec.:' (the window's length its time)
_WINDOW = re.compile(r"^Energy data for window (\d+) at time [\d.]+ for (\d+(?:\.\d+)?) sec\.?:?\s*$")
_PERF_WINDOW = re.compile(r"^Performance results for window (\d+)")
_FIELD = re.compile(r"^\s*(Elapsed time|# Inferences|Inferences|Power|Total Energy|Energy/Inf|Energy)\.?\s*:\s*"
                    r"([-+\d.eE]+)\s*(\S*)")
_POWER_MW = {"mw": 1.0, "uw": 1e-3, "µw": 1e-3, "w": 1e3}  # the runner writes mW (v1.1 on) or uW (v1.0)
_MEDIAN_ENERGY = re.compile(r"Median energy cost is\s+([\d.eE+-]+)\s*uJ/inf")
_MEDIAN_RATE = re.compile(r"Median throughput is\s+([\d.eE+-]+)\s*inf\./sec")
_WINDOW_RATE = re.compile(r"^\s*Throughput:\s*([\d.eE+-]+)\s*inf\./sec")
BENCHMARKS = {"kws": "keyword spotting", "ic": "image classification", "vww": "visual wake words",
               "ad": "anomaly detection", "sww": "streaming wake word"}
NO_POWER = "MLPerf Tiny's performance mode measures no power (its energy mode does)"


def _lines(text: str) -> list[str]:
    return [_PREFIX.sub("", line) for line in text.splitlines()[:20_000]]


def _is_json_windows(doc: Any) -> bool:
    return isinstance(doc, list) and bool(doc) and all(
        isinstance(w, dict) and {"throughput", "iterations", "elapsed_time"} <= set(as_dict(w.get("infer")))
        for w in doc[:50])


class MlperfTinyImporter(Importer):
    NAME = "mlperf-tiny"
    TOOL = "MLPerf Tiny"
    DESCRIPTION = "MLPerf Tiny results: energy or performance results.txt, or performance results.json"

    def sniff(self, source: Source) -> bool:
        if _is_json_windows(source.json):
            return True
        head = "\n".join(_lines(source.head[:4096]))
        return head.startswith("Power Edition Output") or bool(
            _MEDIAN_RATE.search(head) or _MEDIAN_ENERGY.search(head) or "Performance results for window" in head)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        if _is_json_windows(doc):
            metrics = self._windows(conv, doc)
        else:
            lines = _lines(conv.source.text or "")
            text = "\n".join(lines)
            if (median := _MEDIAN_ENERGY.search(text)) is not None:
                metrics = self._energy(conv, lines, float(median.group(1)))
            elif (rate := _MEDIAN_RATE.search(text)) is not None or any(_WINDOW_RATE.match(line) for line in lines):
                rates = [float(m.group(1)) for line in lines if (m := _WINDOW_RATE.match(line))]
                median_rate = float(rate.group(1)) if rate else statistics.median(rates)
                metrics = {"throughput_sps": positive(median_rate), "energy_missing_reason": NO_POWER}
            else:
                raise conv.fail("(whole file)", "an MLPerf Tiny file with no median throughput nor energy (an "
                                "accuracy result holds no performance figure)")
        bench = next((d.lower() for d in reversed(conv.source.dirs) if d.lower() in BENCHMARKS), None)
        modes = {"energy", "performance", "accuracy"}
        system = next((d for i, d in enumerate(conv.source.dirs[:-1]) if conv.source.dirs[i + 1].lower()
                       in BENCHMARKS and d.lower() not in modes), None)
        run = {
            "run_id": conv.run_id(0),
            "status": "ok",
            "device": conv.device(system, "cpu", where="(MLPerf Tiny's results name no device; its folder does)"),
            "config": {"workload": conv.hints.workload or (f"mlperf-tiny {bench}" if bench else "unknown"),
                       "model": BENCHMARKS.get(bench or ""), "mode": "infer",
                       "precision": conv.precision(None), "batch_size": conv.hints.batch_size or 1},
            "metrics": {k: v for k, v in metrics.items() if v is not None},
            "flags": [],
            "notes": "MLPerf Tiny" + (f" {bench}" if bench else "") + ": the median the benchmark reports",
        }
        return conv.document([run])

    @staticmethod
    def _energy(conv: Conversion, lines: list[str], median_uj: float) -> dict[str, Any]:
        trials: list[dict[str, float]] = []
        counted: dict[int, float] = {}  # v1.0: a performance window's '# Inferences', by its number
        block: dict[str, float] | None = None
        for n, line in enumerate(lines, 1):
            if _TRIAL.match(line):
                block = {"line": n}
                trials.append(block)
            elif (w := _WINDOW.match(line)) is not None:
                block = {"line": n, "window": float(w.group(1)), "Elapsed time": float(w.group(2))}
                trials.append(block)
            elif (w := _PERF_WINDOW.match(line)) is not None:
                block = {"perf": float(w.group(1))}
            elif (m := _FIELD.match(line)) is not None and block is not None:
                value = num(m.group(2), f"line {n}: {m.group(1)}", conv)
                value = float("nan") if value is None else value
                key = {"Energy": "Total Energy", "# Inferences": "Inferences"}.get(m.group(1), m.group(1))
                if "perf" in block:
                    if key == "Inferences":
                        counted[int(block["perf"])] = value
                    continue
                if key == "Power":
                    factor = _POWER_MW.get(m.group(3).rstrip(".").lower())
                    if factor is None:
                        raise conv.fail(f"line {n}: Power", f"{m.group(3)[:12]!r} is no unit of power the runner "
                                        "writes (mW, uW)")
                    value *= factor
                block[key] = value
        for t in trials:
            if "Inferences" not in t and "window" in t:
                t["Inferences"] = counted.get(int(t["window"]), float("nan"))
        whole = [t for t in trials if {"Elapsed time", "Power", "Total Energy", "Energy/Inf", "Inferences"} <= set(t)
                 and t["Inferences"] == t["Inferences"]]
        if not whole:
            raise conv.fail("(whole file)", "no complete 'Energy data for trial' block (Elapsed time, Inferences, "
                            "Power, Total Energy, Energy/Inf), nor an 'Energy data for window' block with its "
                            "performance window's '# Inferences'")
        for t in whole:  # the runner's own identities: never believe a figure that can be checked
            energy_uj = t["Power"] * 1e3 * t["Elapsed time"]  # mW x s = mJ = 1000 uJ
            if not (t["Elapsed time"] > 0 and t["Inferences"] >= 1 and t["Power"] > 0) or abs(
                    energy_uj - t["Total Energy"]) > 0.02 * t["Total Energy"] or abs(
                    t["Total Energy"] / t["Inferences"] - t["Energy/Inf"]) > 0.01 * t["Energy/Inf"]:
                raise conv.fail(f"line {int(t['line'])}", "the trial's Power x Elapsed time, Total Energy and "
                                "Energy/Inf x Inferences disagree: not the EnergyRunner's figures")
        middle = min(whole, key=lambda t: abs(t["Energy/Inf"] - median_uj))
        if abs(middle["Energy/Inf"] - median_uj) > 0.01 * median_uj:
            raise conv.fail("Median energy cost", f"{median_uj:g} uJ/inf is no trial's energy per inference")
        out = {"j_per_sample": median_uj * 1e-6, "energy_j": middle["Total Energy"] * 1e-6,
               "duration_s": middle["Elapsed time"], "avg_power_w": middle["Power"] * 1e-3,
               "energy_method": "reported", "energy_boundary": conv.boundary("system")}
        rate = _MEDIAN_RATE.search("\n".join(lines))
        if rate is not None:  # v1.0 writes the performance windows of the same run after the energy ones
            out["throughput_sps"] = positive(float(rate.group(1)))
        return out

    @staticmethod
    def _windows(conv: Conversion, doc: list[dict[str, Any]]) -> dict[str, Any]:
        rates = []
        for i, window in enumerate(doc[:10_000]):
            infer = as_dict(window.get("infer"))
            at = f"window {i + 1}"
            rate = positive(num(infer.get("throughput"), f"{at}: infer.throughput", conv))
            iterations = positive(num(infer.get("iterations"), f"{at}: infer.iterations", conv))
            elapsed_us = positive(num(infer.get("elapsed_time"), f"{at}: infer.elapsed_time", conv))
            if rate is None or iterations is None or elapsed_us is None:
                raise conv.fail(at, "throughput, iterations and elapsed_time must be positive")
            if abs(iterations / (elapsed_us * 1e-6) - rate) > 0.01 * rate:
                raise conv.fail(f"{at}: infer.throughput", f"{rate:g} is not iterations / elapsed_time "
                                f"({iterations:g} / {elapsed_us * 1e-6:g} s): not the runner's figure")
            rates.append(rate)
        return {"throughput_sps": statistics.median(rates), "energy_missing_reason": NO_POWER}
