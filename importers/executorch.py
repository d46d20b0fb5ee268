"""ExecuTorch's LLM runner statistics (`llama_main` and the other LLM runners): a line `PyTorchObserver {json}` per
generation, printed by the runner's stats (extension/llm/runner/stats.h, `stats_to_json_string`), as a capture of
its output holds them, usually one per run of a script that names each with a banner line above it
(`=== 1B-8da4w rep1 ===`).

The JSON gives counts (`prompt_tokens`, `generated_tokens`) and timestamps in milliseconds since the epoch
(`SCALING_FACTOR_UNITS_PER_SECOND` units a second: `model_load_start_ms`, `model_load_end_ms`, `inference_start_ms`,
`prompt_eval_end_ms`, `first_token_ms`, `inference_end_ms`). As the runner's own report derives them: the prompt's
rate is prompt_tokens over (prompt_eval_end - inference_start), the output rate generated_tokens over
(inference_end - prompt_eval_end), the time to first token first_token - inference_start, the run's time
inference_end - inference_start; the model's load is before the run (notes only). A rate the line states as well
(`prefill_token_per_sec`, a harness's) is checked against the timestamps. A banner's repeat number (`rep2`) makes
the runs repeats of one setup; a banner with no statistics under it is a run that printed none (said).
"""

from __future__ import annotations

import json
import re
from typing import Any

from importers.base import Conversion, Importer, Source, as_dict, check_run_count, num

_OBSERVER = re.compile(r"PyTorchObserver\s+(\{[^\n]{1,20000}\})")
_BANNER = re.compile(r"^\s*={2,}\s*(?P<name>[^=\n]{1,120}?)\s*={2,}\s*$")
_REPEAT = re.compile(r"(?i)[\s_-]*(?:rep|repeat|run|trial|iter)[\s_#-]?\d{1,4}$")
_STATED = {"prefill_token_per_sec": "prompt_tokens_per_s", "decode_token_per_sec": "decode_tokens_per_s"}
RATE_TOLERANCE = 0.02


class ExecutorchImporter(Importer):
    NAME = "executorch"
    TOOL = "ExecuTorch LLM runner"
    DESCRIPTION = "ExecuTorch LLM runner statistics ('PyTorchObserver {...}' lines, one per generation)"

    def sniff(self, source: Source) -> bool:
        return "PyTorchObserver {" in source.head

    def convert(self, conv: Conversion) -> dict[str, Any]:
        banner: tuple[int, str] | None = None
        unanswered: list[str] = []
        runs: list[dict[str, Any]] = []
        for n, line in enumerate((conv.source.text or "").splitlines(), 1):
            if (b := _BANNER.match(line)) is not None:
                if banner is not None:
                    unanswered.append(f"line {banner[0]} ({banner[1][:40]})")
                banner = (n, b.group("name"))
                continue
            if (m := _OBSERVER.search(line)) is None:
                continue
            check_run_count(conv, len(runs) + 1, "its statistics lines")
            try:
                stats = as_dict(json.loads(m.group(1)))
            except (ValueError, RecursionError) as e:
                raise conv.fail(f"line {n}", f"the PyTorchObserver statistics are not JSON ({e})") from e
            runs.append(self._run(conv, len(runs), n, stats, banner[1] if banner else None))
            banner = None
        if banner is not None and _REPEAT.sub("", banner[1]).lower() not in ("bench all done", "done", "end"):
            unanswered.append(f"line {banner[0]} ({banner[1][:40]})")
        if unanswered:
            conv.warn(f"{len(unanswered)} run(s) printed no statistics under their banner (failed or cut short): "
                      + ", ".join(unanswered[:8]) + (" ..." if len(unanswered) > 8 else ""))
        if not runs:
            raise conv.fail("(whole file)", "no PyTorchObserver line with statistics")
        return conv.document(runs)

    @staticmethod
    def _run(conv: Conversion, index: int, n: int, stats: dict[str, Any], banner: str | None) -> dict[str, Any]:
        where = f"line {n}"

        def value(key: str) -> float | None:
            return num(stats.get(key), f"{where}: {key}", conv)

        scale = value("SCALING_FACTOR_UNITS_PER_SECOND") or 1000.0
        start, prompt_end = value("inference_start_ms"), value("prompt_eval_end_ms")
        first, end = value("first_token_ms"), value("inference_end_ms")
        prompt, generated = value("prompt_tokens"), value("generated_tokens")
        metrics: dict[str, Any] = {"energy_missing_reason": "the ExecuTorch runner measures no power"}
        notes = [f"ExecuTorch LLM runner statistics, {where}"]
        if start is not None and prompt_end is not None and prompt and prompt_end > start:
            metrics["prompt_tokens_per_s"] = prompt / ((prompt_end - start) / scale)
            metrics["prompt_tokens_mean"] = prompt
        if prompt_end is not None and end is not None and generated and end > prompt_end:
            metrics["decode_tokens_per_s"] = generated / ((end - prompt_end) / scale)
        if generated:
            metrics["output_tokens"] = int(generated)
        if start is not None and first is not None and first > start and generated:
            metrics["ttft_avg_ms"] = (first - start) / scale * 1000.0
        if start is not None and end is not None and end > start:
            metrics["duration_s"] = (end - start) / scale
        if (load := value("model_load_end_ms")) is not None and (began := value("model_load_start_ms")) is not None:
            notes.append(f"model load {(load - began) / scale:.3g} s (before the run)")
        for key, field in _STATED.items():
            stated = value(key)
            if stated and field in metrics and abs(stated - metrics[field]) > RATE_TOLERANCE * metrics[field]:
                conv.warn(f"{where}: {key} {stated:g} differs from the timestamps' {metrics[field]:.4g}; the "
                          "timestamps' kept")
        setup = _REPEAT.sub("", banner).strip() if banner else None
        if banner and setup != banner:
            notes.append(f"repeat {banner[len(setup or ''):].strip()[:20]}")
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": conv.device(None, "gpu", where="(whole file; the runner's statistics name no device)"),
            "config": {**conv.generation_config(None), "engine": "executorch", "tag": setup[:200] if setup else None},
            "metrics": metrics,
            "notes": "; ".join(notes),
        }
