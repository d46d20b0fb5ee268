"""A hostile OpenAI-compatible server for serve-bench's tests: one mode per behaviour a server must not get away
with, on 127.0.0.1 and an ephemeral port, in a thread of the test's process (`HostileServer`, stopped by
`stop()`), or as its own process (`python -m tests.hostile_server MODE`, printing its port; stop it by PID).

A plain asyncio socket server: every reply closes its connection (no keep-alive), a stream's body ends when
the connection closes. Big replies are generated lazily (a 200 MB line is written in 64 KiB pieces and stops
when the client hangs up); the gzip bombs are compressed once per process, a few MB each.

Modes (a completion's reply; /v1/models lists MODEL unless the mode says otherwise):
- honest: 3 text events, then usage {prompt_tokens: the prompt's words, completion_tokens: 3}
- usage_lie: 3 text events, usage claiming 10,000 output tokens and 8 prompt tokens
- no_usage: 3 text events, no usage
- usage_<kind>: 3 text events, completion_tokens of one malformed kind (USAGE_KINDS)
- delta_str: a `"delta": "str"` event, a list `text`, a `choices` string, then 3 good events with usage
- slow_headers: the completion's response headers one byte every 2 s
- slow_models: /v1/models' headers one byte every 2 s (the probe)
- slow_body: headers at once, then a text event every 2 s, without end
- gzip_models: /v1/models as a gzip bomb (GZIP_BOMB_BYTES decompressed)
- gzip_stream: the stream as a gzip bomb of comment lines
- long_line: one SSE line of LONG_LINE_BYTES
- many_events: 100,000 text events (more than any bound for a few tokens)
- control_names: a model id, `server` header and error messages with ESC, U+202E and NUL; every other
  request an error event
- transformers: what `transformers serve` answers (`server: uvicorn`, owned_by "local", its FastAPI routes)
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import zlib
from typing import Any

MODEL = "hostile-model"
EVIL_MODEL = "evil\x1b[31m\u202emodel\x00"
EVIL_TEXT = "boom\x1b[2J\x1b[31m\u202edone\x00"
USAGE_KINDS: dict[str, Any] = {"negative": -15, "nan": float("nan"), "inf": float("inf"), "huge": 1e30,
                               "fractional": 2.5, "bool": True, "zero": 0, "string": "3", "list": [3],
                               "object": {"n": 3}}
GZIP_BOMB_BYTES = 2 * 1024**3  # 2 GiB decompressed
LONG_LINE_BYTES = 200 * 1024**2
DRIP_S = 2.0
_BOMBS: dict[str, bytes] = {}
_LOCK = threading.Lock()


def bomb(kind: str) -> bytes:
    """A gzip body of GZIP_BOMB_BYTES: zeros after a JSON-looking prefix (models) or SSE comment lines (stream).
    Built in a second: one MiB compressed after a full flush (which resets the compressor's history) gives the
    same bytes every time, so the block is repeated; the trailer's CRC and size are the whole body's."""
    with _LOCK:
        if kind not in _BOMBS:
            unit = b"\0" * 1024 * 1024 if kind == "models" else b":\n" * (512 * 1024)
            head = b'{"object": "list", "data": [' if kind == "models" else b":\n"
            z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
            first = z.compress(head) + z.flush(zlib.Z_FULL_FLUSH)
            z.compress(unit)
            z.flush(zlib.Z_FULL_FLUSH)
            block = z.compress(unit) + z.flush(zlib.Z_FULL_FLUSH)  # the same bytes for every further unit
            count = GZIP_BOMB_BYTES // len(unit)
            crc = zlib.crc32(head)
            for _ in range(count):
                crc = zlib.crc32(unit, crc)
            size = len(head) + count * len(unit)
            end = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS).flush()  # an empty final block
            trailer = crc.to_bytes(4, "little") + (size % 2**32).to_bytes(4, "little")
            _BOMBS[kind] = first + block * count + end + trailer
        return _BOMBS[kind]


def _event(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _text(text: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "text": text}]}


class HostileServer:
    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.requests = 0
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.port = 0
        self.thread = threading.Thread(target=self._run, daemon=True, name=f"hostile-{mode}")
        self.thread.start()
        if not self.ready.wait(10):
            raise RuntimeError("the hostile server did not start")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self.server = server
        self.ready.set()
        self.loop.run_forever()
        server.close()
        tasks = asyncio.all_tasks(self.loop)  # the connections still being answered
        for task in tasks:
            task.cancel()
        self.loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        self.loop.run_until_complete(server.wait_closed())
        self.loop.close()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    def __enter__(self) -> HostileServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            length = 0
            for line in lines[1:]:
                if line.lower().startswith("content-length:"):
                    length = int(line.split(":", 1)[1])
            body = json.loads(await reader.readexactly(length)) if length else {}
            await self._answer(method, path, body, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError,
                asyncio.CancelledError):
            pass
        finally:
            try:
                writer.close()
                await writer.wait_closed()
            except (ConnectionError, OSError):
                pass

    async def _head(self, writer: asyncio.StreamWriter, status: str, headers: dict[str, str],
                    drip: bool = False) -> None:
        server = "Evil\x1b[2J/6.6\u202e" if self.mode == "control_names" else (
            "uvicorn" if self.mode == "transformers" else "hostile")
        text = f"HTTP/1.1 {status}\r\nserver: {server}\r\nconnection: close\r\n" + "".join(
            f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        data = text.encode("utf-8")
        if not drip:
            writer.write(data)
            await writer.drain()
            return
        for i in range(len(data)):
            writer.write(data[i:i + 1])
            await writer.drain()
            await asyncio.sleep(DRIP_S)

    async def _json(self, writer: asyncio.StreamWriter, status: str, payload: Any, drip: bool = False) -> None:
        data = json.dumps(payload).encode()
        await self._head(writer, status, {"content-type": "application/json", "content-length": str(len(data))},
                         drip)
        writer.write(data)
        await writer.drain()

    async def _answer(self, method: str, path: str, body: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        mode = self.mode
        if method == "GET" and path == "/v1/models":
            if mode == "gzip_models":
                data = bomb("models")
                await self._head(writer, "200 OK", {"content-type": "application/json", "content-encoding": "gzip",
                                                    "content-length": str(len(data))})
                writer.write(data)
                await writer.drain()
                return
            model = EVIL_MODEL if mode == "control_names" else MODEL
            owner = "local" if mode == "transformers" else "hostile"
            await self._json(writer, "200 OK", {"object": "list", "data": [{"id": model, "object": "model",
                                                                            "owned_by": owner}]},
                             drip=mode == "slow_models")
            return
        if method == "GET" and path == "/openapi.json" and mode == "transformers":
            paths = {p: {} for p in ("/v1/models", "/v1/completions", "/v1/chat/completions", "/load_model", "/reset",
                                     "/health")}
            await self._json(writer, "200 OK", {"openapi": "3.1.0", "paths": paths})
            return
        if method == "POST" and path in ("/v1/completions", "/v1/chat/completions"):
            self.requests += 1
            await self._complete(body, writer, self.requests)
            return
        await self._json(writer, "404 Not Found", {"detail": "Not Found"})

    async def _stream_head(self, writer: asyncio.StreamWriter, extra: dict[str, str] | None = None,
                           drip: bool = False) -> None:
        await self._head(writer, "200 OK", {"content-type": "text/event-stream", **(extra or {})}, drip)

    async def _complete(self, body: dict[str, Any], writer: asyncio.StreamWriter, n: int) -> None:
        mode = self.mode
        prompt = body.get("prompt") or ""
        words = len(str(prompt).split())
        if mode == "slow_headers":
            await self._stream_head(writer, drip=True)
            return
        if mode == "gzip_stream":
            data = bomb("stream")
            await self._stream_head(writer, {"content-encoding": "gzip"})
            for i in range(0, len(data), 65536):
                writer.write(data[i:i + 65536])
                await writer.drain()
            return
        await self._stream_head(writer)
        if mode == "slow_body":
            while True:
                writer.write(_event(_text("x")))
                await writer.drain()
                await asyncio.sleep(DRIP_S)
        if mode == "long_line":
            writer.write(b"data: {\"choices\": [{\"text\": \"")
            piece = b"a" * 65536
            for _ in range(LONG_LINE_BYTES // len(piece)):
                writer.write(piece)
                await writer.drain()
            return
        if mode == "many_events":
            for _ in range(100_000 // 100):
                writer.write(_event(_text("y")) * 100)
                await writer.drain()
            return
        if mode == "control_names" and n % 2 == 0:
            writer.write(_event({"error": {"message": EVIL_TEXT}}))
            await writer.drain()
            return
        if mode == "delta_str":
            for bad in ({"choices": [{"delta": "str"}]}, {"choices": [{"text": ["a"]}]}, {"choices": "x"},
                        {"choices": [None]}, ["not", "an", "object"]):
                writer.write(b"data: " + json.dumps(bad).encode() + b"\n\n")
        for word in ("one", " two", " three"):
            writer.write(_event(_text(word)))
            await writer.drain()
            await asyncio.sleep(0.005)
        usage: dict[str, Any] | None = {"prompt_tokens": words, "completion_tokens": 3}
        if mode == "usage_lie":
            usage = {"prompt_tokens": 8, "completion_tokens": 10_000}
        elif mode == "no_usage":
            usage = None
        elif mode.startswith("usage_"):
            usage = {"prompt_tokens": words, "completion_tokens": USAGE_KINDS[mode.removeprefix("usage_")]}
        if usage is not None:
            writer.write(b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n")
        writer.write(b"data: [DONE]\n\n")
        await writer.drain()


def main() -> None:
    server = HostileServer(sys.argv[1])
    print(server.port, flush=True)
    try:
        threading.Event().wait()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
