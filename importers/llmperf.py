"""ray-project LLMPerf results: `<name>_summary.json` and `<name>_individual_responses.json`
(token_benchmark_ray.py --results-dir).

Learned from the writer (token_benchmark_ray.py, common_metrics.py, utils.LLMPerfResults):
- the summary is one flat object (`flatten_dict` of the metadata): `version` "2023-08-31", `name`,
  `model`, `mean_input_tokens` / `mean_output_tokens` (requested), `num_concurrent_requests`, then
  `results_<metric>_quantiles_p25..p99`, `_mean`, `_min`, `_max`, `_stddev` for `ttft_s`,
  `end_to_end_latency_s`, `inter_token_latency_s`, `request_output_throughput_token_per_s`,
  `number_input_tokens`, `number_output_tokens` (seconds; over the requests without an error), and
  `results_mean_output_throughput_token_per_s` (all output tokens / the whole test's wall time: the
  system's output tokens/s, despite "mean"), `results_num_completed_requests`, `results_number_errors`;
- each individual response carries `ttft_s`, `end_to_end_latency_s`, `number_output_tokens` and
  `error_code` (null when it succeeded; a failed request has zeros).
LLMPerf's `inter_token_latency_s` is per request sum(every gap, the first token's wait included) /
output tokens, i.e. about end-to-end / tokens: neither ITL (pooled gaps) nor TPOT (TTFT left out), so
it is kept in the notes only. `request_output_throughput_token_per_s` is one user's tokens/s, never the
system's. The individual responses hold no test duration, so no throughput is read from them; their
TPOT is computed per request as (end-to-end - TTFT) / (output tokens - 1), as joulebench.metrics
defines it. LLMPerf names no device and measures no energy. Wrappers that run LLMPerf at several
concurrencies save its summaries as one JSON object keyed by the run (`{"1": {summary}, "2": {summary}}`,
philschmid/llmperf-bench): each summary is one run, read as above.
"""

from __future__ import annotations

from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count, clean_str, num, pos_int, positive
from importers.request_detail import attach, llmperf_requests
from joulebench.metrics import E2E, TTFT

MS_PER_S = 1e3
NO_ENERGY = "LLMPerf does not measure energy"
_STATS = (("mean", "avg"), ("quantiles_p50", "p50"), ("quantiles_p90", "p90"), ("quantiles_p95", "p95"),
          ("quantiles_p99", "p99"))
_RESPONSE_KEYS = ("ttft_s", "end_to_end_latency_s", "number_output_tokens", "error_code")


def _is_summary(doc: Any) -> bool:
    return (isinstance(doc, dict) and "results_mean_output_throughput_token_per_s" in doc
            and any(k.startswith("results_ttft_s_") for k in doc))


def _is_keyed_summaries(doc: Any) -> bool:
    return isinstance(doc, dict) and bool(doc) and all(_is_summary(v) for v in doc.values())


def _is_responses(doc: Any) -> bool:
    return (isinstance(doc, list) and bool(doc)
            and all(isinstance(d, dict) and all(k in d for k in _RESPONSE_KEYS) for d in doc[:3]))


class LlmPerfImporter(Importer):
    NAME = "llmperf"
    TOOL = "LLMPerf"
    DESCRIPTION = "ray-project LLMPerf *_summary.json or *_individual_responses.json"

    def sniff(self, source: Source) -> bool:
        doc = source.json
        return _is_summary(doc) or _is_responses(doc) or _is_keyed_summaries(doc)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        if _is_keyed_summaries(doc) and not _is_summary(doc):
            check_run_count(conv, len(doc), "the summaries")
            runs = [self._summary(conv, summary, i, f"[{str(key)[:40]!r}]")
                    for i, (key, summary) in enumerate(doc.items())]
        else:
            runs = [self._summary(conv, doc) if isinstance(doc, dict) else self._responses(conv, doc)]
        if conv.hints.device is None:
            conv.warn("LLMPerf's files name neither the GPU nor the serving engine (it measures an endpoint)")
        return conv.document(runs)

    def _base(self, conv: Conversion, model: str | None, config: dict[str, Any], where: str,
              index: int = 0) -> dict[str, Any]:
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": conv.device(None, "gpu", where=f"{where} (LLMPerf measures an endpoint; it names no GPU)"),
            "config": conv.generation_config(model, **config),
        }

    def _summary(self, conv: Conversion, doc: dict[str, Any], index: int = 0, where: str = "") -> dict[str, Any]:
        def val(key: str) -> float | None:
            return num(doc.get(key), f"{where}{'.' if where else ''}{key}", conv)

        metrics: dict[str, Any] = {"energy_missing_reason": NO_ENERGY}
        for dist, stem in ((TTFT, "ttft_s"), (E2E, "end_to_end_latency_s")):
            for suffix, stat in _STATS:
                v = val(f"results_{stem}_{suffix}")
                if v is not None and v >= 0:
                    metrics[dist.stat(stat).name] = v * MS_PER_S
        completed, errors = val("results_num_completed_requests"), val("results_number_errors")
        metrics["tokens_per_s"] = positive(val("results_mean_output_throughput_token_per_s"))
        per_min = positive(val("results_num_completed_requests_per_min"))
        metrics["requests_per_s"] = per_min / 60 if per_min else None
        metrics["requests_completed"] = pos_int(completed)
        metrics["requests_failed"] = int(errors) if errors is not None and errors >= 0 else None
        metrics["prompt_tokens_mean"] = positive(val("results_number_input_tokens_mean"))
        metrics["output_tokens_mean"] = positive(val("results_number_output_tokens_mean"))
        status, error = "ok", None
        if completed is not None and completed <= 0:
            status, error = "failed", f"no request completed ({int(errors) if errors is not None else '?'} failed)"
            metrics = {"energy_missing_reason": NO_ENERGY, "requests_failed": metrics["requests_failed"]}
        concurrency = pos_int(doc.get("num_concurrent_requests"))
        inputs, outputs = positive(val("mean_input_tokens")), positive(val("mean_output_tokens"))
        sd_in, sd_out = num(doc.get("stddev_input_tokens")), num(doc.get("stddev_output_tokens"))
        config = {"load_kind": "concurrency" if concurrency else None, "max_concurrency": concurrency,
                  "prompt_tokens_requested": inputs, "output_tokens_requested": outputs,
                  "length_distribution": (f"normal: prompt mean {inputs:g} sd {sd_in or 0:g}, output mean {outputs:g} "
                                          f"sd {sd_out or 0:g}" if inputs and outputs else None),
                  "tag": clean_str(doc.get("framework")) and f"endpoint {clean_str(doc.get('framework'))}"[:200]}
        run = self._base(conv, clean_str(doc.get("model")), config, where or "(whole file)", index)
        itl = val("results_inter_token_latency_s_mean")
        notes = [f"LLMPerf summary (results version {clean_str(doc.get('version')) or '?'}), "
                 f"{concurrency or '?'} concurrent requests"]
        if itl is not None:
            notes.append(f"LLMPerf's inter_token_latency_s mean {itl * MS_PER_S:.3g} ms is end-to-end / output tokens "
                         "(the first token's wait included): not stored as ITL or TPOT")
        if (user := val("results_request_output_throughput_token_per_s_mean")) is not None:
            notes.append(f"per-user output {user:.4g} tokens/s (one request's rate, not the system's)")
        if (codes := clean_str(doc.get("results_error_code_frequency"))) not in (None, "{}"):
            notes.append(f"error codes {codes[:200]}")
        run.update(status=status, error=error, notes="; ".join(notes),
                   metrics={k: v for k, v in metrics.items() if v is not None})
        return run

    def _responses(self, conv: Conversion, doc: list[Any]) -> dict[str, Any]:
        check_run_count(conv, 1, "the responses")
        requests = llmperf_requests(conv, doc)  # every response kept as a request (issue 38)
        failed = sum(1 for r in requests if r.status == "failed")
        run = self._base(conv, None, {}, "(whole file)")
        run.update(status="ok", metrics={"energy_missing_reason": NO_ENERGY},
                   notes=(f"LLMPerf individual responses: {len(doc)} requests, {failed} with an error (left out of "
                          "the latencies); percentiles computed here over the successful requests; TPOT per request "
                          "= (end-to-end - TTFT) / (output tokens - 1); no throughput (the file holds no test "
                          "duration)"))
        if failed == len(requests):
            run.update(status="failed", error=f"no request completed ({failed} failed)")
            run["metrics"]["requests_failed"] = failed
            return run
        attach(run, requests, "LLMPerf")
        return run
