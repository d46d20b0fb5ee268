"""Does the serve-bench client time what a bare loop times? Its TTFT and ITL against a bare `httpx` loop's.

Target (issue 26): the client's mean TTFT and mean ITL each within 2 % of the bare loop's (ratio 0.98-1.02),
over the same requests.

The server is the local streaming server of serve_client_schedule.py (a fake: deterministic, in its own
process), not the transformers engine: each request's first event comes --first-ms after the request, then
--tokens events --gap-ms apart, so the true TTFT and ITL are known and the comparison is not drowned in an
engine's run-to-run spread on a 2-core machine. The client is the product's (`runner.serve_bench.client.
stream_request`, on the sampler's clock); the bare loop is `httpx` streaming with `aiter_lines` and
`time.perf_counter` stamps, nothing else. The two alternate request by request (each going first every
other time) on one warm connection pool, sequentially, so both see the same server and the same machine.

    .venv/bin/python benchmarks/serve_client_fidelity.py [--requests 100] [--tokens 32] [--gap-ms 10] [--first-ms 50]
    .venv/bin/python benchmarks/serve_client_fidelity.py --requests 6 --tokens 4 --gap-ms 5 --first-ms 20  # smallest

A figure off target is printed beside its target (a result, exit 0); a request that fails, or a wait that runs
out (the server's start, each request: --wait-limit-s; the whole run: --limit-s), exits 1 with `FAILED: ...`,
the server stopped by its PID.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import waits  # noqa: E402
from serve_client_schedule import start_server  # noqa: E402

from runner.clock import REAL_CLOCK  # noqa: E402
from runner.serve_bench.client import request_body, stream_request  # noqa: E402
from runner.serve_bench.result import RequestResult  # noqa: E402

TARGET_LOW, TARGET_HIGH = 0.98, 1.02
WAIT_S = 60.0


async def bare(http: object, url: str, body: dict, timeout_s: float) -> tuple[float, list[float]]:
    """The bare loop: send, stamp each event that carries text; (TTFT s, gaps s)."""
    import httpx

    assert isinstance(http, httpx.AsyncClient)
    times: list[float] = []
    sent = time.perf_counter()
    async with http.stream("POST", url, json=body, timeout=timeout_s) as reply:
        async for line in reply.aiter_lines():
            if line.startswith("data:") and line[5:].strip() != "[DONE]":
                now = time.perf_counter()
                if any(c.get("text") for c in json.loads(line[5:]).get("choices", [])):
                    times.append(now)
    if not times:
        raise waits.BenchmarkFailed("the bare loop saw no token")
    return times[0] - sent, [b - a for a, b in zip(times, times[1:])]


async def compare(url: str, requests: int, tokens: int, wait_s: float) -> tuple[list[float], list[float], list[float],
                                                                                 list[float]]:
    import httpx

    body = request_body("completions", "m", "the fox", tokens)
    ttft_c: list[float] = []
    itl_c: list[float] = []
    ttft_b: list[float] = []
    itl_b: list[float] = []
    async with httpx.AsyncClient() as http:
        for i in range(-2, requests):  # two warm-up pairs (connections, imports), not counted
            r = RequestResult(i, 8, tokens)
            try:  # which goes first alternates, so neither always follows the other
                if i % 2:
                    t, gaps = await asyncio.wait_for(bare(http, url, body, wait_s), wait_s)
                await asyncio.wait_for(stream_request(http, url, body, r, REAL_CLOCK, wait_s), wait_s)
                if not i % 2:
                    t, gaps = await asyncio.wait_for(bare(http, url, body, wait_s), wait_s)
            except TimeoutError:
                raise waits.WaitExceeded(f"request {i} to be answered", wait_s) from None
            if not r.ok:
                raise waits.BenchmarkFailed(f"the client's request {i} failed: {r.error}")
            if i >= 0:
                ttft_c.append(r.ttft_ms or 0.0)
                itl_c += r.gaps_ms()
                ttft_b.append(t * 1000)
                itl_b += [g * 1000 for g in gaps]
    return ttft_c, itl_c, ttft_b, itl_b


def _line(name: str, client: list[float], bare_ms: list[float]) -> bool:
    c, b = statistics.fmean(client), statistics.fmean(bare_ms)
    ratio = c / b
    ok = TARGET_LOW <= ratio <= TARGET_HIGH
    print(f"{name} mean: client {c:.3f} ms, bare httpx {b:.3f} ms ({len(client)} values each); ratio client / bare "
          f"{ratio:.4f} (target {TARGET_LOW:g}-{TARGET_HIGH:g}): {'met' if ok else 'MISSED'}")
    return ok


def measure(a: argparse.Namespace) -> int:
    port, server = start_server(a.tokens, a.gap_ms / 1000, a.wait_limit_s, a.first_ms / 1000)
    try:
        ttft_c, itl_c, ttft_b, itl_b = asyncio.run(compare(f"http://127.0.0.1:{port}/v1/completions", a.requests,
                                                           a.tokens, a.wait_limit_s))
    finally:
        waits.stop(server)  # by its PID
    print(f"{a.requests} requests, each timed by both (alternating), against a local fake streaming server: first "
          f"token after {a.first_ms:g} ms, {a.tokens} events {a.gap_ms:g} ms apart")
    _line("TTFT", ttft_c, ttft_b)
    _line("ITL", itl_c, itl_b)
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--requests", type=int, default=100)
    p.add_argument("--tokens", type=int, default=32, help="events per request")
    p.add_argument("--gap-ms", type=float, default=10.0, help="time between a request's events")
    p.add_argument("--first-ms", type=float, default=50.0, help="time from the request to its first event")
    waits.add_limits(p, limit_s=1800, wait_s=WAIT_S)
    a = p.parse_args()
    return waits.main(lambda: measure(a), a.limit_s)


if __name__ == "__main__":
    raise SystemExit(main())
