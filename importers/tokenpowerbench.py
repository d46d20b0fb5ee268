"""TokenPowerBench results (`SingleNode/llm_benchmark.py`: `<engine>_models--<models>_<batch sizes>_<output
tokens>_<time>.json`): {model: [one object per batch size]}.

Learned from the writer (SingleNode/llm_benchmark.py and power_monitor.py): each object is one batch of
prompts generated offline by the engine (vllm, deepspeed, transformers, trtllm); `duration` s is the
generation's wall time, `total_output_tokens` and `responses` what it produced. GPU power is NVML's,
sampled and summed over every GPU the monitor saw (`gpuN_power_watts`, idle ones included);
`gpu_energy` J = that power x duration; `*_energy_per_token` is J per output token and
`*_energy_per_token_mj` the same in mJ (converted: J = mJ / 1000). CPU and DRAM come from RAPL and are
written as 0.0 where RAPL could not be read: a 0 is no measurement, never zero energy. The GPU figures
are stored (boundary gpu_board, sampled); CPU and DRAM, where measured, are in the notes. The file names
neither the GPU model nor its precision; it gives no prefill / decode split.
"""

from __future__ import annotations

import re
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

REQUIRED = ("duration", "total_output_tokens", "gpu_energy")
# engines whose `estimate_tokens` counts tokens with the model's tokenizer; the vllm engine estimates them as
# words x 1.3, and the others' counting is not known: their token figures (tokens/s, J/token) are not stored
COUNTED_TOKEN_ENGINES = frozenset({"deepspeed", "transformers"})
_GPU_POWER = re.compile(r"^gpu(\d+)_power_watts$")


def _entries(doc: Any) -> list[tuple[str, int, Any]] | None:
    if not isinstance(doc, dict) or not doc:
        return None
    out = []
    for model, items in doc.items():
        if not isinstance(items, list) or not items:
            return None
        out += [(model, i, item) for i, item in enumerate(items)]
    first = out[0][2]
    return out if isinstance(first, dict) and all(k in first for k in REQUIRED) and (
        "gpu_energy_per_token" in first or "energy_per_token" in first) else None


class TokenPowerBenchImporter(Importer):
    NAME = "tokenpowerbench"
    TOOL = "TokenPowerBench"
    DESCRIPTION = "TokenPowerBench LLM energy results JSON ({model: [per batch size]})"

    def sniff(self, source: Source) -> bool:
        return _entries(source.json) is not None

    def convert(self, conv: Conversion) -> dict[str, Any]:
        entries = _entries(conv.source.json) or []
        check_run_count(conv, len(entries), "the file's batches")
        return conv.document([self._run(conv, model, i, item, n) for n, (model, i, item) in enumerate(entries)])

    def _run(self, conv: Conversion, model_key: str, i: int, r: Any, index: int) -> dict[str, Any]:
        where = f"{model_key[:60]}[{i}]"
        if not isinstance(r, dict):
            raise conv.fail(where, "expected a result object")

        def val(key: str) -> float | None:
            return num(r.get(key), f"{where}.{key}", conv)

        duration, tokens = positive(val("duration")), positive(val("total_output_tokens"))
        responses = pos_int(r.get("responses"))
        gpu_j = positive(val("gpu_energy"))
        per_token = positive(val("gpu_energy_per_token"))
        per_token_mj = positive(val("gpu_energy_per_token_mj"))
        if per_token is None and per_token_mj is not None:
            per_token = per_token_mj / 1000.0  # mJ/token -> J/token
        if per_token is not None and per_token_mj is not None and abs(per_token * 1000.0 - per_token_mj) > 1e-6 * max(
                per_token_mj, 1.0):
            raise conv.fail(f"{where}.gpu_energy_per_token_mj", f"{per_token_mj:g} mJ disagrees with "
                            f"gpu_energy_per_token {per_token:g} J; the file is damaged: export it again")
        engine = clean_str(r.get("engine"))
        counted = (engine or "").lower() in COUNTED_TOKEN_ENGINES
        metrics: dict[str, Any] = {
            "duration_s": duration, "examples": responses, "sample_unit": "request" if responses else None,
            "requests_completed": responses,
        }
        if counted:
            metrics.update(output_tokens=tokens, tokens_per_s=tokens / duration if tokens and duration else None,
                           output_tokens_mean=tokens / responses if tokens and responses else None)
        flags: list[str] = []
        metrics.update(energy_metrics(gpu_j, examples=responses, duration_s=duration, method="sampled",
                                      boundary=conv.boundary("gpu_board"), what="gpu_energy", flags=flags))
        if gpu_j is None:
            metrics["energy_missing_reason"] = "gpu_energy is 0 or missing: the GPU power could not be read"
        else:
            metrics.update(j_per_token=per_token if counted else None, power_trace_source="nvml_power_usage",
                           j_per_request=metrics.get("j_per_sample"))
        gpus = sorted(int(m.group(1)) for k in r if (m := _GPU_POWER.match(str(k))))
        notes = [f"TokenPowerBench offline batch ({engine or '?'} engine); GPU energy over every GPU the monitor saw; "
                 "the file's *_energy_per_response divide by the number of CPU power readings, not responses: not "
                 "stored (J/request here = gpu_energy / responses)"]
        if counted:
            notes.append("tokens/s = total_output_tokens / duration (tokens counted by the model's tokenizer)")
        else:
            notes.append(f"token figures not stored: this engine's total_output_tokens ({tokens or 0:g}) is "
                         + ("an estimate (words x 1.3)" if (engine or "").lower() == "vllm" else
                            "counted in a way TokenPowerBench does not state")
                         + f", so tokens/s and J/token ({per_token or 0:g}) are not measurements")
        if gpus:
            notes.append(f"{len(gpus)} GPU(s) monitored: " + ", ".join(
                f"gpu{g} {num(r.get(f'gpu{g}_power_watts')) or 0:.1f} W" for g in gpus))
        cpu_j, dram_j = positive(num(r.get("cpu_energy"))), positive(num(r.get("dram_energy")))
        if cpu_j or dram_j:
            notes.append(f"CPU package energy {cpu_j or 0:g} J, DRAM {dram_j or 0:g} J (RAPL); GPU + CPU + DRAM "
                         f"{positive(num(r.get('total_energy'))) or 0:g} J, "
                         f"{positive(num(r.get('total_energy_per_token'))) or 0:g} J/token")
        else:
            notes.append("CPU and DRAM energy not measured (the file writes 0.0: RAPL was not read)")
        memory_mb = positive(num(r.get("gpu_memory_total_mb")))
        model = clean_str(r.get("model")) or clean_str(model_key)
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "flags": flags,
            "device": conv.device(None, "gpu", where=f"({where}: TokenPowerBench does not name the GPU"
                                  + (f"; {memory_mb:g} MB of GPU memory" if memory_mb else "") + ")"),
            "config": {
                **conv.generation_config(model),
                "batch_size": pos_int(r.get("batch_size")) or conv.hints.batch_size,
                "load_kind": "batch",
                "engine": engine,
                "gpu_count": None,
            },
            "metrics": {k: v for k, v in metrics.items() if v is not None},
            "notes": "; ".join(notes)[:10_000],
        }

