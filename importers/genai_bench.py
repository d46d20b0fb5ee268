"""genai-bench (sgl-project/genai-bench) run files: one JSON object per traffic scenario and load,
`<scenario>_<task>_num_concurrency_<N>_time_<T>s.json`.

Learned from the writer (genai_bench/metrics/aggregated_metrics_collector.py `save`, metrics.py, time_units.py and
docs/getting-started/metrics-definition.md):
- `aggregated_metrics`: `scenario` (the traffic: `D(100,100)` a fixed 100-token prompt and 100-token output,
  `N(480,240)/(300,150)` normal lengths, ...), `num_concurrency`, `batch_size` (embedding tasks), `iteration_type`
  (which of the two the run swept), `run_duration` (seconds, always), `mean_output_throughput_tokens_per_s` (every
  output token / run_duration: the system's rate), `requests_per_second`, `num_completed_requests`,
  `num_error_requests`, `num_requests`, and `stats`: per metric {min, max, mean, stddev, sum, p25 .. p99};
- `individual_request_metrics`: a record per request (`ttft`, `tpot`, `e2e_latency`, `output_latency`,
  `num_input_tokens` by the client's tokenizer, `num_output_tokens` the server's completion tokens, `error_code`);
- `_time_unit`: the unit of `ttft`, `tpot`, `e2e_latency` and `output_latency`, in the stats and the requests alike
  ('s' or 'ms'; files written before the option have none and are in seconds).
genai-bench's TPOT is (end-to-end - TTFT) / (output tokens - 1), as joulebench.metrics defines it; it streams no
per-token gaps to the file, so no ITL is known. The figures are recomputed from the requests (request_detail.attach),
and the request rate is checked against completed requests / run_duration. The model and the server's GPU are in
the run's experiment_metadata.json, not in this file: they are asked for. genai-bench measures no energy.
"""

from __future__ import annotations

import math
import re
from typing import Any

import joulebench.requests as jr
from importers.base import Conversion, Importer, Source, clean_str, num, pos_int, positive
from importers.request_detail import attach, count
from joulebench.metrics import E2E, TPOT, TTFT

NO_ENERGY = "genai-bench does not measure energy"
_UNITS = {"s": 1e3, "ms": 1.0}  # to ms
_STATS = (("mean", "avg"), ("p50", "p50"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99"))
_SCENARIO = re.compile(r"(?P<kind>[DNU])\((?P<a>\d{1,7}),(?P<b>\d{1,7})\)(?:/\((?P<c>\d{1,7}),(?P<d>\d{1,7})\))?")
_RATE_TOLERANCE = 0.01  # a stated request rate further than 1 % from completed / duration is not believed


def _is_run(doc: Any) -> bool:
    agg = doc.get("aggregated_metrics") if isinstance(doc, dict) else None
    return isinstance(agg, dict) and "num_concurrency" in agg and "mean_output_throughput_tokens_per_s" in agg


def _lengths(scenario: str | None) -> dict[str, Any]:
    """The request lengths a traffic scenario sets: 'D(100,100)' fixed; 'N(480,240)/(300,150)' normal, mean and sd."""
    m = _SCENARIO.fullmatch((scenario or "").replace(" ", ""))
    if m is None:
        return {}
    a, b = int(m.group("a")), int(m.group("b"))
    if m.group("kind") == "D":
        return {"prompt_tokens_requested": a, "output_tokens_requested": b, "length_distribution": "fixed"}
    if m.group("kind") == "N" and m.group("c"):
        c, d = int(m.group("c")), int(m.group("d"))
        return {"prompt_tokens_requested": a, "output_tokens_requested": c,
                "length_distribution": f"normal: prompt mean {a} sd {b}, output mean {c} sd {d}"}
    return {"length_distribution": f"genai-bench scenario {scenario}"[:200]}


def _requests(conv: Conversion, records: list[Any], to_ms: float) -> list[jr.Request]:
    """Every request: an error code or message makes a failed one; latencies must be finite and at least 0."""
    out = []
    for i, r in enumerate(records):
        where = f"individual_request_metrics[{i}]"
        if not isinstance(r, dict):
            raise conv.fail(where, "expected a request's metrics object")
        code, message = r.get("error_code"), clean_str(r.get("error_message"))
        prompt = pos_int(r.get("num_input_tokens"))
        if code is not None or message:
            label = f"HTTP {code}" if isinstance(code, int) and not isinstance(code, bool) else str(code or "error")
            out.append(jr.Request(i, "failed", error_class=f"{label}: {message}"[:200] if message else label[:200],
                                  prompt_tokens_client=prompt))
            continue
        times = {}
        for key in ("ttft", "e2e_latency"):
            value = r.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise conv.fail(f"{where}.{key}", f"{value!r} is not a latency (a finite number, at least 0): the "
                                "file is damaged; fix or remove this request")
            times[key] = float(value) * to_ms
        if times["e2e_latency"] < times["ttft"]:
            raise conv.fail(where, f"e2e_latency {r.get('e2e_latency')!r} is before ttft {r.get('ttft')!r}; the last "
                            "token cannot come before the first")
        out.append(jr.Request(i, "ok", ttft_ms=times["ttft"], e2e_ms=times["e2e_latency"], prompt_tokens_client=prompt,
                              output_tokens_server=pos_int(r.get("num_output_tokens"))))
    return out


class GenAiBenchImporter(Importer):
    NAME = "genai-bench"
    TOOL = "genai-bench"
    DESCRIPTION = "genai-bench's per-scenario run file (aggregated_metrics, individual_request_metrics, _time_unit)"

    def sniff(self, source: Source) -> bool:
        return _is_run(source.json)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        agg = doc["aggregated_metrics"]
        unit = doc.get("_time_unit", "s")
        if unit not in _UNITS:
            raise conv.fail("_time_unit", f"{str(unit)[:20]!r} is not a unit genai-bench writes ('s' or 'ms')")
        to_ms = _UNITS[unit]

        def val(key: str) -> float | None:
            return num(agg.get(key), f"aggregated_metrics.{key}", conv)

        duration = positive(val("run_duration"))
        completed, failed = count(agg.get("num_completed_requests")), count(agg.get("num_error_requests"))
        metrics: dict[str, Any] = {"energy_missing_reason": NO_ENERGY, "duration_s": duration,
                                   "tokens_per_s": positive(val("mean_output_throughput_tokens_per_s")),
                                   "requests_completed": completed, "requests_failed": failed}
        notes = [f"genai-bench run, scenario {clean_str(agg.get('scenario')) or '?'}, latencies in {unit} in the file"]
        stated_rate = positive(val("requests_per_second"))
        if completed and duration:
            metrics["requests_per_s"] = completed / duration
            if stated_rate is not None and abs(stated_rate - completed / duration) > _RATE_TOLERANCE * stated_rate:
                notes.append(f"the file's requests_per_second {stated_rate:.4g} is not completed / run_duration "
                             f"({completed} / {duration:.4g} s = {completed / duration:.4g}/s): the latter is stored")
        stats = agg.get("stats") if isinstance(agg.get("stats"), dict) else {}
        for dist, key in ((TTFT, "ttft"), (TPOT, "tpot"), (E2E, "e2e_latency")):
            for stat, name in _STATS:
                value = stats.get(key, {}).get(stat) if isinstance(stats.get(key), dict) else None
                v = num(value, f"aggregated_metrics.stats.{key}.{stat}", conv)
                if v is not None and v >= 0:
                    metrics[dist.stat(name).name] = v * to_ms
        by_batch = agg.get("iteration_type") == "batch_size"
        load = pos_int(agg.get("batch_size") if by_batch else agg.get("num_concurrency"))
        config = conv.generation_config(None, load_kind=None if by_batch else "concurrency",
                                        max_concurrency=None if by_batch else load, **_lengths(agg.get("scenario")))
        if by_batch:
            config["batch_size"] = load
        run = {"run_id": conv.run_id(0), "status": "ok",
               "device": conv.device(None, "gpu", where="(whole file) (genai-bench names the server's GPU only in "
                                     "experiment_metadata.json)"),
               "config": config, "metrics": {k: v for k, v in metrics.items() if v is not None},
               "notes": "; ".join(notes)}
        records = doc.get("individual_request_metrics")
        if isinstance(records, list) and records:
            if pos_int(agg.get("num_requests")) not in (None, len(records)):
                raise conv.fail("aggregated_metrics.num_requests", f"{agg.get('num_requests')} requests, but "
                                f"individual_request_metrics holds {len(records)}: the summary and the requests "
                                "disagree")
            requests = _requests(conv, records, to_ms)
            if all(r.status == "failed" for r in requests):
                run.update(status="failed", error=f"no request completed ({len(requests)} failed)",
                           metrics={"energy_missing_reason": NO_ENERGY, "requests_failed": len(requests)})
                return conv.document([run])
            attach(run, requests, "genai-bench")
        conv.warn("genai-bench's run file names neither the model nor the server's GPU (they are in the run's "
                  "experiment_metadata.json): give them with --workload and --device")
        return conv.document([run])
