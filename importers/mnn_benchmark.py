"""Alibaba MNN's `benchmark.out` console output (alibaba/MNN benchmark/benchmark.cpp), as saved logs or pasted into
Markdown pages under a heading per phone or board:

    MNN benchmark
    Forward type: **CPU** thread=4** precision=2
    --------> Benchmarking... loop = 50
    [ - ] resnet-v2-50.mnn            max =  166.551ms  min =  152.422ms  avg =  154.803ms

After its `Forward type` line (the backend: CPU, Vulkan, OpenCL, Metal, ...; the threads; MNN's precision mode, an
enum: 0 normal, 1 high, 2 low, not a numeric format) and its `Benchmarking... loop = N` line (the timed rounds, after
warm-up rounds it does not time), a line a model: the slowest, fastest and mean wall time of one inference in ms
(each round copies the input in and the output out). Each model line is one run: latency_avg_ms the avg,
latency_max_ms the max, the min in the notes. The backend, the threads, the precision mode and the heading above the
block (the phone, often no device JouleBench knows) are the run's tag, so that a CPU run is never pooled with a GPU
one; the device is a heading's only where it names a board JouleBench knows and the run used the CPU, else not stated
(the GPU of a Vulkan or OpenCL run is never printed).
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count
from importers.device_text import device_named, kind_of_device

_FORWARD = re.compile(r"^\s{0,8}Forward type:\s{0,4}\**\s{0,2}(?P<backend>[A-Za-z_0-9]{1,20})\**"
                      r"(?:\s{0,4}thread\s?=\s?(?P<threads>\d{1,4})\**)?(?:\s{0,4}precision\s?=\s?(?P<precision>\d))?")
_LOOP = re.compile(r"^\s{0,8}-+>\s?Benchmarking\.\.\.\s{0,4}loop\s?=\s?(?P<loop>\d{1,9})")
_ROW = re.compile(r"^\s{0,8}\[ - \]\s{1,8}(?P<name>\S{1,200})\s{1,80}max\s?=\s{0,20}(?P<max>\d{1,9}(?:\.\d{1,9})?)"
                  r"\s?ms\s{1,20}min\s?=\s{0,20}(?P<min>\d{1,9}(?:\.\d{1,9})?)\s?ms\s{1,20}"
                  r"avg\s?=\s{0,20}(?P<avg>\d{1,9}(?:\.\d{1,9})?)\s?ms\s{0,8}`{0,3}\s*$")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(?P<text>[^\n]{1,200}?)[ \t#]*$")
_PRECISION_MODES = {"0": "normal", "1": "high", "2": "low", "3": "low_bf16"}


class MnnBenchmarkImporter(Importer):
    NAME = "mnn-benchmark"
    TOOL = "MNN"
    DESCRIPTION = "Alibaba MNN benchmark.out output ('Forward type:' ... '[ - ] model.mnn  max = ..ms  min = ..ms')"

    def sniff(self, source: Source) -> bool:
        head = source.head
        return "Forward type:" in head and any(_ROW.match(line) for line in head.splitlines())

    def convert(self, conv: Conversion) -> dict[str, Any]:
        runs: list[dict[str, Any]] = []
        heading = ""
        forward: re.Match[str] | None = None
        loop: str | None = None
        bad: list[int] = []
        for n, line in enumerate((conv.source.text or "").splitlines()[:200_000], 1):
            if (m := _HEADING.match(line)) is not None:
                heading, forward, loop = m.group("text").strip(), None, None
            elif (m := _FORWARD.match(line)) is not None:
                forward, loop = m, None
            elif (m := _LOOP.match(line)) is not None:
                loop = m.group("loop")
            elif (m := _ROW.match(line)) is not None:
                low, high, avg = float(m.group("min")), float(m.group("max")), float(m.group("avg"))
                if not low <= avg <= high or avg <= 0:
                    bad.append(n)
                    continue
                check_run_count(conv, len(runs) + 1, "its model lines")
                runs.append(self._run(conv, len(runs), n, m.group("name"), avg, high, low, heading, forward, loop))
        if bad:
            conv.warn(f"line {', '.join(map(str, bad[:10]))} left out: an avg outside its [min, max], not as "
                      "benchmark.out prints it")
        if not runs:
            raise conv.fail("(whole file)", "no '[ - ] <model>  max = ..ms  min = ..ms  avg = ..ms' line")
        return conv.document(runs)

    @staticmethod
    def _run(conv: Conversion, index: int, line: int, name: str, avg: float, high: float, low: float,
             heading: str, forward: re.Match[str] | None, loop: str | None) -> dict[str, Any]:
        backend = forward.group("backend") if forward else None
        parts = [heading[:80]] if heading else []
        if forward is not None:
            parts.append(f"{backend} backend" + (f", {forward.group('threads')} threads" if forward.group("threads")
                                                 else ""))
            if (mode := forward.group("precision")) is not None:
                parts.append(f"precision mode {_PRECISION_MODES.get(mode, mode)}")
        board = device_named(heading) if heading and (backend or "").upper() == "CPU" else None
        board = board if board and kind_of_device(board) != "gpu" else None
        model = re.sub(r"\.mnn$", "", name)
        notes = [f"MNN benchmark.out line {line}: min {low:g} ms" + (f" over {loop} timed rounds" if loop else "")]
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": conv.device(board, "cpu" if (backend or "").upper() == "CPU" else "gpu",
                                  where=f"(line {line}: benchmark.out names no device)",
                                  by_file_name=(backend or "").upper() != "CPU"),
            "config": {"workload": conv.hints.workload or model[:200], "model": model[:200], "mode": "infer",
                       "precision": conv.precision(None), "batch_size": conv.hints.batch_size,
                       "engine": "MNN", "tag": ", ".join(parts)[:200] or None},
            "metrics": {"latency_avg_ms": avg, "latency_max_ms": high,
                        "energy_missing_reason": "MNN's benchmark measures no power"},
            "notes": "; ".join(notes),
        }
