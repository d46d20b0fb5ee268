"""The client's own lag: how late serve-bench sent each request, and how much of the load it spent waiting for a CPU.

A latency serve-bench measures is the server's only while the client keeps up: a request sent late is a load
other than the one asked for, and an event loop that waits for a CPU stamps tokens late, so TTFT and ITL then
include the client's delay. Each point records two things:

- send lag (rate points): actual minus scheduled send time of each request sent in the steady state (the
  requests the point's other figures cover), its p50, p99 and maximum in ms. A request that waited for a
  `--max-concurrency` slot was held on purpose and is left out (the notes count them). A closed loop
  (`--concurrency`) has no schedule to be late for: its send lag is not recorded.
- CPU wait, chosen as the operating system's own account of the event loop's thread over the load (both kinds of
  point): `client_cpu_wait_pct`, the share of the load's wall time the thread was runnable but waiting for a CPU
  (Linux `/proc/self/task/<tid>/schedstat`, its run-queue delay; null where the kernel does not say), and
  `client_cpu_busy_pct`, the thread's CPU time over the same wall time (`time.thread_time`). A large wait says the
  machine's other processes took the CPU from the client (a load average above its cores); a busy share near
  100 % says the client itself was the bottleneck. The power sampler's thread is not counted in either.

A point whose send lag p99 exceeds CLIENT_BOUND_TTFT_PCT % of its TTFT p50, or CLIENT_BOUND_MS ms (whichever
is smaller; 10 ms alone where TTFT p50 is withheld), is flagged FLAG_CLIENT_BOUND, with the figures in its
notes; energy.grades grades it C.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from joulebench.metrics import Percentiles, metric
from runner.serve_bench.result import RequestResult

FLAG_CLIENT_BOUND = "client_bound"
CLIENT_BOUND_TTFT_PCT = 5.0  # send lag p99 above this share of TTFT p50 ...
CLIENT_BOUND_MS = 10.0  # ... or above this many ms: the point is client-bound
FILLED = ("client_send_lag_p50_ms", "client_send_lag_p99_ms", "client_send_lag_max_ms", "client_cpu_wait_pct",
          "client_cpu_busy_pct")
for _name in FILLED:  # each a metric joulebench.metrics defines (KeyError otherwise)
    metric(_name)


def _load_avg() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def run_delay_s() -> float | None:
    """Seconds the calling thread has waited for a CPU while runnable (Linux schedstat), or None."""
    try:
        text = Path(f"/proc/self/task/{threading.get_native_id()}/schedstat").read_text()
        return int(text.split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


@dataclass(frozen=True)
class CpuMark:
    """The calling thread's clocks at one moment."""

    wall_s: float
    cpu_s: float
    waited_s: float | None
    load_avg: float | None = None  # the machine's 1-minute load average

    @classmethod
    def now(cls) -> CpuMark:
        return cls(time.perf_counter(), time.thread_time(), run_delay_s(), _load_avg())


@dataclass(frozen=True)
class CpuUse:
    """The event loop thread's CPU over an interval: its wall time, CPU time and run-queue wait (None: unknown)."""

    wall_s: float
    cpu_s: float
    waited_s: float | None
    load_avg: float | None = None  # at the interval's end

    @classmethod
    def between(cls, start: CpuMark, end: CpuMark) -> CpuUse:
        waited = end.waited_s - start.waited_s if end.waited_s is not None and start.waited_s is not None else None
        return cls(end.wall_s - start.wall_s, end.cpu_s - start.cpu_s, waited, end.load_avg)

    @property
    def wait_pct(self) -> float | None:
        return 100.0 * self.waited_s / self.wall_s if self.waited_s is not None and self.wall_s > 0 else None

    @property
    def busy_pct(self) -> float | None:
        return 100.0 * self.cpu_s / self.wall_s if self.wall_s > 0 else None


def send_lags_ms(requests: Iterable[RequestResult], start_s: float, held: set[int]) -> list[float]:
    """Actual minus scheduled send time (ms) of the scheduled requests, those held for a concurrency slot left out."""
    return [(r.sent_s - (start_s + r.planned_s)) * 1000.0 for r in requests
            if r.planned_s is not None and r.index not in held]


@dataclass(frozen=True)
class ClientLag:
    """A point's client lag (see the module): its send lag (None for a closed loop) and CPU use."""

    lags_ms: tuple[float, ...]
    cpu: CpuUse | None
    held: int = 0  # requests left out: they waited for a --max-concurrency slot

    @property
    def p50_ms(self) -> float | None:
        found = Percentiles.of(self.lags_ms)
        return found.p50 if found is not None else None

    @property
    def p99_ms(self) -> float | None:
        found = Percentiles.of(self.lags_ms)
        return found.p99 if found is not None else None

    @property
    def max_ms(self) -> float | None:
        return max(self.lags_ms) if self.lags_ms else None

    def metrics(self) -> dict[str, float]:
        out: dict[str, float | None] = {"client_send_lag_p50_ms": self.p50_ms, "client_send_lag_p99_ms": self.p99_ms,
               "client_send_lag_max_ms": self.max_ms,
               "client_cpu_wait_pct": self.cpu.wait_pct if self.cpu is not None else None,
               "client_cpu_busy_pct": self.cpu.busy_pct if self.cpu is not None else None}
        return {k: v for k, v in out.items() if v is not None}

    def threshold_ms(self, ttft_p50_ms: float | None) -> tuple[float, str]:
        """The send lag p99 past which the point is client-bound, and what it is."""
        if ttft_p50_ms is not None and ttft_p50_ms * CLIENT_BOUND_TTFT_PCT / 100.0 < CLIENT_BOUND_MS:
            return ttft_p50_ms * CLIENT_BOUND_TTFT_PCT / 100.0, (f"{CLIENT_BOUND_TTFT_PCT:g} % of its TTFT p50 "
                                                                  f"{ttft_p50_ms:.4g} ms")
        return CLIENT_BOUND_MS, f"{CLIENT_BOUND_MS:g} ms"

    def bound(self, ttft_p50_ms: float | None) -> bool:
        p99 = self.p99_ms
        return p99 is not None and p99 > self.threshold_ms(ttft_p50_ms)[0]

    def note(self, ttft_p50_ms: float | None) -> str:
        """The figures in words, with the verdict."""
        parts = []
        if self.lags_ms:
            limit, what = self.threshold_ms(ttft_p50_ms)
            verdict = (f"client-bound: p99 above {what} ({limit:.3g} ms), so the latencies include the client's own "
                       "delay and the load sent was not the one scheduled" if self.bound(ttft_p50_ms)
                       else f"within {what} ({limit:.3g} ms)")
            parts.append(f"client send lag (actual - scheduled send) over {len(self.lags_ms)} steady requests: p50 "
                         f"{self.p50_ms:.3g} ms, p99 {self.p99_ms:.3g} ms, max {self.max_ms:.3g} ms; {verdict}")
            if self.held:
                parts.append(f"{self.held} requests waited for a --max-concurrency slot, left out of the send lag")
        cpu = self.cpu
        if cpu is not None:
            wait = f"{cpu.wait_pct:.3g} % of it waiting for a CPU" if cpu.wait_pct is not None else (
                "its wait for a CPU not readable here")
            busy = f"{cpu.busy_pct:.3g} %" if cpu.busy_pct is not None else "?"
            load = f"{cpu.load_avg:.2f}" if cpu.load_avg is not None else "not readable"
            parts.append(f"client event loop over the {cpu.wall_s:.3g} s load: busy {busy} of one core, {wait} "
                         f"(load average {load} on {os.cpu_count()} cores at its end)")
        return "; ".join(parts)
