"""Reading a server's bytes within bounds: decompressed size, line length, and (for streams) events.

The client asks for uncompressed replies (`Accept-Encoding: identity`); a server that compresses anyway is
decompressed here, piece by piece (`zlib`'s `max_length`: never more than DECODE_PIECE_BYTES at once), so a
gzip bomb (2 MB that expand to gigabytes) is refused when the decompressed total passes the reply's limit,
having held one piece. Encodings other than gzip and deflate are refused. The raw bytes are read with httpx's
`aiter_raw` (its own decoders would expand a whole chunk at once).

Limits (each refusal is a `TooLarge` naming the limit; the request records it as error kind `too_large`):
- a reply that is not a stream (the model list, /version, an error's body): MAX_BODY_BYTES decompressed;
- a stream: `stream_limit_bytes(max_tokens)` decompressed, MAX_LINE_BYTES per line (a server-sent event's
  `data:` line; no real event is near it), and `event_limit(max_tokens)` events (a generous multiple of the
  tokens asked for: one event per token, plus role, usage and [DONE] events).

Time is bounded by the caller: one deadline over connect, headers and body (`asyncio.timeout`), as httpx's
own timeouts are per read and a server that sends one byte every second never trips them.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Callable, Iterator

import httpx

MAX_BODY_BYTES = 4 * 1024 * 1024  # a model list of thousands of models is well under 1 MB
MAX_LINE_BYTES = 1024 * 1024  # one server-sent event's line; a token's event is about 200-400 bytes
STREAM_BASE_BYTES = 2 * 1024 * 1024  # a short stream is a few KB
STREAM_BYTES_PER_TOKEN = 16 * 1024  # ~40x a verbose event's size per token asked for
MAX_STREAM_BYTES = 1024 * 1024 * 1024
EVENTS_PER_TOKEN = 4
EVENTS_BASE = 64
DECODE_PIECE_BYTES = 256 * 1024  # under MAX_LINE_BYTES: only a piece's first and last lines can pass it
REQUEST_HEADERS = {"accept-encoding": "identity"}


class TooLarge(Exception):
    """A reply past one of the limits; the message names it and what to do."""


def stream_limit_bytes(max_tokens: int) -> int:
    return min(MAX_STREAM_BYTES, STREAM_BASE_BYTES + STREAM_BYTES_PER_TOKEN * max(1, max_tokens))


def event_limit(max_tokens: int) -> int:
    return EVENTS_BASE + EVENTS_PER_TOKEN * max(1, max_tokens)


def _plain(data: bytes) -> Iterator[bytes]:
    if data:
        yield data


def _decoder(encoding: str) -> Callable[[bytes], Iterator[bytes]] | None:
    """A bounded decoder for the reply's Content-Encoding: each call yields pieces of at most
    DECODE_PIECE_BYTES, one at a time; None for an encoding not handled (refused by the caller)."""
    names = [e.strip().lower() for e in encoding.split(",") if e.strip() and e.strip().lower() != "identity"]
    if not names:
        return _plain
    if len(names) > 1 or names[0] not in ("gzip", "x-gzip", "deflate"):
        return None
    return _Inflate(gzip=names[0] in ("gzip", "x-gzip")).decode


class _Inflate:
    """gzip or deflate, decompressed in pieces of at most DECODE_PIECE_BYTES."""

    def __init__(self, *, gzip: bool) -> None:
        self.z = zlib.decompressobj(16 + zlib.MAX_WBITS if gzip else zlib.MAX_WBITS)
        self.may_be_raw = not gzip  # "deflate" is often sent without the zlib header

    def decode(self, data: bytes) -> Iterator[bytes]:
        try:
            piece = self.z.decompress(data, DECODE_PIECE_BYTES)
        except zlib.error:
            if not self.may_be_raw:
                raise
            self.z = zlib.decompressobj(-zlib.MAX_WBITS)
            piece = self.z.decompress(data, DECODE_PIECE_BYTES)
        self.may_be_raw = False
        while True:
            if piece:
                yield piece  # the caller counts each piece before the next is made
            if not self.z.unconsumed_tail:
                return
            piece = self.z.decompress(self.z.unconsumed_tail, DECODE_PIECE_BYTES)


class Decoded:
    """A reply's decompressed bytes, counted against `limit_bytes` (TooLarge past it)."""

    def __init__(self, reply: httpx.Response, limit_bytes: int, what: str) -> None:
        self.reply = reply
        self.limit_bytes = limit_bytes
        self.what = what
        self.total_bytes = 0
        encoding = reply.headers.get("content-encoding", "")
        decode = _decoder(encoding)
        if decode is None:
            raise TooLarge(f"{what}: the server sent Content-Encoding {encoding[:40]!r}, which this client does not "
                           "read (it asks for identity; gzip and deflate are read)")
        self._decode = decode

    async def pieces(self) -> AsyncIterator[bytes]:
        """The decompressed bytes, one bounded piece at a time; TooLarge once the total passes the limit."""
        async for raw in self.reply.aiter_raw():
            decoded = self._decode(raw)
            while True:
                try:
                    piece = next(decoded)
                except StopIteration:
                    break
                except zlib.error as e:
                    raise TooLarge(f"{self.what}: the compressed reply is damaged ({e})") from None
                self.total_bytes += len(piece)
                if self.total_bytes > self.limit_bytes:
                    raise TooLarge(f"{self.what}: the reply passed {self.limit_bytes:,} bytes decompressed "
                                   f"({self.total_bytes:,} read); refused as a bound on memory (a compression bomb "
                                   "or a runaway stream)")
                yield piece


async def read_body(reply: httpx.Response, what: str, limit_bytes: int = MAX_BODY_BYTES) -> bytes:
    """A whole (non-streamed) reply, at most `limit_bytes` decompressed."""
    out = bytearray()
    async for piece in Decoded(reply, limit_bytes, what).pieces():
        out += piece
    return bytes(out)


async def lines(decoded: Decoded, max_line_bytes: int = MAX_LINE_BYTES) -> AsyncIterator[list[bytes]]:
    """The complete lines of a stream, grouped as they arrive (one list per piece read; the caller stamps the
    group's arrival); a last line without its newline comes at the end. TooLarge for a line past the limit.
    Split in C (`bytes.split`): a stream of millions of empty lines costs no Python loop per line here."""
    pending = b""
    async for piece in decoded.pieces():
        if len(pending) + len(piece) > max_line_bytes and b"\n" not in piece:
            raise _long_line(decoded.what, max_line_bytes)
        found = (pending + piece).split(b"\n")
        pending = found.pop()  # an incomplete line waits for the next bytes
        if len(pending) > max_line_bytes or (found and len(found[0]) > max_line_bytes):
            raise _long_line(decoded.what, max_line_bytes)  # a piece is shorter than the limit: only its ends
        if found:
            yield found
    if pending:
        yield [pending]


def _long_line(what: str, limit: int) -> TooLarge:
    return TooLarge(f"{what}: a line of the stream passed {limit:,} bytes without ending; refused (no event is "
                    "that long)")
