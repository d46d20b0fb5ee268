"""Hugging Face Trainer outputs: all_results.json, train_results.json, eval_results.json and
trainer_state.json, and a console log holding the metrics the Trainer prints when it ends
(`{'train_runtime': 299.1983, 'train_samples_per_second': 8.021, 'train_steps_per_second': 0.334, ...}`:
`Trainer.log` prints the dict of `speed_metrics`, a Python literal). The Trainer records neither the
device nor the precision: they come from the path or from --device / --precision.

In a log, each printed dict with a `train_samples_per_second` or `train_steps_per_second` is one
training run, and each with `eval_samples_per_second` one evaluation; a dict with a `train_runtime`
but neither rate is a progress line, not the end of a run. Several runs printed in one log are kept
apart (their line in the tag): nothing in a log says two runs were set up alike.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from importers.base import Conversion, Importer, Source, energy_metrics, num, pos_int, positive


class HfTrainerImporter(Importer):
    NAME = "hf-trainer"
    TOOL = "transformers Trainer"
    DESCRIPTION = "Hugging Face Trainer all_results.json, train_results.json, trainer_state.json"

    def sniff(self, source: Source) -> bool:
        doc = source.json
        if doc is None and source.text is not None:
            return any(_final(d) for _, d in _printed(source.text[:MAX_LOG_CHARS]))
        if not isinstance(doc, dict):
            return False
        if isinstance(doc.get("log_history"), list) and "global_step" in doc:
            return True
        return any(
            f"{p}_runtime" in doc or f"{p}_samples_per_second" in doc for p in ("train", "eval", "predict", "test")
        )

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        workload = conv.hints.workload or "unknown"
        if workload == "unknown":
            conv.warn("model not named in the file; workload stored as 'unknown' (pass --workload)")
        if doc is None:  # a console log: each printed final dict its own run
            printed = [(n, d) for n, d in _printed((conv.source.text or "")[:MAX_LOG_CHARS]) if _final(d)]
            runs = []
            for n, d in printed:
                tag = f"Trainer log line {n}" if len(printed) > 1 else None
                runs += self._runs(conv, d, {}, False, workload, f"line{n}-", tag)
            if runs:
                conv.warn(f"read the metrics the Trainer printed on line {', '.join(str(n) for n, _ in printed)}"
                          + ("; each run kept apart (its line in the tag)" if len(printed) > 1 else ""))
        else:
            state = isinstance(doc.get("log_history"), list)
            results = dict(doc)
            if state:
                for entry in doc["log_history"]:
                    if isinstance(entry, dict) and ("train_runtime" in entry or "eval_runtime" in entry):
                        results.update(entry)
            runs = self._runs(conv, results, doc, state, workload, "", None)
        if not runs:
            raise conv.fail("(whole file)", "no *_runtime or *_samples_per_second figures; nothing measured to import")
        return conv.document(runs)

    def _runs(self, conv: Conversion, results: dict[str, Any], doc: dict[str, Any], state: bool, workload: str,
              run_prefix: str, tag: str | None) -> list[dict[str, Any]]:
        device = conv.device(None, where="(whole file; the Trainer does not record the device)")
        batch = pos_int(doc.get("train_batch_size")) or conv.hints.batch_size
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
                    "run_id": conv.run_id(run_prefix + prefix),
                    "status": "ok",
                    "device": dict(device),
                    "config": {
                        "workload": workload,
                        "mode": mode,
                        "precision": conv.precision(None),
                        "batch_size": batch if prefix == "train" else conv.hints.batch_size,
                        **({"tag": tag} if tag else {}),
                    },
                    "metrics": metrics,
                    "flags": flags,
                    "notes": notes[:2000],
                }
            )
        return runs


MAX_LOG_CHARS = 8 << 20  # a log's first 8 MiB: the Trainer prints its metrics at the end of each run
MAX_DICT_CHARS = 4000  # a printed metrics dict is one short line; a longer one is not read
_DICT = re.compile(r"\{'(?:train|eval|predict|test)_[a-z_]{1,40}': [^\n]{0,4000}")


def _printed(text: str) -> list[tuple[int, dict[str, Any]]]:
    """(line number, dict) for each line holding a dict the Trainer printed (a flat Python literal of numbers)."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        m = _DICT.search(line)
        if m is None:
            continue
        literal = m.group(0).split("}", 1)[0] + "}"  # the flat dict's end: its first '}'
        try:
            value = ast.literal_eval(literal) if len(literal) <= MAX_DICT_CHARS else None
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            out.append((n, value))
    return out


def _final(d: dict[str, Any]) -> bool:
    """A dict the Trainer prints when a run ends (a rate beside the runtime), not a progress line."""
    return any(f"{p}_samples_per_second" in d or f"{p}_steps_per_second" in d for p in ("train", "eval", "predict",
                                                                                          "test"))
