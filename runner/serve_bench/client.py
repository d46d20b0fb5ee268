"""The client: streamed OpenAI-compatible requests, timed on the clock the power sampler uses.

Per request: planned and actual send time, the time of each streamed event that carries text (the
first is the first token), the end of the stream, the server's `usage` (prompt and output tokens;
`stream_options.include_usage` asks for it) as it was sent, the text's size (and, with `--tokenizer`, the
text, counted after the load by runner.serve_bench.counts, which decides the counts the figures use), and the
error when it failed: refused (an HTTP error status, with the server's message), failed (a broken connection
or stream, or an error event), timed out, or too large (runner.serve_bench.wire's bounds on a reply).

One deadline per request covers connect, headers and body: `--request-timeout` seconds from the send, enforced
around the whole request (`asyncio.timeout`), so a server that sends a byte every few seconds (which never
trips httpx's per-read timeouts) still ends at the deadline. Every field read from a reply is type-checked where
it is read (runner.serve_bench.events); no reply raises.

Like vLLM's `bench serve`, a token's time is the arrival of the event that carries it; a server that
sends several tokens in one event (byte-level tokenizers hold back incomplete characters) gives fewer
events than tokens, and the run's notes say so.

`probe` (runner.serve_bench.probe) asks the server what it is before anything is measured.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from runner.clock import Clock
from runner.serve_bench import events, wire
from runner.serve_bench.names import ERROR_CHARS, message
from runner.serve_bench.result import RequestResult

MAX_ERROR_CHARS = ERROR_CHARS
ALIVE_TIMEOUT_S = 5.0


def request_body(api: str, model: str, prompt: str, output_tokens: int) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "max_tokens": output_tokens, "stream": True,
                            "stream_options": {"include_usage": True}, "temperature": 0.0}
    if api == "chat":
        body["messages"] = [{"role": "user", "content": prompt}]
    else:
        body["prompt"] = prompt
    return body


async def _read_stream(reply: httpx.Response, result: RequestResult, clock: Clock, keep_text: bool) -> None:
    """The events of a 200 reply into `result`, within the stream's bounds (wire.TooLarge past them)."""
    decoded = wire.Decoded(reply, wire.stream_limit_bytes(result.output_tokens_requested), "the stream")
    max_events = wire.event_limit(result.output_tokens_requested)
    count = 0
    async for group in wire.lines(decoded):
        now = clock.now()
        for line in [line for line in group if line.startswith(b"data:")]:
            count += 1
            if count > max_events:
                raise wire.TooLarge(f"the stream: more than {max_events:,} events for {result.output_tokens_requested}"
                                    " tokens asked for; refused (a runaway stream)")
            if events.handle(line[5:], now, result, keep_text):
                return


async def stream_request(http: httpx.AsyncClient, url: str, body: dict[str, Any], result: RequestResult,
                         clock: Clock, timeout_s: float, *, keep_text: bool = False) -> None:
    """Send one request and time its stream into `result`; never raises for the server's failures (a
    cancellation, from a stop, goes through).

    The stream is read as raw bytes, decompressed and split into lines here within runner.serve_bench.wire's
    bounds (httpx's text and line layers cost several times more per event, and every microsecond per event
    delays the next send on a busy loop); each event is stamped with the arrival of the bytes that carry it.
    `keep_text`: keep the text for --tokenizer's count."""
    result.sent_s = clock.now()
    try:
        async with asyncio.timeout(timeout_s):
            async with http.stream("POST", url, json=body, headers=wire.REQUEST_HEADERS,
                                   timeout=httpx.Timeout(timeout_s)) as reply:
                if reply.status_code != 200:
                    text = (await wire.read_body(reply, "the error reply")).decode("utf-8", "replace")
                    result.error_kind = "refused"
                    result.error = f"HTTP {reply.status_code}: {message(text)}"
                    return
                await _read_stream(reply, result, clock, keep_text)
                if result.error is not None:
                    return
        result.end_s = clock.now()
        if not result.token_s:
            result.error_kind, result.error = "failed", "the stream ended without a token"
    except TimeoutError:
        result.error_kind = "timed_out"
        result.error = (f"timed out: no complete reply within --request-timeout {timeout_s:g} s (connect, headers "
                        "and body)")
    except httpx.TimeoutException as e:
        result.error_kind, result.error = "timed_out", f"timed out after {timeout_s:g} s ({type(e).__name__})"
    except wire.TooLarge as e:
        result.error_kind, result.error = "too_large", str(e)
    except (httpx.HTTPError, httpx.InvalidURL, UnicodeError, ValueError) as e:
        result.error_kind, result.error = "failed", f"{type(e).__name__}: {message(str(e))}"
    finally:
        if result.end_s is None:
            result.end_s = clock.now()


async def alive(http: httpx.AsyncClient, root: str) -> str | None:
    """None when the server still answers GET /v1/models within ALIVE_TIMEOUT_S; else why not."""
    try:
        async with asyncio.timeout(ALIVE_TIMEOUT_S):
            async with http.stream("GET", root + "/v1/models", headers=wire.REQUEST_HEADERS,
                                   timeout=ALIVE_TIMEOUT_S) as reply:
                await wire.read_body(reply, "GET /v1/models")
                code = reply.status_code
    except TimeoutError:
        return f"GET /v1/models did not answer within {ALIVE_TIMEOUT_S:g} s"
    except wire.TooLarge as e:
        return str(e)
    except httpx.HTTPError as e:
        return f"{type(e).__name__}: {message(str(e), 200)}"
    return None if code == 200 else f"GET /v1/models answered {code}"

