"""vLLM's offline benchmarks: `benchmark_throughput.py` / `vllm bench throughput --output-json` and
`benchmark_latency.py` / `vllm bench latency --output-json`.

Learned from the writers (vllm/benchmarks/throughput.py and latency.py `main()`):
- throughput: `{"elapsed_time": s, "num_requests", "total_num_tokens", "requests_per_second",
  "tokens_per_second"}` where `total_num_tokens` is prompt + output tokens, so `tokens_per_second` is
  TOTAL tokens/s: it is never stored as output tokens/s (JouleBench's tokens_per_s), only noted;
- latency: `{"avg_latency": s, "std_latency": s (later versions), "latencies": [s, ...],
  "percentiles": {"10": s, "25", "50", "75", "90", "99"}}`: each value is the time one whole batch of
  `--batch-size` requests took to generate `--output-len` tokens, so it is a per-batch latency
  (latency_*), never a per-request or per-token latency.
Neither file states the model, the batch size, the lengths, the GPU or its count (they are
command-line arguments), and vLLM measures no energy here.
"""

from __future__ import annotations

from typing import Any

from importers.base import Conversion, Importer, Source, num, pos_int, positive
from joulebench.metrics import LATENCY, Percentiles

MS_PER_S = 1e3
THROUGHPUT_KEYS = frozenset({"elapsed_time", "num_requests", "total_num_tokens", "requests_per_second",
                             "tokens_per_second"})
NO_ENERGY = "vLLM's offline benchmark does not measure energy"
MAX_LATENCIES = 100_000


def _is_throughput(doc: Any) -> bool:
    return isinstance(doc, dict) and THROUGHPUT_KEYS <= set(doc) and len(doc) <= 12


def _is_latency(doc: Any) -> bool:
    return (isinstance(doc, dict) and "avg_latency" in doc and isinstance(doc.get("latencies"), list)
            and isinstance(doc.get("percentiles"), dict) and len(doc) <= 8)


class VllmOfflineImporter(Importer):
    NAME = "vllm-offline"
    TOOL = "vLLM benchmark_throughput / benchmark_latency"
    DESCRIPTION = "vLLM benchmark_throughput.py / benchmark_latency.py (vllm bench throughput|latency) --output-json"

    def sniff(self, source: Source) -> bool:
        doc = source.json
        return _is_throughput(doc) or _is_latency(doc)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        run = self._throughput(conv, doc) if _is_throughput(doc) else self._latency(conv, doc)
        conv.warn("vLLM's --output-json names neither the model, the batch size, the lengths nor the GPU (they were "
                  "command-line arguments): give them with --workload, --batch-size and --device")
        return conv.document([run])

    def _base(self, conv: Conversion, load_kind: str | None) -> dict[str, Any]:
        return {
            "run_id": conv.run_id(0),
            "status": "ok",
            "device": conv.device(None, "gpu", where="(whole file; vLLM's --output-json does not name the GPU)"),
            "config": {"workload": conv.hints.workload or "unknown", "model": None, "task": "text-generation",
                       "mode": "infer", "precision": conv.precision(None), "batch_size": conv.hints.batch_size,
                       "engine": "vllm", "load_kind": load_kind},
        }

    def _throughput(self, conv: Conversion, doc: dict[str, Any]) -> dict[str, Any]:
        def val(key: str) -> float | None:
            return num(doc.get(key), key, conv)

        elapsed, reqs = positive(val("elapsed_time")), positive(val("requests_per_second"))
        requests, total_tps = pos_int(doc.get("num_requests")), positive(val("tokens_per_second"))
        if elapsed is None and reqs is None:
            raise conv.fail("elapsed_time", "no positive elapsed_time or requests_per_second: nothing was measured")
        run = self._base(conv, "batch")
        run["metrics"] = {k: v for k, v in {
            "energy_missing_reason": NO_ENERGY, "duration_s": elapsed, "examples": requests,
            "requests_completed": requests, "requests_per_s": reqs, "throughput_sps": reqs,
            "sample_unit": "request" if reqs else None}.items() if v is not None}
        total = pos_int(doc.get("total_num_tokens"))
        run["notes"] = (f"vLLM offline throughput benchmark: {requests or '?'} requests in {elapsed or '?'} s; "
                        f"{total_tps:.6g} total (prompt + output) tokens/s over {total or '?'} tokens, which is not "
                        "output tokens/s and is not stored as such" if total_tps else
                        f"vLLM offline throughput benchmark: {requests or '?'} requests in {elapsed or '?'} s")
        return run

    def _latency(self, conv: Conversion, doc: dict[str, Any]) -> dict[str, Any]:
        raw = doc.get("latencies") or []
        if len(raw) > MAX_LATENCIES:
            raise conv.fail("latencies", f"{len(raw):,} values; at most {MAX_LATENCIES:,} are read: split the file")
        latencies = [num(v, f"latencies[{i}]", conv) for i, v in enumerate(raw)]
        values = [v * MS_PER_S for v in latencies if v is not None and v > 0]
        run = self._base(conv, "batch")
        metrics: dict[str, Any] = {"energy_missing_reason": NO_ENERGY}
        stats = Percentiles.of(values)
        pct = doc.get("percentiles") or {}
        if stats is not None:
            metrics.update(LATENCY.columns(stats))
            metrics[LATENCY.max.name if LATENCY.max else "latency_max_ms"] = max(values)
            run["step_times_ms"] = values
        else:  # no list: the file's own mean and percentiles
            avg = positive(num(doc.get("avg_latency"), "avg_latency", conv))
            metrics[LATENCY.avg.name] = avg * MS_PER_S if avg else None
            for key, stat in (("50", "p50"), ("90", "p90"), ("99", "p99")):
                v = positive(num(pct.get(key), f"percentiles.{key}", conv))
                metrics[LATENCY.stat(stat).name] = v * MS_PER_S if v else None
        if all(metrics.get(LATENCY.stat(s).name) is None for s in ("avg", "p50")):
            raise conv.fail("avg_latency", "no positive latency in avg_latency, latencies or percentiles")
        run["metrics"] = {k: v for k, v in metrics.items() if v is not None}
        run["notes"] = (f"vLLM offline latency benchmark: {len(values)} iterations, each the time one whole batch took "
                        "to generate its output (a per-batch latency, not per request or per token); percentiles "
                        "computed here from `latencies` (NumPy's linear interpolation, as vLLM's own)")
        return run
