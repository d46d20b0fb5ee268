"""Time for the measurement loop and the power sampler: the real clock, and a manual one.

Everything that times a run asks a `Clock`: `now()` (monotonic seconds), `wall()` (Unix time)
and `every(period_s, fn)`, which calls `fn` every `period_s` until it returns False or the
ticker is stopped. `REAL_CLOCK` does this with `time.perf_counter` and a daemon thread (with a
readiness handshake, stopped in `try/finally` by its users and by `weakref.finalize`).

`ManualClock` is the built-in test double (like httpx's MockTransport): time moves only when
`advance(dt)` is called, and the tickers due on the way fire at their exact times, in order, on
the caller's thread. With a simulated sensor driven by the same clock, minutes of measurement
replay in well under a second, deterministically.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
import weakref
from collections.abc import Callable
from typing import Protocol


class Ticker(Protocol):
    def stop(self) -> None: ...


class Clock(Protocol):
    def now(self) -> float: ...

    def wall(self) -> float: ...

    def every(self, period_s: float, fn: Callable[[], bool]) -> Ticker: ...


class _ThreadTicker:
    """Calls `fn` every `period_s` on a daemon thread; falls behind gracefully (skips, no burst)."""

    def __init__(self, period_s: float, fn: Callable[[], bool], now: Callable[[], float]) -> None:
        self._stop = threading.Event()
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(period_s, fn, now, ready),
                                        name="joulebench-power-sampler", daemon=True)
        self._finalizer = weakref.finalize(self, self._stop.set)
        self._thread.start()
        if not ready.wait(5.0):
            self._stop.set()
            raise RuntimeError("the power sampler thread did not start")

    def _run(self, period_s: float, fn: Callable[[], bool], now: Callable[[], float],
             ready: threading.Event) -> None:
        ready.set()
        due = now() + period_s
        while not self._stop.wait(max(0.0, due - now())):
            if not fn():
                return
            due += period_s
            current = now()
            if due < current:  # fell behind (a slow read): skip ahead rather than burst
                due = current + period_s

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join()


class RealClock:
    def now(self) -> float:
        return time.perf_counter()

    def wall(self) -> float:
        return time.time()

    def every(self, period_s: float, fn: Callable[[], bool]) -> Ticker:
        return _ThreadTicker(period_s, fn, self.now)


REAL_CLOCK = RealClock()


class _ManualTicker:
    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True


class ManualClock:
    """Time that moves only on `advance()`; tickers fire at their due times on the way."""

    def __init__(self, start_wall_s: float = 1_700_000_000.0) -> None:
        self._now = 0.0
        self._wall0 = start_wall_s
        self._due: list[tuple[float, int, float, Callable[[], bool], _ManualTicker]] = []
        self._ids = itertools.count()
        self.listeners: list[Callable[[float], None]] = []  # called with the new time before tickers fire

    def now(self) -> float:
        return self._now

    def wall(self) -> float:
        return self._wall0 + self._now

    def every(self, period_s: float, fn: Callable[[], bool]) -> Ticker:
        if not period_s > 0:
            raise ValueError("period_s must be positive")
        ticker = _ManualTicker(self)
        heapq.heappush(self._due, (self._now + period_s, next(self._ids), period_s, fn, ticker))
        return ticker

    def _move_to(self, t: float) -> None:
        self._now = t
        for listener in self.listeners:
            listener(t)

    def advance(self, dt_s: float) -> None:
        if dt_s < 0:
            raise ValueError("time does not go backwards")
        target = self._now + dt_s
        while self._due and self._due[0][0] <= target:
            due, _, period, fn, ticker = heapq.heappop(self._due)
            if ticker.stopped:
                continue
            self._move_to(due)
            if fn() and not ticker.stopped:
                heapq.heappush(self._due, (due + period, next(self._ids), period, fn, ticker))
        self._move_to(target)

    def sleep(self, seconds: float) -> None:
        self.advance(seconds)
