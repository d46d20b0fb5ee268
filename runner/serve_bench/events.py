"""One server-sent event of a completions stream, read field by field with each field's type checked.

An OpenAI-compatible event is `{"choices": [{"text": "..."}]}` (completions) or `{"choices": [{"delta":
{"content": "..."}}]}` (chat), perhaps with `usage: {"prompt_tokens": n, "completion_tokens": m}` and, on a
failure, `error`. Anything else a server sends (a `choices` that is not a list, a `delta` that is a string, a
`text` that is a list, a count that is a string, a bool, negative, fractional, NaN, infinite or past
MAX_TOKENS) is not believed: the event's text counts only when it is a string, and a `usage` count only when it
is a whole number in [0, MAX_TOKENS]; what was wrong is kept on the request (`usage_problem`,
`malformed_events`) for the run's notes. No reply raises here.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from runner.serve_bench.names import message
from runner.serve_bench.options import MAX_TOKENS

if TYPE_CHECKING:
    from runner.serve_bench.result import RequestResult

MAX_KEPT_TEXT_CHARS = 4 * 1024 * 1024  # a request's text kept for --tokenizer's count; past it, none is counted


def token_count(value: Any) -> tuple[int | None, str | None]:
    """A `usage` count as a whole number of tokens, or None with why it is not one."""
    if isinstance(value, bool) or value is None or not isinstance(value, (int, float)):
        shown = "absent" if value is None else f"a {type(value).__name__} ({str(value)[:20]!r})"
        return None, f"{shown}, not a whole number"
    if isinstance(value, float):
        if not math.isfinite(value):
            return None, f"{value} (not finite)"
        if not value.is_integer():
            return None, f"{value:g} (fractional)"
    if value < 0:
        return None, f"{value:g} (negative)"
    if value > MAX_TOKENS:
        return None, f"{value:g} (more than {MAX_TOKENS:,}, more than any model takes)"
    return int(value), None


def _text_of(choice: Any) -> tuple[str | None, bool]:
    """A choice's text (None: it carries none) and whether the choice was malformed."""
    if not isinstance(choice, dict):
        return None, True
    if "text" in choice:
        text = choice["text"]
        return (text, False) if isinstance(text, str) else (None, text is not None)
    delta = choice.get("delta")
    if delta is None:
        return None, False
    if not isinstance(delta, dict):
        return None, True
    for key in ("content", "reasoning_content"):
        text = delta.get(key)
        if isinstance(text, str) and text:
            return text, False
        if text is not None and not isinstance(text, str):
            return None, True
    return None, False


def _usage(usage: Any, result: RequestResult) -> None:
    result.usage_seen = True
    if not isinstance(usage, dict):
        result.usage_problem = f"usage is a {type(usage).__name__}, not an object"
        result.usage_output_tokens = result.usage_prompt_tokens = None
        return
    problems = []
    for key, attr in (("completion_tokens", "usage_output_tokens"), ("prompt_tokens", "usage_prompt_tokens")):
        value, why = token_count(usage.get(key))
        setattr(result, attr, value)
        if why is not None:
            problems.append(f"usage.{key}: {why}")
    result.usage_problem = "; ".join(problems) or None


def handle(data: bytes, now: float, result: RequestResult, keep_text: bool) -> bool:
    """One event's `data:` into `result`; True at the end of the stream ([DONE] or an error event)."""
    data = data.strip()
    if data == b"[DONE]":
        return True
    if not data:
        return False
    try:
        event = json.loads(data)
    except (ValueError, RecursionError):
        result.note_malformed("not JSON")
        return False
    if not isinstance(event, dict):
        result.note_malformed(f"a JSON {type(event).__name__}, not an object")
        return False
    error = event.get("error")
    if error:
        detail = error.get("message", error) if isinstance(error, dict) else error
        result.error_kind = "failed"
        result.error = f"the server sent an error: {message(detail)}"
        return True
    choices = event.get("choices")
    if choices is not None and not isinstance(choices, list):
        result.note_malformed(f"choices is a {type(choices).__name__}, not a list")
    elif choices:
        for choice in choices[:16]:
            text, malformed = _text_of(choice)
            if malformed:
                result.note_malformed("a choice, its delta or its text of the wrong type")
            if text:
                result.token_s.append(now)
                result.text_bytes += len(text.encode("utf-8", "surrogatepass"))
                if keep_text and result.text_chars + len(text) <= MAX_KEPT_TEXT_CHARS:
                    result.text_parts.append(text)
                    result.text_chars += len(text)
                elif keep_text:
                    result.text_overflow = True
                break
    if "usage" in event and event["usage"] is not None:
        _usage(event["usage"], result)
    return False
