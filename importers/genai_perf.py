"""NVIDIA GenAI-Perf and AIPerf exports: `profile_export_genai_perf.json` / `profile_export_aiperf.json`
and their `.csv`.

Learned from the writers (perf_analyzer genai-perf/genai_perf/export_data/{json,csv}_exporter.py,
metrics/{llm_metrics,statistics}.py, profile_data_parser/llm_profile_data_parser.py; aiperf
aiperf/exporters/{json,csv}_exporter.py, common/models/export_models.py, metrics/types/):
- the JSON is one object: per metric `{"unit": ..., "avg", "p1".."p99", "min", "max", "std"}`
  (system metrics only `avg`), then `input_config` (the command's arguments; AIPerf adds
  `was_cancelled`, `error_summary`, `start_time`, `end_time`);
- the CSV has two sections (AIPerf three, below): `Metric,avg,min,max,p99,...` rows named "Time To First Token (ms)"
  (name title-cased, unit in parentheses; AIPerf: its metric header, "Time to First Token (ms)"), a
  blank line, then `Metric,Value` rows (request/output token throughput, request count); GenAI-Perf
  writes numbers as "1,234.56";
- `inter_token_latency` is per request (end-to-end - TTFT) / (output tokens - 1): JouleBench's TPOT,
  never its ITL (every gap pooled); `output_token_throughput_per_user` is 1 / that per request (never
  the system's tokens/s: notes only); `output_token_throughput` (output tokens / the benchmark's
  duration) is the system's tokens/s; `request_latency` is end-to-end, `time_to_first_token` TTFT;
  AIPerf's `inter_chunk_latency` gaps are between chunks, not tokens (not stored).
The unit written beside each figure decides (ms, us, ns, s).

AIPerf's CSV (exporters/metrics_csv_exporter.py) may hold a third table after two blank lines,
`Endpoint,GPU_Index,GPU_Name,GPU_UUID[,Platform],Metric,avg,...[,Hostname,Namespace,Pod Name]`: one row
per GPU and telemetry metric (gpu_telemetry/constants.py), header only when no DCGM/NVML telemetry came.
"GPU Power Usage (W)" ("NVIDIA GPU Power Usage", "AMD GPU Power") is the mean of the power samples;
"Energy Consumption (MJ)" is a counter: since aiperf #596 (2026-02) its delta over the benchmark in
`avg` alone, warm-up left out; before, statistics of its readings since boot (no energy of the run).
Every number is '%.2f', so a delta in MJ is good to 5 kJ only: read when that is at most 1 % of it,
else the GPUs' mean power x the benchmark duration. The newest AIPerf states `Total GPU Energy (J)` and
`Total GPU Power (W)` (every GPU, its counters) in the `Metric,Value` table: read first. GPU_Name is the
only device name either tool writes. The per-request table's `sum` column sums per-request values
(latencies too): never a duration. GenAI-Perf's telemetry tables (`Metric,GPU,...`: gpu0, no model, no
duration) are not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from importers.base import (
    MS_PER_NS,
    MS_PER_S,
    Conversion,
    Importer,
    Source,
    as_dict,
    as_list,
    clean_str,
    energy_metrics,
    num,
    pos_int,
    positive,
    read_csv,
)
from joulebench import units
from joulebench.metrics import E2E, STATS, TPOT, TTFT, Distribution

NO_ENERGY = "no GPU telemetry: GenAI-Perf / AIPerf exports hold no energy figure without it"
_TIME_UNITS = {"ms": 1.0, "msec": 1.0, "ns": MS_PER_NS, "us": 1e-3, "µs": 1e-3, "s": MS_PER_S, "sec": MS_PER_S}
# AIPerf's JSON tags the time to first token 'ttft' (its CSV 'Time to First Token', GenAI-Perf's JSON and CSV
# 'time_to_first_token'); its 'inter_token_latency' is (latency - TTFT) / (output tokens - 1), vLLM's TPOT
_TIMED: dict[str, Distribution] = {"time_to_first_token": TTFT, "ttft": TTFT, "request_latency": E2E,
                                   "inter_token_latency": TPOT}
_KEYS = ("request_latency", "request_throughput", "time_to_first_token", "ttft", "output_token_throughput",
         "inter_token_latency")
_CSV_NAME = re.compile(r"^(.*?)\s*(?:\(([^()]*)\))?$")
_POWER = re.compile(r"(?:nvidia |amd )?gpu power(?: usage)?")
_ENERGY = re.compile(r"(?:nvidia |amd )?energy consumption")
_MJ_HALF_STEP_J = 5_000.0  # '%.2f' MJ: a printed counter delta is within 0.005 MJ of the counter's
_MAX_ROUNDING = 0.01  # the largest share of an energy its printing may round away
_MAX_GPUS = 100_000


@dataclass
class _Gpu:
    """One GPU of AIPerf's telemetry table."""

    name: str | None
    power_w: float | None = None  # mean of its power samples
    delta_j: float | None = None  # its energy counter's delta over the benchmark (`avg` alone)
    span_j: float | None = None  # max - min of its counter's readings since boot (older AIPerf)


def _metrics_of(doc: Any) -> Any:
    """The object holding the metric records: the document's own keys (GenAI-Perf, AIPerf up to 0.1), or its
    'records' (AIPerf's JsonExportData from late 2025: records, input_config, was_cancelled, start_time, ...)."""
    records = doc.get("records") if isinstance(doc, dict) else None
    return records if _holds_metrics(records) else doc


def _holds_metrics(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    found = [k for k in _KEYS if isinstance(obj.get(k), dict) and any(s in obj[k] for s in ("avg", "p50", "p99"))]
    return len(found) >= 2 and ("input_config" in obj or any("unit" in obj[k] for k in found))


def _is_json_export(doc: Any) -> bool:
    return _holds_metrics(_metrics_of(doc))


def _is_csv_export(text: str) -> bool:
    lines = [line.strip().lower() for line in text.splitlines()[:400] if line.strip()]
    return (bool(lines) and lines[0].startswith("metric,avg,") and "metric,value" in lines
            and any(line.startswith(("time to first token", "request latency", "benchmark duration (sec),",
                                     "endpoint,gpu_index,gpu_name,")) for line in lines))


def _snake(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", label.strip().lower()).strip("_")


class GenAiPerfImporter(Importer):
    NAME = "genai-perf"
    TOOL = "GenAI-Perf / AIPerf"
    DESCRIPTION = "NVIDIA GenAI-Perf or AIPerf profile_export_genai_perf/aiperf .json or .csv"

    def sniff(self, source: Source) -> bool:
        return _is_json_export(source.json) or _is_csv_export(source.head)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        if _is_json_export(doc):
            stats = {k: v for k, v in _metrics_of(doc).items() if isinstance(v, dict) and k != "input_config"}
            run = self._run(conv, stats, as_dict(doc.get("input_config")), doc)
        else:
            stats, gpus, telemetry = self._csv_stats(conv)
            run = self._run(conv, stats, {}, {}, gpus, telemetry)
        return conv.document([run])

    def _csv_stats(self, conv: Conversion) -> tuple[dict[str, dict[str, Any]], dict[tuple[str, ...], _Gpu], str]:
        """The CSV's rows as the JSON's {metric: {"unit", stat: value}} (GenAI-Perf's "1,234.56" read as 1234.56),
        AIPerf's telemetry GPUs, and which telemetry table the file has ('' none, 'aiperf', 'genai-perf')."""
        header, rows = read_csv(conv, conv.source.text or "")
        stats: dict[str, dict[str, Any]] = {}
        gpus: dict[tuple[str, ...], _Gpu] = {}
        telemetry, section = "", "stats"
        columns = [c.lower() for c in header[1:]]
        for line, row in rows:
            first = row[0].lower()
            if first == "metric":  # the system section's own header, or GenAI-Perf's per-GPU tables
                columns = [c.lower() for c in row[1:]]
                section = "genai-perf" if columns[:1] == ["gpu"] else "stats"
                telemetry = telemetry or ("genai-perf" if section == "genai-perf" else "")
                continue
            if first == "endpoint" and "metric" in (cells := [c.lower() for c in row]):  # AIPerf's GPU table
                columns, section, telemetry = cells, "aiperf", "aiperf"
                continue
            if section == "aiperf":
                self._telemetry_row(conv, line, columns, row, gpus)
                continue
            if section == "genai-perf":
                continue
            m = _CSV_NAME.match(row[0])
            if not m or not m.group(1):
                continue
            entry: dict[str, Any] = {"unit": m.group(2)}
            for col, value in zip(columns, row[1:], strict=False):
                if value in ("", "N/A"):
                    continue
                key = "avg" if col == "value" else col
                entry[key] = num(value.replace(",", ""), f"line {line} ({row[0]}, {col})", conv)
            stats.setdefault(_snake(m.group(1)), entry)
        return stats, gpus, telemetry

    def _telemetry_row(self, conv: Conversion, line: int, columns: list[str], row: list[str],
                       gpus: dict[tuple[str, ...], _Gpu]) -> None:
        """One row of AIPerf's GPU telemetry table: its GPU's power or energy, by the unit the metric names."""
        cells = dict(zip(columns, row, strict=False))
        metric = cells.get("metric", "")
        m = _CSV_NAME.match(metric)
        label, unit = (m.group(1).strip().lower(), m.group(2)) if m else ("", None)
        key = (cells.get("endpoint", ""), cells.get("gpu_uuid") or cells.get("gpu_index", ""),
               cells.get("hostname", ""))
        if key not in gpus and len(gpus) >= _MAX_GPUS:
            raise conv.fail(f"line {line}", f"more than {_MAX_GPUS:,} GPUs in the telemetry table: split the file")
        gpu = gpus.setdefault(key, _Gpu(clean_str(cells.get("gpu_name"))))
        kind = "power" if _POWER.fullmatch(label) else "energy" if _ENERGY.fullmatch(label) else None
        if kind is None:
            return
        found = units.factor_of(unit or "", (kind,))
        if found is None:
            raise conv.fail(f"line {line} ({metric[:60]})", f"unit {unit!r} is not a unit of {kind}: this row is "
                            "not as AIPerf writes it (W for power, MJ for energy)")

        def stat(col: str) -> float | None:
            return num(cells.get(col), f"line {line} ({metric[:60]}, {col})", conv)

        avg, low, high = stat("avg"), stat("min"), stat("max")
        if kind == "power":
            gpu.power_w = avg * found[1] if avg is not None and avg >= 0 else None
        elif low is not None and high is not None:  # statistics of the counter's readings since boot
            gpu.span_j = (high - low) * found[1]
        elif avg is not None and avg >= 0:  # the counter's delta over the benchmark
            gpu.delta_j = avg * found[1]

    def _run(self, conv: Conversion, stats: dict[str, Any], config_in: dict[str, Any], doc: dict[str, Any],
             gpus: dict[tuple[str, ...], _Gpu] | None = None, telemetry: str = "") -> dict[str, Any]:
        metrics: dict[str, Any] = {}
        notes: list[str] = []
        flags: list[str] = []
        for key, dist in _TIMED.items():
            entry = as_dict(stats.get(key))
            if not entry:
                continue
            unit = clean_str(entry.get("unit"))
            factor = _TIME_UNITS.get(unit.lower() if unit else "ms")  # both writers write ms when they omit it
            if factor is None:
                raise conv.fail(key, f"unit {unit!r} is not a time unit (ms, us, ns, s): fix the unit or leave "
                                "the metric out")
            for stat in STATS:
                v = num(entry.get(stat), f"{key}.{stat}", conv)
                if v is not None and v >= 0:
                    metrics[dist.stat(stat).name] = v * factor

        def avg(key: str, *units: str) -> float | None:
            entry = as_dict(stats.get(key))
            unit = (clean_str(entry.get("unit")) or "").lower().replace(" ", "")
            if entry and unit and not any(unit == u for u in units):
                raise conv.fail(key, f"unit {entry.get('unit')!r} is not one of {', '.join(units)}: "
                                     "this file is not as GenAI-Perf or AIPerf writes it")
            return num(entry.get("avg"), f"{key}.avg", conv) if entry else None

        # GenAI-Perf's CSV wrote "Output Token Throughput (per sec)" (24.x-25.x): the row names the tokens
        metrics["tokens_per_s"] = positive(avg("output_token_throughput", "tokens/sec", "tokens/s", "tok/s", "persec"))
        metrics["requests_per_s"] = positive(avg("request_throughput", "requests/sec", "persec", "req/s",
                                                 "requests/s"))
        metrics["requests_completed"] = pos_int(avg("request_count", "count", "requests"))
        failed = avg("error_request_count", "count", "requests")
        whole = failed is not None and failed >= 0 and failed == int(failed)
        metrics["requests_failed"] = int(failed) if whole and failed is not None else None
        metrics["prompt_tokens_mean"] = positive(avg("input_sequence_length", "tokens"))
        metrics["output_tokens_mean"] = positive(avg("output_sequence_length", "tokens"))
        metrics["duration_s"] = positive(avg("benchmark_duration", "sec", "s"))
        metrics["output_tokens"] = pos_int(avg("total_output_sequence_length", "tokens"))
        for key, count in (("requests_per_s", metrics["requests_completed"]),
                           ("tokens_per_s", metrics["output_tokens"])):
            printed, duration = metrics[key], metrics["duration_s"]  # '%.2f' keeps 1-2 digits of a rate under 1
            if printed is not None and printed < 1 and count and duration and abs(count / duration - printed) <= 0.005:
                metrics[key] = count / duration
                notes.append(f"{key} = {count} / Benchmark Duration {duration:g} s (printed {printed:.2f})")
        if not any(k.startswith(("ttft_", "e2e_", "tpot_")) for k in metrics) and not (
                metrics["tokens_per_s"] or metrics["requests_per_s"]):
            why = (f"every request failed (Error Request Count {failed:g}): nothing completed to measure" if failed
                   else "export the profile's results, not only its configuration")
            raise conv.fail("(whole file)", "no latency or throughput figure (time_to_first_token, request_latency, "
                            f"output_token_throughput, request_throughput): {why}")
        user = as_dict(stats.get("output_token_throughput_per_user"))
        if (per_user := num(user.get("avg"))) is not None:
            notes.append(f"per-user output {per_user:.4g} tokens/s average (1 / TPOT per request; not the system's)")
        aiperf = (any(k in doc for k in ("was_cancelled", "error_summary", "aiperf_version"))
                  or "benchmark_duration" in stats)
        tool = "AIPerf" if aiperf else "GenAI-Perf"
        conv.tool_version = clean_str(doc.get("aiperf_version") or doc.get("genai_perf_version"))
        notes.insert(0, f"{tool} export: inter_token_latency is per request (end-to-end - TTFT) / (output tokens - 1), "
                        "stored as TPOT")
        if "telemetry_stats" in doc or "telemetry_data" in doc:
            notes.append("GPU telemetry present (power, utilisation): not read from the JSON (its CSV holds it)")
        if telemetry == "genai-perf":
            notes.append("GenAI-Perf GPU telemetry tables (per gpuN, no GPU model, no duration): not read")
        device = self._energy(conv, stats, gpus or {}, telemetry, metrics, notes, flags, avg)
        if doc.get("was_cancelled") is True:
            notes.append("the benchmark was cancelled before it ended")
        config = self._config(conv, config_in)
        model = config.pop("_model")
        if gpus:
            config["gpu_count"] = len(gpus)
        elif conv.hints.device is None:
            conv.warn("GenAI-Perf and AIPerf name neither the GPU nor the serving engine (they measure an endpoint)")
        run: dict[str, Any] = {
            "run_id": conv.run_id(0),
            "status": "ok",
            "flags": flags,
            "device": conv.device(device, "gpu", where=f"(whole file; {tool} measures an endpoint and names no GPU "
                                  "outside its GPU telemetry)"),
            "config": conv.generation_config(model, **config),
            "metrics": {k: v for k, v in metrics.items() if v is not None},
            "notes": "; ".join(notes),
        }
        return run

    def _energy(self, conv: Conversion, stats: dict[str, Any], gpus: dict[tuple[str, ...], _Gpu], telemetry: str,
                metrics: dict[str, Any], notes: list[str], flags: list[str], avg: Any) -> str | None:
        """The GPUs' energy and power into `metrics`: AIPerf's `Total GPU Energy`, else the telemetry's counter
        deltas when '%.2f' MJ keeps them within 1 %, else the mean power x the benchmark duration. The device
        the telemetry names (one model), else None."""
        duration, listed = metrics.get("duration_s"), list(gpus.values())

        def total(attr: str) -> float | None:
            values = [getattr(g, attr) for g in listed]
            return sum(values) if values and all(v is not None for v in values) else None

        stated = avg("total_gpu_energy", "j")
        power = positive(avg("total_gpu_power", "w")) or positive(total("power_w"))
        delta, span = total("delta_j"), total("span_j")
        energy: float | None = None
        method: str | None = None
        what = ""
        if stated is not None and stated > 0:
            energy, method, what = stated, "counter", "Total GPU Energy (the GPUs' energy counters)"
        elif delta and _MJ_HALF_STEP_J * len(listed) <= _MAX_ROUNDING * delta:
            energy, method, what = delta, "counter", "sum of the GPUs' Energy Consumption counter deltas"
        elif power and duration:
            energy, method, what = power * duration, "sampled", "mean GPU power x Benchmark Duration"
            notes.append(f"GPU energy = mean GPU power {power:.2f} W (all GPUs) x Benchmark Duration {duration:g} s")
        if delta is not None and method != "counter":
            notes.append(f"the GPUs' energy counter delta, {delta / 1e6:.2f} MJ printed to 0.01 MJ, is too coarse "
                         "to read as the energy")
        if span is not None:
            notes.append(f"Energy Consumption rows are the counter's readings since boot (AIPerf before 2026-02): "
                         f"max - min {span / 1e6:.2f} MJ over the telemetry window, warm-up included; not read as "
                         "energy")
        if energy is not None:
            metrics.update(energy_metrics(energy, duration_s=duration, boundary=conv.boundary("gpu_board"),
                                          method=method, what=what, flags=flags))
            if "energy_j" in metrics and metrics.get("output_tokens"):
                metrics["j_per_token"] = metrics["energy_j"] / metrics["output_tokens"]
        else:
            metrics["energy_missing_reason"] = (
                "AIPerf's GPU telemetry table is empty: no DCGM or NVML telemetry was collected"
                if telemetry == "aiperf" and not gpus else "GPU power stated without the benchmark's duration"
                if power else "the GPU telemetry holds no power or energy" if gpus else NO_ENERGY)
        if power:
            metrics["avg_power_w"] = power  # the file's own mean, kept over energy / duration
        names = sorted({g.name for g in listed if g.name})
        if gpus:
            notes.append(f"{len(gpus)} GPU(s) in the telemetry (every GPU its DCGM/NVML source sees): "
                         f"{', '.join(n[:60] for n in names[:8]) or 'unnamed'}")
        return names[0] if len(names) == 1 else None

    def _config(self, conv: Conversion, cfg: dict[str, Any]) -> dict[str, Any]:
        """Load and lengths from `input_config`: GenAI-Perf's flat arguments (`concurrency`, `request_rate`,
        `model`), its later nested config (`perf_analyzer.stimulus`), or AIPerf's (`endpoint`, `loadgen`)."""
        endpoint, loadgen = as_dict(cfg.get("endpoint")), as_dict(cfg.get("loadgen"))
        stimulus = as_dict(as_dict(cfg.get("perf_analyzer")).get("stimulus"))
        models = cfg.get("model_names") or endpoint.get("model_names") or cfg.get("model")
        model = clean_str(as_list(models)[0] if isinstance(models, list) and models else models)

        def first(*values: Any) -> Any:
            for v in values:
                v = as_list(v)[0] if isinstance(v, list) and v else v
                if v is not None and not isinstance(v, (dict, list)):
                    return v
            return None

        concurrency = pos_int(first(loadgen.get("concurrency"), stimulus.get("concurrency"), cfg.get("concurrency")))
        rate = positive(num(first(loadgen.get("request_rate"), stimulus.get("request_rate"), cfg.get("request_rate"))))
        inputs = as_dict(cfg.get("input"))
        prompt = as_dict(inputs.get("prompt"))
        isl = positive(num(first(as_dict(prompt.get("input_tokens")).get("mean"),
                                 as_dict(inputs.get("synthetic_tokens")).get("mean"),
                                 cfg.get("synthetic_input_tokens_mean"))))
        osl = positive(num(first(as_dict(prompt.get("output_tokens")).get("mean"),
                                 as_dict(inputs.get("output_tokens")).get("mean"), cfg.get("output_tokens_mean"))))
        return {"_model": model[:200] if model else None,
                "load_kind": "rate" if rate else ("concurrency" if concurrency else None),
                "request_rate_per_s": rate, "max_concurrency": concurrency,
                "prompt_tokens_requested": isl, "output_tokens_requested": osl}
