"""TensorRT-LLM `trtllm-bench` throughput / latency reports: the text it prints and its JSON report
(`--report_json`).

Learned from the writer (tensorrt_llm/bench/dataclasses/reporting.py, statistics.py): every figure is
over the whole benchmark (first request sent to last answer, "Total Latency (ms)"), all GPUs
together. "Total Output Throughput" (older: "Token Throughput") is output tokens / that time and is
stored as tokens/s; "Total Token Throughput" adds the prompt tokens, so prompt tokens/s is the
difference. Per-user and per-GPU throughputs are not the system's and are not stored (JouleBench has
no per-user metric: the run's notes give them). TPOT is per request ((end - first token) / (output
tokens - 1)), TTFT per request, "[Latency]" the per-request end-to-end latency; "Total Latency" is
the whole run's window (`duration_s`), never a request's. The world size (TP x PP) is the GPU count;
"MACHINE DETAILS" names the first GPU. trtllm-bench measures no energy.

Older reports (0.12-0.16) differ: the throughput report's section is "= STATISTICS" with "Total Latency
(seconds)"; the latency report ("= THROUGHPUT OVERVIEW", "= LATENCY OVERVIEW") prints "Total Token Throughput"
as output tokens / the run's time (no prompt tokens: it equals requests x average output length / Total
Latency, which is checked), "Generation Token Throughput" per request (one user's decode speed: notes only),
and "Average inter-token latency" as (request latency - TTFT) / (output tokens - 1), which is TPOT; its
"GENERATION LATENCY BREAKDOWN" is request latency less TTFT, neither end-to-end nor stored.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import MS_PER_S, Conversion, Importer, Source, as_dict, clean_str, num, pos_int, positive
from importers.llm_labels import precision_of, quantization_of
from joulebench.metrics import E2E, TPOT, TTFT, Distribution

TEXT_MARKS = ("= PERFORMANCE OVERVIEW", "= STATISTICS", "= THROUGHPUT OVERVIEW")
_LINE = re.compile(r"^\s*([A-Za-z][^:\n]{1,80}?):\s*(\S.*?)\s*$")
_PCT = re.compile(r"^\s*\[(TPOT|TTFT|Latency)\]\s+(MINIMUM|MAXIMUM|AVERAGE|P50|P90|P95|P99)\s*:\s*(\S+)\s*$")
_STATS = {"AVERAGE": "avg", "P50": "p50", "P90": "p90", "P95": "p95", "P99": "p99"}
_DIST = {"TPOT": TPOT, "TTFT": TTFT, "Latency": E2E}
NO_ENERGY = "trtllm-bench does not measure energy"
PER_USER = ("Per User Output Throughput", "Per GPU Output Throughput", "Per User Output Speed",
            "Generation Token Throughput")


def _output_only(perf: dict[str, float | None]) -> bool:
    """Whether a report's "Total Token Throughput" counts output tokens only (0.16's latency report): it equals
    requests x average output length / the run's time, within 1 %."""
    total, requests, out_len, ms = perf["total_tok_s"], perf["requests"], perf["output_len"], perf["total_ms"]
    if not (total and requests and out_len and ms) or total <= 0 or ms <= 0:
        return False
    return abs(requests * out_len / (ms / MS_PER_S) - total) <= 0.01 * total


def _is_json_report(doc: Any) -> bool:
    perf = doc.get("performance") if isinstance(doc, dict) else None
    return (isinstance(perf, dict) and "request_throughput_req_s" in perf
            and isinstance(doc.get("engine"), dict) and "world_info" in doc)


class TrtllmBenchImporter(Importer):
    NAME = "trtllm-bench"
    TOOL = "trtllm-bench"
    DESCRIPTION = "TensorRT-LLM trtllm-bench throughput/latency report (printed text or --report_json)"

    def sniff(self, source: Source) -> bool:
        if _is_json_report(source.json):
            return True
        text = source.head if len(source.data) > 4 * 2**20 else (source.text or "")  # a report at a long log's end
        marked = TEXT_MARKS[0] in text or (  # the older reports' sections have plainer names: with their header
            any(mark in text for mark in TEXT_MARKS[1:]) and "= ENGINE DETAILS" in text)
        return marked and any(k in text for k in ("Request Throughput (req/sec):", "Token Throughput (tokens/sec):"))

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        run = self._from_json(conv, doc) if _is_json_report(doc) else self._from_text(conv)
        return conv.document([run])

    # --- the printed report ---------------------------------------------------------------------
    def _from_text(self, conv: Conversion) -> dict[str, Any]:
        text = conv.source.text or ""
        values: dict[str, tuple[int, str]] = {}
        stats: dict[str, dict[str, tuple[int, str]]] = {}
        machine: str | None = None
        lines = text.splitlines()
        # the report begins at its first banner ('= PYTORCH BACKEND', '= ENGINE DETAILS'): figures above it are
        # another tool's (a how-to pasting a client's summary above trtllm-bench's report)
        first = next((n for n, line in enumerate(lines) if re.match(r"=\s+[A-Z][A-Z +&/-]+$", line.strip())), 0)
        if any(_LINE.match(line) or _PCT.match(line) for line in lines[:first]):
            conv.warn(f"lines 1-{first}: figures above the report's first section are not trtllm-bench's, not read")
        for n, line in enumerate(lines, 1):
            if n <= first:
                continue
            if (m := _PCT.match(line)) is not None:
                stats.setdefault(m.group(1), {})[m.group(2)] = (n, m.group(3))
            elif (m := _LINE.match(line)) is not None:
                values.setdefault(m.group(1).strip(), (n, m.group(2)))
            if line.strip().startswith("= MACHINE DETAILS"):
                after = [x.strip() for x in lines[n:n + 3] if x.strip() and not x.strip().startswith("=")]
                machine = after[0] if after else None

        def val(*labels: str) -> float | None:
            for label in labels:
                if label in values:
                    line_no, value = values[label]
                    return num(value, f"line {line_no} ({label})", conv)
            return None

        def text_of(label: str) -> str | None:
            return clean_str(values[label][1]) if label in values else None

        perf = {
            "requests": val("Number of requests"),
            "concurrent": val("Number of concurrent requests"),
            "input_len": val("Average Input Length (tokens)"),
            "output_len": val("Average Output Length (tokens)"),
            "req_s": val("Request Throughput (req/sec)"),
            "out_tok_s": val("Total Output Throughput (tokens/sec)", "Token Throughput (tokens/sec)"),
            "total_tok_s": val("Total Token Throughput (tokens/sec)"),
            "total_ms": val("Total Latency (ms)"),
            "e2e_avg_ms": val("Average request latency (ms)"),
            "ttft_avg_ms": val("Average time-to-first-token [TTFT] (ms)", "Average time-to-first-token (ms)"),
            # 0.16's latency report: "inter-token latency" is (latency - TTFT) / (output tokens - 1), i.e. TPOT
            "tpot_avg_ms": val("Average time-per-output-token [TPOT] (ms)", "Average inter-token latency (ms)"),
            "tp": val("TP Size"), "pp": val("PP Size"), "ep": val("EP Size"),
            "max_batch": val("Max Runtime Batch Size"),
        }
        if perf["total_ms"] is None and (seconds := val("Total Latency (seconds)")) is not None:
            perf["total_ms"] = seconds * MS_PER_S  # 0.12's "= STATISTICS"
        if perf["out_tok_s"] is None and _output_only(perf):  # 0.16's latency report: output tokens / the run's time
            perf["out_tok_s"], perf["total_tok_s"] = perf["total_tok_s"], None
        if perf["req_s"] is None and perf["out_tok_s"] is None:
            raise conv.fail("(whole file)", "a trtllm-bench report without 'Request Throughput (req/sec)' or 'Total "
                            "Output Throughput (tokens/sec)': import the whole printed report")
        dists: dict[str, dict[str, float]] = {}
        for key, by_stat in stats.items():
            for stat, (line_no, value) in by_stat.items():
                if stat in _STATS and (v := num(value, f"line {line_no} ([{key}] {stat})", conv)) is not None:
                    dists.setdefault(key, {})[_STATS[stat]] = v
        per_user = [f"{label} {values[k][1]}" for k in values for label in PER_USER if k.startswith(label)]
        gpu = re.split(r",\s*memory\b", machine)[0].strip() if machine and "No GPU info" not in machine else None
        labels: dict[str, Any] = {"model": text_of("Model"), "version": text_of("TensorRT LLM Version") or text_of(
            "TensorRT-LLM Version"), "dtype": text_of("Dtype"), "quant": text_of("Quantization"),
                  "kv": text_of("KV Cache Dtype"), "gpu": gpu, "world": None}
        return self._run(conv, perf, dists, labels, per_user, "the report")

    # --- the JSON report ------------------------------------------------------------------------
    def _from_json(self, conv: Conversion, doc: dict[str, Any]) -> dict[str, Any]:
        engine, world = as_dict(doc.get("engine")), as_dict(doc.get("world_info"))
        req, perf_in = as_dict(doc.get("request_info")), as_dict(doc.get("performance"))
        streaming = as_dict(doc.get("streaming_metrics"))

        def val(section: dict[str, Any], name: str, key: str) -> float | None:
            return num(section.get(key), f"{name}.{key}", conv)

        perf = {
            "requests": val(req, "request_info", "num_requests"),
            "concurrent": val(req, "request_info", "avg_num_concurrent_requests"),
            "input_len": val(req, "request_info", "avg_input_length"),
            "output_len": val(req, "request_info", "avg_output_length"),
            "req_s": val(perf_in, "performance", "request_throughput_req_s"),
            "out_tok_s": val(perf_in, "performance", "system_output_throughput_tok_s")
            or val(perf_in, "performance", "output_throughput_tok_s"),
            "total_tok_s": val(perf_in, "performance", "system_total_throughput_tok_s"),
            "total_ms": val(perf_in, "performance", "total_latency_ms"),
            "e2e_avg_ms": val(perf_in, "performance", "avg_request_latency_ms"),
            "ttft_avg_ms": val(streaming, "streaming_metrics", "avg_ttft_ms"),
            "tpot_avg_ms": val(streaming, "streaming_metrics", "avg_tpot_ms"),
            "tp": val(world, "world_info", "tp_size"), "pp": val(world, "world_info", "pp_size"),
            "ep": val(world, "world_info", "ep_size"), "max_batch": val(world, "world_info", "max_batch_size"),
        }
        dists: dict[str, dict[str, float]] = {}
        for key, section, name in (("Latency", perf_in, "request_latency_percentiles_ms"),
                                   ("TPOT", streaming, "tpot_percentiles"), ("TTFT", streaming, "ttft_percentiles")):
            pct = as_dict(section.get(name))
            for stat, column in (("average", "avg"), ("p50", "p50"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99")):
                if (v := num(pct.get(stat), f"{name}.{stat}", conv)) is not None:
                    dists.setdefault(key, {})[column] = v
        per_user = [f"{k} {perf_in[k]}" for k in ("output_throughput_per_user_tok_s", "output_throughput_per_gpu_tok_s")
                    if perf_in.get(k) is not None]
        if streaming.get("token_output_speed_tok_s") is not None:
            per_user.append(f"token_output_speed_tok_s {streaming['token_output_speed_tok_s']}")
        machine = as_dict(doc.get("machine"))
        labels: dict[str, Any] = {"model": clean_str(engine.get("model")), "version": clean_str(engine.get("version")),
                  "dtype": clean_str(engine.get("dtype")), "quant": clean_str(engine.get("quantization")),
                  "kv": clean_str(engine.get("kv_cache_dtype")), "gpu": clean_str(machine.get("name")),
                  "world": pos_int(world.get("world_size"))}
        conv.tool_version = labels["version"]
        return self._run(conv, perf, dists, labels, per_user, "engine")

    # --- one run --------------------------------------------------------------------------------
    def _run(self, conv: Conversion, perf: dict[str, float | None], dists: dict[str, dict[str, float]],
             labels: dict[str, Any], per_user: list[str], where: str) -> dict[str, Any]:
        out, total = positive(perf["out_tok_s"]), positive(perf["total_tok_s"])
        requests = pos_int(perf["requests"])
        metrics: dict[str, Any] = {
            "energy_missing_reason": NO_ENERGY,
            "tokens_per_s": out,
            "prompt_tokens_per_s": total - out if out and total and total > out else None,
            "requests_per_s": positive(perf["req_s"]),
            "duration_s": total_ms / MS_PER_S if (total_ms := positive(perf["total_ms"])) else None,
            "examples": requests, "requests_completed": requests,
            "prompt_tokens_mean": positive(perf["input_len"]), "output_tokens_mean": positive(perf["output_len"]),
            TTFT.avg.name: positive(perf["ttft_avg_ms"]), TPOT.avg.name: positive(perf["tpot_avg_ms"]),
            E2E.avg.name: positive(perf["e2e_avg_ms"]),
        }
        if metrics["requests_per_s"]:
            metrics.update(throughput_sps=metrics["requests_per_s"], sample_unit="request")
        for key, values in dists.items():
            dist: Distribution = _DIST[key]
            for stat, v in values.items():
                if v > 0:
                    metrics[dist.stat(stat).name] = v
        tp, pp = pos_int(perf["tp"]), pos_int(perf["pp"])
        gpus = labels["world"] or (tp * pp if tp and pp else None)
        device = conv.device(labels["gpu"], "gpu", where=f"({where} names no GPU: no MACHINE DETAILS)")
        model = labels["model"]
        notes = ["trtllm-bench report: figures over the whole benchmark, all GPUs together"]
        if labels["quant"] or labels["dtype"]:
            notes.append(f"dtype {labels['dtype'] or '?'}, quantization {labels['quant'] or '?'}, KV cache dtype "
                         f"{labels['kv'] or '?'}")
        if tp or pp or perf["ep"]:
            notes.append(f"TP {tp or '?'}, PP {pp or '?'}, EP {pos_int(perf['ep']) or '?'}")
        if perf["concurrent"] is not None:
            notes.append(f"average concurrent requests {perf['concurrent']:g} (measured, not a setting)")
        if per_user:
            notes.append("per-user and per-GPU throughputs, not stored (JouleBench stores the system's tokens/s): "
                         + ", ".join(per_user))
        return {
            "run_id": conv.run_id(0),
            "status": "ok",
            "device": device,
            "config": {
                **conv.generation_config(model, precision=precision_of(conv, labels["dtype"], labels["quant"], where)),
                "gpu_count": gpus,
                "engine": "tensorrt-llm",
                "engine_version": labels["version"],
                "quantization": quantization_of(labels["quant"]),
                "tag": f"max runtime batch {pos_int(perf['max_batch'])}" if pos_int(perf["max_batch"]) else None,
            },
            "metrics": {k: v for k, v in metrics.items() if v is not None},
            "notes": "; ".join(notes)[:10_000],
        }
