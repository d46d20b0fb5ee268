"""SGLang benchmark outputs, JSON Lines (one object per line, appended run after run):
`python -m sglang.bench_serving --output-file x.jsonl` and `python -m sglang.bench_one_batch`.

Learned from the writers (bench_serving.py `benchmark()` and `calculate_metrics()`;
bench_one_batch.py `latency_test_run_once()`):
- bench_serving writes `json.dumps(result)`, so an unlimited `request_rate` is the bare token
  `Infinity` (not JSON; read here as "every request at once"). `output_throughput` is output
  tokens/s over `duration` s for the whole server, `input_throughput` prompt tokens/s,
  `total_throughput` both; `*_ttft_ms`, `*_tpot_ms` ((latency - ttft) / (output tokens - 1) per
  request), `*_itl_ms` (every gap between streamed chunks, pooled) and `*_e2e_latency_ms` are
  milliseconds. Older files hold only medians of TTFT and ITL.
- bench_one_batch runs one static batch without a server: `prefill_latency` (s, the whole batch's
  prefill), `prefill_throughput` (batch x input_len / prefill_latency: prompt tokens/s),
  `median_decode_latency` (s, the median decode step: every request gets one token per step, so it is
  the median gap between tokens, ITL p50), `median_decode_throughput` (batch / that step: output
  tokens/s while decoding), `total_latency` (s, the whole batch: a per-batch latency) and
  `overall_throughput` ((input + output) x batch / total: TOTAL tokens/s, never output tokens/s).
- bench_one_batch_server sends one batch to a running server: `latency` (s, the whole batch), `output_throughput`
  (batch x output_len / (latency - last_ttft): output tokens/s after the last request's first token, a decode
  rate), `input_throughput` (batch x input_len / the first token's time: prompt tokens/s), `overall_throughput`
  (total tokens / latency) and `last_gen_throughput` (the server's own gauge of its last decode step, 0 after a
  short batch: no run's figure).
Neither names the GPU; neither measures energy.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count, clean_str, num, pos_int, positive
from joulebench.metrics import E2E, ITL, LATENCY, TPOT, TTFT

MS_PER_S = 1e3
NO_ENERGY = "SGLang's benchmarks do not measure energy"
SERVING_KEYS = ("output_throughput", "completed", "duration")
ONE_BATCH_KEYS = ("batch_size", "input_len", "output_len", "prefill_latency", "median_decode_latency")
SERVER_BATCH_KEYS = ("run_name", "batch_size", "input_len", "output_len", "latency", "output_throughput",
                     "overall_throughput")
_REPEAT = re.compile(r"[_\s-]*(?:run|rep|repeat|trial|iter)[_-]?(\d{1,4})$", re.IGNORECASE)
SERVING_LATENCIES = (
    ("mean_ttft_ms", TTFT.avg), ("median_ttft_ms", TTFT.p50), ("p90_ttft_ms", TTFT.p90), ("p95_ttft_ms", TTFT.p95),
    ("p99_ttft_ms", TTFT.p99), ("mean_tpot_ms", TPOT.avg), ("median_tpot_ms", TPOT.p50), ("p90_tpot_ms", TPOT.p90),
    ("p95_tpot_ms", TPOT.p95), ("p99_tpot_ms", TPOT.p99), ("mean_itl_ms", ITL.avg), ("median_itl_ms", ITL.p50),
    ("p90_itl_ms", ITL.p90), ("p95_itl_ms", ITL.p95), ("p99_itl_ms", ITL.p99),
    ("mean_e2e_latency_ms", E2E.avg), ("median_e2e_latency_ms", E2E.p50), ("p90_e2e_latency_ms", E2E.p90),
    ("p95_e2e_latency_ms", E2E.p95), ("p99_e2e_latency_ms", E2E.p99),
)


def _constant(name: str) -> float:
    return {"Infinity": math.inf, "-Infinity": -math.inf}.get(name, math.nan)


def read_jsonl(text: str, conv: Conversion | None = None) -> list[tuple[int, Any]]:
    """(line number, parsed object) for each non-blank line; a line that is not JSON raises (with `conv`)
    or ends the reading (sniffing)."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append((n, json.loads(line, parse_constant=_constant)))
        except (ValueError, RecursionError) as e:
            if conv is None:
                break
            raise conv.fail(f"line {n}", f"not a JSON object ({str(e)[:80]}); each line of a JSON Lines file "
                            "must be one JSON object") from e
    return out


def _server_args(info: Any) -> dict[str, Any]:
    """The server's arguments in bench_serving's `server_info` (the server's /get_server_info): flat for one
    server; under `prefill` and `decode` (lists of each server's arguments) for a disaggregated pair, where the
    model and version are read only when both sides state the same."""
    if not isinstance(info, dict):
        return {}
    if "model_path" in info:
        return info
    sides = [s for key in ("prefill", "decode") if isinstance(v := info.get(key), list) for s in v
             if isinstance(s, dict)]
    shared = {k: sides[0].get(k) for k in ("model_path", "served_model_name", "version", "quantization")
              if sides and all(s.get(k) == sides[0].get(k) for s in sides)}
    return shared


def _kind(obj: Any) -> str | None:
    if not isinstance(obj, dict):
        return None
    if all(k in obj for k in SERVING_KEYS) and "backend" in obj and any(k.endswith("_ttft_ms") for k in obj) and (
            "model_id" not in obj):  # vLLM's benchmark names its model_id; SGLang's never does (importers.vllm_bench)
        return "serving"
    if all(k in obj for k in ONE_BATCH_KEYS) and "prefill_throughput" in obj:
        return "one_batch"
    if all(k in obj for k in SERVER_BATCH_KEYS) and "prefill_latency" not in obj:
        return "one_batch_server"
    return None


class SglangBenchImporter(Importer):
    NAME = "sglang-bench"
    TOOL = "SGLang"
    DESCRIPTION = "SGLang bench_serving --output-file / bench_one_batch(_server) result JSON Lines"

    def sniff(self, source: Source) -> bool:
        head = source.head
        if not head.lstrip().startswith("{"):
            return False
        first = read_jsonl(source.first_line)
        return bool(first) and _kind(first[0][1]) is not None

    def convert(self, conv: Conversion) -> dict[str, Any]:
        text = conv.source.text or ""
        rows = read_jsonl(text, conv)
        check_run_count(conv, len(rows), "the lines")
        runs = []
        for i, (line, obj) in enumerate(rows):
            kind = _kind(obj)
            if kind is None:
                raise conv.fail(f"line {line}", "not an SGLang bench_serving, bench_one_batch or "
                                "bench_one_batch_server result (no output_throughput/completed/duration, "
                                "batch_size/prefill_latency or batch_size/latency): keep one kind of result per file")
            read = {"serving": self._serving, "one_batch": self._one_batch, "one_batch_server": self._batch_server}
            runs.append(read[kind](conv, obj, i, line))
        if conv.hints.device is None:
            conv.warn("SGLang's result lines name neither the GPU nor how many served the model")
        return conv.document(runs)

    def _base(self, conv: Conversion, index: int, model: str | None, where: str) -> dict[str, Any]:
        return {
            "run_id": conv.run_id(index), "status": "ok",
            "device": conv.device(None, "gpu", where=f"{where} (SGLang's results do not name the GPU)"),
            "config": conv.generation_config(model, engine="sglang"),
        }

    def _serving(self, conv: Conversion, r: dict[str, Any], index: int, line: int) -> dict[str, Any]:
        where = f"line {line}"

        def val(key: str) -> float | None:
            v = r.get(key)
            return None if isinstance(v, float) and not math.isfinite(v) else num(v, f"{where}.{key}", conv)

        server = _server_args(r.get("server_info"))
        model = clean_str(r.get("model_id")) or clean_str(server.get("served_model_name")) or clean_str(
            server.get("model_path"))
        run = self._base(conv, index, model, where)
        version, quantization = clean_str(server.get("version")), clean_str(server.get("quantization"))
        run["config"].update({k: v[:200] for k, v in (("engine_version", version), ("quantization", quantization))
                              if v})
        completed, duration = val("completed"), positive(val("duration"))
        metrics: dict[str, Any] = {"energy_missing_reason": NO_ENERGY}
        if completed is not None and completed <= 0:
            run.update(status="failed", error="no request completed")
        else:
            reqs = positive(val("request_throughput"))
            if reqs is None and completed and duration:
                reqs = completed / duration
            inputs, outputs = positive(val("total_input_tokens")), positive(val("total_output_tokens"))
            metrics.update(duration_s=duration, examples=pos_int(completed), requests_completed=pos_int(completed),
                           requests_per_s=reqs, throughput_sps=reqs, sample_unit="request" if reqs else None,
                           tokens_per_s=positive(val("output_throughput")),
                           prompt_tokens_per_s=positive(val("input_throughput")),
                           prompt_tokens_mean=inputs / completed if inputs and completed else None,
                           output_tokens_mean=outputs / completed if outputs and completed else None)
            for key, column in SERVING_LATENCIES:
                v = val(key)
                if v is not None and v > 0:
                    metrics[column.name] = v
        rate = r.get("request_rate")
        rate_per_s = positive(num(rate)) if not isinstance(rate, bool) else None
        concurrency = pos_int(r.get("max_concurrency"))
        ilen, olen = pos_int(r.get("random_input_len")), pos_int(r.get("random_output_len"))
        dataset = clean_str(r.get("dataset_name"))
        random_lengths = dataset is not None and dataset.startswith("random")
        ratio = num(r.get("random_range_ratio"))
        # the random dataset draws each length uniformly from [len x range_ratio, len]: the asked-for length is
        # every request's only when the ratio is 1 (fixed); else the file states a range, not a length
        fixed = random_lengths and ratio == 1.0
        run["config"].update(
            load_kind="rate" if rate_per_s else ("concurrency" if concurrency else None),
            request_rate_per_s=rate_per_s, max_concurrency=concurrency,
            arrival="poisson" if rate_per_s else None,
            prompt_tokens_requested=ilen if fixed else None,
            output_tokens_requested=olen if fixed else None,
            length_distribution=("fixed" if fixed else
                                 f"uniform: input {ilen * ratio:g}-{ilen}, output {olen * ratio:g}-{olen} tokens "
                                 f"(random, range ratio {ratio:g})"[:200]
                                 if random_lengths and ilen and olen and ratio is not None else dataset),
            tag=(f"rate {'inf' if rate_per_s is None else f'{rate_per_s:g}'}"
                 + (f", concurrency {concurrency}" if concurrency else "") + (f", {dataset}" if dataset else "")
                 + (f", {label}" if (label := clean_str(r.get("tag"))) else ""))[:200])
        run["metrics"] = {k: v for k, v in metrics.items() if v is not None}
        run["notes"] = (f"SGLang bench_serving ({clean_str(r.get('backend')) or '?'} backend), request rate "
                        f"{'inf (every request at once)' if rate_per_s is None else rate_per_s}"
                        + (f", at most {concurrency} concurrent" if concurrency else "")
                        + (f"; retokenized output tokens {r.get('total_output_tokens_retokenized')}"
                           if r.get("total_output_tokens_retokenized") is not None else ""))
        return run

    def _one_batch(self, conv: Conversion, r: dict[str, Any], index: int, line: int) -> dict[str, Any]:
        where = f"line {line}"

        def val(key: str) -> float | None:
            return num(r.get(key), f"{where}.{key}", conv)

        batch, ilen, olen = pos_int(r.get("batch_size")), pos_int(r.get("input_len")), pos_int(r.get("output_len"))
        if batch is None or ilen is None or olen is None:
            raise conv.fail(where, "batch_size, input_len and output_len must be whole numbers of at least 1, as "
                            "bench_one_batch writes them")
        run = self._base(conv, index, None, where)
        total, step = positive(val("total_latency")), positive(val("median_decode_latency"))
        prefill = positive(val("prefill_latency"))
        metrics: dict[str, Any] = {
            "energy_missing_reason": NO_ENERGY,
            "prompt_tokens_per_s": positive(val("prefill_throughput")),
            "decode_tokens_per_s": positive(val("median_decode_throughput")),
            # every request of the static batch generates output_len tokens in total_latency
            "tokens_per_s": batch * olen / total if total else None,
            "throughput_derivation": ("batch_size x output_len / total_latency (output tokens/s of the whole batch, "
                                      "prefill included)") if total else None,
            "output_tokens": batch * olen if total else None,
            "duration_s": total, "examples": batch, "requests_completed": batch,
            LATENCY.avg.name: total * MS_PER_S if total else None,
            ITL.p50.name: step * MS_PER_S if step else None,
            "prompt_tokens_mean": ilen, "output_tokens_mean": olen,
        }
        run["config"].update(batch_size=batch, load_kind="batch", seq_len=ilen + olen, max_new_tokens=olen,
                             prompt_tokens_requested=ilen, output_tokens_requested=olen, length_distribution="fixed",
                             tag=f"run {clean_str(r.get('run_name')) or 'default'}"[:200])
        run["metrics"] = {k: v for k, v in metrics.items() if v is not None}
        overall = positive(val("overall_throughput"))
        run["notes"] = (f"SGLang bench_one_batch: one static batch of {batch}, input {ilen}, output {olen}; prefill "
                        f"{prefill * MS_PER_S if prefill else '?'} ms for the whole batch (not a serving TTFT); "
                        f"tokens_per_s = batch x output_len / total_latency; overall_throughput "
                        f"{overall if overall else '?'} is total (prompt + output) tokens/s, not stored as output")
        return run

    def _batch_server(self, conv: Conversion, r: dict[str, Any], index: int, line: int) -> dict[str, Any]:
        where = f"line {line}"
        batch, ilen, olen = pos_int(r.get("batch_size")), pos_int(r.get("input_len")), pos_int(r.get("output_len"))
        if batch is None or ilen is None or olen is None:
            raise conv.fail(where, "batch_size, input_len and output_len must be whole numbers of at least 1, as "
                            "bench_one_batch_server writes them")
        latency = positive(num(r.get("latency"), f"{where}.latency", conv))
        run = self._base(conv, index, None, where)
        completed = pos_int(r.get("completed_requests")) or batch
        metrics: dict[str, Any] = {
            "energy_missing_reason": NO_ENERGY,
            "tokens_per_s": batch * olen / latency if latency else None,
            "throughput_derivation": ("batch_size x output_len / latency (output tokens/s of the whole batch, "
                                      "prefill included)") if latency else None,
            "decode_tokens_per_s": positive(num(r.get("output_throughput"), f"{where}.output_throughput", conv)),
            "prompt_tokens_per_s": positive(num(r.get("input_throughput"), f"{where}.input_throughput", conv)),
            "output_tokens": batch * olen if latency else None, "duration_s": latency,
            "examples": completed, "requests_completed": completed,
            LATENCY.avg.name: latency * MS_PER_S if latency else None,
            "prompt_tokens_mean": ilen, "output_tokens_mean": olen,
        }
        name = clean_str(r.get("run_name")) or "default"
        repeat = _REPEAT.search(name)
        run["config"].update(batch_size=batch, load_kind="batch", seq_len=ilen + olen, max_new_tokens=olen,
                             prompt_tokens_requested=ilen, output_tokens_requested=olen, length_distribution="fixed",
                             tag=f"run {_REPEAT.sub('', name) or name}"[:200])
        if repeat:
            run["config"]["repeat_index"] = int(repeat.group(1)) - 1  # 0-based, as every reader counts
        run["metrics"] = {k: v for k, v in metrics.items() if v is not None}
        overall = positive(num(r.get("overall_throughput"), f"{where}.overall_throughput", conv))
        run["notes"] = (f"SGLang bench_one_batch_server: one batch of {batch} sent to a server, input {ilen}, output "
                        f"{olen}, {latency if latency else '?'} s; tokens_per_s = batch x output_len / latency; "
                        "output_throughput (after the last request's first token) stored as decode tokens/s; "
                        f"overall_throughput {overall if overall else '?'} is total (prompt + output) tokens/s and "
                        f"last_gen_throughput {r.get('last_gen_throughput')} the server's gauge of its last decode "
                        "step: neither stored")[:1000]
        return run
