"""vLLM serving benchmark results (`benchmarks/benchmark_serving.py --save-result`, `vllm bench serve`),
one JSON object per run, or a JSON array of them (`vllm bench sweep`'s summary.json).

Learned from the writer (`calculate_metrics()` and `benchmark()`): throughputs are for the whole
server (all of its GPUs) over `duration` s: `request_throughput` requests/s, `output_throughput`
output tokens/s, `total_token_throughput` (or, before mid-2024, `input_throughput`) for prompt
tokens; every `*_ms` is milliseconds: time to first token (ttft), time per output token after the
first (tpot, per request: (e2el - ttft) / (output tokens - 1)), inter-token latency (itl: every
gap between streamed chunks, pooled; with multi-token chunks it is not TPOT) and end-to-end
latency (`e2el`, older `latency`), each in its own column (joulebench.metrics). A run whose
requests all failed writes 0.0 everywhere: it is a failed run, not zeros. The file names no GPU and
vLLM measures no energy; a file that states the tensor-parallel size (`tensor_parallel_size`, as `vllm bench
sweep` records the server's settings) or a GPU energy whose key names its unit (`gpu_energy_j`,
`gpu_energy_mj`: milli-joules, converted) has them stored, and nothing is derived where it does not.
A result saved with `--save-detailed` keeps every request (`input_lens`, `output_lens`, `ttfts`, `itls` in s,
`errors`): they are stored (importers.request_detail) and the latency figures computed from them; a request vLLM
counted a success with no output token (TTFT written 0.0) is `empty`, with no TTFT, never a 0 ms one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from importers.base import (
    Conversion,
    Importer,
    Source,
    check_run_count,
    clean_str,
    energy_metrics,
    num,
    pos_int,
    positive,
)
from importers.request_detail import attach, vllm_requests
from importers.sglang_bench import read_jsonl
from importers.table_labels import label_field
from importers.table_rows import says_warm_up
from joulebench.metrics import E2E, ITL, LATENCY, TPOT, TTFT

# energy keys that name their unit -> factor to J (the GPUs' energy over the benchmark's duration)
ENERGY_KEYS = (("gpu_energy_j", 1.0), ("total_gpu_energy_j", 1.0), ("gpu_energy_mj", 1e-3), ("energy_j", 1.0))
TP_KEYS = ("tensor_parallel_size", "tp_size", "tensor_parallel")
RESULT_KEYS = ("request_throughput", "output_throughput", "mean_ttft_ms", "median_ttft_ms", "mean_tpot_ms")
# vLLM's field -> our column; e2el (older: latency) also fills the latency_* columns, as before schema 14
LATENCIES = (
    ("mean_ttft_ms", TTFT.avg), ("median_ttft_ms", TTFT.p50), ("p90_ttft_ms", TTFT.p90),
    ("p95_ttft_ms", TTFT.p95), ("p99_ttft_ms", TTFT.p99),
    ("mean_tpot_ms", TPOT.avg), ("median_tpot_ms", TPOT.p50), ("p90_tpot_ms", TPOT.p90),
    ("p95_tpot_ms", TPOT.p95), ("p99_tpot_ms", TPOT.p99),
    ("mean_itl_ms", ITL.avg), ("median_itl_ms", ITL.p50), ("p90_itl_ms", ITL.p90),
    ("p95_itl_ms", ITL.p95), ("p99_itl_ms", ITL.p99),
    ("mean_e2el_ms", E2E.avg), ("median_e2el_ms", E2E.p50), ("p90_e2el_ms", E2E.p90),
    ("p95_e2el_ms", E2E.p95), ("p99_e2el_ms", E2E.p99),
    ("mean_e2el_ms", LATENCY.avg), ("median_e2el_ms", LATENCY.p50), ("p90_e2el_ms", LATENCY.p90),
    ("p95_e2el_ms", LATENCY.p95), ("p99_e2el_ms", LATENCY.p99),
    ("mean_latency_ms", E2E.avg), ("median_latency_ms", E2E.p50), ("p99_latency_ms", E2E.p99),
    ("mean_latency_ms", LATENCY.avg), ("median_latency_ms", LATENCY.p50), ("p99_latency_ms", LATENCY.p99),
)


# vLLM's benchmark client names the server API it spoke (`backend`): an engine's own API names the engine; the
# generic OpenAI-compatible ones ("openai", "openai-chat") could be any engine, and leave it not stated
ENGINE_OF_BACKEND = {"vllm": "vllm", "tgi": "tgi", "lmdeploy": "lmdeploy", "sglang": "sglang",
                     "tensorrt-llm": "trtllm-serve", "scalellm": "scalellm", "deepspeed-mii": "deepspeed-mii",
                     "llama.cpp": "llama.cpp"}


# what vLLM's benchmark writes as text itself; any other text key came from `--metadata KEY=VALUE` (a person's
# label of the run: the GPU, a deployment, the lengths asked for)
OWN_TEXT_KEYS = frozenset({"date", "backend", "endpoint_type", "label", "model_id", "tokenizer_id", "request_rate",
                           "mode", "dataset_name", "percentile_metrics", "model", "request_goodput:"})
_COUNTED = re.compile(r"(\d{1,3})\s*[xX×]\s*(\S.*)")  # '4xNVIDIA_L40S', '2 x H100'


@dataclass
class Metadata:
    """The labels `--metadata` added to a result: a device (with how many), settings, and the rest for the tag."""

    device: str | None = None
    gpu_count: int | None = None
    config: dict[str, Any] = field(default_factory=dict)
    tags: list[tuple[str, str]] = field(default_factory=list)


def metadata(r: dict[str, Any]) -> Metadata:
    out = Metadata()
    for key, value in r.items():
        if not isinstance(value, str) or key in OWN_TEXT_KEYS or not value.strip() or len(out.tags) >= 6:
            continue
        text = value.strip()[:100]
        label = label_field(str(key))
        if label is not None and label.key == "device" and out.device is None:
            counted = _COUNTED.fullmatch(text)
            out.device = (counted.group(2) if counted else text).replace("_", " ")
            out.gpu_count = pos_int(counted.group(1)) if counted else None
        elif label is not None and label.section == "config" and label.key != "tag" and pos_int(text):
            out.config[label.key] = pos_int(text)
        else:
            out.tags.append((str(key)[:30], text))
    return out


# the run's own keys, as `benchmark()` writes them, where a trimmed copy of the script leaves out the backend
_OWN_KEYS = {"tokenizer_id", "num_prompts", "completed", "duration", "total_input_tokens", "total_output_tokens"}
_UNITLESS_LATENCY = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el)$")


def _is_result(doc: Any) -> bool:
    return (isinstance(doc, dict) and "model_id" in doc
            and ("backend" in doc or "endpoint_type" in doc or _OWN_KEYS <= doc.keys())
            and any(k in doc for k in RESULT_KEYS))


class VllmBenchImporter(Importer):
    NAME = "vllm-bench"
    TOOL = "vLLM benchmark_serving"
    DESCRIPTION = "vLLM benchmark_serving / vllm bench serve result JSON (or a sweep's list of them)"

    def sniff(self, source: Source) -> bool:
        doc = source.json
        if doc is None and source.head.lstrip().startswith("{"):  # `--append-result`: one result per line
            first = read_jsonl(source.first_line)
            return bool(first) and _is_result(first[0][1])
        if isinstance(doc, list):
            return bool(doc) and all(_is_result(d) for d in doc[:3])
        return _is_result(doc)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        if doc is None:  # JSON Lines: each line a benchmark of its own (appended run after run)
            lines = read_jsonl(conv.source.text or "", conv)
            warm = [n for n, r in lines if isinstance(r, dict) and says_warm_up(str(r.get("type", ""))[:40])]
            if warm and len(warm) < len(lines):  # a warm-up appended before the measured lines ('type': 'warmup')
                conv.warn(f"line {', '.join(str(n) for n in warm[:5])}: a warm-up ('type': 'warmup'), left out")
                lines = [(n, r) for n, r in lines if n not in warm]
            check_run_count(conv, len(lines), "the lines")
            runs = [self._run(conv, r, i, f"line {n}") for i, (n, r) in enumerate(lines)]
        else:
            results = doc if isinstance(doc, list) else [doc]
            runs = [self._run(conv, r, i, f"[{i}]" if isinstance(doc, list) else "(object)")
                    for i, r in enumerate(results)]
        if "device" in conv.unstated:
            conv.warn("vLLM's result file names neither the GPU nor how many served the model")
        return conv.document(conv.as_sweep(runs) if isinstance(doc, list) else runs)  # `vllm bench sweep`'s list

    def _run(self, conv: Conversion, r: Any, index: int, where: str) -> dict[str, Any]:
        if not isinstance(r, dict):
            raise conv.fail(where, "expected a result object")

        def val(key: str) -> float | None:
            return num(r.get(key), f"{where}.{key}", conv)

        model = clean_str(r.get("model_id"))
        completed, failed = val("completed"), val("failed")
        duration = positive(val("duration"))
        metrics: dict[str, Any] = {"energy_missing_reason": "vLLM's serving benchmark does not measure energy"}
        energy = next(((v * f, k) for k, f in ENERGY_KEYS if (v := positive(val(k))) is not None), None)
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
            metrics.update(requests_per_s=reqs, requests_completed=pos_int(completed),
                           requests_failed=int(failed) if failed is not None and failed >= 0 else None)
            inputs, outputs = positive(val("total_input_tokens")), positive(val("total_output_tokens"))
            if completed:
                metrics.update(prompt_tokens_mean=inputs / completed if inputs else None,
                               output_tokens_mean=outputs / completed if outputs else None)
            for key, column in LATENCIES:
                v = val(key)
                if v is not None and v >= 0 and column.name not in metrics:
                    metrics[column.name] = v
            if energy is not None:
                del metrics["energy_missing_reason"]
                metrics.update(energy_metrics(energy[0], duration_s=duration, boundary=conv.boundary("gpu_board"),
                                              method="reported", what=energy[1]))
                if metrics.get("tokens_per_s") and duration:
                    metrics["j_per_token"] = energy[0] / (metrics["tokens_per_s"] * duration)
        unitless = sorted(k for k in r if isinstance(k, str) and _UNITLESS_LATENCY.match(k))
        if unitless:
            conv.warn(f"{where}: {', '.join(unitless)[:120]} written without a unit (vLLM writes '_ms'): not stored, "
                      "since seconds and milliseconds cannot be told apart")
        rate = r.get("request_rate")
        # a multi-turn run (`mode` "multi_turn") states how many conversations ran at once, one request each
        concurrency = pos_int(r.get("max_concurrency")) or pos_int(r.get("multi_turn_concurrency"))
        backend = clean_str(r.get("backend")) or "?"
        prompts = pos_int(r.get("num_prompts")) or "?"
        notes = [f"vLLM serving benchmark ({backend} backend), {prompts} prompts at request rate "
                 f"{rate if rate is not None else '?'}"
                 + (f", at most {concurrency} concurrent" if concurrency else "")]
        if r.get("multi_turn_concurrency") is not None:
            notes.append(f"multi-turn: {pos_int(r.get('num_conversations')) or '?'} conversations, "
                         f"{pos_int(r.get('multi_turn_concurrency')) or '?'} at once; figures over every turn")
        seqs, mode, turns = (pos_int(r.get("max_num_seqs")), clean_str(r.get("mode")),
                             pos_int(r.get("turns_per_conversation")))
        tag_parts = (f"rate {rate}" if rate is not None else None,
                     f"concurrency {concurrency}" if concurrency else None,
                     f"max_num_seqs {seqs}" if seqs else None,
                     f"{mode} {turns} turns" if mode and turns else None)
        rate_per_s = positive(num(rate)) if not isinstance(rate, bool) else None  # "inf": every request at once
        stated = metadata(r)
        for key in ("total_input_tokens", "total_output_tokens", "max_num_seqs", "run_number", "date"):
            if r.get(key) not in (None, ""):
                notes.append(f"{key} {r.get(key)}")
        run = {
            "run_id": conv.run_id(index),
            "status": status,
            "error": error,
            "device": conv.device(stated.device, "gpu", where=f"{where} (vLLM's result file does not name the GPU)"),
            "config": {
                # batch: the user's (max_num_seqs is the server's cap on running requests, not the batch that ran)
                **conv.generation_config(model),
                **stated.config,
                "gpu_count": next((n for k in TP_KEYS if (n := pos_int(r.get(k)))), None) or stated.gpu_count,
                "load_kind": "rate" if rate_per_s is not None else ("concurrency" if concurrency else None),
                "request_rate_per_s": rate_per_s, "max_concurrency": concurrency,
                "arrival": "poisson" if rate_per_s is not None and r.get("burstiness") in (None, 1, 1.0) else None,
                "tag": ", ".join(part for part in (*tag_parts, *(f"{k} {v}" for k, v in stated.tags)) if part)[:200]
                       or None,
                "engine": ENGINE_OF_BACKEND.get(backend.lower()),
            },
            "metrics": {k: v for k, v in metrics.items() if v is not None},
            "notes": "; ".join(notes),
        }
        detailed = vllm_requests(conv, r, where)  # `--save-detailed`: every request kept, the figures theirs
        if detailed is not None and status == "ok":
            attach(run, detailed, "vLLM's summary")
        return run
