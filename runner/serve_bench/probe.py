"""Asking a server what it is before anything is measured: `/v1/models` (an OpenAI-compatible server lists its
models; the model asked for must be there), `/version`, the `server` header, and, when those name no engine,
`/openapi.json` (FastAPI servers publish their routes: `transformers serve` has `/load_model` and `/reset`
beside `/v1/models`, which no other engine has).

Bounded like a request: the whole probe ends within PROBE_TIMEOUT_S (connect, headers and body of every
reply: `asyncio.timeout`, as httpx's timeouts are per read), the model list may hold wire.MAX_BODY_BYTES
decompressed (a gzip bomb is refused, never expanded), and the optional replies (`/version`, `/openapi.json`)
each get at most EXTRA_TIMEOUT_S of what is left, their failure only leaving the engine unnamed. Every name
the server sends (model ids, engine, version, the `server` header) is cleaned (runner.serve_bench.names)
before it is printed or stored; the model id is sent back to the server as the server spelled it.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx

from runner.serve_bench import wire
from runner.serve_bench.names import clean, message, name
from runner.serve_bench.options import ServeBenchError
from runner.serve_bench.result import ServerInfo, base_url

PROBE_TIMEOUT_S = 10.0
EXTRA_TIMEOUT_S = 3.0
MAX_MODELS = 10_000  # entries of the model list looked at
KNOWN_OWNERS = ("vllm", "sglang", "tgi", "llamacpp", "ollama")
PLAIN_SERVERS = ("uvicorn", "hypercorn", "gunicorn")
TRANSFORMERS_SERVE = "transformers-serve"
TRANSFORMERS_ROUTES = {"/v1/models", "/load_model", "/reset"}  # `transformers serve`'s FastAPI routes


class _Failed(Exception):
    pass


async def _get(http: httpx.AsyncClient, url: str, what: str, timeout_s: float) -> tuple[httpx.Response, bytes]:
    async with asyncio.timeout(timeout_s):
        async with http.stream("GET", url, headers=wire.REQUEST_HEADERS, timeout=timeout_s) as reply:
            return reply, await wire.read_body(reply, what)


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


async def _extra(http: httpx.AsyncClient, url: str, deadline: float) -> Any:
    """An optional reply's JSON, or None (not there, too slow, too large, not JSON)."""
    left = min(EXTRA_TIMEOUT_S, deadline - time.monotonic())
    if left <= 0:
        return None
    try:
        reply, body = await _get(http, url, url, left)
    except (TimeoutError, wire.TooLarge, httpx.HTTPError, ValueError, UnicodeError):
        return None
    return _json(body) if reply.status_code == 200 else None


async def _ask(url: str, timeout_s: float) -> tuple[httpx.Response, Any, Any, Any]:
    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient() as http:
        try:
            reply, body = await _get(http, url + "/v1/models", "GET /v1/models", timeout_s)
        except TimeoutError:
            raise _Failed(f"--target: {url} did not answer GET /v1/models within {timeout_s:g} s (connect, headers "
                          "and body); is it an OpenAI-compatible server, and not overloaded?") from None
        except wire.TooLarge as e:
            raise _Failed(f"--target: {url}: {e}") from None
        listing = _json(body)
        if reply.status_code != 200 or not isinstance(listing, dict) or not isinstance(listing.get("data"), list):
            raise _Failed(f"--target: {url} is not an OpenAI-compatible server: GET /v1/models answered "
                          f"{reply.status_code} {message(reply.reason_phrase, 60)} without a model list")
        version = await _extra(http, url + "/version", deadline)
        routes = None
        if not _named(reply.headers.get("server"), version, listing):
            routes = await _extra(http, url + "/openapi.json", deadline)
    return reply, listing, version, routes


def _named(server_header: str | None, version: Any, listing: dict[str, Any]) -> bool:
    """Whether the engine is named without /openapi.json."""
    if isinstance(version, dict) and (version.get("name") or version.get("engine")):
        return True
    owners = {m.get("owned_by") for m in listing["data"][:MAX_MODELS] if isinstance(m, dict)}
    if owners & set(KNOWN_OWNERS):
        return True
    return bool(server_header) and str(server_header).lower().split("/")[0] not in PLAIN_SERVERS


def engine_from(server_header: str | None, version_body: Any, owned_by: Any, routes: Any = None
                ) -> tuple[str | None, str | None]:
    """(engine, version), cleaned, from what the server said; (None, ...) when it names none."""
    raw_version = version_body.get("version") if isinstance(version_body, dict) else None
    version = name(raw_version if isinstance(raw_version, str) else None, "version", 100)
    if isinstance(version_body, dict):
        found = name(version_body.get("name") or version_body.get("engine"), "engine", 100)
        if found:
            return found, version
    if owned_by in KNOWN_OWNERS:
        return str(owned_by), version
    if server_header and server_header.lower().split("/")[0].strip() not in PLAIN_SERVERS:
        engine, _, ver = server_header.partition("/")
        cleaned = name(engine, "server header", 100)
        if cleaned:
            return cleaned, name(ver, "server header's version", 100) or version
    paths = routes.get("paths") if isinstance(routes, dict) else None
    if isinstance(paths, dict) and TRANSFORMERS_ROUTES <= set(paths):
        return TRANSFORMERS_SERVE, version
    return None, version


def probe(target: str, model: str | None, engine: str | None, *, timeout_s: float | None = None) -> ServerInfo:
    """What the server is and which model it serves; ServeBenchError when it is unreachable, does not answer
    within `timeout_s` (default PROBE_TIMEOUT_S), is not an OpenAI-compatible server, or lacks the model."""
    url = base_url(target)
    timeout_s = PROBE_TIMEOUT_S if timeout_s is None else timeout_s
    try:
        reply, listing, version, routes = asyncio.run(_ask(url, timeout_s))
    except _Failed as e:
        raise ServeBenchError(str(e)) from None
    except (httpx.HTTPError, httpx.InvalidURL, OSError, UnicodeError, ValueError) as e:
        raise ServeBenchError(f"--target: cannot reach {url}: {type(e).__name__}: {message(str(e), 200)}; is the "
                              "server running, and on this host and port?") from None
    notes: list[str] = []
    entries: dict[str, dict[str, Any]] = {}
    for m in listing["data"][:MAX_MODELS]:
        if isinstance(m, dict) and isinstance(m.get("id"), str) and m["id"] not in entries:
            entries[m["id"]] = m
    shown = {raw: clean(raw, "model id") for raw in entries}
    ids = [raw for raw in entries if shown[raw].value]  # a model id with nothing printable cannot be named
    listed = ", ".join(str(shown[i].value) for i in ids[:10])
    if model is None:
        if len(ids) != 1:
            raise ServeBenchError(f"--model: the server serves {len(ids)} models ({listed}); name one")
        model = ids[0]
    elif model not in entries:
        raise ServeBenchError(f"--model: the server at {url} does not serve {message(model, 100)!r}; it serves: "
                              f"{listed or 'nothing'}")
    if shown[model].why:
        notes.append(f"the server's {shown[model].why}")
    entry = entries[model]
    header = reply.headers.get("server")
    found, found_version = engine_from(header, version, entry.get("owned_by"), routes)
    max_len = entry.get("max_model_len")
    return ServerInfo([str(shown[i].value) for i in ids], model, engine or found, found_version,
                      max_len if isinstance(max_len, int) and not isinstance(max_len, bool) and max_len > 0 else None,
                      tuple(notes), shown[model].value or model)
