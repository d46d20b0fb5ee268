"""huggingface/optimum-benchmark: benchmark.json, benchmark_report.json (with or without its
config), its text and Markdown renderings (`benchmark_report.txt` / `.md`, >= 0.5) and the legacy
per-experiment CSVs (`inference_results.csv`, `training_results.csv`, `inference_report.csv`).

Learned from the writer (optimum_benchmark/benchmark/report.py, trackers/*.py, scenarios/*.py):
- one run per measured target (`forward`, `prefill`, `decode`, `generate`, `call`, `per_step`,
  `train`, ...). Phases that are not the model's work (`load`, `load_model`, `load_dataset`,
  `preprocess`, `preprocess_dataset`) and single cold calls (`first_*`) are not runs;
  `per_token` latencies are the gaps between consecutive generated tokens of the decode run (ITL);
- throughput units decide the column: samples/s and images/s -> throughput_sps (with
  sample_unit), tokens/s -> tokens_per_s (prompt_tokens_per_s for prefill, whose volume was
  batch x sequence length until 0.5), steps/s -> iterations_per_s;
- energy is kWh (stored in J), CodeCarbon's machine-level total (GPU from NVML, CPU and RAM
  modelled): boundary `system`, method `reported`. In the `inference` scenario it is the energy of
  one iteration (the tracker's total over its loop divided by its count), in `energy_star` the
  whole dataset; efficiency (samples, images or tokens per kWh) gives J per sample or per token.
  A report without its config cannot tell the two apart unless its targets do (energy_star's
  `load_dataset` / `preprocess_dataset`): then only the efficiency figures are kept;
- latencies are s (stored in ms), memory MB = 10^6 bytes (a sum over the tracked GPUs);
- the environment's `gpu` lists every visible GPU and `gpu_vram_mb` is their total memory in
  bytes despite its name; the devices used are `backend.device_ids`.
"""

from __future__ import annotations

import json
import re
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
    check_run_count,
    clean_str,
    energy_metrics,
    int_from_path,
    num,
    pos_int,
    positive,
    read_csv,
)
from importers.optimum_text import is_markdown_report, is_text_report, parse_markdown_report, parse_text_report
from joulebench.metrics import ITL

SECTION_KEYS = {"latency", "throughput", "memory", "energy", "efficiency"}
NON_MODEL_TARGETS = {"load", "load_model", "load_dataset", "preprocess", "preprocess_dataset", "import"}
ENERGY_STAR_TARGETS = {"load_dataset", "preprocess_dataset", "preprocess"}
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
LEGACY_MARKERS = (
    "forward.latency(s)",
    "forward.throughput(samples/s)",
    "generate.throughput(tokens/s)",
    "forward.throughput(iter/s)",
    "training.throughput(samples/s)",
    "training.runtime(s)",
)
SAMPLE_UNITS = {"samples/s": "sample", "images/s": "image"}
_LEGACY_COL = re.compile(r"^([a-z_]+)\.([a-z_]+)\(([^)]*)\)$")


def _json_member(conv: Conversion, name: str) -> Any:
    try:
        return json.loads(conv.source.files[name].decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise conv.fail(name, f"not valid JSON ({e})") from e


def _is_report(doc: Any) -> bool:
    """Targets whose measurements are objects (or null): {"forward": {"latency": {...}, "energy": null}}."""
    return isinstance(doc, dict) and bool(doc) and any(
        isinstance(v, dict) and SECTION_KEYS & set(v)
        and all(isinstance(v[k], (dict, type(None))) for k in SECTION_KEYS & set(v))
        and any(isinstance(v[k], dict) and "unit" in v[k] for k in SECTION_KEYS & set(v))  # never nulls only,
        for v in doc.values())  # and a measurement states its unit: a config's 'energy' section is no measurement


LEGACY_BATCH = ("benchmark.input_shapes.batch_size", "benchmark.batch_size", "input_shapes.batch_size", "batch_size")


def _gpu_names(text: str | None) -> list[str]:
    """GPU names of a legacy report cell: a name, or a Python list written as text ("['A100', 'A100']")."""
    text = (text or "").strip()[:2000]
    if text.startswith("["):
        quoted = re.findall(r"'([^']*)'|\"([^\"]*)\"", text)
        return [(single or double).strip() for single, double in quoted if (single or double).strip()]
    return [text] if text else []


DEVICE_MEMORY = ("mem_used_device_mb", "mem_peak_reserved_mb", "mem_peak_allocated_mb")


def per_device_memory(metrics: dict[str, Any], notes: list[str], gpu_count: int | None) -> None:
    """optimum-benchmark's memory tracker adds the GPUs' memory up (NVML used memory and torch's
    peaks, over every tracked device): on n GPUs the per-device figures are the sum / n, an average."""
    if not any(k in metrics for k in DEVICE_MEMORY) or gpu_count == 1:
        return
    if not gpu_count:
        notes.append("GPU memory is the tool's sum over every visible GPU; how many is not in this file")
        return
    for key in DEVICE_MEMORY:
        if key in metrics:
            metrics[key] = metrics[key] / gpu_count
    notes.append(f"GPU memory is the tool's sum over {gpu_count} GPUs divided by {gpu_count}: the average per GPU")


class OptimumBenchmarkImporter(Importer):
    NAME = "optimum-benchmark"
    TOOL = "optimum-benchmark"
    DESCRIPTION = ("benchmark.json, benchmark_report.json (.txt, .md), legacy inference_results.csv, "
                   "training_results.csv, inference_report.csv")

    ALSO_FILES = True  # a report and its config from one folder (see importers.archive) arrive together

    def sniff(self, source: Source) -> bool:
        if source.is_folder:
            return set(source.files) == {OPTIMUM_REPORT, OPTIMUM_CONFIG}
        doc = source.json
        if isinstance(doc, dict):
            if isinstance(doc.get("report"), dict) and isinstance(doc.get("config"), dict):
                return True
            if {"backend", "scenario", "launcher"} <= set(doc):
                return True  # benchmark_config.json alone: refused in convert, saying what it is
            return _is_report(doc) and not {"format", "configurations"} & set(doc)
        head = source.head
        if is_text_report(head) or is_markdown_report(head):
            return True
        first = head.split("\n", 1)[0]
        return any(m in first for m in LEGACY_MARKERS)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        if conv.source.is_folder:
            report, config = (_json_member(conv, name) for name in (OPTIMUM_REPORT, OPTIMUM_CONFIG))
            return self._report(conv, report, config)
        doc = conv.source.json
        if doc is None:
            text = conv.source.text or ""
            if is_text_report(text[:4096]) or is_markdown_report(text[:4096]):
                md = is_markdown_report(text[:4096])
                report = parse_markdown_report(conv, text) if md else parse_text_report(conv, text)
                conv.warn(f"benchmark_report.{'md' if md else 'txt'}: a rounded rendering of the report, without its "
                          "config; import benchmark.json or benchmark_report.json with benchmark_config.json when "
                          "you have them")
                return self._report(conv, report, None)
            return self._legacy(conv)
        if "report" in doc:
            return self._report(conv, doc["report"], doc.get("config"))
        if {"backend", "scenario", "launcher"} <= set(doc):
            raise conv.fail("(whole file)", "a benchmark_config.json: a config without results; import it with the "
                                            "benchmark_report.json beside it (the folder, or both files zipped)")
        conv.warn("benchmark_report.json without its config: device, model and shapes come from hints only")
        return self._report(conv, doc, None)

    # --- the report (JSON, or a rendering parsed back) ---------------------------------------------
    def _report(self, conv: Conversion, report: dict[str, Any], config: dict[str, Any] | None) -> dict[str, Any]:
        if not isinstance(report, dict):
            raise conv.fail("report", "must be an object of measured targets (forward, decode, ...)")
        cfg = config if isinstance(config, dict) else {}
        backend = as_dict(cfg.get("backend"))
        scenario = as_dict(cfg.get("scenario"))
        env = as_dict(cfg.get("environment"))
        launcher_shapes = as_dict(scenario.get("input_shapes"))
        conv.tool_version = clean_str(env.get("optimum_benchmark_version"))
        device, gpu_count = self._device(conv, backend, env)
        dtype = clean_str(backend.get("dtype") or backend.get("torch_dtype"))
        precision = DTYPES.get((dtype or "").lower())
        if backend.get("autocast_enabled") and backend.get("autocast_dtype"):
            precision = DTYPES.get(str(backend["autocast_dtype"]).lower(), precision)
        scenario_name = clean_str(scenario.get("name")) or ""
        targets = set(report)
        if not scenario_name and targets & ENERGY_STAR_TARGETS:
            scenario_name = "energy_star"  # only that scenario measures dataset loading and preprocessing
        mode = "train" if "train" in scenario_name else ("infer" if scenario_name else None)
        if mode is None and targets & {"prefill", "decode", "generate", "forward", "call", "per_step", "per_token"}:
            mode = "infer"  # the inference scenarios' targets; training's are overall/warmup/train
        model = clean_str(backend.get("model"))
        batch = pos_int(launcher_shapes.get("batch_size")) or conv.hints.batch_size
        base_config: dict[str, Any] = {
            "workload": (model or conv.hints.workload or "unknown")[:200],
            "model": model,
            "task": clean_str(backend.get("task")),
            "precision": conv.precision(precision),
            "batch_size": batch,
            "seq_len": pos_int(launcher_shapes.get("sequence_length")),
            "warmup_steps": pos_int(scenario.get("warmup_runs")),
            "gpu_count": gpu_count,
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
        skipped = sorted(t for t in targets if t in NON_MODEL_TARGETS or t.startswith("first_"))
        skipped_note = (f"not runs: {', '.join(skipped)} (loading, preprocessing and single cold-start calls are not "
                        "the model's measured work)") if skipped else ""
        runs = []
        for section, data in report.items():
            if (section in NON_MODEL_TARGETS or section.startswith("first_") or section == "per_token"
                    or not isinstance(data, dict) or not SECTION_KEYS & set(data)):
                continue
            where = f"report.{section}"
            metrics, steps, notes = self._metrics(conv, section, data, where, batch, scenario_name)
            if section == "decode" and isinstance(report.get("per_token"), dict):
                self._per_token(conv, as_dict(report["per_token"].get("latency")), metrics)
            flags: list[str] = metrics.pop("_flags", [])
            if not {k for k in metrics if k not in ("energy_missing_reason",)}:
                continue
            per_device_memory(metrics, notes, gpu_count)
            run_mode = mode or ("train" if section in ("overall", "train", "training", "warmup") else None)
            run_mode = conv.mode(run_mode, "config.scenario.name")
            run: dict[str, Any] = {
                "run_id": conv.run_id(section),
                "status": "ok",
                "device": dict(device),
                "config": {**base_config, "mode": run_mode, "tag": section},
                "metrics": metrics,
                "environment": environment,
                "flags": flags,
                "notes": "; ".join([f"optimum-benchmark target '{section}'"
                                    + (f" ({scenario_name} scenario)" if scenario_name else ""), *notes,
                                    *([skipped_note] if skipped_note else [])]),
            }
            if steps:
                run["step_times_ms"] = steps
            runs.append(run)
        if not runs:
            raise conv.fail("report", "no measured target with figures (only "
                            + (", ".join(sorted(targets)) or "nothing") + ")")
        return conv.document(runs)

    def _device(self, conv: Conversion, backend: dict[str, Any], env: dict[str, Any]) -> tuple[dict[str, Any],
                                                                                               int | None]:
        """The device the run used and how many: backend.device_ids, not every GPU the host lists."""
        kind = clean_str(backend.get("device"))
        if kind == "cpu":
            return conv.device(clean_str(env.get("cpu")), "cpu", where="config.environment.cpu"), None
        gpus = [clean_str(g) or "" for g in as_list(env.get("gpu"))]
        device_ids = backend.get("device_ids")
        ids = [int(i) for i in str("" if device_ids is None else device_ids).split(",") if i.strip().isdigit()]
        used = [gpus[i] for i in ids if i < len(gpus)]
        if not used and gpus and not ids:
            used = gpus[:1]
        name = used[0] if used else (gpus[0] if gpus else None)
        if used and len(set(used)) > 1:
            conv.warn(f"backend.device_ids {backend.get('device_ids')} name different GPUs ({', '.join(used)}); "
                      f"the run is stored on {used[0]}")
        count = len(ids) or (1 if name else None)
        vram = num(env.get("gpu_vram_mb"))
        memory_gb = None
        if vram and gpus and len(set(gpus)) == 1:
            per_device = vram / len(gpus)  # the environment's total over every listed GPU
            memory_gb = (per_device * MB_PER_BYTE if per_device > 1e8 else per_device) / 1e3
        elif vram and gpus:
            conv.warn(f"config.environment.gpu_vram_mb is the total of {len(gpus)} different GPUs "
                      f"({', '.join(sorted(set(gpus)))}): one device's memory is not stored")
        device = conv.device(name, "gpu" if name else None, where="config.environment.gpu", memory_gb=memory_gb)
        return device, count

    def _metrics(self, conv: Conversion, section: str, data: dict[str, Any], where: str, batch: int | None,
                 scenario: str) -> tuple[dict[str, Any], list[float], list[str]]:
        metrics: dict[str, Any] = {}
        flags: list[str] = []
        notes: list[str] = []
        steps: list[float] = []
        lat = data.get("latency")
        mean_s: float | None = None
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
            mean = num(lat.get("mean"))
            mean_s = mean * scale / MS_PER_S if mean and mean > 0 else None
            values = as_list(lat.get("values"))
            steps = [v * scale for v in (num(x) for x in values) if v is not None and v >= 0]
            if steps:
                metrics["latency_max_ms"] = max(steps)
            total = num(lat.get("total"))
            if total and total > 0:
                metrics["duration_s"] = total * scale / MS_PER_S
            if section == "decode":
                notes.append("decode latency is generate minus the mean prefill latency (the tool subtracts them)")
        thr = data.get("throughput")
        if isinstance(thr, dict):
            value = positive(num(thr.get("value"), f"{where}.throughput.value", conv))
            unit = str(thr.get("unit", ""))
            if value is None:
                pass
            elif unit in SAMPLE_UNITS:
                metrics["throughput_sps"] = value
                metrics["sample_unit"] = SAMPLE_UNITS[unit]
            elif unit == "tokens/s" and section == "prefill":
                metrics["prompt_tokens_per_s"] = value
                notes.append("prefill throughput in tokens/s is prompt tokens (batch x sequence length) per second")
            elif unit == "tokens/s":
                metrics["tokens_per_s"] = value
                if section == "decode":
                    notes.append("decode tokens/s counts batch x beams x (max_new_tokens - 1) tokens, as the tool "
                                 "assumes every sequence generates them all")
            elif unit in ("steps/s", "iterations/s", "it/s"):
                metrics["iterations_per_s"] = value
            else:
                notes.append(f"throughput {value:g} {unit or '(unit not stated)'}")
                if not unit:
                    metrics["throughput_unit_not_stated"] = value
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
        self._energy(conv, section, data, where, metrics, flags, notes, batch, scenario, mean_s)
        if flags:
            metrics["_flags"] = flags
        return metrics, steps, notes

    def _energy(self, conv: Conversion, section: str, data: dict[str, Any], where: str, metrics: dict[str, Any],
                flags: list[str], notes: list[str], batch: int | None, scenario: str, mean_s: float | None) -> None:
        energy = data.get("energy")
        eff = as_dict(data.get("efficiency"))
        total_j = None
        if isinstance(energy, dict):
            scale = {"kWh": J_PER_KWH, "J": 1.0, "Wh": 3600.0}.get(str(energy.get("unit", "kWh")))
            if scale is None:
                raise conv.fail(f"{where}.energy.unit", f"{energy.get('unit')!r} is not an energy unit (kWh, J)")
            total = num(energy.get("total"), f"{where}.energy.total", conv)
            total_j = total * scale if total is not None else None
            parts = [f"{k} {v * scale:.6g} J" for k in ("gpu", "cpu", "ram") if (v := num(energy.get(k))) is not None]
            if parts:
                notes.append("energy parts (CodeCarbon: GPU from NVML, CPU and RAM modelled): " + ", ".join(parts))
        value = positive(num(eff.get("value"), f"{where}.efficiency.value", conv))
        unit = str(eff.get("unit", ""))
        per = {"samples/kWh": J_PER_KWH, "images/kWh": J_PER_KWH, "tokens/kWh": J_PER_KWH, "samples/J": 1.0,
               "tokens/J": 1.0}.get(unit)
        if total_j is None:
            return
        if scenario == "inference":
            notes.append("energy of one iteration (the tool divides its tracked energy by the iterations)")
            window_s = mean_s
        elif scenario in ("energy_star", "training") or "train" in scenario:
            notes.append("energy of the whole measured pass" + (" (every dataset sample)" if scenario == "energy_star"
                                                                 else ""))
            window_s = None if "duration_s" not in metrics else metrics["duration_s"]
        else:
            metrics["energy_missing_reason"] = (
                f"{where}.energy: without the report's config it cannot be told whether {total_j:.6g} J is one "
                "iteration (inference scenario) or the whole run (energy_star, training); J per sample and per "
                "token come from the efficiency figure")
            total_j = None
            window_s = None
        if total_j is not None:
            figures = energy_metrics(total_j, duration_s=window_s, boundary=conv.boundary("system"),
                                     method="reported", flags=flags)
            metrics.update(figures)
            if scenario == "inference" and window_s is not None and "energy_j" in figures:
                metrics["duration_s"] = window_s  # the energy's window: one iteration
                notes.append("duration_s is one iteration (the mean latency): the window the energy figure covers")
        if value and per and (total_j is None or total_j > 0):
            if unit.startswith(("samples/", "images/")):
                metrics["j_per_sample"] = per / value
                metrics.setdefault("sample_unit", "image" if unit.startswith("images/") else "sample")
            elif section == "prefill":
                notes.append(f"{per / value:.6g} J per prompt token ({unit} efficiency)")
            else:
                metrics["j_per_token"] = per / value
                if section == "decode":
                    notes.append("J per token uses the tool's nominal token count (max_new_tokens per sequence)")
        if {"energy_j", "j_per_sample", "j_per_token"} & set(metrics):
            metrics.setdefault("energy_boundary", conv.boundary("system"))
            metrics.setdefault("energy_method", "reported")

    def _per_token(self, conv: Conversion, lat: dict[str, Any], metrics: dict[str, Any]) -> None:
        """The per_token target's latencies are the gaps between consecutive generated tokens, every token
        of the decode run pooled (a logits processor's time stamps): inter-token latency (ITL), not TPOT."""
        scale = {"s": MS_PER_S, "ms": 1.0}.get(str(lat.get("unit", "s")))
        if not lat or scale is None:
            return
        for key, field in (("mean", ITL.avg.name), ("p50", ITL.p50.name), ("p99", ITL.p99.name)):
            v = num(lat.get(key), f"report.per_token.latency.{key}", conv)
            if v is not None and v >= 0:
                metrics[field] = v * scale

    # --- legacy CSVs (0.0.x) ----------------------------------------------------------------------
    def _legacy(self, conv: Conversion) -> dict[str, Any]:
        text = conv.source.text
        if text is None:
            raise conv.fail("(whole file)", "not text")
        header, rows = read_csv(conv, text)
        check_run_count(conv, len(rows), "its rows")
        if not rows:
            raise conv.fail("line 2", "no result row after the header")
        dirs = conv.source.dirs
        batch = int_from_path(dirs, "batch_size") or conv.hints.batch_size
        seq = int_from_path(dirs, "sequence_length")
        new_tokens = int_from_path(dirs, "new_tokens")
        columns: dict[str, dict[str, str]] = {}  # target -> metric(unit) -> column
        for h in header:
            m = _LEGACY_COL.match(h.strip())
            if m:
                columns.setdefault(m.group(1), {})[f"{m.group(2)}({m.group(3)})"] = h
        training = any(t in columns for t in ("training", "overall_training", "warmup"))
        runs: list[dict[str, Any]] = []
        for i, (lineno, row) in enumerate(rows):
            def val(col: str | None, _row: list[str] = row, _lineno: int = lineno) -> float | None:
                return num(cell(header, _row, col), f"line {_lineno}: {col}", conv) if col else None

            row_batch = next((b for c in LEGACY_BATCH if (b := pos_int(cell(header, row, c)))), None) or batch
            model = clean_str(cell(header, row, "model") or cell(header, row, "backend.model"))
            gpus = _gpu_names(cell(header, row, "environment.gpus") or cell(header, row, "environment.gpu"))
            if len(set(gpus)) > 1:
                conv.warn(f"line {lineno}: the environment lists different GPUs ({', '.join(sorted(set(gpus)))}); "
                          "the device is not stated")
            device = conv.device((gpus[0] if len(set(gpus)) == 1 else None)
                                 if clean_str(cell(header, row, "device")) != "cpu"
                                 else clean_str(cell(header, row, "environment.cpu")), where="(whole file)")
            device_ids = [d for d in re.split(r"[,\s\[\]']+", cell(header, row, "backend.device_ids") or "") if d]
            mem_gb = positive(num(cell(header, row, "environment.gpu_ram_mb")))
            if mem_gb and device.get("kind") == "gpu":
                device["memory_gb"] = mem_gb * 1.048576 / 1e3  # nvidia-smi MiB
            dtype = (cell(header, row, "backend.torch_dtype") or "").strip().lower()
            quantized = clean_str(cell(header, row, "backend.quantization_scheme"))
            precision = conv.precision(None if quantized else (
                DTYPES.get(dtype) or ("fp16" if (cell(header, row, "backend.fp16") or "").lower() == "true" else None)))
            if quantized:
                conv.warn(f"rows with {quantized} quantized weights leave the precision not stated (their "
                          f"torch_dtype {dtype or '?'} is the compute type, not the weights')")
            for target, cols in columns.items():
                metrics, notes = self._legacy_metrics(target, cols, val, row_batch, new_tokens)
                if not metrics:
                    continue
                runs.append({
                    "run_id": conv.run_id(f"{i}-{target}"),
                    "status": "ok",
                    "device": dict(device),
                    "config": {
                        "workload": (model or conv.hints.workload or "unknown")[:200],
                        "model": model,
                        "mode": "train" if training else "infer",
                        "precision": precision,
                        "batch_size": row_batch,
                        "seq_len": seq,
                        "gpu_count": len(device_ids) or None,
                        "tag": (clean_str(cell(header, row, "experiment_name")) or target)
                        + (f":{target}" if clean_str(cell(header, row, "experiment_name")) else ""),
                    },
                    "metrics": metrics,
                    "notes": "; ".join([f"optimum-benchmark legacy CSV, target '{target}'", *notes]),
                })
        if any(r["config"]["workload"] == "unknown" for r in runs):
            conv.warn("model not named in the file; workload stored as 'unknown' (pass --workload)")
        return conv.document(runs)

    @staticmethod
    def _legacy_metrics(target: str, cols: dict[str, str], val: Any, batch: int | None,
                        new_tokens: int | None) -> tuple[dict[str, Any], list[str]]:
        metrics: dict[str, Any] = {}
        notes: list[str] = []
        lat = val(cols.get("latency(s)"))
        runtime = val(cols.get("runtime(s)"))
        if lat is not None and lat >= 0:
            metrics["latency_avg_ms"] = lat * MS_PER_S
        if runtime and runtime > 0:
            metrics["duration_s"] = runtime
        sps = positive(val(cols.get("throughput(samples/s)") or cols.get("throughput(samles/s)")))
        if sps:
            metrics["throughput_sps"] = sps
            metrics["sample_unit"] = "sample"
        images = positive(val(cols.get("throughput(images/s)")))
        if images:
            metrics.update(throughput_sps=images, sample_unit="image")
        it_s = positive(val(cols.get("throughput(iter/s)")))
        if it_s:
            metrics["iterations_per_s"] = it_s
            if batch:
                metrics["throughput_sps"] = it_s * batch
                metrics["throughput_derivation"] = f"{target}.throughput(iter/s) x batch_size"
        tokens = positive(val(cols.get("throughput(tokens/s)") or cols.get("throughput(tok/s)")))
        if tokens:
            metrics["tokens_per_s"] = tokens
            notes.append(f"{tokens:g} tokens/s" + (f" ({new_tokens} new tokens per sequence)" if new_tokens else ""))
        if "throughput_sps" not in metrics and target in ("forward", "generate") and batch and lat and lat > 0:
            metrics["throughput_sps"] = batch / lat
            metrics["throughput_derivation"] = f"batch_size / {target}.latency(s)"
        mem = val(cols.get("peak_memory(MB)") or cols.get("max_memory_used(MB)"))
        if mem is not None and mem >= 0:
            metrics["mem_used_device_mb"] = mem
        kwh_sample = positive(val(cols.get("energy_consumption(kWh/sample)")))
        if kwh_sample:
            metrics.update(j_per_sample=kwh_sample * J_PER_KWH, energy_boundary="system", energy_method="reported")
        kwh_token = positive(val(cols.get("energy_consumption(kWh/token)")))
        if kwh_token:
            metrics.update(j_per_token=kwh_token * J_PER_KWH, energy_boundary="system", energy_method="reported")
        return metrics, notes
