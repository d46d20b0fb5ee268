"""wrk's report of an HTTP load test (`wrk -t T -c C -d D URL`), as its writer prints it (wg/wrk src/wrk.c, `main`
and `print_stats`): a block per test, from its `Running 30s test @ URL` line.

    Running 30s test @ http://127.0.0.1:8000/generate
      10 threads and 100 connections
      Thread Stats   Avg      Stdev     Max   +/- Stdev
        Latency     2.43s   851.53ms   4.75s    67.60%
        Req/Sec     7.29      9.51    90.00     88.54%
      Latency Distribution            (with --latency)
         50%    2.31s
         99%    4.50s
      1111 requests in 27.74s, 839.55KB read
      Socket errors: connect 0, read 0, write 0, timeout 71
      Non-2xx or 3xx responses: 5
    Requests/sec:     40.05

Latencies carry their unit (us, ms, s, m, h); `Req/Sec` is each thread's and `Requests/sec` the test's: the requests
over the time (the requests counted are the answers; a request that timed out or met a socket error is not among
them). Each connection waits for its answer before it sends again, so the connections are the concurrency offered.
The answers that were no success and the socket errors are the failed requests. wrk names
neither the model nor the device.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count, num
from joulebench.metrics import E2E

_RUNNING = re.compile(r"^Running (?P<d>\S{1,20}) test @ (?P<url>\S{1,500})")
_THREADS = re.compile(r"^\s*(?P<t>\d{1,6}) threads? and (?P<c>\d{1,9}) connections?")
_LATENCY = re.compile(r"^\s*Latency\s+(?P<avg>[\d.]+\s?[a-zµ]{1,2})\s+(?P<sd>[\d.]+\s?[a-zµ]{1,2})\s+"
                      r"(?P<max>[\d.]+\s?[a-zµ]{1,2})")
_PERCENTILE = re.compile(r"^\s*(?P<p>50|90|99)(?:\.0+)?%\s+(?P<v>[\d.]+\s?[a-zµ]{1,2})\s*$")
_REQUESTS = re.compile(r"^\s*(?P<n>\d{1,15}) requests in (?P<t>[\d.]+\s?[a-z]{1,2}),")
_SOCKET = re.compile(r"^\s*Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)")
_NON_2XX = re.compile(r"^\s*Non-2xx or 3xx responses: (\d+)")
_RATE = re.compile(r"^Requests/sec:\s+(?P<r>[\d.]+)")
_TIME_UNITS = {"us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "h": 3600e3}  # to ms


def _ms(conv: Conversion, where: str, text: str) -> float:
    m = re.fullmatch(r"([\d.]+)\s?([a-zµ]{1,2})", text.strip())
    if m is None or m.group(2) not in _TIME_UNITS:
        raise conv.fail(where, f"{text[:30]!r} is not a time as wrk prints one (us, ms, s, m, h)")
    return float(m.group(1)) * _TIME_UNITS[m.group(2)]


class WrkImporter(Importer):
    NAME = "wrk"
    TOOL = "wrk"
    DESCRIPTION = "wrk's report of an HTTP load test ('Running 30s test @ URL' ... 'Requests/sec:')"

    def sniff(self, source: Source) -> bool:
        head = source.head
        return "Requests/sec:" in head and any(_RUNNING.match(line) for line in head.splitlines())

    def convert(self, conv: Conversion) -> dict[str, Any]:
        blocks: list[tuple[int, list[tuple[int, str]]]] = []
        for n, line in enumerate((conv.source.text or "").splitlines(), 1):
            if _RUNNING.match(line):
                check_run_count(conv, len(blocks) + 1, "its tests")
                blocks.append((n, []))
            elif blocks:
                blocks[-1][1].append((n, line))
        runs = [run for i, (n, lines) in enumerate(blocks) if (run := self._run(conv, i, n, lines)) is not None]
        if not runs:
            raise conv.fail("(whole file)", "no wrk test with its 'Requests/sec:' line")
        conv.warn("wrk names neither the model nor the device (it measures an endpoint): give them with --workload "
                  "and --device, or label the run")
        return conv.document(runs)

    @staticmethod
    def _run(conv: Conversion, index: int, start: int, lines: list[tuple[int, str]]) -> dict[str, Any] | None:
        metrics: dict[str, Any] = {"energy_missing_reason": "wrk measures no power"}
        config = conv.endpoint_config()
        notes = [f"wrk test from line {start}"]
        non_2xx = socket = 0
        count = seconds = rate = None
        for n, line in lines:
            where = f"line {n}"
            if (m := _THREADS.match(line)) is not None:
                config.update(load_kind="concurrency", max_concurrency=int(m.group("c")))
                notes.append(f"{m.group('t')} threads")
            elif (m := _LATENCY.match(line)) is not None:
                metrics[E2E.avg.name] = _ms(conv, where, m.group("avg"))
                notes.append(f"latency stdev {m.group('sd')}, max {m.group('max')}")
            elif (m := _PERCENTILE.match(line)) is not None:
                metrics[E2E.stat(f"p{m.group('p')}").name] = _ms(conv, where, m.group("v"))
            elif (m := _REQUESTS.match(line)) is not None:
                count, seconds = int(m.group("n")), _ms(conv, where, m.group("t")) / 1e3
            elif (m := _SOCKET.match(line)) is not None:
                socket = sum(int(g) for g in m.groups())  # never answered: not among the requests counted
            elif (m := _NON_2XX.match(line)) is not None:
                non_2xx = int(m.group(1))  # answered, but no success: among them
            elif (m := _RATE.match(line)) is not None:
                rate = num(m.group("r"), where, conv)
                break
        if rate is None:
            conv.warn(f"line {start}: a test with no 'Requests/sec:' line (cut short): no run")
            return None
        if count is not None and seconds:
            ok = max(count - non_2xx, 0)
            metrics.update(requests_completed=ok, requests_failed=non_2xx + socket, duration_s=seconds,
                           requests_per_s=ok / seconds)
            notes.append(f"requests/s = the {ok} answered without error over {seconds:g} s (wrk printed {rate:g} "
                         f"for all {count} requests)")
        elif rate > 0:
            metrics["requests_per_s"] = rate
        return {"run_id": conv.run_id(index), "status": "ok",
                "device": conv.device(None, "gpu", where="(whole file; wrk measures an endpoint and names no GPU)"),
                "config": config, "metrics": metrics, "notes": "; ".join(notes)}
