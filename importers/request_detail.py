"""Per-request files and arrays read into joulebench.requests records (issue 38), for the readers whose files keep
requests: vLLM `--save-detailed` (parallel arrays `input_lens`, `output_lens`, `ttfts`, `itls`, `errors`, in
seconds) and LLMPerf's individual responses. The checks refuse, naming the field: arrays of unequal lengths, a
request count that disagrees with the summary, negative or non-finite latencies; they flag (`requests_tokens_not_
streamed`) tokens claimed but not streamed. The run's figures are then the requests' (`attach`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import joulebench.requests as jr
from importers.base import Conversion

MS_PER_S = 1e3
VLLM_ARRAYS = ("input_lens", "output_lens", "ttfts", "itls", "errors")


def _seconds(conv: Conversion, value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise conv.fail(where, f"{value!r} is not a latency (seconds, finite, at least 0); the file is damaged or "
                        "not vLLM's: fix or remove this request")
    return float(value) * MS_PER_S


def count(value: Any) -> int | None:
    """A count of requests or tokens (a whole number at least 0), None for anything else."""
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None


def vllm_requests(conv: Conversion, r: dict[str, Any], where: str) -> list[jr.Request] | None:
    """The requests of a vLLM result saved with `--save-detailed`; None when it keeps none."""
    present = [k for k in VLLM_ARRAYS if isinstance(r.get(k), list)]
    if "ttfts" not in present:
        return None
    lengths = {k: len(r[k]) for k in present}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{k} {n}" for k, n in lengths.items())
        raise conv.fail(where, f"the per-request arrays differ in length ({shown}); each holds one value per request: "
                        "the file was cut or edited")
    n = lengths["ttfts"]
    errors = r.get("errors") or [""] * n
    failed_here = sum(1 for e in errors if e)
    completed, failed = count(r.get("completed")), count(r.get("failed"))
    if completed is not None and completed != n - failed_here:
        raise conv.fail(f"{where}.completed", f"{completed} completed requests, but its arrays hold {n} requests of "
                        f"which {failed_here} have an error: the summary and the requests disagree")
    if failed is not None and failed != failed_here:
        raise conv.fail(f"{where}.failed", f"{failed} failed requests, but {failed_here} entries of errors are set: "
                        "the summary and the requests disagree")
    out = []
    for i in range(n):
        at = f"{where}.ttfts[{i}]"
        ttft = _seconds(conv, r["ttfts"][i], at)
        gaps_raw = r["itls"][i] if "itls" in present else None
        if gaps_raw is not None and not isinstance(gaps_raw, list):
            raise conv.fail(f"{where}.itls[{i}]", "expected a list of gaps in seconds")
        gaps = tuple(_seconds(conv, g, f"{where}.itls[{i}][{j}]") for j, g in enumerate(gaps_raw or []))
        out_len = count(r["output_lens"][i]) if "output_lens" in present else None
        prompt = count(r["input_lens"][i]) if "input_lens" in present else None
        error = str(errors[i]).strip() if errors[i] else ""
        if error:
            out.append(jr.Request(i, "failed", error_class=error.splitlines()[0][:200], prompt_tokens_client=prompt))
        elif out_len == 0 or (ttft == 0 and not gaps):  # vLLM counts it a success, with TTFT 0: no token came
            out.append(jr.Request(i, "empty", prompt_tokens_client=prompt, output_tokens_client=out_len))
        else:
            out.append(jr.Request(i, "ok", ttft_ms=ttft, itl_ms=gaps if gaps_raw is not None else None,
                                  prompt_tokens_client=prompt, output_tokens_client=out_len))
    return out


def llmperf_requests(conv: Conversion, doc: list[Any]) -> list[jr.Request]:
    """LLMPerf's individual responses: TTFT and end-to-end per request, token counts by LLMPerf's tokenizer (the
    client's), no gaps (its inter_token_latency_s is end-to-end / tokens, not a summary of the gaps)."""
    out = []
    for i, r in enumerate(doc):
        where = f"[{i}]"
        if not isinstance(r, dict):
            raise conv.fail(where, "expected a response object")
        prompt, output = count(r.get("number_input_tokens")), count(r.get("number_output_tokens"))
        code = r.get("error_code")
        if code is not None:
            label = f"HTTP {int(code)}" if isinstance(code, (int, float)) and math.isfinite(code) else str(code)[:60]
            message = str(r.get("error_msg") or "").strip().splitlines()
            out.append(jr.Request(i, "failed", error_class=(f"{label}: {message[0]}" if message else label)[:200],
                                  prompt_tokens_client=prompt))
            continue
        ttft = _seconds(conv, r.get("ttft_s"), f"{where}.ttft_s")
        e2e = _seconds(conv, r.get("end_to_end_latency_s"), f"{where}.end_to_end_latency_s")
        if e2e < ttft:
            raise conv.fail(where, f"end_to_end_latency_s {r.get('end_to_end_latency_s')!r} is before ttft_s "
                            f"{r.get('ttft_s')!r}; the last token cannot come before the first")
        out.append(jr.Request(i, "ok", ttft_ms=ttft, e2e_ms=e2e, prompt_tokens_client=prompt,
                              output_tokens_client=output))
    return out


def attach(run: dict[str, Any], requests: list[jr.Request], source: str) -> None:
    """Put the requests in the run and make its figures theirs (joulebench.requests.aggregate, one way); a figure
    its source states otherwise is named in the notes with both values; tokens claimed but not streamed are flagged
    with the requests named."""
    silent = set(jr.not_streamed(requests))
    if silent:  # no gap at all is not a stream of one chunk: ITL and an ITL limit cannot be known for them
        requests = [dataclasses.replace(r, itl_ms=None) if r.index in silent else r for r in requests]
    agg = jr.aggregate(jr.frame(requests))
    merged, disagree = jr.reconcile(run.get("metrics") or {}, agg, source)
    run["metrics"] = merged
    notes = [run["notes"]] if run.get("notes") else []
    notes.append(f"every request kept ({len(requests)}); the latency figures are computed from them")
    if disagree:
        notes.append("the file's summary disagrees with its requests: " + "; ".join(disagree))
    notes.extend(agg.notes)
    if silent:
        run["flags"] = [*(run.get("flags") or []), jr.FLAG_NOT_STREAMED]
        shown = ", ".join(str(i) for i in sorted(silent)[:10]) + (" ..." if len(silent) > 10 else "")
        notes.append(f"{len(silent)} requests claim more than one output token but streamed no gap (requests "
                     f"{shown}: output_lens > 1, itls empty); their tokens were not streamed one by one, so ITL is "
                     "over the others")
    kept, retention = jr.retain(requests)
    if retention:
        run["flags"] = [*(run.get("flags") or []), jr.FLAG_TRUNCATED]
        run["requests_total"] = len(requests)
        notes.append(retention)
    run["requests"] = [r.to_json() for r in kept]
    run["notes"] = "; ".join(notes)
