"""Triton's perf_analyzer CSV (`perf_analyzer -f results.csv`), as its report writer writes it
(triton-inference-server/perf_analyzer src/report_writer.cc `ReportWriter::GenerateReport`):

    Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,...,Client Recv,p50 latency,...
    1,69.2,225,2148,64,206,11781,19,0,13891,18795,19753,21018

A row per load level, sorted by throughput: its first column `Concurrency` (requests in flight) or `Request Rate`
(requests a second), `Inferences/Second` (`client_infer_per_sec`: inferences, that is requests x batch size, a
second), then the latency parts and percentiles, which the writer prints as nanoseconds / 1000: microseconds, with no
unit in the header. `--verbose-csv` adds `Avg latency` (µs) and, with `--collect-metrics`, `Avg GPU Power Usage` as
`<gpu id>:<watts>;` per GPU. A request is one batch, so the percentiles are per-batch latencies; the batch size itself
(`-b`) is not in the file. The latency parts (`Client Send`, `Server Queue`, ...) are the pieces of the request's time
and stay in the notes; the model and device are not in the file either.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count, num, positive, read_csv
from importers.table_labels import label_field
from importers.table_rows import PRECISION_WORDS
from joulebench.metrics import LATENCY

_LOAD = {"Concurrency": "max_concurrency", "Request Rate": "request_rate_per_s"}
_NEEDED = ("Inferences/Second", "Client Send", "Client Recv")
_PERCENTILE = re.compile(r"^p(50|90|95|99) latency$")
_PARTS = ("Client Send", "Network+Server Send/Recv", "Server Queue", "Server Compute Input", "Server Compute Infer",
          "Server Compute Output", "Client Recv")
_GPU_VALUE = re.compile(r"^([^:;]{1,200}):([^:;]{1,40})$")
US_PER_MS = 1000.0


class PerfAnalyzerImporter(Importer):
    NAME = "perf-analyzer"
    TOOL = "Triton perf_analyzer"
    DESCRIPTION = "Triton perf_analyzer -f CSV (a row per concurrency or request rate; latencies in µs)"

    def sniff(self, source: Source) -> bool:
        first = [c.strip() for c in source.head.split("\n", 1)[0].split(",")]
        return _load_at(first) is not None and all(n in first for n in _NEEDED)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        header, rows = read_csv(conv, conv.source.text or "")
        check_run_count(conv, len(rows), "its rows")
        k = _load_at(header) or 0
        at = {name: i for i, name in enumerate(header) if i >= k}
        if k:
            conv.warn(f"{', '.join(header[:k])[:120]}: columns put before perf_analyzer's own, read as each row's "
                      "labels (a model, batch size or precision by its name, the others in the tag)")
        runs = [self._run(conv, index, lineno, header[k], row, at) for index, (lineno, row) in enumerate(rows)]
        for run, (_, row) in zip(runs, rows, strict=True):
            _labelled(run["config"], header[:k], row[:k])
        if not runs:
            raise conv.fail("line 2", "no row under the header: perf_analyzer measured no load level")
        return conv.document(runs)

    @staticmethod
    def _run(conv: Conversion, index: int, lineno: int, load: str, row: list[str], at: dict[str, int]
             ) -> dict[str, Any]:
        where = f"line {lineno}"

        def value(name: str) -> float | None:
            i = at.get(name)
            return num(row[i], f"{where}: {name}", conv) if i is not None and i < len(row) else None

        rate = positive(value("Inferences/Second"))
        if rate is None:
            raise conv.fail(f"{where}: Inferences/Second", "no throughput: a measured load level has inferences")
        metrics: dict[str, Any] = {"throughput_sps": rate}
        for name in at:
            if (m := _PERCENTILE.match(name)) and (us := positive(value(name))) is not None:
                metrics[LATENCY.stat(f"p{m.group(1)}").name] = us / US_PER_MS
        if (avg := positive(value("Avg latency"))) is not None:
            metrics[LATENCY.avg.name] = avg / US_PER_MS
        parts = [f"{name} {v:,.0f} µs" for name in _PARTS if (v := value(name)) is not None]
        notes = ["perf_analyzer: latencies in µs as its report writer prints them (ns / 1000), converted to ms; "
                 "a request is one batch"]
        if parts:
            notes.append("average request time by part: " + ", ".join(parts))
        power = _per_gpu(conv, where, "Avg GPU Power Usage", row, at)
        busy = _per_gpu(conv, where, "Avg GPU Utilization", row, at)
        idle = [gpu for gpu in power if gpu in busy and busy[gpu] <= 0]
        power = {gpu: w for gpu, w in power.items() if gpu not in idle}
        if power:
            total = sum(power.values())
            metrics.update(avg_power_w=total, j_per_sample=total / rate, energy_method="reported",
                           energy_boundary=conv.boundary("gpu_board"),
                           energy_missing_reason="perf_analyzer states the GPUs' average power but not the "
                                                 "window's duration")
            notes.append(f"power: Triton's GPU metrics averaged over the window, {len(power)} GPU(s) summed "
                         f"({', '.join(f'{k} {v:g} W' for k, v in power.items())})"
                         + (f", {len(idle)} GPU(s) at 0 % utilization left out as not serving" if idle else "")
                         + "; J per inference = power / Inferences/Second")
        else:
            metrics["energy_missing_reason"] = "perf_analyzer measured no power (--collect-metrics --verbose-csv " \
                                               "adds it)"
        level = value(load)
        config: dict[str, Any] = {
            "workload": conv.hints.workload or "perf_analyzer",
            "mode": "infer",
            "precision": conv.precision(None),
            "batch_size": conv.hints.batch_size,
            "engine": "triton",
            "load_kind": "concurrency" if load == "Concurrency" else "rate",
        }
        if level is not None:
            config[_LOAD[load]] = level
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": conv.device(None, where=f"({where}: perf_analyzer's CSV names no device)"),
            "config": config,
            "metrics": metrics,
            "flags": [],
            "notes": "; ".join(notes),
        }


def _load_at(header: list[str]) -> int | None:
    """Where perf_analyzer's own columns start: its load column before `Inferences/Second`, first, or after the
    labels a script put before them (`test,model,batch_size,...,Concurrency,Inferences/Second,...`)."""
    return next((i for i, name in enumerate(header[:40]) if name in _LOAD and header[i + 1:i + 2] == [
        "Inferences/Second"]), None)


def _labelled(config: dict[str, Any], names: list[str], cells: list[str]) -> None:
    """A row's labels from the columns a script put before perf_analyzer's: the model, batch size and precision
    by their names, a precision by its value ('floating_point': fp16), where no flag gave them; the others, and a
    load set as a range ('1:64:16'), in the tag."""
    tag = []
    for name, value in zip(names, cells, strict=False):
        value = value.strip()[:80]
        field = label_field(name)
        key = field.key if field is not None else None
        if not value:
            continue
        if key == "model" and config.get("workload") == "perf_analyzer":
            config["workload"] = config["model"] = value
        elif key == "batch_size" and config.get("batch_size") is None and value.isdigit() and int(value) > 0:
            config["batch_size"] = int(value)
        elif (key == "precision" or value.lower() in PRECISION_WORDS) and config.get("precision") is None:
            config["precision"] = value
        else:
            tag.append(f"{name.strip()[:30]} {value}")
    if tag:
        config["tag"] = ", ".join(tag)[:200]


def _per_gpu(conv: Conversion, where: str, column: str, row: list[str], at: dict[str, int]) -> dict[str, float]:
    """`<gpu id>:<value>;` per GPU, as the writer's WriteGpuMetrics prints Triton's GPU metrics (power in W,
    utilization as a fraction); {} where the column is absent."""
    i = at.get(column)
    out: dict[str, float] = {}
    for item in (row[i] if i is not None and i < len(row) else "").split(";"):
        item = item.strip()
        if not item:
            continue
        m = _GPU_VALUE.match(item)
        if m is None:
            raise conv.fail(f"{where}: {column}", f"{item[:60]!r} is not '<gpu>:<value>'")
        value = num(m.group(2), f"{where}: {column}", conv)
        if value is not None and value >= 0:
            out[m.group(1).strip()] = value
    return out
