"""Does the serve-bench client keep its schedule? Planned vs actual send time (the send lag serve-bench stores per
point, runner.serve_bench.lag), p99, at 50 requests/s and at 200 requests/s against an engine that answers instantly.

Targets: p99 of (actual - planned) send time <= 2 ms at 50 requests/s on a 2-core machine (issue 26), and <= 2 ms
at 200 requests/s against a local mock engine that answers instantly, on a quiet machine (issue 38). The second
figure is printed with the machine's load average: on a busy machine the client's wait for a CPU is the lag.

The server is a minimal asyncio server-sent-events server written here (no engine: the figure is the
client's own): each request gets `--tokens` events, `--gap-ms` apart, then a usage event, so requests
overlap as they would on a real engine; the instant engine sends all of them at once (`--instant-tokens` events,
no gap). The client is the product's (runner.serve_bench: the arrival schedule, the sender and the streamed
request, with serve-bench's default 2 warm-up requests and its collector kept off the schedule,
`load.frozen_heap`), on the clock the power sampler uses; the lag and CPU figures are runner.serve_bench.lag's,
the ones each serve-bench point stores (client_send_lag_*_ms, client_cpu_wait_pct, client_cpu_busy_pct).

Why it missed (69 ms p99 on a loaded machine; reproduced here at load average 4-9 on 2 cores): the lag
comes in bursts of consecutive requests, each one stall of the whole process, not sleep granularity
(asyncio wakes within its 1 ms select resolution and the sender yields the last stretch). The process was
runnable but had no CPU: over a 12 s run it used about 2 s of CPU and waited 2.8-4.0 s in the run queue
(`/proc/self/task/<pid>/schedstat`), which this benchmark now prints beside its figure. What the client
itself can do is fixed: no collection mid-load (`load.frozen_heap`), warm-up before the schedule (the first
request's lazy imports stalled the second by 16-43 ms), the stream read as bytes and its iterators closed
rather than finalised on the sender's loop, and a 1 ms (not 2 ms) spin before each send, each a smaller
share of a core to wait for. On a quiet machine p99 is well under the target; on a machine whose run queue
is full, the printed CPU wait is the lag, and no in-process client can keep a 2 ms schedule (serve-bench then
flags the point client_bound).

    .venv/bin/python benchmarks/serve_client_schedule.py [--rate 50] [--requests 500] [--arrival poisson]
        [--instant-rate 200] [--instant-requests 2000]
    .venv/bin/python benchmarks/serve_client_schedule.py --requests 20 --tokens 2 --gap-ms 5    # smallest: seconds

Exit code 1 when a p99 misses its target or a request fails (this benchmark's convention), and when a wait
runs out: the server's start and the whole schedule each wait at most --wait-limit-s (the schedule: plus its
planned length), the whole run --limit-s; `FAILED: <what> after N s` on stderr, the server stopped by its PID.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import sys
import time
from multiprocessing.process import BaseProcess
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import waits  # noqa: E402

from joulebench.metrics import Percentiles  # noqa: E402
from runner.clock import REAL_CLOCK  # noqa: E402
from runner.serve_bench.client import request_body, stream_request  # noqa: E402
from runner.serve_bench.lag import ClientLag, CpuMark, CpuUse, send_lags_ms  # noqa: E402
from runner.serve_bench.load import drive_rate, frozen_heap, schedule_s  # noqa: E402
from runner.serve_bench.result import RequestResult  # noqa: E402

TARGET_P99_MS = 2.0
WARMUP_REQUESTS = 2  # serve-bench's default --warmup-requests
WAIT_S = 120.0  # the longest any wait here may take (the server's own reads; the client's: --wait-limit-s)


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, tokens: int, gap_s: float,
                  first_s: float = 0.0) -> None:
    try:
        while True:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT_S)
            length = 0
            for line in head.decode("latin-1").split("\r\n"):
                if line.lower().startswith("content-length:"):
                    length = int(line.split(":", 1)[1])
            await asyncio.wait_for(reader.readexactly(length), WAIT_S)
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
            await writer.drain()
            if first_s:
                await asyncio.sleep(first_s)  # a prefill: the first token comes this long after the request
            for i in range(tokens + 1):
                event = {"choices": [{"index": 0, "text": "x"}]} if i < tokens else {
                    "choices": [{"index": 0, "text": "", "finish_reason": "length"}],
                    "usage": {"prompt_tokens": 8, "completion_tokens": tokens}}
                data = f"data: {json.dumps(event)}\n\n".encode()
                writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                await writer.drain()
                if i < tokens:
                    await asyncio.sleep(gap_s)
            done = b"data: [DONE]\n\n"
            writer.write(f"{len(done):x}\r\n".encode() + done + b"\r\n0\r\n\r\n")
            await writer.drain()
    except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


def _serve(port: int, tokens: int, gap_s: float, first_s: float = 0.0) -> None:
    async def main() -> None:
        server = await asyncio.start_server(lambda r, w: _handle(r, w, tokens, gap_s, first_s), "127.0.0.1", port)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def start_server(tokens: int, gap_s: float, wait_s: float, first_s: float = 0.0) -> tuple[int, BaseProcess]:
    """The SSE server on a free localhost port in its own process (as a real server is: not the client's GIL)."""
    port = waits.free_port()
    spawn = multiprocessing.get_context("spawn")
    proc = waits.started(spawn.Process(target=_serve, args=(port, tokens, gap_s, first_s), daemon=True))
    proc.start()

    def accepts() -> bool:
        if not proc.is_alive():
            raise waits.BenchmarkFailed(f"the SSE server ended with exit code {proc.exitcode} before accepting")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False

    try:
        waits.wait_until(accepts, wait_s, "the SSE server to accept connections")
    except waits.BenchmarkFailed:
        waits.stop(proc)
        raise
    return port, proc


async def drive(url: str, rate: float, requests: int, arrival: str, tokens: int, wait_s: float
                ) -> tuple[list[RequestResult], float, CpuUse]:
    """The schedule's requests, its start on REAL_CLOCK and the event loop's CPU over it (as serve-bench's point)."""
    import httpx

    results = [RequestResult(i, 8, tokens) for i in range(requests)]
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(limits=limits) as http:
        async def send(i: int, planned: float | None) -> None:
            results[i].planned_s = planned
            await stream_request(http, url, request_body("completions", "m", "the fox", tokens), results[i],
                                 REAL_CLOCK, timeout_s=wait_s)

        for i in range(WARMUP_REQUESTS):  # as serve-bench does before each point (not measured)
            warm = RequestResult(i, 8, tokens)
            try:
                await asyncio.wait_for(stream_request(http, url, request_body("completions", "m", "the fox", tokens),
                                                      warm, REAL_CLOCK, timeout_s=wait_s), wait_s)
            except TimeoutError:
                raise waits.WaitExceeded("a warm-up request to be answered", wait_s) from None
        times = schedule_s(rate, requests, arrival=arrival, seed=0)
        limit_s = wait_s + requests / rate
        with frozen_heap():
            start = REAL_CLOCK.now() + 0.05
            cpu0 = CpuMark.now()
            try:
                await asyncio.wait_for(drive_rate(times, send, clock=REAL_CLOCK, start_s=start), limit_s)
            except TimeoutError:
                raise waits.WaitExceeded("every request of the schedule to be answered", limit_s) from None
            cpu = CpuUse.between(cpu0, CpuMark.now())
    return results, start, cpu


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rate", type=float, default=50.0)
    p.add_argument("--requests", type=int, default=500)
    p.add_argument("--arrival", default="poisson", choices=("poisson", "constant"))
    p.add_argument("--tokens", type=int, default=16, help="events per request")
    p.add_argument("--gap-ms", type=float, default=20.0, help="time between a request's events")
    p.add_argument("--instant-rate", type=float, default=200.0, help="the second figure's rate, requests/s, "
                                                                     "against an engine that answers instantly")
    p.add_argument("--instant-requests", type=int, help="its requests (default: 4 x --requests, the first "
                                                        "figure's duration at 4x its rate)")
    p.add_argument("--instant-tokens", type=int, default=16, help="events per request of the instant engine, sent "
                                                                  "at once")
    waits.add_limits(p, limit_s=3600, wait_s=WAIT_S)
    a = p.parse_args()
    return waits.main(lambda: measure(a), a.limit_s)


def run_delay_s() -> float | None:
    """Seconds this process's main thread has waited for a CPU while runnable (Linux schedstat), or None."""
    try:
        return int(Path(f"/proc/self/task/{os.getpid()}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


def phase(rate: float, requests: int, arrival: str, tokens: int, gap_ms: float, wait_s: float, what: str
          ) -> tuple[bool, bool]:
    """One schedule against its own server, its figures printed; (p99 within the target, no request failed)."""
    port, server = start_server(tokens, gap_ms / 1000, wait_s)
    waited0, cpu0, t0 = run_delay_s(), time.process_time(), time.perf_counter()
    try:
        results, start, loop = asyncio.run(drive(f"http://127.0.0.1:{port}/v1/completions", rate, requests, arrival,
                                                 tokens, wait_s))
    finally:
        waits.stop(server)  # by its PID
    waited1, cpu_s, wall_s = run_delay_s(), time.process_time() - cpu0, time.perf_counter() - t0
    failed = [r for r in results if not r.ok]
    lag = ClientLag(tuple(send_lags_ms(results, start, set())), loop)
    stats = Percentiles.of(lag.lags_ms)
    assert stats is not None and lag.p99_ms is not None
    print(f"{requests} requests at {rate:g}/s ({arrival}), {what}; {len(failed)} failed")
    print(f"send time - planned: mean {stats.avg:.3f} ms, p50 {stats.p50:.3f} ms, p99 {stats.p99:.3f} ms, "
          f"max {lag.max_ms:.3f} ms")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    waited = f"{waited1 - waited0:.2f} s" if waited0 is not None and waited1 is not None else "not readable"
    print(f"client: {cpu_s:.2f} s CPU over {wall_s:.1f} s; waited for a CPU while runnable: {waited} (load average "
          f"{load} on {os.cpu_count()} cores: a lag the client cannot help where that wait is large)")
    print(f"event loop over the schedule (as serve-bench stores it): busy {_pct(loop.busy_pct)} of one core, "
          f"waiting for a CPU {_pct(loop.wait_pct)}")
    meets = stats.p99 <= TARGET_P99_MS
    print(f"p99 {stats.p99:.3f} ms vs target <= {TARGET_P99_MS:g} ms: {'meets' if meets else 'MISSES'}")
    return meets, not failed


def _pct(value: float | None) -> str:
    return f"{value:.3g} %" if value is not None else "not readable"


def measure(a: argparse.Namespace) -> int:
    first = phase(a.rate, a.requests, a.arrival, a.tokens, a.gap_ms, a.wait_limit_s,
                  f"{a.tokens} events each {a.gap_ms:g} ms apart")
    instant_requests = a.instant_requests or 4 * a.requests
    second = phase(a.instant_rate, instant_requests, a.arrival, a.instant_tokens, 0.0, a.wait_limit_s,
                   f"an engine that answers instantly ({a.instant_tokens} events at once)")
    return 0 if all(first) and all(second) else 1


if __name__ == "__main__":
    raise SystemExit(main())
