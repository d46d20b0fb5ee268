"""The client: streamed OpenAI-compatible requests, timed on the clock the power sampler uses.

Per request: planned and actual send time, the time of each streamed event that carries text (the
first is the first token), the end of the stream, the server's `usage` (prompt and output tokens;
`stream_options.include_usage` asks for it), and the error when it failed: refused (an HTTP error
status, with the server's message), failed (a broken connection or stream) or timed out.

Like vLLM's `bench serve`, a token's time is the arrival of the event that carries it; a server that
sends several tokens in one event (byte-level tokenizers hold back incomplete characters) gives fewer
events than tokens, and the run's notes say so.

`probe` asks the server what it is before anything is measured: `/v1/models` (an OpenAI-compatible
server lists its models; the model asked for must be there), `/version` and the `server` header.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from runner.clock import Clock
from runner.serve_bench.options import ServeBenchError

PROBE_TIMEOUT_S = 10.0
MAX_ERROR_CHARS = 300


@dataclass
class RequestResult:
    index: int
    prompt_tokens_requested: int
    output_tokens_requested: int
    planned_s: float | None = None
    sent_s: float = 0.0
    token_s: list[float] = field(default_factory=list)  # each text-carrying event's arrival
    end_s: float | None = None
    prompt_tokens: int | None = None  # the server's usage
    output_tokens: int | None = None
    error: str | None = None
    error_kind: str | None = None  # refused | failed | timed_out
    in_flight_at_send: int = 0
    model: str | None = None  # the model id this request asks for; None: the run's

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.token_s)

    @property
    def ttft_ms(self) -> float | None:
        return (self.token_s[0] - self.sent_s) * 1000.0 if self.token_s else None

    @property
    def e2e_ms(self) -> float | None:
        return (self.token_s[-1] - self.sent_s) * 1000.0 if self.token_s else None

    @property
    def tpot_ms(self) -> float | None:
        """(e2e - TTFT) / (output tokens - 1), vLLM's; None for one output token."""
        if not self.token_s or not self.output_tokens or self.output_tokens < 2:
            return None
        return (self.token_s[-1] - self.token_s[0]) * 1000.0 / (self.output_tokens - 1)

    def gaps_ms(self) -> list[float]:
        return [(b - a) * 1000.0 for a, b in zip(self.token_s, self.token_s[1:])]


@dataclass(frozen=True)
class ServerInfo:
    models: list[str]
    model: str
    engine: str | None
    engine_version: str | None
    max_model_len: int | None = None


def base_url(target: str) -> str:
    """`http://host:port` or `http://host:port/v1` -> the URL the `/v1/...` paths hang from."""
    url = target.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ServeBenchError(f"--target: {target[:80]!r} is not an http(s) URL, e.g. http://localhost:8000")
    return url[:-3] if url.endswith("/v1") else url


def _engine_from(server_header: str | None, version_body: Any, owned_by: str | None) -> tuple[str | None, str | None]:
    version = None
    if isinstance(version_body, dict):
        version = version_body.get("version")
        name = version_body.get("name") or version_body.get("engine")
        if name:
            return str(name)[:100], str(version)[:100] if version else None
    if owned_by in ("vllm", "sglang", "tgi", "llamacpp", "ollama"):
        return owned_by, str(version)[:100] if version else None
    if server_header and server_header.lower() not in ("uvicorn", "hypercorn", "gunicorn"):
        name, _, ver = server_header.partition("/")
        return name.strip()[:100], (ver.strip()[:100] or (str(version)[:100] if version else None))
    return None, str(version)[:100] if version else None


def probe(target: str, model: str | None, engine: str | None) -> ServerInfo:
    """What the server is and which model it serves; ServeBenchError when it is unreachable, is not an
    OpenAI-compatible server, or lacks the model."""
    url = base_url(target)
    try:
        with httpx.Client(timeout=PROBE_TIMEOUT_S) as http:
            reply = http.get(url + "/v1/models")
            try:
                listing = reply.json()
            except ValueError:
                listing = None
            if reply.status_code != 200 or not isinstance(listing, dict) or not isinstance(listing.get("data"), list):
                raise ServeBenchError(f"--target: {url} is not an OpenAI-compatible server: GET /v1/models answered "
                                      f"{reply.status_code} {reply.reason_phrase} without a model list")
            entries = [m for m in listing["data"] if isinstance(m, dict) and isinstance(m.get("id"), str)]
            try:
                version_reply = http.get(url + "/version")
                version_body = version_reply.json() if version_reply.status_code == 200 else None
            except (httpx.HTTPError, ValueError):
                version_body = None
    except httpx.HTTPError as e:
        raise ServeBenchError(f"--target: cannot reach {url}: {type(e).__name__}: {str(e)[:200]}; is the server "
                              "running, and on this host and port?") from None
    ids = [m["id"] for m in entries]
    if model is None:
        if len(ids) != 1:
            raise ServeBenchError(f"--model: the server serves {len(ids)} models ({', '.join(ids[:10])}); name one")
        model = ids[0]
    elif model not in ids:
        raise ServeBenchError(f"--model: the server at {url} does not serve {model[:100]!r}; it serves: "
                              f"{', '.join(ids[:10]) or 'nothing'}")
    entry = next(m for m in entries if m["id"] == model)
    name, version = _engine_from(reply.headers.get("server"), version_body, entry.get("owned_by"))
    max_len = entry.get("max_model_len")
    return ServerInfo(ids, model, engine or name, version, max_len if isinstance(max_len, int) else None)


def request_body(api: str, model: str, prompt: str, output_tokens: int) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "max_tokens": output_tokens, "stream": True,
                            "stream_options": {"include_usage": True}, "temperature": 0.0}
    if api == "chat":
        body["messages"] = [{"role": "user", "content": prompt}]
    else:
        body["prompt"] = prompt
    return body


def _text_of(choice: dict[str, Any]) -> str | None:
    if "text" in choice:
        return choice.get("text")
    delta = choice.get("delta") or {}
    return delta.get("content") or delta.get("reasoning_content")


def _event(data: bytes, now: float, result: RequestResult) -> bool:
    """One server-sent event's data into `result`; True at the end of the stream ([DONE] or an error)."""
    data = data.strip()
    if data == b"[DONE]":
        return True
    try:
        event = json.loads(data)
    except ValueError:
        return False
    if not isinstance(event, dict):
        return False
    if event.get("error"):
        result.error_kind = "failed"
        result.error = f"the server sent an error: {str(event['error'])[:MAX_ERROR_CHARS]}"
        return True
    for choice in event.get("choices") or []:
        if isinstance(choice, dict) and _text_of(choice):
            result.token_s.append(now)
            break
    usage = event.get("usage")
    if isinstance(usage, dict):
        result.prompt_tokens = usage.get("prompt_tokens")
        result.output_tokens = usage.get("completion_tokens")
    return False


async def stream_request(http: httpx.AsyncClient, url: str, body: dict[str, Any], result: RequestResult,
                         clock: Clock, timeout_s: float) -> None:
    """Send one request and time its stream into `result`; never raises for the server's failures.

    The stream is read as bytes and split into lines here (httpx's text and line layers cost several times
    more per event, and every microsecond per event delays the next send on a busy loop); each event is
    stamped with the arrival of the bytes that carry it. The byte iterator is closed here, not left to the
    garbage collector (whose finalizer tasks would run on the sender's loop)."""
    deadline = time.monotonic() + timeout_s
    result.sent_s = clock.now()
    try:
        async with http.stream("POST", url, json=body, timeout=httpx.Timeout(timeout_s)) as reply:
            if reply.status_code != 200:
                text = (await reply.aread()).decode("utf-8", "replace")
                result.error_kind = "refused"
                result.error = f"HTTP {reply.status_code}: {' '.join(text.split())[:MAX_ERROR_CHARS]}"
                return
            chunks = reply.aiter_bytes()
            pending = b""
            try:
                async for chunk in chunks:
                    now = clock.now()
                    if time.monotonic() > deadline:
                        raise httpx.ReadTimeout("the request ran past --request-timeout")
                    lines = (pending + chunk).split(b"\n")
                    pending = lines.pop()  # an incomplete line waits for the next bytes
                    if any(line.startswith(b"data:") and _event(line[5:], now, result) for line in lines):
                        break
                else:
                    if pending.startswith(b"data:"):
                        _event(pending[5:], clock.now(), result)
            finally:
                close = getattr(chunks, "aclose", None)  # an async generator (typed as an iterator)
                if close is not None:
                    await close()
            if result.error is not None:
                return
        result.end_s = clock.now()
        if not result.token_s:
            result.error_kind, result.error = "failed", "the stream ended without a token"
    except httpx.TimeoutException as e:
        result.error_kind, result.error = "timed_out", f"timed out after {timeout_s:g} s ({type(e).__name__})"
    except httpx.HTTPError as e:
        result.error_kind, result.error = "failed", f"{type(e).__name__}: {str(e)[:MAX_ERROR_CHARS]}"
    finally:
        if result.end_s is None:
            result.end_s = clock.now()


async def alive(http: httpx.AsyncClient, root: str) -> str | None:
    """None when the server still answers GET /v1/models; else why not."""
    try:
        reply = await http.get(root + "/v1/models", timeout=5.0)
    except httpx.HTTPError as e:
        return f"{type(e).__name__}: {str(e)[:200]}"
    return None if reply.status_code == 200 else f"GET /v1/models answered {reply.status_code}"
