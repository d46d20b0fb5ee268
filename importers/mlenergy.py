"""ML.ENERGY leaderboard data: v1 CSV (`<GPU>_<task>_benchmark.csv`, with or without batch_size,
OOM rows), v2 per-configuration JSON (LLM: "Energy/req (J)", "Token tput (tok/s)", "Avg TPOT (s)",
TP, PP; diffusion: "Energy/image (J)" or "Energy/video (J)", "Batch latency (s)", "Batch size"),
v3 per-model and per-task JSON with "configurations" (ml-energy/leaderboard public/data/models and
public/data/tasks, written by scripts/build_data.py from ml-energy/data's records), and the v1
benchmark's raw results (scripts/benchmark.py of 2023: a JSON array, one object per measurement
window with model, throughput, response_length, latency, energy, input, output), read as one
serving run.

Units from the writers (leaderboard-v2 scripts/compute_system_metrics.py and
benchmark/*/scripts/aggregate_leaderboard_data.py; docs/leaderboard.md): LLM figures are per
request: J per sample is the energy per request (sum over every GPU), tokens/s the whole server's
output tokens, throughput requests/s (output tokens/s / average output length, stated as derived).
v1 latency is the batch's (= each request's) s, energy J per response; v1 CSV columns are means
over the raw results' windows (scripts/compute_system_metrics.py), so requests/s is batch /
latency. Diffusion energy is per image or video, latency per batch. v3 LLM files:
median/p90/p95/p99_itl_ms are inter-token latencies pooled over every token (stored as
itl_p50/p90/p95/p99_ms: ITL, not a request's TPOT, never a request's latency; v2's "Avg TPOT (s)" is
stored as tpot_avg_ms, as the file names it); max_num_seqs is vLLM's cap on running requests
(the tag), not the batch that ran (batch size is left not stated; the mean running batch is in
the notes); files written before 2026-01 hold the whole run's output tokens/s beside steady-state
energy, so tokens/s is taken from the energy's window (avg_power_watts / energy_per_token_joules)
when the two disagree.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
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
    energy_metrics,
    num,
    pos_int,
    positive,
    read_csv,
)
from importers.optimum import DTYPES
from joulebench.metrics import ITL, LATENCY, QUANTILES

V1_COLUMNS = {"model", "throughput", "response_length", "latency", "energy"}
V1_TASKS = ("chat", "chat-concise", "instruct", "instruct-concise")  # the v1 benchmark's system prompts
_V1_NAME = re.compile(r"^([A-Za-z0-9-]+)_([a-z-]+)_benchmark\.csv$")
_V2_NAME = re.compile(r"^bs(\d+)\+")
# v3 tokens/s further than this from avg_power_watts / energy_per_token_joules is another window's
STEADY_TOLERANCE = 0.005


def _parallel(c: dict[str, Any], keys: tuple[str, ...]) -> str:
    """The parallel degrees of a v3 configuration (nested under `parallelization` in per-model files,
    flat in per-task files)."""
    par = as_dict(c.get("parallelization")) or c
    degrees = "/".join(str(par[k]) if isinstance(par.get(k), (int, float)) else "?" for k in keys)
    text = f"{'/'.join(k.replace('_parallel', '').replace('_degree', '') for k in keys)} parallel {degrees}"
    extra = clean_str(par.get("notes"))
    return f"{text} ({extra[:120]})" if extra else text


class MlEnergyImporter(Importer):
    NAME = "mlenergy-leaderboard"
    TOOL = "ml.energy leaderboard"
    DESCRIPTION = "ML.ENERGY leaderboard files, v1 CSV, v2 and v3 JSON"

    def sniff(self, source: Source) -> bool:
        doc = source.json
        if isinstance(doc, dict):
            configs = doc.get("configurations")
            if isinstance(configs, list) and "model_id" in doc:
                return True
            if isinstance(configs, list) and configs and isinstance(configs[0], dict) and "task" in doc:
                one = configs[0]  # a per-task file: every configuration names its model
                return "model_id" in one and "gpu_model" in one and any(k.startswith("energy_per_") for k in one)
            return ("GPU model" in doc or "GPU" in doc) and "Model" in doc and any(
                k.lower().startswith("energy") for k in doc)
        if isinstance(doc, list):  # v1 per-request (or per-batch) results of scripts/benchmark.py
            return bool(doc) and isinstance(doc[0], dict) and V1_COLUMNS <= set(doc[0])
        header = source.head.split("\n", 1)[0].strip()
        return V1_COLUMNS <= {c.strip() for c in header.split(",")}

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        if isinstance(doc, dict) and "configurations" in doc:
            conv.tool_version = "v3"
            return self._v3(conv, doc)
        if isinstance(doc, dict):
            conv.tool_version = "v2"
            return self._v2(conv, doc)
        conv.tool_version = "v1"
        if isinstance(doc, list):
            return self._v1_requests(conv, doc)
        return self._v1(conv)

    def _v3(self, conv: Conversion, doc: dict[str, Any]) -> dict[str, Any]:
        """A per-model file (model_id, task, weight_precision at the top) or a per-task file (each
        configuration names its model_id and weight_precision, parallel degrees flat)."""
        configs = doc["configurations"]
        check_run_count(conv, len(configs), "its configurations")
        runs = []
        for i, c in enumerate(configs):
            where = f"configurations[{i}]"
            if not isinstance(c, dict):
                raise conv.fail(where, "expected an object")
            model = clean_str(doc.get("model_id")) or clean_str(c.get("model_id"))
            task = clean_str(doc.get("task")) or clean_str(c.get("task"))
            weights = clean_str(c.get("weight_precision")) or clean_str(doc.get("weight_precision"))
            device = conv.device(clean_str(c.get("gpu_model")), "gpu", where=f"{where}.gpu_model")
            power = positive(num(c.get("avg_power_watts"), f"{where}.avg_power_watts", conv))
            if "max_num_seqs" in c or "energy_per_token_joules" in c:
                metrics, config, flags, notes = self._v3_llm(conv, c, where, power)
            else:
                metrics, config, flags, notes = self._v3_diffusion(conv, c, where, power)
            precision = conv.precision(DTYPES.get((weights or "").lower()))
            if precision is None and weights:
                conv.unstated.setdefault("precision", f"(weight_precision {weights[:40]!r} is not one of fp32, "
                                                      "tf32, fp16, bf16)")
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
                        "precision": precision,
                        "gpu_count": pos_int(c.get("num_gpus")),
                        **config,
                    },
                    "metrics": {k: v for k, v in metrics.items() if v is not None},
                    "flags": flags,
                    "notes": f"ML.ENERGY v3 {task or ''}: weights {weights or 'not stated'}; {notes}",
                }
            )
        return conv.document(runs)

    @staticmethod
    def _v3_llm(conv: Conversion, c: dict[str, Any], where: str,
                power: float | None) -> tuple[dict[str, Any], dict[str, Any], list[str], str]:
        """One LLM/MLLM configuration, by the writer's definitions (ml-energy/data records/runs.py
        `_llm_row`): energy per token is the steady state's GPU energy (every GPU) / its output tokens;
        avg_power_watts the steady state's energy / duration; energy per request = energy per token x
        mean output length; the *_itl_ms are percentiles of the client's inter-token gaps over every
        token of the run. max_num_seqs is vLLM's cap on running requests, not the batch that ran."""
        def figure(key: str) -> float | None:
            return num(c.get(key), f"{where}.{key}", conv)

        flags: list[str] = []
        notes: list[str] = []
        stated_tok_s = positive(figure("output_throughput_tokens_per_sec"))
        j_tok = figure("energy_per_token_joules")
        j_req = figure("energy_per_request_joules")
        out_len = positive(figure("avg_output_len"))
        metrics: dict[str, Any] = {"avg_power_w": power, "tokens_per_s": stated_tok_s}
        if j_tok is not None and j_tok <= 0:
            metrics["energy_missing_reason"] = f"energy_per_token_joules is {j_tok:g} (zero or negative)"
            flags.append("energy_nonpositive")
            j_tok = None
        steady_tok_s = power / j_tok if power and j_tok else None
        if stated_tok_s and steady_tok_s and abs(stated_tok_s - steady_tok_s) > STEADY_TOLERANCE * steady_tok_s:
            # Files written before 2026-01 ("Fix steady state token throughput") hold the whole run's
            # output throughput (ramp-up and drain included) beside steady-state energy figures.
            metrics["tokens_per_s"] = steady_tok_s
            flags.append("throughput_window_corrected")
            notes.append(f"tokens/s is the steady state's, avg_power_watts / energy_per_token_joules; the file's "
                         f"output_throughput_tokens_per_sec {stated_tok_s:.6g} covers the whole run, a different "
                         "window from its energy")
        tok_s = metrics["tokens_per_s"]
        if j_tok:
            metrics["j_per_token"] = j_tok
        if j_req is not None and j_req > 0:
            metrics.update(j_per_sample=j_req, sample_unit="request", energy_boundary=conv.boundary("gpu_board"),
                           energy_method="reported")
        elif j_req is not None:
            metrics["energy_missing_reason"] = f"energy_per_request_joules is {j_req:g} (zero or negative)"
            flags.append("energy_nonpositive")
        if j_tok and not metrics.get("energy_boundary"):
            metrics.update(energy_boundary=conv.boundary("gpu_board"), energy_method="reported")
        if tok_s and out_len:
            metrics.update(throughput_sps=tok_s / out_len, sample_unit="request",
                           throughput_derivation="steady-state output tokens/s / avg_output_len (requests/s)")
        elif power and metrics.get("j_per_sample"):
            metrics.update(throughput_sps=power / metrics["j_per_sample"], sample_unit="request",
                           throughput_derivation="avg_power_watts / energy_per_request_joules (requests/s; "
                                                 "the file has no avg_output_len)")
        for key, field in (("median_itl_ms", ITL.p50.name), ("p90_itl_ms", ITL.p90.name),
                           ("p95_itl_ms", ITL.p95.name), ("p99_itl_ms", ITL.p99.name)):
            v = figure(key)
            if v is not None and v >= 0:
                metrics[field] = v
        max_seqs = pos_int(c.get("max_num_seqs"))
        avg_batch = positive(figure("avg_batch_size"))
        if max_seqs:
            conv.unstated.setdefault("batch_size", "(max_num_seqs is the server's maximum batch, not the batch "
                                                   "it ran: the mean running batch is in each run's notes)")
        notes[:0] = [
            "energy and tokens/s are the steady state's GPU figures (every GPU summed)",
            "itl_* are percentiles of the client's inter-token latencies over every token of the run",
            (f"server maximum batch max_num_seqs {max_seqs}" if max_seqs else "max_num_seqs not stated")
            + (f", mean running batch {avg_batch:.4g} (vLLM num_requests_running, steady state)"
               if avg_batch else ""),
        ]
        if out_len and metrics.get("j_per_sample"):
            notes.append(f"energy per request = energy per token x mean output length {out_len:.6g} tokens")
        notes.append(_parallel(c, ("tensor_parallel", "data_parallel", "expert_parallel")))
        config = {"batch_size": conv.hints.batch_size, "tag": f"max_num_seqs {max_seqs}" if max_seqs else None}
        return metrics, config, flags, "; ".join(notes)

    @staticmethod
    def _v3_diffusion(conv: Conversion, c: dict[str, Any], where: str,
                      power: float | None) -> tuple[dict[str, Any], dict[str, Any], list[str], str]:
        """One diffusion configuration: energy per image or video = a batch's GPU energy (every GPU) /
        batch_size, batch_latency_s per batch, throughput = batch_size / batch latency."""
        metrics: dict[str, Any] = {"avg_power_w": power}
        flags: list[str] = []
        for unit in ("image", "video"):
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
        unit = metrics.get("sample_unit", "item")
        height = pos_int(c.get("image_height") or c.get("video_height"))
        width = pos_int(c.get("image_width") or c.get("video_width"))
        notes = [f"latency is per batch, energy per {unit} (a batch's energy, every GPU, / batch size)",
                 f"{pos_int(c.get('inference_steps')) or '?'} denoising steps",
                 f"{width or '?'}x{height or '?'} pixels"]
        if "num_frames" in c or "fps" in c:
            notes.append(f"{pos_int(c.get('num_frames')) or '?'} frames played at {num(c.get('fps')) or '?'} fps "
                         "(the video's playback rate, not a throughput)")
        notes.append(_parallel(c, ("ulysses_degree", "ring_degree")))
        config = {"batch_size": pos_int(c.get("batch_size")) or conv.hints.batch_size,
                  "image_size": height if height and height == width else None}
        return metrics, config, flags, "; ".join(notes)

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
        device = conv.device_from_name(m.group(1) if m else None, "gpu", where=(
            "(the file's content does not name its GPU; nor does its name, as <GPU>_<task>_benchmark.csv)"))
        task = m.group(2) if m and m.group(2) in V1_TASKS else None
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
                if latency is not None and latency > 0:
                    # the CSV holds means over the raw results' windows, run one after another: requests/s
                    # is requests per window / mean window latency (the mean of per-window tokens/s over
                    # the mean response length is not: it is off by -14% to +208% on the real files)
                    metrics["throughput_sps"] = (batch or 1) / latency
                    metrics["throughput_derivation"] = (
                        "batch_size / latency (requests/s; one batch after another)" if batch else
                        "1 / latency (requests/s; a CSV without batch_size comes from the benchmark's "
                        "single-request version, one request after another)")
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
                    "config": _v1_config(conv, model, task, batch),
                    "metrics": {k: v for k, v in metrics.items() if v is not None},
                    "flags": flags,
                    "notes": "ML.ENERGY v1: energy (J) and latency (s) per response, throughput in tokens/s",
                }
            )
        return conv.document(runs)

    def _v1_requests(self, conv: Conversion, items: list[Any]) -> dict[str, Any]:
        """The v1 benchmark's raw results (scripts/benchmark.py, 2023): one object per measurement
        window, run one after another on one GPU, each window measured by Zeus. One serving run."""
        windows = [_v1_window(conv, item, f"[{i}]") for i, item in enumerate(items)]
        models = {w.model for w in windows}
        if len(models) > 1:
            raise conv.fail("model", f"the items name {len(models)} models ({', '.join(sorted(models))[:120]}); "
                                     "one file of results holds one model's")
        model = models.pop().replace("--", "/")  # the script names a model by its last two path parts, '--'-joined
        task = next((d for d in reversed(conv.source.dirs) if d in V1_TASKS), None)  # data/<task>/<model>/
        requests = sum(w.requests for w in windows)
        duration = sum(w.latency_s for w in windows)
        tokens = sum(w.tokens for w in windows)
        flags: list[str] = []
        bad = next((w for w in windows if w.energy_j is None or w.energy_j <= 0), None)
        if bad is None:
            energy = sum(w.energy_j or 0.0 for w in windows)
            metrics = energy_metrics(energy, examples=requests, duration_s=duration,
                                     boundary=conv.boundary("gpu_board"), method="reported", flags=flags)
            if tokens > 0:
                metrics["j_per_token"] = energy / tokens
        else:
            metrics = {"energy_missing_reason": f"item {bad.where} has energy {bad.energy_j!r} J; the total over "
                                                "the requests is not known"}
            flags.append("energy_nonpositive")
        latencies = sorted(w.latency_s * MS_PER_S for w in windows for _ in range(w.requests))
        metrics.update(
            examples=requests,
            duration_s=duration,
            sample_unit="request",
            throughput_sps=requests / duration,
            throughput_derivation=("requests / the sum of their measurement windows (the benchmark ran them one "
                                   + ("batch" if any(w.batch for w in windows) else "request")
                                   + " after another, each window measured on its own)"),
            tokens_per_s=positive(sum(w.tokens_per_s for w in windows) / len(windows)),
            latency_avg_ms=sum(latencies) / len(latencies),
            **{LATENCY.stat(stat).name: _percentile(latencies, q) for stat, q in QUANTILES.items()},
            latency_max_ms=latencies[-1],
        )
        batch = max(w.batch or 1 for w in windows)
        per_request_j = sorted(w.energy_j / w.requests for w in windows if w.energy_j and w.energy_j > 0)
        lengths = sorted(w.tokens / w.requests for w in windows)
        notes = [
            f"ML.ENERGY v1 raw results: {requests} requests in {len(windows)} measurement windows "
            + (f"(batches of up to {batch})" if batch > 1 else "(one request each)") + " on one GPU",
            f"request latency {latencies[0] / MS_PER_S:.4g}-{latencies[-1] / MS_PER_S:.4g} s "
            f"(median {_percentile(latencies, 50) / MS_PER_S:.4g})",
            f"response length {lengths[0]:.4g}-{lengths[-1]:.4g} tokens (mean {tokens / requests:.4g})",
        ]
        if per_request_j:
            notes.append(f"energy per request {per_request_j[0]:.4g}-{per_request_j[-1]:.4g} J "
                         f"(median {_percentile(per_request_j, 50):.4g})")
        notes.append(f"tokens/s is the mean of the items' throughput (the leaderboard's average); output tokens / "
                     f"summed latency is {tokens / duration:.6g}")
        if any(w.per_request for w in windows):
            notes.append("batched items state energy and response length per request (benchmark of 2023-09)")
        elif batch > 1:
            notes.append("batched items state the batch's energy and tokens (benchmark of 2023-07/08)")
        run = {
            "run_id": conv.run_id(0),
            "status": "ok",
            "device": conv.device(None, "gpu", where="(the benchmark's results do not name the GPU)"),
            "config": _v1_config(conv, model, task, batch),
            "metrics": {k: v for k, v in metrics.items() if v is not None},
            "flags": flags,
            "notes": "; ".join(notes),
        }
        return conv.document([run])


@dataclass(frozen=True)
class _Window:
    """One item of v1 raw results: a measurement window of `requests` requests."""

    where: str
    model: str
    requests: int
    batch: int | None  # requests in the window when the item lists its inputs, else None (one request)
    latency_s: float
    tokens: float
    tokens_per_s: float
    energy_j: float | None  # the whole window's
    per_request: bool  # the item stated energy and response length per request (2023-09 script)


def _v1_config(conv: Conversion, model: Any, task: Any, batch: Any) -> dict[str, Any]:
    """A v1 run's configuration: the CSV rows and the raw per-request JSON state the same things."""
    return {"workload": f"{model}:{task}" if task else model, "model": model, "task": task, "mode": "infer",
            "precision": conv.precision(None), "batch_size": batch}


def _v1_window(conv: Conversion, item: Any, where: str) -> _Window:
    """Read one item. Single-request items (input a string) state that request's tokens, latency and
    energy. Batched items (input a list) come in two versions of the script: July-August 2023 wrote
    the batch's total tokens and energy, September 2023 divided both by the batch size; the item's
    throughput x latency (the batch's tokens, in both) tells which."""
    if not isinstance(item, dict):
        raise conv.fail(where, "expected an object")
    model = clean_str(item.get("model"))
    if not model:
        raise conv.fail(f"{where}.model", "empty")
    latency = positive(num(item.get("latency"), f"{where}.latency", conv))
    if latency is None:
        raise conv.fail(f"{where}.latency", f"{item.get('latency')!r} is not a positive time in s")
    tok_s = num(item.get("throughput"), f"{where}.throughput", conv)
    length = num(item.get("response_length"), f"{where}.response_length", conv)
    if tok_s is None or tok_s < 0 or length is None or length < 0:
        raise conv.fail(where, "throughput and response_length must be numbers of at least 0")
    energy = num(item.get("energy"), f"{where}.energy", conv)
    inputs = item.get("input")
    if not isinstance(inputs, list):
        return _Window(where, model, 1, None, latency, length, tok_s, energy, False)
    n = len(inputs)
    if n < 1:
        raise conv.fail(f"{where}.input", "an empty batch")
    batch_tokens = tok_s * latency
    if math.isclose(length, batch_tokens, rel_tol=1e-6, abs_tol=1e-6) and (n == 1 or batch_tokens > 0):
        return _Window(where, model, n, n, latency, length, tok_s, energy, False)
    k = round(batch_tokens / length) if length > 0 else 0
    if k >= n and math.isclose(length * k, batch_tokens, rel_tol=1e-6):
        # the script divided by its batch size, also for a last batch holding fewer requests
        return _Window(where, model, n, n, latency, batch_tokens, tok_s, None if energy is None else energy * k, True)
    raise conv.fail(where, f"a batch of {n} requests whose response_length {length:g} is neither its tokens "
                           f"(throughput x latency = {batch_tokens:g}) nor those / the batch size: cannot tell whether "
                           "its energy is the batch's or per request")


def _percentile(sorted_values: list[float], q: float) -> float:
    """The q-th percentile (0-100), linear between ranks (as numpy and the runner compute it)."""
    rank = (len(sorted_values) - 1) * q / 100.0
    lo, hi = math.floor(rank), math.ceil(rank)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (rank - lo)
