"""huggingface/optimum-benchmark: benchmark.json, benchmark_report.json (with or without its
config) and the legacy per-experiment CSV reports (`inference_results.csv`).

Latencies are in s (stored in ms), energy in kWh (stored in J), memory in MB (10^6 bytes).
The environment's `gpu_vram_mb` is in bytes despite its name.
"""

from __future__ import annotations

import json
from typing import Any

from importers.archive import OPTIMUM_CONFIG, OPTIMUM_REPORT
from importers.base import (
    J_PER_KWH,
    MB_PER_BYTE,
    MS_PER_S,
    Conversion,
    Importer,
    Source,
    as_dict,
    as_list,
    cell,
    clean_str,
    energy_metrics,
    int_from_path,
    num,
    pos_int,
    positive,
    read_csv,
)

SECTION_KEYS = {"latency", "throughput", "memory", "energy", "efficiency"}
SKIPPED_SECTIONS = {"load", "load_model", "preprocess", "import"}
DTYPES = {
    "float16": "fp16",
    "fp16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "bf16": "bf16",
    "float32": "fp32",
    "fp32": "fp32",
    "float": "fp32",
}
LEGACY_MARKERS = ("forward.latency(s)", "forward.throughput(samples/s)", "generate.throughput(tokens/s)")


def _json_member(conv: Conversion, name: str) -> Any:
    try:
        return json.loads(conv.source.files[name].decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise conv.fail(name, f"not valid JSON ({e})") from e


def _is_report(doc: Any) -> bool:
    return (
        isinstance(doc, dict) and bool(doc) and any(isinstance(v, dict) and SECTION_KEYS & set(v) for v in doc.values())
    )


class OptimumBenchmarkImporter(Importer):
    NAME = "optimum-benchmark"
    TOOL = "optimum-benchmark"
    DESCRIPTION = "benchmark.json, benchmark_report.json, legacy inference_results.csv"

    ALSO_FILES = True  # a report and its config from one folder (see importers.archive) arrive together

    def sniff(self, source: Source) -> bool:
        if source.is_folder:
            return set(source.files) == {OPTIMUM_REPORT, OPTIMUM_CONFIG}
        doc = source.json
        if isinstance(doc, dict):
            if isinstance(doc.get("report"), dict) and isinstance(doc.get("config"), dict):
                return True
            return _is_report(doc) and not {"format", "configurations"} & set(doc)
        first = source.head.split("\n", 1)[0]
        return any(m in first for m in LEGACY_MARKERS)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        if conv.source.is_folder:
            report, config = (_json_member(conv, name) for name in (OPTIMUM_REPORT, OPTIMUM_CONFIG))
            return self._report(conv, report, config)
        doc = conv.source.json
        if doc is None:
            return self._legacy(conv)
        if "report" in doc:
            return self._report(conv, doc["report"], doc.get("config"))
        conv.warn("benchmark_report.json without its config: device, model and shapes come from hints only")
        return self._report(conv, doc, None)

    def _report(self, conv: Conversion, report: dict[str, Any], config: dict[str, Any] | None) -> dict[str, Any]:
        if not isinstance(report, dict):
            raise conv.fail("report", "must be an object of measured targets (forward, decode, ...)")
        cfg = config if isinstance(config, dict) else {}
        backend = as_dict(cfg.get("backend"))
        scenario = as_dict(cfg.get("scenario"))
        env = as_dict(cfg.get("environment"))
        launcher_shapes = as_dict(scenario.get("input_shapes"))
        conv.tool_version = clean_str(env.get("optimum_benchmark_version"))
        device = self._device(conv, backend, env)
        dtype = clean_str(backend.get("dtype") or backend.get("torch_dtype"))
        precision = DTYPES.get((dtype or "").lower())
        if backend.get("autocast_enabled") and backend.get("autocast_dtype"):
            precision = DTYPES.get(str(backend["autocast_dtype"]).lower(), precision)
        scenario_name = clean_str(scenario.get("name")) or ""
        mode = "train" if "train" in scenario_name else ("infer" if scenario_name else None)
        model = clean_str(backend.get("model"))
        base_config: dict[str, Any] = {
            "workload": (model or conv.hints.workload or "unknown")[:200],
            "model": model,
            "task": clean_str(backend.get("task")),
            "precision": conv.precision(precision),
            "batch_size": pos_int(launcher_shapes.get("batch_size")) or conv.hints.batch_size,
            "seq_len": pos_int(launcher_shapes.get("sequence_length")),
            "warmup_steps": pos_int(scenario.get("warmup_runs")),
        }
        if base_config["workload"] == "unknown":
            conv.warn("model not named in the file; workload stored as 'unknown' (pass --workload)")
        environment = {
            "cpu_model": clean_str(env.get("cpu")),
            "cpu_count": pos_int(env.get("cpu_count")),
            "ram_gb": (positive(num(env.get("cpu_ram_mb"))) or 0) / 1e3 or None,
            "os": clean_str(env.get("platform")),
            "python_version": clean_str(env.get("python_version")),
            "transformers_version": clean_str(env.get("transformers_version")),
            "framework": " ".join(x for x in (clean_str(backend.get("name")), clean_str(backend.get("version"))) if x)
            or None,
        }
        runs = []
        for section, data in report.items():
            if section in SKIPPED_SECTIONS or not isinstance(data, dict) or not SECTION_KEYS & set(data):
                continue
            where = f"report.{section}"
            metrics, steps = self._metrics(conv, data, where, base_config.get("batch_size"))
            if not metrics:
                continue
            run_mode = mode or ("train" if section in ("overall", "train", "training") else None)
            run_mode = conv.mode(run_mode, "config.scenario.name")
            flags: list[str] = metrics.pop("_flags", [])
            run: dict[str, Any] = {
                "run_id": conv.run_id(section),
                "status": "ok",
                "device": dict(device),
                "config": {**base_config, "mode": run_mode, "tag": section},
                "metrics": metrics,
                "environment": environment,
                "flags": flags,
                "notes": f"optimum-benchmark target '{section}'",
            }
            if steps:
                run["step_times_ms"] = steps
            runs.append(run)
        return conv.document(runs)

    def _device(self, conv: Conversion, backend: dict[str, Any], env: dict[str, Any]) -> dict[str, Any]:
        kind = clean_str(backend.get("device"))
        if kind == "cpu":
            return conv.device(clean_str(env.get("cpu")), "cpu", where="config.environment.cpu")
        gpus = as_list(env.get("gpu"))
        ids = str(backend.get("device_ids") or "0").split(",")[0]
        index = int(ids) if ids.strip().isdigit() else 0
        name = clean_str(gpus[index]) if index < len(gpus) else (clean_str(gpus[0]) if gpus else None)
        vram = num(env.get("gpu_vram_mb"))
        memory_gb = vram * MB_PER_BYTE / 1e3 if vram and vram > 1e8 else (vram / 1e3 if vram else None)
        return conv.device(name, "gpu" if name else None, where="config.environment.gpu", memory_gb=memory_gb)

    def _metrics(
        self, conv: Conversion, data: dict[str, Any], where: str, batch_size: int | None
    ) -> tuple[dict[str, Any], list[float]]:
        metrics: dict[str, Any] = {}
        flags: list[str] = []
        steps: list[float] = []
        lat = data.get("latency")
        if isinstance(lat, dict):
            scale = {"s": MS_PER_S, "ms": 1.0}.get(str(lat.get("unit", "s")))
            if scale is None:
                raise conv.fail(f"{where}.latency.unit", f"{lat.get('unit')!r} is not a latency unit (s, ms)")
            for key, field in (
                ("mean", "latency_avg_ms"),
                ("p50", "latency_p50_ms"),
                ("p90", "latency_p90_ms"),
                ("p95", "latency_p95_ms"),
                ("p99", "latency_p99_ms"),
            ):
                v = num(lat.get(key), f"{where}.latency.{key}", conv)
                if v is not None and v >= 0:
                    metrics[field] = v * scale
            values = as_list(lat.get("values"))
            steps = [v * scale for v in (num(x) for x in values) if v is not None and v >= 0]
            if steps:
                metrics["latency_max_ms"] = max(steps)
            total = num(lat.get("total"))
            if total and total > 0:
                metrics["duration_s"] = total * scale / MS_PER_S
        thr = data.get("throughput")
        if isinstance(thr, dict):
            value = positive(num(thr.get("value"), f"{where}.throughput.value", conv))
            unit = str(thr.get("unit", ""))
            if unit.startswith("samples/s") or unit == "images/s":
                metrics["throughput_sps"] = value
            elif value is not None:
                metrics["iterations_per_s"] = value
                conv.warn(f"{where}.throughput is in {unit}; kept as iterations_per_s, not samples per second")
        mem = data.get("memory")
        if isinstance(mem, dict):
            for key, field in (
                ("max_ram", "mem_peak_rss_mb"),
                ("max_global_vram", "mem_used_device_mb"),
                ("max_reserved", "mem_peak_reserved_mb"),
                ("max_allocated", "mem_peak_allocated_mb"),
            ):
                v = num(mem.get(key))
                if v is not None and v >= 0:
                    metrics[field] = v
        energy = data.get("energy")
        if isinstance(energy, dict):
            scale = {"kWh": J_PER_KWH, "J": 1.0, "Wh": 3600.0}.get(str(energy.get("unit", "kWh")))
            if scale is None:
                raise conv.fail(f"{where}.energy.unit", f"{energy.get('unit')!r} is not an energy unit (kWh, J)")
            total = num(energy.get("total"), f"{where}.energy.total", conv)
            if total is not None:
                metrics.update(
                    energy_metrics(
                        total * scale,
                        duration_s=metrics.get("duration_s"),
                        boundary=conv.boundary("system"),
                        method="reported",
                        flags=flags,
                    )
                )
        eff = data.get("efficiency")
        if isinstance(eff, dict) and "energy_j" in metrics:
            value = num(eff.get("value"))
            unit = str(eff.get("unit", ""))
            if value and value > 0 and unit.startswith("samples/"):
                per = {"samples/kWh": J_PER_KWH, "samples/J": 1.0}.get(unit)
                if per:
                    metrics["j_per_sample"] = per / value
        if flags:
            metrics["_flags"] = flags
        return metrics, steps

    def _legacy(self, conv: Conversion) -> dict[str, Any]:
        text = conv.source.text
        if text is None:
            raise conv.fail("(whole file)", "not text")
        header, rows = read_csv(conv, text)
        if not rows:
            raise conv.fail("line 2", "no result row after the header")
        dirs = conv.source.dirs
        batch = int_from_path(dirs, "batch_size") or conv.hints.batch_size
        seq = int_from_path(dirs, "sequence_length")
        new_tokens = int_from_path(dirs, "new_tokens")
        device = conv.device(None, where="(whole file)")
        workload = conv.hints.workload or "unknown"
        if workload == "unknown":
            conv.warn("model not named in the file; workload stored as 'unknown' (pass --workload)")
        runs = []
        for i, (lineno, row) in enumerate(rows):
            for target in ("forward", "generate"):
                lat = num(cell(header, row, f"{target}.latency(s)"), f"line {lineno}: {target}.latency(s)", conv)
                thr_s = num(
                    cell(header, row, f"{target}.throughput(samples/s)"),
                    f"line {lineno}: {target}.throughput(samples/s)",
                    conv,
                )
                thr_t = num(
                    cell(header, row, f"{target}.throughput(tokens/s)"),
                    f"line {lineno}: {target}.throughput(tokens/s)",
                    conv,
                )
                mem = num(
                    cell(header, row, f"{target}.peak_memory(MB)"), f"line {lineno}: {target}.peak_memory(MB)", conv
                )
                if lat is None and thr_s is None and thr_t is None:
                    continue
                metrics: dict[str, Any] = {
                    "latency_avg_ms": lat * MS_PER_S if lat is not None and lat >= 0 else None,
                    "throughput_sps": positive(thr_s),
                    "mem_used_device_mb": mem if mem is not None and mem >= 0 else None,
                }
                notes = f"optimum-benchmark legacy CSV, target '{target}'"
                if metrics["throughput_sps"] is None and batch and lat and lat > 0:
                    metrics["throughput_sps"] = batch / lat
                    metrics["throughput_derivation"] = f"batch_size / {target}.latency(s)"
                if thr_t is not None:
                    notes += f"; {thr_t:g} tokens/s"
                    if new_tokens:
                        notes += f" ({new_tokens} new tokens)"
                runs.append(
                    {
                        "run_id": conv.run_id(f"{i}-{target}"),
                        "status": "ok",
                        "device": dict(device),
                        "config": {
                            "workload": workload,
                            "mode": "infer",
                            "precision": conv.precision(None),
                            "batch_size": batch,
                            "seq_len": seq,
                            "tag": target,
                        },
                        "metrics": metrics,
                        "notes": notes,
                    }
                )
        return conv.document(runs)
