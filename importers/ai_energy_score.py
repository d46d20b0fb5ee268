"""AI Energy Score (huggingface/AIEnergyScore) outputs.

- v1 `benchmark_report.json` from the AIEnergyScore container: optimum-benchmark's `energy_star`
  scenario on its development branch, whose phases (`preprocess`, `prefill`, `decode`) carry
  `measures`, the energy of each repetition (one pass over the whole dataset, kWh). The phase's
  `energy` is the plain mean of its measures, and decode measures are generate minus prefill, so a
  failed repetition shows as a zero prefill (and an inflated decode) or a negative decode. Those
  repetitions are left out of the figures here, never averaged in, and the run is flagged
  `repetitions_excluded` with the report's own figure in its notes.
- v2 `batch_results/master_results.csv` (batch_runner): one row per model run with
  `gpu_energy_wh`, prompts, tokens and duration.

The score is GPU energy (H100 by the benchmark's rules, though the file does not name the GPU):
runs carry the GPU energy, boundary `gpu_board`, method `reported` (CodeCarbon reads it from NVML).
CodeCarbon's modelled CPU and RAM energy is kept in the notes.
"""

from __future__ import annotations

from typing import Any

from importers.base import (
    J_PER_KWH,
    Conversion,
    Importer,
    Source,
    as_dict,
    as_list,
    cell,
    check_run_count,
    clean_str,
    energy_metrics,
    num,
    pos_int,
    positive,
    read_csv,
)

PHASES = ("prefill", "decode")
MASTER_COLUMNS = {"model_name", "gpu_energy_wh", "total_prompts", "successful_prompts", "total_completion_tokens"}
FLAG_EXCLUDED = "repetitions_excluded"
J_PER_WH = 3600.0


def _is_measures_report(doc: Any) -> bool:
    return isinstance(doc, dict) and any(
        isinstance(v, dict) and isinstance(v.get("measures"), list) and isinstance(v.get("energy"), dict)
        for v in doc.values())


class AiEnergyScoreImporter(Importer):
    NAME = "ai-energy-score"
    TOOL = "AIEnergyScore"
    DESCRIPTION = "AI Energy Score benchmark_report.json (energy_star with per-repetition measures), master_results.csv"

    def sniff(self, source: Source) -> bool:
        if _is_measures_report(source.json):
            return True
        first = source.head.split("\n", 1)[0]
        return MASTER_COLUMNS <= {c.strip() for c in first.split(",")}

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        if isinstance(doc, dict):
            return self._measures(conv, doc)
        return self._master(conv)

    # --- v1: energy_star report with measures -------------------------------------------------------
    def _measures(self, conv: Conversion, doc: dict[str, Any]) -> dict[str, Any]:
        valid: dict[str, list[int]] = {}
        gpu_j: dict[str, list[float]] = {}
        for phase in ("preprocess", *PHASES):
            measures = as_list(as_dict(doc.get(phase)).get("measures"))
            totals, gpus = [], []
            for i, m in enumerate(measures):
                where = f"{phase}.measures[{i}]"
                m = as_dict(m)
                unit = str(m.get("unit", "kWh"))
                if unit != "kWh":
                    raise conv.fail(f"{where}.unit", f"{unit!r}: expected kWh")
                totals.append(num(m.get("total"), f"{where}.total", conv))
                gpus.append((num(m.get("gpu"), f"{where}.gpu", conv) or 0.0) * J_PER_KWH)
            gpu_j[phase] = gpus
            valid[phase] = [i for i, t in enumerate(totals) if t is not None and t > 0]
        # decode_i = generate_i - prefill_i: a failed prefill repetition inflates the same decode repetition
        if gpu_j.get("prefill") and gpu_j.get("decode"):
            valid["decode"] = [i for i in valid["decode"] if i in valid["prefill"]]
        num_samples = self._samples(doc)
        runs = []
        for phase in PHASES:
            data = as_dict(doc.get(phase))
            energy = as_dict(data.get("energy"))
            if not energy:
                continue
            where = f"{phase}.energy"
            flags: list[str] = []
            notes = [f"AI Energy Score phase '{phase}': GPU energy of one pass over the dataset (mean of repetitions)"]
            reported_gpu = (num(energy.get("gpu"), f"{where}.gpu", conv) or 0.0) * J_PER_KWH
            gpus = gpu_j.get(phase) or []
            keep = valid.get(phase, [])
            if gpus:
                dropped = [i for i in range(len(gpus)) if i not in keep]
                gpu = sum(gpus[i] for i in keep) / len(keep) if keep else None
                if dropped:
                    flags.append(FLAG_EXCLUDED)
                    notes.append(f"repetitions {', '.join(map(str, dropped))} of {len(gpus)} left out (zero or "
                                 "negative energy, or a decode whose prefill failed); the report's mean over all of "
                                 f"them is {reported_gpu:.6g} J GPU")
            else:
                gpu = reported_gpu
            metrics: dict[str, Any] = {}
            metrics.update(energy_metrics(gpu, examples=num_samples, boundary=conv.boundary("gpu_board"),
                                          method="reported", what=f"{phase} GPU energy", flags=flags))
            if gpu is None:
                metrics["energy_missing_reason"] = f"{phase}: every repetition failed (zero or negative energy)"
            if num_samples and "j_per_sample" in metrics:
                metrics["sample_unit"] = "request"
            eff = as_dict(data.get("efficiency"))
            total_kwh = num(energy.get("total"))
            value = positive(num(eff.get("value"), f"{phase}.efficiency.value", conv))
            if value and total_kwh and total_kwh > 0 and gpu:
                volume = value * total_kwh  # the tool's efficiency = volume / (its mean total kWh)
                if str(eff.get("unit")) == "tokens/kWh" and phase == "decode":
                    metrics["j_per_token"] = gpu / volume
                    notes.append(f"{volume:.6g} output tokens per pass (the tool's nominal count: max_new_tokens per "
                                 "prompt)")
                elif str(eff.get("unit")) == "tokens/kWh":
                    notes.append(f"{volume:.6g} prompt tokens per pass: {gpu / volume:.6g} J GPU per prompt token")
            parts = [f"{k} {v * J_PER_KWH:.6g} J" for k in ("cpu", "ram", "total")
                     if (v := num(energy.get(k))) is not None]
            notes.append("the report's means (CodeCarbon; CPU and RAM modelled): " + ", ".join(parts))
            if num_samples:
                notes.append(f"{num_samples} prompts per pass (preprocess efficiency x energy)")
            runs.append({
                "run_id": conv.run_id(phase),
                "status": "ok",
                "device": conv.device(None, "gpu", where="(whole file; AI Energy Score reports do not name the GPU, "
                                                          "the benchmark's rules use one NVIDIA H100 80GB)"),
                "config": {
                    "workload": conv.hints.workload or "unknown",
                    "mode": "infer",
                    "precision": conv.precision(None),
                    "batch_size": conv.hints.batch_size,
                    "tag": phase,
                },
                "metrics": metrics,
                "flags": flags,
                "notes": "; ".join(notes),
            })
        if conv.hints.workload is None:
            conv.warn("the report does not name the model; workload stored as 'unknown' (pass --workload)")
        return conv.document(runs)

    @staticmethod
    def _samples(doc: dict[str, Any]) -> int | None:
        """Prompts per pass: the preprocess phase's volume (samples/kWh x its mean kWh)."""
        pre = as_dict(doc.get("preprocess"))
        eff, energy = as_dict(pre.get("efficiency")), as_dict(pre.get("energy"))
        value, total = num(eff.get("value")), num(energy.get("total"))
        if str(eff.get("unit")) != "samples/kWh" or not value or not total or total <= 0:
            return None
        volume = value * total
        return round(volume) if abs(volume - round(volume)) < 1e-3 * max(volume, 1) and volume >= 1 else None

    # --- v2: batch runner master_results.csv ----------------------------------------------------------
    def _master(self, conv: Conversion) -> dict[str, Any]:
        header, rows = read_csv(conv, conv.source.text or "")
        check_run_count(conv, len(rows), "its rows")
        if not rows:
            raise conv.fail("line 2", "the file holds the header only: no model run was recorded")
        runs = []
        for i, (lineno, row) in enumerate(rows):
            def val(col: str, _row: list[str] = row, _lineno: int = lineno) -> float | None:
                return num(cell(header, _row, col), f"line {_lineno}: {col}", conv)

            model = clean_str(cell(header, row, "model_name"))
            error = clean_str(cell(header, row, "error_message"))
            wh = val("gpu_energy_wh")
            duration = positive(val("total_duration_seconds"))
            prompts = pos_int(cell(header, row, "successful_prompts"))
            completion = positive(val("total_completion_tokens"))
            flags: list[str] = []
            metrics: dict[str, Any] = {"duration_s": duration}
            if wh is not None:
                metrics.update(energy_metrics(wh * J_PER_WH, examples=prompts, duration_s=duration,
                                              boundary=conv.boundary("gpu_board"), method="reported",
                                              what="gpu_energy_wh", flags=flags))
            if prompts:
                metrics["examples"] = prompts
                metrics["sample_unit"] = "request"
                if duration:
                    metrics["throughput_sps"] = prompts / duration
                    metrics["throughput_derivation"] = "successful_prompts / total_duration_seconds"
            if completion and duration:
                metrics["tokens_per_s"] = completion / duration
            if completion and "energy_j" in metrics:
                metrics["j_per_token"] = metrics["energy_j"] / completion
            latency = val("avg_latency_seconds")
            if latency is not None and latency >= 0:
                metrics["latency_avg_ms"] = latency * 1e3
            runs.append({
                "run_id": conv.run_id(i),
                "status": "failed" if error else "ok",
                "error": error,
                "device": conv.device(None, "gpu", where=f"line {lineno} (master_results.csv does not name the GPU)"),
                "config": {
                    "workload": model or conv.hints.workload or "unknown",
                    "model": model,
                    "task": clean_str(cell(header, row, "task")),
                    "mode": "infer",
                    "precision": conv.precision(None),
                    "tag": clean_str(cell(header, row, "reasoning_state")),
                },
                "metrics": {k: v for k, v in metrics.items() if v is not None},
                "flags": flags,
                "notes": "AI Energy Score batch runner row; tokens/s counts completion tokens (the file's "
                         "throughput_tokens_per_second counts prompt and completion tokens)",
            })
        return conv.document(runs)
