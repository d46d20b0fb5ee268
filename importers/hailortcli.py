"""HailoRT's command line (`hailortcli`, hailo-ai/hailort: hailortcli/benchmark_command.cpp, infer_stats_printer.cpp),
the tool every Hailo-8 / Hailo-8L accelerator (the Raspberry Pi AI HAT and Kit among them) is benchmarked with:

- `hailortcli benchmark NET.hef` prints, after its progress lines, a Summary with one block a network group:
  `FPS     (hw_only) = x`, `        (streaming) = y`, `Latency (hw) = z ms`, optionally `        (overall) = w ms`,
  then, where the platform measures power, `Device ID:` and `  Power in streaming mode (average) = p W` / `(max)`;
- `hailortcli run NET.hef` prints '> Inference result:' with ` Network group: NAME`, `    FPS: x`,
  `    HW Latency: z ms`, `    Overall Latency: w ms` and, per device, `    Average power consumption: p W`;
- `hailortcli benchmark --csv FILE` writes `net_name,fps,hw_only_fps,num_of_frames,num_of_frames_hw_only,hw_latency,
  overall_latency,min_power,average_power,max_power` (fps the streaming one; latencies in ms and power in W, as the
  code prints them; units unwritten).

What a run stores: the streaming FPS (frames from the host through the device and back, with the format transforms:
what an application gets) as frames/s; the overall latency (host send to receive) as the latency where it was
measured; the HW-only FPS and the hardware latency (the chip's own, without the host) in the notes, never as the run's
figures; the average power of the streaming phase, measured by the device's own sensor (the accelerator module, not
the host: boundary gpu_board), so J per frame = that power / the streaming FPS of the same phase. Power printed in
A or mA is a current: not stored. The progress lines ('Network x/x: 53% | 463 | FPS: 57.81 | ETA') are running
figures, never results; terminal codes and carriage-return redraws are removed first. The model is the HEF's name
on the command line where the capture holds it, else the network group's; the device is never guessed from the HEF
(a HEF compiled for hailo8l names an architecture, kept in the notes); the batch size is `--batch-size` on the
command line, else the tool's default 1 where the command line is in the capture, else not stated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count, num, positive, read_csv
from importers.text_lines import TERMINAL

_COMMAND = re.compile(r"hailortcli\s+(benchmark|run)\b(?P<args>[^\n]{0,1000})")
_HEF = re.compile(r"(?:^|\s)(?:--hef\s+)?(?P<path>[^\s'\"]{1,400}?\.hef)\b")
_BATCH = re.compile(r"--batch-size[\s=]+(\d{1,6})")
_NUMBER = r"([-+]?\d{1,12}(?:\.\d{1,12})?(?:[eE][-+]?\d{1,3})?)"
_HW_FPS = re.compile(r"^FPS\s+\(hw_only\)\s*=\s*" + _NUMBER)
_STREAM_FPS = re.compile(r"^\s*\(streaming\)\s*=\s*" + _NUMBER)
_HW_LATENCY = re.compile(r"^\s*(?:Latency \(hw\)\s*=|HW Latency:)\s*" + _NUMBER + r"\s*ms")
_OVERALL = re.compile(r"^\s*(?:\(overall\)\s*=|Overall Latency:)\s*" + _NUMBER + r"\s*ms")
_POWER = re.compile(r"^\s*(?:Power in streaming mode \(average\)\s*=|Average power consumption:)\s*" + _NUMBER
                    + r"\s*(\w{1,3})\b")
_RUN_RESULT = re.compile(r"^>?\s*Inference result:")
_GROUP = re.compile(r"^\s*Network group:\s*(\S{1,200})")
_RUN_FPS = re.compile(r"^\s*FPS:\s*" + _NUMBER + r"\s*$")
_PROGRESS_NET = re.compile(r"^\s*Network\s+([^\s:/]{1,200})(?:/\S{0,200})?:\s+\d{1,3}%")
_CSV_HEAD = ("net_name", "fps", "hw_only_fps")
_POWER_UNITS = {"W": 1.0, "mW": 1e-3}
_HEF_ARCH = re.compile(r"(hailo15h|hailo15m|hailo10h|hailo8l|hailo8|h8l|h8)(?![a-z0-9])", re.IGNORECASE)
NO_POWER = "the platform measured no power (hailortcli prints a power line only where the device measures it)"


@dataclass
class _Result:
    line: int
    model: str | None
    group: str | None = None
    batch: int | None = None
    command: str = ""
    fps: float | None = None
    hw_fps: float | None = None
    hw_latency_ms: float | None = None
    overall_ms: float | None = None
    power_w: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _lines(text: str) -> list[str]:
    """The capture's lines with its terminal escapes removed (a carriage-return redraw is a line of its own)."""
    return [TERMINAL.sub("", raw) if "\x1b" in raw else raw for raw in text.splitlines()[:200_000]]


class HailortcliImporter(Importer):
    NAME = "hailortcli"
    TOOL = "HailoRT hailortcli"
    DESCRIPTION = "HailoRT's hailortcli benchmark or run output (its Summary: FPS, latency, power) or benchmark --csv"

    def sniff(self, source: Source) -> bool:
        head = source.head[:16_384]
        if head.lstrip().startswith(",".join(_CSV_HEAD)):
            return True
        plain = TERMINAL.sub("", head)
        started = "Starting Measurements" in plain or "Inference result:" in plain
        return bool(re.search(r"Measuring FPS in (?:hw_only|HW-only) mode", plain)) or (
            _COMMAND.search(plain) is not None and started) or bool(
            re.search(r"^FPS\s+\(hw_only\)\s*=", plain, re.MULTILINE))

    def convert(self, conv: Conversion) -> dict[str, Any]:
        text = conv.source.text or ""
        results = self._csv(conv, text) if text.lstrip().startswith(",".join(_CSV_HEAD)) else self._text(text)
        results = [r for r in results if r.fps is not None or r.overall_ms is not None]
        if not results:
            raise conv.fail("(whole file)", "a hailortcli capture without a Summary (FPS (hw_only), (streaming)) or "
                            "an '> Inference result:' block: the measurement did not finish; the progress lines' "
                            "running FPS are no results")
        check_run_count(conv, len(results), "the hailortcli results in it")
        return conv.document([self._run(conv, i, r) for i, r in enumerate(results)])

    @staticmethod
    def _text(text: str) -> list[_Result]:
        results: list[_Result] = []
        model: str | None = None
        batch: int | None = None
        command = ""
        groups: list[str] = []  # the network groups the progress lines name, for a Summary that names none
        in_summary = -1  # the Summary's blocks read so far; -1 outside a Summary
        for n, line in enumerate(_lines(text), 1):
            if (m := _COMMAND.search(line)) is not None:
                command = f"hailortcli {m.group(1)}{m.group('args')}".strip()
                hef = _HEF.search(m.group("args"))
                model = re.sub(r"\.hef$", "", hef.group("path").rsplit("/", 1)[-1]) if hef else None
                found = _BATCH.search(m.group("args"))
                batch = int(found.group(1)) if found else 1  # the tool's default where the command line is here
                groups, in_summary = [], -1
                continue
            if line.strip() == "Summary":
                in_summary = 0
                continue
            if (m := _PROGRESS_NET.match(line)) is not None and m.group(1) not in groups:
                groups.append(m.group(1))
            hw_fps = _HW_FPS.match(line) if in_summary >= 0 else None
            if hw_fps is not None or _RUN_RESULT.match(line):
                group = groups[in_summary] if hw_fps and in_summary < len(groups) else None
                results.append(_Result(n, model, group, batch if command else None, command))
                if hw_fps is not None:
                    results[-1].hw_fps = float(hw_fps.group(1))
                    in_summary += 1
                continue
            if not results:
                continue
            last = results[-1]
            if (m := _GROUP.match(line)) is not None:
                last.group = m.group(1)
            elif (m := _STREAM_FPS.match(line)) is not None or (m := _RUN_FPS.match(line)) is not None:
                last.fps = float(m.group(1))
            elif (m := _HW_LATENCY.match(line)) is not None:
                last.hw_latency_ms = float(m.group(1))
            elif (m := _OVERALL.match(line)) is not None:
                last.overall_ms = float(m.group(1))
            elif (m := _POWER.match(line)) is not None:
                unit = m.group(2)
                if unit in _POWER_UNITS:
                    last.power_w.append(float(m.group(1)) * _POWER_UNITS[unit])
                else:
                    last.notes.append(f"line {n}: {m.group(1)} {unit} is a current, not a power: not stored")
        return results

    @staticmethod
    def _csv(conv: Conversion, text: str) -> list[_Result]:
        header, rows = read_csv(conv, text)
        at = {name: i for i, name in enumerate(header)}

        def value(row: list[str], name: str, where: str) -> float | None:
            i = at.get(name)
            return num(row[i], f"{where}: {name}", conv) if i is not None and i < len(row) and row[i] else None

        results = []
        for lineno, row in rows:
            where = f"line {lineno}"
            result = _Result(lineno, None, row[0][:200] if row else None)
            result.fps, result.hw_fps = value(row, "fps", where), value(row, "hw_only_fps", where)
            result.hw_latency_ms, result.overall_ms = value(row, "hw_latency", where), value(row, "overall_latency",
                                                                                            where)
            if (power := value(row, "average_power", where)) is not None:
                result.power_w.append(power)
            results.append(result)
        return results

    @staticmethod
    def _run(conv: Conversion, index: int, r: _Result) -> dict[str, Any]:
        where = f"line {r.line}"
        metrics: dict[str, Any] = {}
        notes = [f"hailortcli: {r.command[:300]}" if r.command else "hailortcli"] + r.notes
        fps = positive(r.fps)
        if r.fps is not None and fps is None:
            raise conv.fail(f"{where}: FPS (streaming)", f"{r.fps:g} frames/s: a finished measurement has frames")
        if fps is not None:
            metrics.update(throughput_sps=fps, sample_unit="frame")
        if r.hw_fps is not None:
            notes.append(f"FPS (hw_only) {r.hw_fps:g}: the chip alone, without host transfers (not the run's rate)")
        if r.hw_latency_ms is not None:
            notes.append(f"Latency (hw) {r.hw_latency_ms:g} ms: the chip's own, without the host (not the run's "
                         "latency)")
        if positive(r.overall_ms) is not None:
            metrics["latency_avg_ms"] = r.overall_ms
        if len(r.power_w) == 1 and positive(r.power_w[0]) is not None:
            metrics.update(avg_power_w=r.power_w[0], energy_method="reported",
                           energy_boundary=conv.boundary("gpu_board"))
            notes.append("power: the Hailo device's own sensor during the streaming FPS phase (the accelerator "
                         "module, not the host)")
            if fps is not None:
                metrics["j_per_sample"] = r.power_w[0] / fps
                notes.append("J per frame = average power in streaming mode / FPS (streaming)")
            metrics["energy_missing_reason"] = "hailortcli states a power but not the phase's duration"
        elif len(r.power_w) > 1:
            notes.append(f"{len(r.power_w)} devices' powers for one result: no one device's power, not stored")
            metrics["energy_missing_reason"] = "several devices measured for one result"
        else:
            metrics["energy_missing_reason"] = NO_POWER
        model = r.model or r.group
        if arch := _HEF_ARCH.search(r.command):
            notes.append(f"the HEF is compiled for {arch.group(1)} (an architecture, not the device: not taken as it)")
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": conv.device(None, where=f"({where}: hailortcli names no device)"),
            "config": {
                "workload": conv.hints.workload or (model or "hailortcli")[:200],
                "model": model,
                "mode": "infer",
                "precision": conv.precision(None),
                "batch_size": r.batch or conv.hints.batch_size,
                "engine": "hailort",
                "tag": f"network group {r.group}"[:200] if r.group and r.model and r.group != r.model else None,
            },
            "metrics": metrics,
            "flags": [],
            "notes": "; ".join(notes),
        }
