"""ML.ENERGY leaderboard data: v1 CSV (`<GPU>_<task>_benchmark.csv`), v2 per-configuration
JSON ("GPU model", "Energy per image (J)", ...), v3 per-model JSON with "configurations".

LLM figures are per request: throughput is requests/s (output tokens/s / average output
length), J per sample is the energy per request. Latency percentiles of v3 are inter-token
latencies (one decode step of the running batch), stated in each run's notes.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import (
    MS_PER_S,
    Conversion,
    Importer,
    Source,
    as_dict,
    cell,
    clean_str,
    num,
    pos_int,
    positive,
    read_csv,
)
from importers.optimum import DTYPES

V1_HEADER = ["model", "batch_size", "throughput", "response_length", "latency", "energy"]
_V1_NAME = re.compile(r"^([A-Za-z0-9-]+)_([a-z-]+)_benchmark\.csv$")


class MlEnergyImporter(Importer):
    NAME = "mlenergy-leaderboard"
    TOOL = "ml.energy leaderboard"
    DESCRIPTION = "ML.ENERGY leaderboard files, v1 CSV, v2 and v3 JSON"

    def sniff(self, source: Source) -> bool:
        doc = source.json
        if isinstance(doc, dict):
            if isinstance(doc.get("configurations"), list) and "model_id" in doc:
                return True
            return "GPU model" in doc and any(k.lower().startswith("energy") for k in doc)
        first = source.head.split("\n", 1)[0].strip()
        return [c.strip() for c in first.split(",")][:6] == V1_HEADER

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        if isinstance(doc, dict) and "configurations" in doc:
            conv.tool_version = "v3"
            return self._v3(conv, doc)
        if isinstance(doc, dict):
            conv.tool_version = "v2"
            return self._v2(conv, doc)
        conv.tool_version = "v1"
        return self._v1(conv)

    def _v3(self, conv: Conversion, doc: dict[str, Any]) -> dict[str, Any]:
        model = clean_str(doc.get("model_id"))
        task = clean_str(doc.get("task"))
        precision = DTYPES.get(str(doc.get("weight_precision", "")).lower())
        runs = []
        for i, c in enumerate(doc["configurations"]):
            where = f"configurations[{i}]"
            if not isinstance(c, dict):
                raise conv.fail(where, "expected an object")
            device = conv.device(clean_str(c.get("gpu_model")), "gpu", where=f"{where}.gpu_model")
            tok_s = positive(
                num(c.get("output_throughput_tokens_per_sec"), f"{where}.output_throughput_tokens_per_sec", conv)
            )
            out_len = positive(num(c.get("avg_output_len"), f"{where}.avg_output_len", conv))
            j_req = num(c.get("energy_per_request_joules"), f"{where}.energy_per_request_joules", conv)
            power = positive(num(c.get("avg_power_watts"), f"{where}.avg_power_watts", conv))
            metrics: dict[str, Any] = {"avg_power_w": power}
            flags: list[str] = []
            if tok_s and out_len:
                metrics["throughput_sps"] = tok_s / out_len
                metrics["throughput_derivation"] = "output_throughput_tokens_per_sec / avg_output_len (requests/s)"
            if j_req is not None and j_req > 0:
                metrics.update(j_per_sample=j_req, energy_boundary=conv.boundary("gpu_board"), energy_method="reported")
            elif j_req is not None:
                metrics["energy_missing_reason"] = f"energy_per_request_joules is {j_req:g} (zero or negative)"
                flags.append("energy_nonpositive")
            for key, field in (
                ("median_itl_ms", "latency_p50_ms"),
                ("p90_itl_ms", "latency_p90_ms"),
                ("p95_itl_ms", "latency_p95_ms"),
                ("p99_itl_ms", "latency_p99_ms"),
            ):
                v = num(c.get(key), f"{where}.{key}", conv)
                if v is not None and v >= 0:
                    metrics[field] = v
            par = as_dict(c.get("parallelization"))
            notes = (
                f"ML.ENERGY v3: latencies are inter-token latencies; batch_size is max_num_seqs "
                f"(average batch {num(c.get('avg_batch_size')) or '?'}); "
                f"{num(c.get('energy_per_token_joules')) or '?'} J per output token; {tok_s or '?'} output tokens/s; "
                f"tensor/data/expert parallel {par.get('tensor_parallel', '?')}/{par.get('data_parallel', '?')}/"
                f"{par.get('expert_parallel', '?')}"
            )
            runs.append(
                {
                    "run_id": conv.run_id(i),
                    "status": "ok",
                    "device": device,
                    "config": {
                        "workload": f"{model or 'unknown'}:{task or 'unknown'}"[:200],
                        "model": model,
                        "task": task,
                        "mode": "infer",
                        "precision": conv.precision(precision),
                        "batch_size": pos_int(c.get("max_num_seqs")),
                        "gpu_count": pos_int(c.get("num_gpus")),
                    },
                    "metrics": metrics,
                    "flags": flags,
                    "notes": notes,
                }
            )
        return conv.document(runs)

    def _v2(self, conv: Conversion, doc: dict[str, Any]) -> dict[str, Any]:
        device = conv.device(clean_str(doc.get("GPU model")), "gpu", where="GPU model")
        model = clean_str(doc.get("Model"))
        batch = pos_int(doc.get("Batch size"))
        metrics: dict[str, Any] = {}
        flags: list[str] = []
        for key, value in doc.items():
            low = key.lower()
            v = num(value)
            if v is None:
                continue
            if low.startswith("energy per") and low.endswith("(j)"):
                if v > 0:
                    metrics.update(j_per_sample=v, energy_boundary=conv.boundary("gpu_board"), energy_method="reported")
                else:
                    metrics["energy_missing_reason"] = f"{key} is {v:g} (zero or negative)"
                    flags.append("energy_nonpositive")
            elif low == "batch latency (s)" and v > 0:
                metrics["latency_avg_ms"] = v * MS_PER_S
                if batch:
                    metrics["throughput_sps"] = batch / v
                    metrics["throughput_derivation"] = "Batch size / Batch latency (s)"
            elif low in ("average power (w)", "avg power (w)") and v > 0:
                metrics["avg_power_w"] = v
        run = {
            "run_id": conv.run_id(0),
            "status": "ok",
            "device": device,
            "config": {
                "workload": model or conv.hints.workload or "unknown",
                "model": model,
                "mode": "infer",
                "precision": conv.precision(None),
                "batch_size": batch,
            },
            "metrics": metrics,
            "flags": flags,
            "notes": "ML.ENERGY v2: "
            + ", ".join(f"{k}={v}" for k, v in doc.items() if not isinstance(v, (dict, list))),
        }
        return conv.document([run])

    def _v1(self, conv: Conversion) -> dict[str, Any]:
        m = _V1_NAME.match(conv.source.base_name)
        device = conv.device(m.group(1) if m else None, "gpu", where="file name (<GPU>_<task>_benchmark.csv)")
        task = m.group(2) if m else None
        header, rows = read_csv(conv, conv.source.text or "")
        runs = []
        for i, (lineno, row) in enumerate(rows):
            model = clean_str(cell(header, row, "model"))
            if not model:
                raise conv.fail(f"line {lineno}: model", "empty")
            batch = pos_int(cell(header, row, "batch_size"))
            tok_s = positive(num(cell(header, row, "throughput"), f"line {lineno}: throughput", conv))
            length = positive(num(cell(header, row, "response_length"), f"line {lineno}: response_length", conv))
            latency = num(cell(header, row, "latency"), f"line {lineno}: latency", conv)
            energy = num(cell(header, row, "energy"), f"line {lineno}: energy", conv)
            metrics: dict[str, Any] = {}
            flags: list[str] = []
            if tok_s and length:
                metrics["throughput_sps"] = tok_s / length
                metrics["throughput_derivation"] = "throughput (tokens/s) / response_length (requests/s)"
            if latency is not None and latency >= 0:
                metrics["latency_avg_ms"] = latency * MS_PER_S
            if energy is not None and energy > 0:
                metrics.update(
                    j_per_sample=energy, energy_boundary=conv.boundary("gpu_board"), energy_method="reported"
                )
            elif energy is not None:
                metrics["energy_missing_reason"] = f"energy is {energy:g} J (zero or negative)"
                flags.append("energy_nonpositive")
            runs.append(
                {
                    "run_id": conv.run_id(i),
                    "status": "ok",
                    "device": dict(device),
                    "config": {
                        "workload": f"{model}:{task}" if task else model,
                        "model": model,
                        "task": task,
                        "mode": "infer",
                        "precision": conv.precision(None),
                        "batch_size": batch,
                    },
                    "metrics": metrics,
                    "flags": flags,
                    "notes": "ML.ENERGY v1: energy and latency per response",
                }
            )
        return conv.document(runs)
