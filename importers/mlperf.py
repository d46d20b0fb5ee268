"""MLPerf Inference results: a result folder, or its mlperf_log_summary.txt alone.

A folder holds run directories (`run_1`, ...) with `mlperf_log_summary.txt`, optionally
`mlperf_log_detail.txt` (`:::MLLOG {json}` lines) and `spl.txt` (PTDaemon power samples),
plus the submitter's system description JSON. Ranging runs (a `ranging` folder) are the
power analyzer's range-finding pass and are excluded, as are accuracy runs. Latencies are in
ns (stored in ms). Power is trimmed to the power_begin/power_end window of the detail log;
on multi-channel analyzers the first Watts field is already the total.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from importers.base import (
    MS_PER_NS,
    Conversion,
    Importer,
    Source,
    clean_str,
    energy_metrics,
    num,
    pos_int,
    positive,
)
from joulebench.metrics import E2E, LATENCY, STATS

SUMMARY = "mlperf_log_summary.txt"
DETAIL = "mlperf_log_detail.txt"
POWER = "spl.txt"
EXCLUDED_DIRS = {"ranging", "accuracy"}
BENCHMARKS = (
    "resnet50",
    "retinanet",
    "ssd-mobilenet",
    "ssd-resnet34",
    "bert-99.9",
    "bert-99",
    "rnnt",
    "3d-unet-99.9",
    "3d-unet-99",
    "3d-unet",
    "dlrm-v2-99.9",
    "dlrm-v2-99",
    "dlrm-99.9",
    "dlrm-99",
    "gptj-99.9",
    "gptj-99",
    "llama2-70b-99.9",
    "llama2-70b-99",
    "llama2-70b-interactive-99.9",
    "llama2-70b-interactive-99",
    "llama3.1-405b",
    "llama3_1-405b",
    "llama3.1-8b",
    "mixtral-8x7b",
    "deepseek-r1",
    "stable-diffusion-xl",
)
# what one sample is, by benchmark family (LoadGen counts samples; an LLM sample is one prompt)
SAMPLE_UNITS = (("resnet", "image"), ("retinanet", "image"), ("ssd", "image"), ("3d-unet", "image"),
                ("stable-diffusion", "image"), ("bert", "sequence"), ("rnnt", "sequence"), ("gptj", "request"),
                ("llama", "request"), ("mixtral", "request"), ("deepseek", "request"))
_LINE = re.compile(r"^\s*([^:]+?)\s*:\s*(.*?)\s*$")
_PTD_TIME = "%m-%d-%Y %H:%M:%S.%f"


def _summary_fields(text: str) -> dict[str, str]:
    """`Key : value` lines; keys as written and lower-cased (LoadGen writes 'First Token' and 'first token')."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if "warnings encountered" in line.lower() or line.startswith("No warnings"):
            break  # v5.x free text after this point is not `key : value`
        m = _LINE.match(line)
        if m and not line.lstrip().startswith("*"):
            out.setdefault(m.group(1).strip(), m.group(2))
            out.setdefault(m.group(1).strip().lower(), m.group(2))
    return out


TOKEN_LATENCIES = (
    ("mean first token latency (ns)", "ttft_avg_ms"),
    ("50.00 percentile first token latency (ns)", "ttft_p50_ms"),
    ("90.00 percentile first token latency (ns)", "ttft_p90_ms"),
    ("95.00 percentile first token latency (ns)", "ttft_p95_ms"),
    ("99.00 percentile first token latency (ns)", "ttft_p99_ms"),
    ("mean time to output token (ns)", "tpot_avg_ms"),
    ("50.00 percentile time to output token (ns)", "tpot_p50_ms"),
    ("90.00 percentile time to output token (ns)", "tpot_p90_ms"),
    ("95.00 percentile time to output token (ns)", "tpot_p95_ms"),
    ("99.00 percentile time to output token (ns)", "tpot_p99_ms"),
)


# LoadGen's latency lines -> our per-query latency columns; an LLM's per-request latency is end-to-end (E2E_OF)
QUERY_LATENCIES: tuple[tuple[str, str | None], ...] = (
    ("Mean latency (ns)", "latency_avg_ms"),
    ("50.00 percentile latency (ns)", "latency_p50_ms"),
    ("90.00 percentile latency (ns)", "latency_p90_ms"),
    ("95.00 percentile latency (ns)", "latency_p95_ms"),
    ("99.00 percentile latency (ns)", "latency_p99_ms"),
    ("Max latency (ns)", "latency_max_ms"),
)
E2E_OF = {LATENCY.stat(stat).name: E2E.stat(stat).name for stat in STATS}


def _is_summary(text: str) -> bool:
    return "MLPerf Results Summary" in text[:400] and "Scenario" in text


def _is_detail(head: str) -> bool:
    """LoadGen's detail log: `:::MLLOG {json}` lines that begin with its version (training logs have none)."""
    return head.startswith(":::MLLOG") and '"loadgen_version"' in head[:600]


# the detail log's result keys -> the summary's lines, so one reading serves both (LoadGen's results.cc);
# `result_token_throughput` is left out: LoadGen divides tokens by a mean latency in ns there (tokens per ns)
_DETAIL_KEYS = {
    "effective_scenario": "Scenario", "effective_test_mode": "Mode", "sut_name": "SUT name",
    "effective_samples_per_query": "samples_per_query", "result_validity": "Result is",
    "result_samples_per_second": "Samples per second",
    "result_completed_samples_per_sec": "Completed samples per second",
    "result_scheduled_samples_per_sec": "Scheduled samples per second",
    "result_qps_with_loadgen_overhead": "QPS w/ loadgen overhead",
    "result_tokens_per_second": "tokens per second",
    "result_completed_tokens_per_second": "completed tokens per second",
    "result_inferred_tokens_per_second": "tokens per second (inferred)",
    "result_inferred_completed_tokens_per_second": "completed tokens per second (inferred)",
    "result_mean_latency_ns": "Mean latency (ns)", "result_max_latency_ns": "Max latency (ns)",
    "result_first_token_mean_latency_ns": "mean first token latency (ns)",
    "result_time_to_output_token_mean": "mean time to output token (ns)",
}
_DETAIL_PERCENTILE = re.compile(r"result_(first_token_)?(\d+\.\d+)_percentile_latency_ns$"
                                r"|result_time_per_output_token_(\d+\.\d+)_percentile_ns$")


def _detail_fields(details: dict[str, Any]) -> dict[str, str]:
    """A detail log's results under the summary's names (as `_summary_fields` reads them)."""
    out: dict[str, str] = {}
    for key, value in details.items():
        name = _DETAIL_KEYS.get(key)
        m = _DETAIL_PERCENTILE.match(key) if name is None else None
        if m and m.group(3):
            name = f"{m.group(3)} percentile time to output token (ns)"
        elif m:
            name = f"{m.group(2)} percentile {'first token ' if m.group(1) else ''}latency (ns)"
        if name is not None and value is not None and not isinstance(value, dict | list):
            out.setdefault(name, str(value))
            out.setdefault(name.lower(), str(value))
    return out


class MlperfImporter(Importer):
    NAME = "mlperf-inference"
    TOOL = "mlperf-loadgen"
    DESCRIPTION = "MLPerf Inference result folder, mlperf_log_summary.txt or mlperf_log_detail.txt"
    FOLDER = True
    ALSO_FILES = True

    def sniff(self, source: Source) -> bool:
        if source.is_folder:
            return any(p.rsplit("/", 1)[-1] == SUMMARY for p in source.files)
        return _is_summary(source.head) or _is_detail(source.head)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        src = conv.source
        if not src.is_folder:
            text = src.text or ""
            summary, detail = (None, text) if _is_detail(text) else (text, None)
            single = self._run(conv, src.name, summary, detail, None, 0, (), detail_name=src.name)
            if single is None:
                raise conv.fail("Mode", "AccuracyOnly: an accuracy run has no performance result to import")
            return conv.document([single])
        system = self._system(conv)
        runs: list[dict[str, Any]] = []
        run_dirs = sorted(
            {p.rsplit("/", 1)[0] if "/" in p else "" for p in src.files if p.rsplit("/", 1)[-1] == SUMMARY}
        )
        skipped = []
        for d in run_dirs:
            parts = tuple(x for x in d.split("/") if x)
            if EXCLUDED_DIRS & {x.lower() for x in parts}:
                skipped.append(d)
                continue
            prefix = f"{d}/" if d else ""
            summary = self._text(conv, prefix + SUMMARY)
            detail = self._text(conv, prefix + DETAIL) if prefix + DETAIL in src.files else None
            power = self._text(conv, prefix + POWER) if prefix + POWER in src.files else None
            run = self._run(
                conv,
                f"{src.name}/{prefix}{SUMMARY}",
                summary,
                detail,
                power,
                len(runs),
                parts,
                system,
                detail_name=f"{src.name}/{prefix}{DETAIL}",
                power_name=f"{src.name}/{prefix}{POWER}",
            )
            if run is not None:
                runs.append(run)
        if skipped:
            conv.warn(f"excluded {len(skipped)} ranging/accuracy run(s): {', '.join(skipped)}")
        return conv.document(runs)

    # --- parts -------------------------------------------------------------------------------
    def _text(self, conv: Conversion, rel: str) -> str:
        data = conv.source.files[rel]
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise conv.fail(rel, f"not UTF-8 text (byte {e.start})") from e

    def _system(self, conv: Conversion) -> dict[str, Any] | None:
        for rel in sorted(conv.source.files):
            if not rel.endswith(".json"):
                continue
            try:
                doc = json.loads(conv.source.files[rel].decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):
                continue
            if isinstance(doc, dict) and "accelerator_model_name" in doc:
                return doc
        conv.warn("no system description JSON (accelerator_model_name) in the folder")
        return None

    def _workload(self, conv: Conversion, parts: tuple[str, ...]) -> str:
        tokens: list[str] = []
        for part in (*conv.source.dirs, conv.source.base_name, *parts):
            tokens += [t.lower() for t in re.split(r"[_/\s]+", part)]
        for name in BENCHMARKS:
            if name in tokens:
                return name
        if conv.hints.workload:
            return conv.hints.workload
        conv.warn("benchmark name not found in the folder names; workload stored as 'unknown' (pass --workload)")
        return "unknown"

    def _run(
        self,
        conv: Conversion,
        name: str,
        summary: str | None,
        detail: str | None,
        power: str | None,
        index: int,
        parts: tuple[str, ...],
        system: dict[str, Any] | None = None,
        detail_name: str = "",
        power_name: str = "",
    ) -> dict[str, Any] | None:
        if summary is not None and not _is_summary(summary):
            raise conv.fail(name, "not an MLPerf results summary ('MLPerf Results Summary' header missing)")
        details = _detail(conv, detail, detail_name) if detail else {}
        f = _summary_fields(summary) if summary is not None else _detail_fields(details)
        scenario = clean_str(f.get("Scenario"))
        if not scenario:
            raise conv.fail(f"{name}: Scenario", "missing")
        if (f.get("Mode") or "").strip() == "AccuracyOnly":
            conv.warn(f"{name}: accuracy run skipped")
            return None
        spq = pos_int(f.get("samples_per_query")) or pos_int(details.get("effective_samples_per_query")) or 1
        if scenario == "Offline":
            sps = num(f.get("Samples per second"), f"{name}: Samples per second", conv)
        elif scenario == "Server":
            sps = num(f.get("Completed samples per second"), f"{name}: Completed samples per second", conv) or num(
                f.get("Scheduled samples per second"), f"{name}: Scheduled samples per second", conv
            )
        else:
            qps = num(f.get("QPS w/ loadgen overhead"), f"{name}: QPS w/ loadgen overhead", conv)
            sps = qps * spq if qps else None
        flags: list[str] = []
        validity = clean_str(f.get("Result is"))
        if validity and validity != "VALID":
            flags.append("mlperf_result_invalid")
        metrics: dict[str, Any] = {"throughput_sps": sps if sps and sps > 0 else None}
        notes_extra: list[str] = []
        counted = f.get("tokens per second") or f.get("completed tokens per second")
        inferred = f.get("tokens per second (inferred)") or f.get("completed tokens per second (inferred)")
        if counted is not None:
            metrics["tokens_per_s"] = positive(num(counted, f"{name}: Tokens per second", conv))
        elif inferred is not None:
            notes_extra.append(f"{inferred} tokens/s inferred by LoadGen (samples x a fixed tokens-per-sample "
                               "factor), not counted: not stored as tokens/s")
        for key, field in TOKEN_LATENCIES:
            v = num(f.get(key), f"{name}: {key}", conv)
            if v is not None and v >= 0:
                metrics[field] = v * MS_PER_NS
        device = self._device(conv, system)
        workload = self._workload(conv, parts)
        llm = (any(workload.startswith(key) for key, u in SAMPLE_UNITS if u == "request")
               or f.get("mean first token latency (ns)") is not None)  # token latencies: one sample is a prompt
        latency_columns = QUERY_LATENCIES  # a query's latency: per query (SingleStream, MultiStream) or sample
        if llm and scenario == "Offline":
            # LoadGen times Offline's samples from its ONE query's issue: 'latencies' of minutes to an hour
            # that say when each sample finished in the run, a whole-run figure, never a request's latency
            latency_columns = ()
            if f.get("Mean latency (ns)") is not None:
                notes_extra.append("Offline latencies (time since the single query was issued, mean "
                                   f"{f.get('Mean latency (ns)')} ns) are whole-run figures: not stored as latency")
        elif llm:  # Server, Interactive, SingleStream: one sample is one request, sent to its last token
            latency_columns = tuple((key, E2E_OF.get(col or "")) for key, col in QUERY_LATENCIES)
            if sps and sps > 0 and scenario != "Offline":
                metrics["requests_per_s"] = sps  # completed samples (prompts) per second
        for key, column in latency_columns:
            v = num(f.get(key), f"{name}: {key}", conv)
            if v is not None and v >= 0:
                if column is None:  # end-to-end latency has no max column
                    notes_extra.append(f"max request latency {v * MS_PER_NS:.1f} ms")
                else:
                    metrics[column] = v * MS_PER_NS
        queries = pos_int(details.get("result_query_count"))
        if queries:
            metrics["examples"] = queries * spq
        if scenario == "Server" and any(p.lower() == "interactive"
                                        for p in (*conv.source.dirs, conv.source.base_name, *parts)):
            scenario = "Interactive"  # LoadGen writes Interactive runs as Server; only the folder tells
        unit = next((u for key, u in SAMPLE_UNITS if workload.startswith(key)), None)
        if unit and metrics.get("throughput_sps"):
            metrics["sample_unit"] = unit
        config: dict[str, Any] = {
            "workload": workload,
            "mode": "infer",
            "precision": conv.precision(None),
            "gpu_count": device.pop("_count", None),
            "tag": f"MLPerf {scenario}",
        }
        run: dict[str, Any] = {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": device,
            "config": config,
            "metrics": metrics,
            "flags": flags,
        }
        m = re.match(r"run_(\d+)$", parts[-1] if parts else "")
        if m:
            config["repeat_index"] = int(m.group(1)) - 1
        if system:
            run["environment"] = {
                "system_name": clean_str(system.get("system_name")),
                "framework": clean_str(system.get("framework")),
                "os": clean_str(system.get("operating_system")),
                "cpu_model": clean_str(system.get("host_processor_model_name")),
            }
        if power is not None:
            self._power(conv, run, power, power_name, details, flags)
        elif device["kind"] != "cpu":
            metrics["energy_missing_reason"] = "no spl.txt power log in the result folder (performance-only submission)"
        if metrics.get("tokens_per_s") and metrics.get("avg_power_w"):
            metrics["j_per_token"] = metrics["avg_power_w"] / metrics["tokens_per_s"]
        notes = [f"SUT {f.get('SUT name', '?')}", f"scenario {scenario}", f"result {validity or '?'}", *notes_extra]
        run["notes"] = "MLPerf Inference: " + ", ".join(notes)
        conv.tool_version = conv.tool_version or clean_str(details.get("loadgen_version"))
        return run

    def _device(self, conv: Conversion, system: dict[str, Any] | None) -> dict[str, Any]:
        if system:
            count = pos_int(system.get("accelerators_per_node"))
            nodes = pos_int(system.get("number_of_nodes")) or 1
            accel = clean_str(system.get("accelerator_model_name"))
            if count and accel:
                device = conv.device(accel)
                device["_count"] = count * nodes
                return device
            cpu = clean_str(system.get("host_processor_model_name"))
            if cpu:
                return conv.device(cpu, "cpu")
        return conv.device(None, where="system description JSON")

    def _power(
        self, conv: Conversion, run: dict[str, Any], text: str, name: str, details: dict[str, Any], flags: list[str]
    ) -> None:
        times, watts = _spl(conv, text, name)
        begin = _ptd_time(details.get("power_begin"))
        end = _ptd_time(details.get("power_end"))
        metrics = run["metrics"]
        if begin is None or end is None or end <= begin:
            metrics["energy_missing_reason"] = (
                "no power_begin/power_end window in mlperf_log_detail.txt; "
                "the power log cannot be trimmed to the measured run"
            )
            flags.append("power_window_unknown")
            return
        kept = [(t, w) for t, w in zip(times, watts) if begin <= t <= end]
        if len(kept) < 2:
            metrics["energy_missing_reason"] = f"{name}: fewer than 2 power samples inside the power window"
            return
        duration_s = (end - begin).total_seconds()
        avg_w = sum(w for _, w in kept) / len(kept)
        run["power_traces"] = [
            {
                "domain": "wall",
                "boundary": conv.boundary("wall"),
                "method": "sampled",
                "t_s": [(t - begin).total_seconds() for t, _ in kept],
                "power_w": [w for _, w in kept],
            }
        ]
        metrics["duration_s"] = duration_s
        metrics.update(
            energy_metrics(
                avg_w * duration_s,
                examples=metrics.get("examples"),
                duration_s=duration_s,
                boundary=conv.boundary("wall"),
                method="sampled",
                flags=flags,
            )
        )
        if "j_per_sample" not in metrics and metrics.get("throughput_sps") and "energy_j" in metrics:
            metrics["j_per_sample"] = avg_w / metrics["throughput_sps"]


def _ptd_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.strptime(value.strip(), _PTD_TIME)
    except ValueError:
        return None


def _detail(conv: Conversion, text: str, name: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.startswith(":::MLLOG"):
            continue
        try:
            entry = json.loads(line[len(":::MLLOG") :])
        except (ValueError, RecursionError) as e:
            raise conv.fail(f"{name}: line {lineno}", f"':::MLLOG' line is not valid JSON ({e})") from e
        if isinstance(entry, dict) and isinstance(entry.get("key"), str):
            out.setdefault(entry["key"], entry.get("value"))
    return out


def _spl(conv: Conversion, text: str, name: str) -> tuple[list[datetime], list[float]]:
    times: list[datetime] = []
    watts: list[float] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split(",")
        if len(fields) < 4 or fields[0] != "Time" or fields[2] != "Watts":
            raise conv.fail(f"{name}: line {lineno}", "expected 'Time,<MM-DD-YYYY HH:MM:SS.fff>,Watts,<W>,...'")
        t = _ptd_time(fields[1])
        w = num(fields[3])
        if t is None or w is None:
            raise conv.fail(
                f"{name}: line {lineno}", f"bad time or Watts value ({fields[1][:30]!r}, {fields[3][:20]!r})"
            )
        if w < 0:
            continue  # the analyzer reports -1 when it has no reading
        times.append(t)
        watts.append(w)
    return times, watts
