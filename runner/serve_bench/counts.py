"""The token counts a point's figures use: what the client received, checked against what the server says.

Output tokens. The stream bounds each request's true output count: every text event carries at least one
token (`low` = the text events), and no token is shorter than a byte, the end-of-sequence token aside, nor
does a server generate more than the `max_tokens` asked (`high` = max(low, min(text bytes + 1, max_tokens))).
The client's own count is, with `--tokenizer`, the streamed text tokenized with it (kept inside [low, high]:
re-encoding generated text can merge tokens the model produced apart), and without one the text events
(counted as tokens, which the notes say). The server's `usage.completion_tokens` agrees with the stream when it
lies inside [low - tolerance, high + tolerance], the tolerance being USAGE_TOLERANCE_PCT % or
USAGE_TOLERANCE_TOKENS token, whichever is larger: then it is the request's count (the server knows exactly
what it generated). A request without a usable `usage` (absent, or not a whole number in [0, MAX_TOKENS]: a
string, a list, a bool, negative, fractional, NaN, infinite, 1e30) is counted by the client, a per-request
fact in the notes; it never loses the point. When any request's usage disagrees with its stream, the point is
flagged FLAG_USAGE_DISAGREES, the server's usage is believed for none of its requests, and every figure
(tokens/s, J/token, TPOT) uses the client's counts; the notes give an example with both numbers.

Prompt tokens. With `--tokenizer` the client counts what it sent (the prompt, or for the chat API the prompt in
the tokenizer's chat template), and the server's counts are compared with it: more than PROMPT_TOLERANCE_PCT %
apart on average (a tokenizer other than the server's, a template the client does not know, or a false count),
the point is flagged FLAG_PROMPT_DIFFERS, a warning names both numbers, the server's prompt counts are not
believed (the count used is the client's) and the point's length label says what the server counted, so a run
is never labelled with a length nobody counted. Where the client's count itself differs from the asked length by
more than PROMPT_TOLERANCE_PCT % (a chat template), the label says the counted length too. Otherwise a request's
prompt count is the server's (valid) usage where it sent one, else the client's (`prompt_source` says which):
the rule of joulebench.requests (the server's count where one was given and believed), so the point's figures
and the figures recomputed from its stored requests are one. Without `--tokenizer` the notes say the prompts
were built from words.

A count not believed (usage disagreeing with the stream, prompt counts differing from --tokenizer's) is not kept
as the server's in the point's stored requests (runner.serve_bench.records): the notes give an example of both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runner.serve_bench.result import RequestResult

USAGE_TOLERANCE_PCT = 5.0
USAGE_TOLERANCE_TOKENS = 1
PROMPT_TOLERANCE_PCT = 5.0
FLAG_USAGE_DISAGREES = "usage_disagrees_with_stream"
FLAG_PROMPT_DIFFERS = "prompt_tokens_differ_from_server"
FLAG_COUNTED_BY_CLIENT = "output_tokens_counted_by_client"  # usage missing or malformed for some requests


def tolerance(tokens: float) -> float:
    return max(float(USAGE_TOLERANCE_TOKENS), abs(tokens) * USAGE_TOLERANCE_PCT / 100.0)


def bounds(r: RequestResult) -> tuple[int, int]:
    """The (low, high) output tokens the stream allows (see the module's rule)."""
    low = len(r.token_s)
    return low, max(low, min(r.text_bytes + 1, r.output_tokens_requested))


def client_output_tokens(r: RequestResult, tokenizer: Any) -> int:
    """The client's count of a request's output: its text tokenized (inside the stream's bounds), or its
    text events without a tokenizer (or when the text was too long to keep)."""
    low, high = bounds(r)
    if tokenizer is None or r.text_overflow or not r.text_parts:
        return low
    try:
        counted = len(tokenizer.encode("".join(r.text_parts), add_special_tokens=False))
    except Exception:  # noqa: BLE001 - a tokenizer's failure on a server's text: fall back to the events
        return low
    return min(high, max(low, counted))


def usage_agrees(r: RequestResult) -> bool | None:
    """Whether the server's output count agrees with the stream; None when it sent no usable count."""
    if r.usage_output_tokens is None:
        return None
    low, high = bounds(r)
    return low - tolerance(low) <= r.usage_output_tokens <= high + tolerance(high)


@dataclass
class Counted:
    flags: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # printed as the point ends
    label: str | None = None  # added to the point's length label (what was counted, where not what was asked)


def _mean(values: list[int]) -> float | None:
    return sum(values) / len(values) if values else None


def reconcile(results: list[RequestResult], tokenizer: Any) -> Counted:
    """Decide each request's `output_tokens` and `prompt_tokens` (see the module's rules)."""
    out = Counted()
    for r in results:
        if r.token_s:
            r.output_tokens_client = client_output_tokens(r, tokenizer)
        r.text_parts = []  # counted: the text is not kept past the point
    streamed = [r for r in results if r.ok]  # the requests whose counts can enter a figure
    verdicts = {r.index: usage_agrees(r) for r in streamed}
    wrong = [r for r in streamed if verdicts[r.index] is False]
    missing = [r for r in streamed if verdicts[r.index] is None]
    for r in results:
        if not r.token_s:
            continue
        if r.index not in verdicts:  # failed: its count is the client's, used in no figure
            r.output_tokens, r.count_source = r.output_tokens_client, "stream"
            continue
        use_usage = verdicts[r.index] is True and not wrong
        r.output_tokens = r.usage_output_tokens if use_usage else r.output_tokens_client
        r.count_source = "usage" if use_usage else "stream"
    how = "tokenized with --tokenizer" if tokenizer is not None else "text events counted as tokens (no --tokenizer)"
    if wrong:
        r = wrong[0]
        low, high = bounds(r)
        out.flags.append(FLAG_USAGE_DISAGREES)
        text = (f"the server's usage disagrees with its stream for {len(wrong)} of {len(streamed)} requests (e.g. "
                f"request {r.index}: usage {r.usage_output_tokens} output tokens where the stream carried "
                f"{low} text events, {r.text_bytes} bytes of text, {r.output_tokens_requested} tokens asked; "
                f"allowed {low}-{high} within {USAGE_TOLERANCE_PCT:g} % or {USAGE_TOLERANCE_TOKENS} token): every "
                f"figure uses the client's counts ({how}), never the server's")
        out.notes.append(text)
        out.warnings.append("warning: " + text)
    if missing:
        problems = sorted({r.usage_problem or "no usage sent" for r in missing})
        out.notes.append(f"{len(missing)} of {len(streamed)} requests had no usable output count in usage "
                         f"({'; '.join(p[:120] for p in problems[:3])}): counted by the client ({how})")
        if not wrong:
            out.flags.append(FLAG_COUNTED_BY_CLIENT)
    elif not wrong and tokenizer is None and streamed:
        out.notes.append("output tokens: the server's usage, checked against the stream's text events and bytes")
    malformed = [r for r in results if r.malformed_events]
    if malformed:
        out.notes.append(f"{sum(r.malformed_events for r in malformed)} malformed event(s) in {len(malformed)} "
                         f"request(s) were not believed (first: {malformed[0].malformed_first})")
    _prompts(results, streamed, tokenizer, out)
    return out


def _prompts(results: list[RequestResult], streamed: list[RequestResult], tokenizer: Any, out: Counted) -> None:
    differs = False
    if tokenizer is not None and streamed:
        differs = _prompt_check(streamed, out)
    for r in results:
        if r.usage_prompt_tokens is not None and not differs:
            r.prompt_tokens, r.prompt_source = r.usage_prompt_tokens, "usage"
        elif r.prompt_tokens_client is not None:
            r.prompt_tokens, r.prompt_source = r.prompt_tokens_client, "client"
        else:
            r.prompt_tokens, r.prompt_source = None, None


def _prompt_check(streamed: list[RequestResult], out: Counted) -> bool:
    """Compare the server's prompt counts with --tokenizer's; True when they differ (FLAG_PROMPT_DIFFERS)."""
    asked = _mean([r.prompt_tokens_requested for r in streamed])
    counted = _mean([r.prompt_tokens_client for r in streamed if r.prompt_tokens_client is not None])
    paired = [r for r in streamed if r.prompt_tokens_client is not None and r.usage_prompt_tokens is not None]
    server = _mean([r.usage_prompt_tokens for r in paired if r.usage_prompt_tokens is not None])
    client = _mean([r.prompt_tokens_client for r in paired if r.prompt_tokens_client is not None])
    labels = []
    differs = False
    if counted is not None and asked and abs(counted - asked) > asked * PROMPT_TOLERANCE_PCT / 100.0:
        labels.append(f"prompt counted here mean {counted:.4g}")
    if server is not None and client and abs(server - client) > client * PROMPT_TOLERANCE_PCT / 100.0:
        differs = True
        out.flags.append(FLAG_PROMPT_DIFFERS)
        labels.append(f"the server counted prompt mean {server:.4g}")
        text = (f"the server counted a mean of {server:.4g} prompt tokens where --tokenizer counted {client:.4g} "
                f"(asked {asked:.4g}), more than {PROMPT_TOLERANCE_PCT:g} % apart: a tokenizer other than the "
                "server's, a template, or a false count; the prompt stored is the client's count, the point is "
                "labelled with both")
        out.notes.append(text)
        out.warnings.append("warning: " + text)
    out.label = "; ".join(labels) or None
    return differs
