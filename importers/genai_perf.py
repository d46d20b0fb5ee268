"""NVIDIA GenAI-Perf and AIPerf exports: `profile_export_genai_perf.json` / `profile_export_aiperf.json`
and their `.csv`.

Learned from the writers (perf_analyzer genai-perf/genai_perf/export_data/{json,csv}_exporter.py,
metrics/{llm_metrics,statistics}.py, profile_data_parser/llm_profile_data_parser.py; aiperf
aiperf/exporters/{json,csv}_exporter.py, common/models/export_models.py, metrics/types/):
- the JSON is one object: per metric `{"unit": ..., "avg", "p1".."p99", "min", "max", "std"}`
  (system metrics only `avg`), then `input_config` (the command's arguments; AIPerf adds
  `was_cancelled`, `error_summary`, `start_time`, `end_time`);
- the CSV has two sections: `Metric,avg,min,max,p99,...` rows named "Time To First Token (ms)"
  (name title-cased, unit in parentheses; AIPerf: its metric header, "Time to First Token (ms)"), a
  blank line, then `Metric,Value` rows (request/output token throughput, request count); GenAI-Perf
  writes numbers as "1,234.56";
- `inter_token_latency` is per request (end-to-end - TTFT) / (output tokens - 1): JouleBench's TPOT,
  never its ITL (every gap pooled); `output_token_throughput_per_user` is 1 / that per request (never
  the system's tokens/s: notes only); `output_token_throughput` (output tokens / the benchmark's
  duration) is the system's tokens/s; `request_latency` is end-to-end, `time_to_first_token` TTFT;
  AIPerf's `inter_chunk_latency` gaps are between chunks, not tokens (not stored).
The unit written beside each figure decides (ms, us, ns, s). Neither tool measures energy in these
files (GenAI-Perf's GPU telemetry, when present, is power and utilisation: not read).
"""

from __future__ import annotations

import re
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
    num,
    pos_int,
    positive,
    read_csv,
)
from joulebench.metrics import E2E, STATS, TPOT, TTFT, Distribution

NO_ENERGY = "GenAI-Perf / AIPerf exports hold no energy figure"
_TIME_UNITS = {"ms": 1.0, "msec": 1.0, "ns": MS_PER_NS, "us": 1e-3, "µs": 1e-3, "s": MS_PER_S, "sec": MS_PER_S}
_TIMED: dict[str, Distribution] = {"time_to_first_token": TTFT, "request_latency": E2E, "inter_token_latency": TPOT}
_KEYS = ("request_latency", "request_throughput", "time_to_first_token", "output_token_throughput",
         "inter_token_latency")
_CSV_NAME = re.compile(r"^(.*?)\s*(?:\(([^()]*)\))?$")


def _is_json_export(doc: Any) -> bool:
    if not isinstance(doc, dict):
        return False
    found = [k for k in _KEYS if isinstance(doc.get(k), dict) and any(s in doc[k] for s in ("avg", "p50", "p99"))]
    return len(found) >= 2 and ("input_config" in doc or any("unit" in doc[k] for k in found))


def _is_csv_export(text: str) -> bool:
    lines = [line.strip().lower() for line in text.splitlines()[:40] if line.strip()]
    return (bool(lines) and lines[0].startswith("metric,avg,") and "metric,value" in lines
            and any(line.startswith(("time to first token", "request latency")) for line in lines))


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
            stats = {k: v for k, v in doc.items() if isinstance(v, dict) and k != "input_config"}
            run = self._run(conv, stats, as_dict(doc.get("input_config")), doc)
        else:
            run = self._run(conv, self._csv_stats(conv), {}, {})
        return conv.document([run])

    def _csv_stats(self, conv: Conversion) -> dict[str, dict[str, Any]]:
        """The CSV's rows as the JSON's {metric: {"unit", stat: value}} (GenAI-Perf's "1,234.56" read as 1234.56)."""
        header, rows = read_csv(conv, conv.source.text or "")
        stats: dict[str, dict[str, Any]] = {}
        columns = [c.lower() for c in header[1:]]
        for line, row in rows:
            if row and row[0].lower() == "metric":  # the system section's own header
                columns = [c.lower() for c in row[1:]]
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
        return stats

    def _run(self, conv: Conversion, stats: dict[str, Any], config_in: dict[str, Any],
             doc: dict[str, Any]) -> dict[str, Any]:
        metrics: dict[str, Any] = {"energy_missing_reason": NO_ENERGY}
        notes: list[str] = []
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
        if not any(k.startswith(("ttft_", "e2e_", "tpot_")) for k in metrics) and not (
                metrics["tokens_per_s"] or metrics["requests_per_s"]):
            raise conv.fail("(whole file)", "no latency or throughput figure (time_to_first_token, request_latency, "
                            "output_token_throughput, request_throughput): export the profile's results, not only "
                            "its configuration")
        user = as_dict(stats.get("output_token_throughput_per_user"))
        if (per_user := num(user.get("avg"))) is not None:
            notes.append(f"per-user output {per_user:.4g} tokens/s average (1 / TPOT per request; not the system's)")
        aiperf = (any(k in doc for k in ("was_cancelled", "error_summary", "aiperf_version"))
                  or "benchmark_duration" in stats)
        tool = "AIPerf" if aiperf else "GenAI-Perf"
        conv.tool_version = clean_str(doc.get("aiperf_version") or doc.get("genai_perf_version"))
        notes.insert(0, f"{tool} export: inter_token_latency is per request (end-to-end - TTFT) / (output tokens - 1), "
                        "stored as TPOT")
        if "telemetry_stats" in doc:
            notes.append("GPU telemetry present (power, utilisation): not read as energy")
        if doc.get("was_cancelled") is True:
            notes.append("the benchmark was cancelled before it ended")
        config = self._config(conv, config_in)
        model = config.pop("_model")
        run: dict[str, Any] = {
            "run_id": conv.run_id(0),
            "status": "ok",
            "device": conv.device(None, "gpu", where=f"(whole file; {tool} measures an endpoint and names no GPU)"),
            "config": conv.generation_config(model, **config),
            "metrics": {k: v for k, v in metrics.items() if v is not None},
            "notes": "; ".join(notes),
        }
        return run

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
        if conv.hints.device is None:
            conv.warn("GenAI-Perf and AIPerf name neither the GPU nor the serving engine (they measure an endpoint)")
        return {"_model": model[:200] if model else None,
                "load_kind": "rate" if rate else ("concurrency" if concurrency else None),
                "request_rate_per_s": rate, "max_concurrency": concurrency,
                "prompt_tokens_requested": isl, "output_tokens_requested": osl}
