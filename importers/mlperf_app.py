"""The MLPerf Inference reference application's own results.json (mlcommons/inference, the vision and recommendation
apps' `python/main.py --output DIR`): `{"TestScenario.<Scenario>": {took, mean, percentiles, qps, count, good_items,
total_items[, accuracy]}, "args": {...}, "cmdline", "runtime", "time", "version"}`, beside LoadGen's own logs.

What the app writes (its `add_results`): `result_list` holds one time per item it ran, in seconds from the moment
LoadGen issued the item's query; `qps` is the number of those items over `took` seconds; `count` is how many there
were. For SingleStream, Server and MultiStream each item is one query, so a time is that query's latency; for
SingleStream and Server a query is one sample, so `qps` is samples per second. For Offline the app splits LoadGen's
one query into batches of `max_batchsize` and an item is a batch: `qps` counts batches, not samples, and a time is
how long after the query began that batch finished, no latency. `total_items` counts samples only where accuracy
was computed (the app sets it to `count` otherwise). So an Offline file gives a sample rate only with accuracy on;
otherwise the run's LoadGen summary (`mlperf_log_summary.txt`, read by importers.mlperf) has it, and the file is
refused saying so. The app measures no power; the device is not written.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import Conversion, Importer, Source, as_dict, clean_str, num, pos_int, positive
from importers.table_fields import PRECISIONS
from joulebench.metrics import LATENCY

_SCENARIO = re.compile(r"^TestScenario\.(SingleStream|MultiStream|Server|Offline)$")
_KEYS = {"took", "mean", "percentiles", "qps", "count"}
_PERCENTILES = (("50.0", LATENCY.p50), ("90.0", LATENCY.p90), ("95.0", LATENCY.p95), ("99.0", LATENCY.p99))
NO_ENERGY = "the MLPerf reference app measures no power"


def _scenarios(doc: Any) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(doc, dict):
        return []
    return [(m.group(1), v) for k, v in doc.items()
            if (m := _SCENARIO.match(str(k))) and isinstance(v, dict) and _KEYS <= set(v)]


def _precision(model: str | None) -> str | None:
    """'resnet50_fp16_dyn.onnx': fp16, where one word of the model file's name is a precision."""
    words = set(re.split(r"[_\-.\s/]+", (model or "").lower()))
    found = {PRECISIONS[w] for w in words if w in PRECISIONS}
    return found.pop() if len(found) == 1 else None


class MlperfAppImporter(Importer):
    NAME = "mlperf-app"
    TOOL = "MLPerf Inference reference app"
    DESCRIPTION = "the MLPerf Inference reference app's results.json (python/main.py --output): one run per scenario"

    def sniff(self, source: Source) -> bool:
        return bool(_scenarios(source.json)) and isinstance(as_dict(source.json).get("args"), dict)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = as_dict(conv.source.json)
        args = as_dict(doc.get("args"))
        model_file = clean_str(args.get("model"))
        model = clean_str(args.get("model_name")) or model_file
        engine = clean_str(args.get("backend")) or clean_str(doc.get("runtime"))
        runs = []
        for i, (scenario, result) in enumerate(_scenarios(doc)):
            at = f"TestScenario.{scenario}"
            took = positive(num(result.get("took"), f"{at}.took", conv))
            count = pos_int(result.get("count"))
            qps = positive(num(result.get("qps"), f"{at}.qps", conv))
            if took is None or count is None or qps is None:
                raise conv.fail(at, "took, count and qps must be positive: the app wrote no timed items")
            if abs(qps - count / took) > 0.01 * qps:  # the app's own definition: never believe, check
                raise conv.fail(f"{at}.qps", f"{qps:g} is not count / took = {count} / {took:g} = "
                                f"{count / took:g}: not the reference app's figure")
            metrics: dict[str, Any] = {"duration_s": took, "energy_missing_reason": NO_ENERGY}
            notes = [f"MLPerf reference app, {scenario}"]
            batch: int | None = 1
            if scenario == "Offline":
                samples = pos_int(result.get("total_items"))
                if "accuracy" not in result or samples is None or samples <= count:
                    raise conv.fail(f"{at}.qps", f"an Offline run counts the app's batches, not its samples "
                                    f"({qps:g} = {count} batches / {took:g} s, each of up to "
                                    f"{pos_int(args.get('max_batchsize')) or '?'} samples), and its times are since "
                                    "the query began, no latencies: no sample rate can be read; import the run's "
                                    "LoadGen summary (mlperf_log_summary.txt), which gives its samples per second")
                metrics["throughput_sps"] = samples / took
                metrics["throughput_derivation"] = "total_items (samples scored for accuracy) / took"
                batch = pos_int(args.get("max_batchsize"))
            else:
                if scenario in ("SingleStream", "Server"):  # a query is one sample
                    metrics["throughput_sps"] = qps
                else:
                    notes.append(f"qps {qps:g} counts queries of several samples: no sample rate stored")
                    batch = pos_int(args.get("samples_per_query"))
                mean = positive(num(result.get("mean"), f"{at}.mean", conv))
                metrics[LATENCY.avg.name] = mean * 1000 if mean else None
                pct = as_dict(result.get("percentiles"))
                for key, metric in _PERCENTILES:
                    value = positive(num(pct.get(key), f"{at}.percentiles.{key}", conv))
                    metrics[metric.name] = value * 1000 if value else None
            runs.append({
                "run_id": conv.run_id(i),
                "status": "ok",
                "device": conv.device(None, "gpu", where="(the reference app does not name the device)"),
                "config": {
                    "workload": conv.hints.workload or (model or "unknown")[:200],
                    "model": model[:200] if model else None,
                    "mode": "infer",
                    "precision": conv.precision(_precision(model_file)),
                    "batch_size": conv.hints.batch_size or batch,
                    "engine": engine[:200] if engine else None,
                    "tag": f"scenario {scenario}",
                },
                "metrics": {k: v for k, v in metrics.items() if v is not None},
                "flags": [],
                "notes": "; ".join(notes),
            })
        return conv.document(runs)
