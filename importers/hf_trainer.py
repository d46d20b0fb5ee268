"""Hugging Face Trainer outputs: all_results.json, train_results.json, eval_results.json and
trainer_state.json. The Trainer records neither the device nor the precision: they come from
the path or from --device / --precision.
"""

from __future__ import annotations

from typing import Any

from importers.base import Conversion, Importer, Source, energy_metrics, num, pos_int, positive


class HfTrainerImporter(Importer):
    NAME = "hf-trainer"
    TOOL = "transformers Trainer"
    DESCRIPTION = "Hugging Face Trainer all_results.json, train_results.json, trainer_state.json"

    def sniff(self, source: Source) -> bool:
        doc = source.json
        if not isinstance(doc, dict):
            return False
        if isinstance(doc.get("log_history"), list) and "global_step" in doc:
            return True
        return any(
            f"{p}_runtime" in doc or f"{p}_samples_per_second" in doc for p in ("train", "eval", "predict", "test")
        )

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        state = isinstance(doc.get("log_history"), list)
        results = dict(doc)
        if state:
            for entry in doc["log_history"]:
                if isinstance(entry, dict) and ("train_runtime" in entry or "eval_runtime" in entry):
                    results.update(entry)
        device = conv.device(None, where="(whole file; the Trainer does not record the device)")
        batch = pos_int(doc.get("train_batch_size")) or conv.hints.batch_size
        workload = conv.hints.workload or "unknown"
        if workload == "unknown":
            conv.warn("model not named in the file; workload stored as 'unknown' (pass --workload)")
        runs = []
        for prefix, mode in (("train", "train"), ("eval", "infer"), ("predict", "infer"), ("test", "infer")):
            runtime = num(results.get(f"{prefix}_runtime"), f"{prefix}_runtime", conv)
            sps = num(results.get(f"{prefix}_samples_per_second"), f"{prefix}_samples_per_second", conv)
            steps = num(results.get(f"{prefix}_steps_per_second"), f"{prefix}_steps_per_second", conv)
            if runtime is None and sps is None:
                continue
            flags: list[str] = []
            metrics: dict[str, Any] = {
                "duration_s": positive(runtime),
                "throughput_sps": positive(sps),
                "iterations_per_s": positive(steps),
            }
            if prefix == "train" and state:
                metrics["optimizer_steps"] = pos_int(doc.get("global_step"))
            examples = pos_int(results.get(f"{prefix}_samples"))
            energy = num(results.get(f"{prefix}_energy_j") or results.get(f"{prefix}_energy"))
            if energy is not None:  # written by energy callbacks (J)
                metrics.update(
                    energy_metrics(
                        energy,
                        duration_s=positive(runtime),
                        boundary=conv.boundary(None),
                        method="reported",
                        flags=flags,
                    )
                )
            extras = {
                k: v
                for k, v in results.items()
                if k.startswith(prefix + "_")
                and isinstance(v, (int, float))
                and k not in (f"{prefix}_runtime", f"{prefix}_samples_per_second", f"{prefix}_steps_per_second")
            }
            notes = f"HF Trainer {prefix}: " + ", ".join(f"{k}={v:g}" for k, v in sorted(extras.items()))
            if examples:
                notes += f"; dataset size {examples}"
            if results.get("epoch") is not None:
                notes += f"; epochs {results['epoch']}"
            runs.append(
                {
                    "run_id": conv.run_id(prefix),
                    "status": "ok",
                    "device": dict(device),
                    "config": {
                        "workload": workload,
                        "mode": mode,
                        "precision": conv.precision(None),
                        "batch_size": batch if prefix == "train" else conv.hints.batch_size,
                    },
                    "metrics": metrics,
                    "flags": flags,
                    "notes": notes[:2000],
                }
            )
        if not runs:
            raise conv.fail("(whole file)", "no *_runtime or *_samples_per_second figures; nothing measured to import")
        return conv.document(runs)
