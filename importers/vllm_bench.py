"""vLLM serving benchmark results (`benchmarks/benchmark_serving.py --save-result`, `vllm bench serve`),
one JSON object per run, or a JSON array of them (`vllm bench sweep`'s summary.json).

Learned from the writer (`calculate_metrics()` and `benchmark()`): throughputs are for the whole
server (all of its GPUs) over `duration` s: `request_throughput` requests/s, `output_throughput`
output tokens/s, `total_token_throughput` (or, before mid-2024, `input_throughput`) for prompt
tokens; every `*_ms` is milliseconds: time to first token (ttft), time per output token after the
first (tpot), inter-token latency (itl; with multi-token chunks it is not TPOT) and end-to-end
latency (`e2el`, older `latency`). A run whose requests all failed writes 0.0 everywhere: it is a
failed run, not zeros. The file names neither the GPU nor its count, and vLLM measures no energy.
"""

from __future__ import annotations

from typing import Any

from importers.base import (
    Conversion,
    Importer,
    Source,
    clean_str,
    num,
    pos_int,
    positive,
)

RESULT_KEYS = ("request_throughput", "output_throughput", "mean_ttft_ms", "median_ttft_ms", "mean_tpot_ms")
LATENCIES = (
    ("mean_ttft_ms", "ttft_avg_ms"), ("median_ttft_ms", "ttft_p50_ms"), ("p90_ttft_ms", "ttft_p90_ms"),
    ("p95_ttft_ms", "ttft_p95_ms"), ("p99_ttft_ms", "ttft_p99_ms"),
    ("mean_tpot_ms", "tpot_avg_ms"), ("median_tpot_ms", "tpot_p50_ms"), ("p90_tpot_ms", "tpot_p90_ms"),
    ("p95_tpot_ms", "tpot_p95_ms"), ("p99_tpot_ms", "tpot_p99_ms"),
    ("mean_e2el_ms", "latency_avg_ms"), ("median_e2el_ms", "latency_p50_ms"), ("p90_e2el_ms", "latency_p90_ms"),
    ("p95_e2el_ms", "latency_p95_ms"), ("p99_e2el_ms", "latency_p99_ms"),
    ("mean_latency_ms", "latency_avg_ms"), ("median_latency_ms", "latency_p50_ms"),
    ("p99_latency_ms", "latency_p99_ms"),
)


def _is_result(doc: Any) -> bool:
    return (isinstance(doc, dict) and "model_id" in doc and ("backend" in doc or "endpoint_type" in doc)
            and any(k in doc for k in RESULT_KEYS))


class VllmBenchImporter(Importer):
    NAME = "vllm-bench"
    TOOL = "vLLM benchmark_serving"
    DESCRIPTION = "vLLM benchmark_serving / vllm bench serve result JSON (or a sweep's list of them)"

    def sniff(self, source: Source) -> bool:
        doc = source.json
        if isinstance(doc, list):
            return bool(doc) and all(_is_result(d) for d in doc[:3])
        return _is_result(doc)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        results = doc if isinstance(doc, list) else [doc]
        runs = [self._run(conv, r, i, f"[{i}]" if isinstance(doc, list) else "(object)")
                for i, r in enumerate(results)]
        if conv.hints.device is None:
            conv.warn("vLLM's result file names neither the GPU nor how many served the model")
        return conv.document(runs)

    def _run(self, conv: Conversion, r: Any, index: int, where: str) -> dict[str, Any]:
        if not isinstance(r, dict):
            raise conv.fail(where, "expected a result object")

        def val(key: str) -> float | None:
            return num(r.get(key), f"{where}.{key}", conv)

        model = clean_str(r.get("model_id"))
        completed, failed = val("completed"), val("failed")
        duration = positive(val("duration"))
        metrics: dict[str, Any] = {"energy_missing_reason": "vLLM's serving benchmark does not measure energy"}
        status, error = "ok", None
        if completed is not None and completed <= 0:
            status = "failed"
            error = f"no request completed ({int(failed) if failed is not None else '?'} failed)"
        else:
            metrics["duration_s"] = duration
            metrics["examples"] = pos_int(completed)
            reqs = positive(val("request_throughput"))
            if reqs:
                metrics.update(throughput_sps=reqs, sample_unit="request")
            metrics["tokens_per_s"] = positive(val("output_throughput"))
            prompt = positive(val("input_throughput"))
            total, output = positive(val("total_token_throughput")), positive(val("output_throughput"))
            if prompt is None and total and output and total > output:
                prompt = total - output
            metrics["prompt_tokens_per_s"] = prompt
            for key, field in LATENCIES:
                v = val(key)
                if v is not None and v >= 0 and field not in metrics:
                    metrics[field] = v
        rate = r.get("request_rate")
        concurrency = pos_int(r.get("max_concurrency"))
        backend = clean_str(r.get("backend")) or "?"
        prompts = pos_int(r.get("num_prompts")) or "?"
        notes = [f"vLLM serving benchmark ({backend} backend), {prompts} prompts at request rate "
                 f"{rate if rate is not None else '?'}"
                 + (f", at most {concurrency} concurrent" if concurrency else "")]
        itl = val("mean_itl_ms")
        if itl is not None and status == "ok":
            notes.append(f"mean inter-token latency {itl:g} ms (gaps between streamed chunks)")
        for key in ("total_input_tokens", "total_output_tokens", "max_num_seqs", "run_number", "date"):
            if r.get(key) not in (None, ""):
                notes.append(f"{key} {r.get(key)}")
        return {
            "run_id": conv.run_id(index),
            "status": status,
            "error": error,
            "device": conv.device(None, "gpu", where=f"{where} (vLLM's result file does not name the GPU)"),
            "config": {
                "workload": conv.hints.workload or (model or "unknown")[:200],
                "model": model,
                "task": "text-generation",
                "mode": "infer",
                "precision": conv.precision(None),
                # max_num_seqs is the server's cap on running requests, not the batch that ran (as ML.ENERGY v3)
                "batch_size": conv.hints.batch_size,
                "tag": (f"rate {rate}" + (f", concurrency {concurrency}" if concurrency else "")
                        + (f", max_num_seqs {seqs}" if (seqs := pos_int(r.get("max_num_seqs"))) else ""))[:200],
            },
            "metrics": {k: v for k, v in metrics.items() if v is not None},
            "notes": "; ".join(notes),
        }
