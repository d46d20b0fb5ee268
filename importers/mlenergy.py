"""ML.ENERGY leaderboard data: v1 CSV (`<GPU>_<task>_benchmark.csv`, with or without batch_size,
OOM rows), v2 per-configuration JSON (LLM: "Energy/req (J)", "Token tput (tok/s)", "Avg TPOT (s)",
TP, PP; diffusion: "Energy/image (J)" or "Energy/video (J)", "Batch latency (s)", "Batch size"),
v3 per-model JSON with "configurations".

Units from the writers (leaderboard-v2 scripts/compute_system_metrics.py and
benchmark/*/scripts/aggregate_leaderboard_data.py; docs/leaderboard.md): LLM figures are per
request: J per sample is the energy per request (sum over every GPU), tokens/s the whole server's
output tokens, throughput requests/s (output tokens/s / average output length, stated as derived).
v1 latency is the batch's (= each request's) s, energy J per response. Diffusion energy is per
image or video, latency per batch. Latency percentiles of v3 are inter-token latencies (one decode
step of the running batch), stated in each run's notes.
"""

from __future__ import annotations

import json
import re
from typing import Any

from importers.base import (
    MS_PER_S,
    Conversion,
    Importer,
    Source,
    as_dict,
    cell,
    check_run_count,
    clean_str,
    num,
    pos_int,
    positive,
    read_csv,
)
from importers.optimum import DTYPES

V1_COLUMNS = {"model", "throughput", "response_length", "latency", "energy"}
_V1_NAME = re.compile(r"^([A-Za-z0-9-]+)_([a-z-]+)_benchmark\.csv$")
_V2_NAME = re.compile(r"^bs(\d+)\+")


class MlEnergyImporter(Importer):
    NAME = "mlenergy-leaderboard"
    TOOL = "ml.energy leaderboard"
    DESCRIPTION = "ML.ENERGY leaderboard files, v1 CSV, v2 and v3 JSON"

    def sniff(self, source: Source) -> bool:
        doc = source.json
        if isinstance(doc, dict):
            if isinstance(doc.get("configurations"), list) and "model_id" in doc:
                return True
            return ("GPU model" in doc or "GPU" in doc) and "Model" in doc and any(
                k.lower().startswith("energy") for k in doc)
        first = source.head.split("\n", 1)[0].strip()
        return V1_COLUMNS <= {c.strip() for c in first.split(",")}

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
            metrics["tokens_per_s"] = tok_s
            j_tok = positive(num(c.get("energy_per_token_joules"), f"{where}.energy_per_token_joules", conv))
            if j_tok:
                metrics["j_per_token"] = j_tok
            if tok_s and out_len:
                metrics["throughput_sps"] = tok_s / out_len
                metrics["throughput_derivation"] = "output_throughput_tokens_per_sec / avg_output_len (requests/s)"
                metrics["sample_unit"] = "request"
            if j_req is not None and j_req > 0:
                metrics.update(j_per_sample=j_req, energy_boundary=conv.boundary("gpu_board"), energy_method="reported")
            elif j_req is not None:
                metrics["energy_missing_reason"] = f"energy_per_request_joules is {j_req:g} (zero or negative)"
                flags.append("energy_nonpositive")
            for unit in ("image", "video"):  # diffusion configurations
                j_item = num(c.get(f"energy_per_{unit}_joules"), f"{where}.energy_per_{unit}_joules", conv)
                if j_item is not None and j_item > 0:
                    metrics.update(j_per_sample=j_item, sample_unit=unit, energy_boundary=conv.boundary("gpu_board"),
                                   energy_method="reported")
                elif j_item is not None:
                    metrics["energy_missing_reason"] = f"energy_per_{unit}_joules is {j_item:g} (zero or negative)"
                    flags.append("energy_nonpositive")
                items = positive(num(c.get(f"throughput_{unit}s_per_sec"), f"{where}.throughput_{unit}s_per_sec", conv))
                if items:
                    metrics.update(throughput_sps=items, sample_unit=unit)
            batch_s = positive(num(c.get("batch_latency_s"), f"{where}.batch_latency_s", conv))
            if batch_s:
                metrics["latency_avg_ms"] = batch_s * MS_PER_S
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
            notes: str
            if "max_num_seqs" not in c:
                item = metrics.get("sample_unit", "item")
                notes = (f"ML.ENERGY v3 diffusion: latency is per batch, energy per {item}; "
                         f"{num(c.get('inference_steps')) or '?'} steps; parallel {json.dumps(par)[:120]}")
            else:
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
                        "batch_size": pos_int(c.get("max_num_seqs")) or pos_int(c.get("batch_size")),
                        "gpu_count": pos_int(c.get("num_gpus")),
                    },
                    "metrics": {k: v for k, v in metrics.items() if v is not None},
                    "flags": flags,
                    "notes": notes,
                }
            )
        return conv.document(runs)

    def _v2(self, conv: Conversion, doc: dict[str, Any]) -> dict[str, Any]:
        device = conv.device(clean_str(doc.get("GPU model") or doc.get("GPU")), "gpu", where="GPU")
        model = clean_str(doc.get("Model"))
        batch = pos_int(doc.get("Batch size"))
        m = _V2_NAME.match(conv.source.base_name)
        tp, pp = pos_int(doc.get("TP")), pos_int(doc.get("PP"))
        metrics: dict[str, Any] = {}
        flags: list[str] = []
        notes = []
        for key, value in doc.items():
            low = key.lower()
            v = num(value)
            if v is None:
                continue
            unit = next((u for word, u in (("image", "image"), ("video", "video"), ("req", "request"))
                         if word in low), "sample")
            if low.startswith("energy") and low.endswith("(j)"):
                if v > 0:
                    metrics.update(j_per_sample=v, sample_unit=unit, energy_boundary=conv.boundary("gpu_board"),
                                   energy_method="reported")
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
            elif low == "token tput (tok/s)" and v > 0:
                metrics["tokens_per_s"] = v
            elif low == "avg tpot (s)" and v >= 0:
                metrics["tpot_avg_ms"] = v * MS_PER_S
        out_len = positive(num(doc.get("Avg Output Tokens")))
        if out_len and metrics.get("tokens_per_s"):
            metrics["throughput_sps"] = metrics["tokens_per_s"] / out_len
            metrics["throughput_derivation"] = "Token tput (tok/s) / Avg Output Tokens (requests/s)"
            metrics.setdefault("sample_unit", "request")
        if out_len and metrics.get("j_per_sample") and metrics.get("sample_unit") == "request":
            metrics["j_per_token"] = metrics["j_per_sample"] / out_len
        if tp:
            notes.append(f"GPUs = TP x PP = {tp} x {pp or 1}; energy is the sum over them")
        elif batch:
            notes.append("diffusion runs use one GPU (the benchmark's hosts_1gpu configuration)")
        run = {
            "run_id": conv.run_id(0),
            "status": "ok",
            "device": device,
            "config": {
                "workload": model or conv.hints.workload or "unknown",
                "model": model,
                "mode": "infer",
                "precision": conv.precision(None),
                "batch_size": batch or (int(m.group(1)) if m else None),
                "gpu_count": tp * (pp or 1) if tp else (1 if batch else None),
            },
            "metrics": metrics,
            "flags": flags,
            "notes": "ML.ENERGY v2: " + "; ".join([", ".join(f"{k}={v}" for k, v in doc.items()
                                                            if not isinstance(v, (dict, list))), *notes]),
        }
        return conv.document([run])

    def _v1(self, conv: Conversion) -> dict[str, Any]:
        m = _V1_NAME.match(conv.source.base_name)
        device = conv.device(m.group(1) if m else None, "gpu", where="file name (<GPU>_<task>_benchmark.csv)")
        task = m.group(2) if m else None
        header, rows = read_csv(conv, conv.source.text or "")
        check_run_count(conv, len(rows), "its rows")
        runs = []
        for i, (lineno, row) in enumerate(rows):
            model = clean_str(cell(header, row, "model"))
            if not model:
                raise conv.fail(f"line {lineno}: model", "empty")
            batch = pos_int(cell(header, row, "batch_size"))
            status, error = "ok", None
            metrics: dict[str, Any] = {}
            flags: list[str] = []
            if (cell(header, row, "throughput") or "").strip().upper() == "OOM":
                status, error = "oom", "out of memory (the leaderboard's OOM row)"
            else:
                tok_s = positive(num(cell(header, row, "throughput"), f"line {lineno}: throughput", conv))
                length = positive(num(cell(header, row, "response_length"), f"line {lineno}: response_length", conv))
                latency = num(cell(header, row, "latency"), f"line {lineno}: latency", conv)
                energy = num(cell(header, row, "energy"), f"line {lineno}: energy", conv)
                metrics["tokens_per_s"] = tok_s
                if tok_s and length:
                    metrics["throughput_sps"] = tok_s / length
                    metrics["throughput_derivation"] = "throughput (tokens/s) / response_length (requests/s)"
                    metrics["sample_unit"] = "request"
                if latency is not None and latency >= 0:
                    metrics["latency_avg_ms"] = latency * MS_PER_S
                if energy is not None and energy > 0:
                    metrics.update(j_per_sample=energy, sample_unit="request",
                                   energy_boundary=conv.boundary("gpu_board"), energy_method="reported")
                    if length:
                        metrics["j_per_token"] = energy / length
                elif energy is not None:
                    metrics["energy_missing_reason"] = f"energy is {energy:g} J (zero or negative)"
                    flags.append("energy_nonpositive")
            runs.append(
                {
                    "run_id": conv.run_id(i),
                    "status": status,
                    "error": error,
                    "device": dict(device),
                    "config": {
                        "workload": f"{model}:{task}" if task else model,
                        "model": model,
                        "task": task,
                        "mode": "infer",
                        "precision": conv.precision(None),
                        "batch_size": batch,
                    },
                    "metrics": {k: v for k, v in metrics.items() if v is not None},
                    "flags": flags,
                    "notes": "ML.ENERGY v1: energy (J) and latency (s) per response, throughput in tokens/s",
                }
            )
        return conv.document(runs)
