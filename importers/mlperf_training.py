"""MLPerf Training result logs (`:::MLLOG {json}` lines, mlcommons/logging's mllog), alone or as a
power submission folder (the result file, `power/<result>/node_*.txt` readings, the system JSON).

One result file is one run: time to train = run_stop - run_start (ms, wall-clock epoch), status
from run_stop's `metadata.status` (success, or the run failed), throughput the harmonic mean of the
`tracked_stats` block throughputs (samples/s; the blocks cover equal sample counts), workload
`submission_benchmark`, per-device batch `d_batch_size` (the global batch is in the notes).
Power readings (AC node power, W, ~2 s apart) are integrated by the trapezoid rule between
run_start and run_stop and summed over the nodes: boundary `wall`, method `sampled`. The MLLOG
`power_measurement_stop` is not trusted (published files have it equal to the start); such a file
is flagged. Lines that are not MLLOG (shell noise, a truncated last line) are skipped and counted.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from energy.trace import window_j
from importers.base import (
    Conversion,
    Importer,
    Source,
    clean_str,
    energy_metrics,
    num,
    pos_int,
    positive,
)

_MLLOG = re.compile(r"^(?:\d+: )?:::MLLOG (\{.*\})\s*$")
RESULT = "result.txt"


def _entries(text: str) -> tuple[list[dict[str, Any]], int]:
    out: list[dict[str, Any]] = []
    skipped = 0
    for line in text.splitlines():
        if ":::MLLOG" not in line:
            continue
        m = _MLLOG.match(line.strip())
        try:
            entry = json.loads(m.group(1)) if m else None
        except (ValueError, RecursionError):
            entry = None
        if isinstance(entry, dict) and isinstance(entry.get("key"), str):
            out.append(entry)
        else:
            skipped += 1
    return out, skipped


def _sysjson(text: str) -> dict[str, Any] | None:
    """The system description NVIDIA's reference implementations print into the job's log (`:::SYSJSON {...}`: the
    fields of a submission's systems/<system>.json), or None."""
    for line in text.splitlines():
        at = line.find(":::SYSJSON ")
        if at < 0 or len(line) > 100_000:
            continue
        body = line[at + len(":::SYSJSON "):].strip().rstrip("'")
        try:
            system = json.loads(body)
        except (ValueError, RecursionError):
            continue
        if isinstance(system, dict):
            return system
    return None


def _is_training_log(head: str) -> bool:
    return ":::MLLOG" in head and any(k in head for k in ('"submission_benchmark"', '"run_start"', '"init_start"',
                                                           '"power_reading"', '"power_measurement_start"'))


class MlperfTrainingImporter(Importer):
    NAME = "mlperf-training"
    TOOL = "mlperf-logging"
    DESCRIPTION = "MLPerf Training :::MLLOG result file, or a result folder with power readings"
    FOLDER = True
    ALSO_FILES = True

    def sniff(self, source: Source) -> bool:
        if source.is_folder:
            return RESULT in source.files and ("system.json" in source.files
                                               or any(k.startswith("power/") for k in source.files))
        return _is_training_log(source.head) and "mlperf::logging" not in source.head  # inference detail logs

    def convert(self, conv: Conversion) -> dict[str, Any]:
        src = conv.source
        if not src.is_folder:
            text = src.text or ""
            return conv.document([self._run(conv, text, src.name, {}, _sysjson(text))])
        power = {k: v for k, v in src.files.items() if k.startswith("power/")}
        system = None
        if "system.json" in src.files:
            try:
                system = json.loads(src.files["system.json"].decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError) as e:
                raise conv.fail("system.json", f"not valid JSON ({e})") from e
        text = self._text(conv, RESULT, src.files[RESULT])
        return conv.document([self._run(conv, text, src.name, power, system if isinstance(system, dict) else None)])

    @staticmethod
    def _text(conv: Conversion, name: str, data: bytes) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise conv.fail(name, f"not UTF-8 text (byte {e.start})") from e

    def _run(self, conv: Conversion, text: str, name: str, power: dict[str, bytes],
             system: dict[str, Any] | None) -> dict[str, Any]:
        entries, skipped = _entries(text)
        first: dict[str, dict[str, Any]] = {}
        for e in entries:
            first.setdefault(e["key"], e)
        if "run_start" not in first:
            what = ("an MLPerf Training power log (power_reading lines) without its result file: import the result "
                    "folder (results/<system>/<benchmark>/) so the readings can be matched to the run"
                    if "power_reading" in first else "no run_start entry: not an MLPerf Training result file")
            raise conv.fail("(whole file)", what)
        if skipped:
            conv.warn(f"{skipped} line(s) with ':::MLLOG' that are not a whole JSON entry were skipped")
        start_ms = num(first["run_start"].get("time_ms"), "run_start.time_ms", conv)
        stop = first.get("run_stop")
        stop_ms = num(stop.get("time_ms"), "run_stop.time_ms", conv) if stop else None
        meta = stop.get("metadata") if stop else None
        status_text = clean_str(meta.get("status")) if isinstance(meta, dict) else None
        flags: list[str] = []
        metrics: dict[str, Any] = {}
        status, error = "ok", None
        if stop is None or start_ms is None or stop_ms is None or stop_ms <= start_ms:
            status, error = "interrupted", "no run_stop after run_start: the run did not finish"
        elif status_text and status_text.lower() != "success":
            status, error = "failed", f"run_stop status {status_text!r}"
        value = lambda key: first[key].get("value") if key in first else None  # noqa: E731
        if status == "ok" and start_ms is not None and stop_ms is not None:
            metrics["duration_s"] = (stop_ms - start_ms) / 1000.0
        rates = [v for e in entries if e["key"] == "tracked_stats" and isinstance(e.get("value"), dict)
                 and (v := positive(num(e["value"].get("throughput")))) is not None]
        if rates:
            metrics["throughput_sps"] = len(rates) / sum(1.0 / r for r in rates)
            metrics["sample_unit"] = "sample"
            metrics["throughput_derivation"] = (f"harmonic mean of {len(rates)} tracked_stats throughputs (samples/s); "
                                                "blocks of equal sample counts")
        device, count = self._device(conv, system, clean_str(value("submission_platform")))
        if power and status == "ok" and start_ms is not None and stop_ms is not None:
            self._power(conv, power, start_ms, stop_ms, metrics, flags)
        elif not power:
            metrics["energy_missing_reason"] = "no power readings (power/<result>/node_*.txt) with the result file"
        benchmark = clean_str(value("submission_benchmark"))
        notes = [f"MLPerf Training {benchmark or '?'}: time to train {metrics.get('duration_s', '?')} s"]
        for key in ("submission_org", "submission_platform", "global_batch_size", "train_samples", "seed"):
            if value(key) not in (None, ""):
                notes.append(f"{key} {value(key)}")
        evals = [e for e in entries if e["key"] == "eval_accuracy"]
        if evals:
            notes.append(f"last eval_accuracy {evals[-1].get('value')}")
        run: dict[str, Any] = {
            "run_id": conv.run_id(0),
            "status": status,
            "error": error,
            "started_at": datetime.fromtimestamp(start_ms / 1000, UTC).isoformat() if start_ms else None,
            "ended_at": datetime.fromtimestamp(stop_ms / 1000, UTC).isoformat() if stop_ms and status == "ok" else None,
            "device": device,
            "config": {
                "workload": conv.hints.workload or benchmark or "unknown",
                "model": benchmark,
                "mode": "train",
                "precision": conv.precision(None),
                "batch_size": pos_int(value("d_batch_size")) or conv.hints.batch_size,
                "grad_accum_steps": pos_int(value("gradient_accumulation_steps")),
                "gpu_count": count,
                "tag": "MLPerf Training",
            },
            "metrics": metrics,
            "flags": flags,
            "notes": "; ".join(notes),
        }
        if system:
            run["environment"] = {
                "system_name": clean_str(system.get("system_name")),
                "framework": clean_str(system.get("framework")),
                "os": clean_str(system.get("operating_system")),
                "cpu_model": clean_str(system.get("host_processor_model_name")),
            }
        return run

    @staticmethod
    def _device(conv: Conversion, system: dict[str, Any] | None, platform: str | None) -> tuple[dict[str, Any],
                                                                                               int | None]:
        if system:
            accel = clean_str(system.get("accelerator_model_name"))
            per_node = pos_int(system.get("accelerators_per_node"))
            nodes = pos_int(system.get("number_of_nodes")) or 1
            if accel and per_node:
                return conv.device(accel, "gpu"), per_node * nodes
        where = "systems/<system>.json (not with the file)"
        if platform:
            where += f"; submission_platform {platform!r} names a system, not a device"
        return conv.device(None, "gpu", where=where), None

    def _power(self, conv: Conversion, power: dict[str, bytes], start_ms: float, stop_ms: float,
               metrics: dict[str, Any], flags: list[str]) -> None:
        total = 0.0
        nodes = 0
        for rel in sorted(power):
            entries, _ = _entries(self._text(conv, rel, power[rel]))
            starts = [num(e.get("time_ms")) for e in entries if e["key"] == "power_measurement_start"]
            stops = [num(e.get("time_ms")) for e in entries if e["key"] == "power_measurement_stop"]
            if starts and stops and starts[0] is not None and stops[0] is not None and stops[0] <= starts[0]:
                if "power_measurement_stop_broken" not in flags:
                    flags.append("power_measurement_stop_broken")
            readings = sorted((ms, watts) for e in entries if e["key"] == "power_reading"
                              and (ms := num(e.get("time_ms"))) is not None
                              and (watts := num(e.get("value"))) is not None and watts >= 0)
            if not readings:
                if rel.rsplit("/", 1)[-1].startswith("node_"):
                    raise conv.fail(rel, "no power_reading entries")
                continue
            times = [(ms - start_ms) / 1000.0 for ms, _ in readings]
            watts_list = [w for _, w in readings]
            span = (stop_ms - start_ms) / 1000.0
            if times[0] > 0 or times[-1] < span:
                metrics["energy_missing_reason"] = (
                    f"{rel}: the readings ({times[0]:.1f} to {times[-1]:.1f} s after run_start) do not cover the run "
                    f"(0 to {span:.1f} s)")
                return
            total += window_j(times, watts_list, 0.0, span)
            nodes += 1
        metrics.update(energy_metrics(total, duration_s=metrics.get("duration_s"), boundary=conv.boundary("wall"),
                                      method="sampled", what="node power readings", flags=flags))
        conv.warn(f"energy: node AC power of {nodes} node(s), trapezoid between run_start and run_stop")
