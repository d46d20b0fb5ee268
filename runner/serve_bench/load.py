"""Load: open-loop arrivals at a rate (Poisson, gamma with a burstiness factor, constant), or a fixed
concurrency (closed loop), each with an optional concurrency cap.

Arrivals are vLLM `bench serve`'s: gaps drawn from a gamma distribution of shape `burstiness` and
mean 1/rate (shape 1 is Poisson; under 1 burstier, above 1 more even), or exactly 1/rate apart
(constant). Seeded: the same seed replays the same arrivals; each repeat gets its own seed.

`drive` sends on the schedule from one asyncio task, never waiting for replies: a request is sent at
its planned time whatever the server does (open loop), unless `max_concurrency` requests are already
in flight, when it waits for one to end (its planned and actual send times are both kept).

`frozen_heap` keeps the garbage collector off the schedule: a full collection walks every object the
process holds (serve-bench imports torch: hundreds of thousands), and one that starts mid-load stops the
sender for tens to hundreds of milliseconds on a busy machine. Everything alive before the load is moved
out of the collector's reach (`gc.freeze`) for the load's length; the requests' own objects are still
collected.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import random
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass

from runner.clock import Clock


def gaps_s(rate_per_s: float, count: int, *, arrival: str = "poisson", burstiness: float = 1.0,
           rng: random.Random | None = None) -> list[float]:
    """`count` gaps between arrivals (s) at mean rate `rate_per_s`."""
    if not rate_per_s > 0:
        raise ValueError("rate_per_s must be positive")
    rng = rng or random.Random(0)
    if arrival == "constant":
        return [1.0 / rate_per_s] * count
    shape = 1.0 if arrival == "poisson" else burstiness
    if not shape > 0:
        raise ValueError("burstiness must be positive")
    scale = 1.0 / (rate_per_s * shape)
    return [rng.gammavariate(shape, scale) for _ in range(count)]


def schedule_s(rate_per_s: float, count: int, *, arrival: str = "poisson", burstiness: float = 1.0,
               seed: int = 0) -> list[float]:
    """Planned send times (s from the start); the first request goes at 0."""
    gaps = gaps_s(rate_per_s, max(0, count - 1), arrival=arrival, burstiness=burstiness, rng=random.Random(seed))
    out, t = [0.0], 0.0
    for g in gaps:
        t += g
        out.append(t)
    return out[:count]


SPIN_S = 0.001  # the last stretch before a send, yielded rather than slept


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """The objects alive now out of the collector's reach until the block ends (call it before the schedule's
    start is taken: the collection here takes time)."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@dataclass
class Sent:
    index: int
    planned_s: float | None  # None in closed loop (concurrency): sent when a stream is free
    sent_s: float  # on the shared clock


async def drive_rate(planned_s: list[float], send: Callable[[int, float | None], Awaitable[None]], *, clock: Clock,
                     start_s: float, max_concurrency: int | None = None,
                     stop: Callable[[], bool] = lambda: False, held: set[int] | None = None) -> None:
    """Start `send(i, planned)` at each planned time (s after `start_s` on `clock`); wait for them all. `held`
    collects the requests that waited for a `max_concurrency` slot (sent late on purpose, not by the client's lag)."""
    slots = asyncio.Semaphore(max_concurrency) if max_concurrency else None
    tasks: set[asyncio.Task[None]] = set()

    async def one(i: int, planned: float) -> None:
        try:
            await send(i, planned)
        finally:
            if slots is not None:
                slots.release()

    for i, planned in enumerate(planned_s):
        while True:  # sleep in short slices so a stop (a signal, a dead server) is seen within 0.1 s
            if stop():
                break
            wait = start_s + planned - clock.now()
            if wait <= 0:
                break
            # asyncio's sleep wakes up to 1 ms late (epoll's whole milliseconds): sleep to 1 ms before, then yield
            # until due; a longer spin costs CPU (2 ms at 50/s: a tenth of a core) that a busy machine makes late
            await asyncio.sleep(min(wait - SPIN_S, 0.1) if wait > SPIN_S else 0)
        if stop():
            break
        if slots is not None:
            if slots.locked() and held is not None:
                held.add(i)
            await slots.acquire()
        tasks.add(asyncio.ensure_future(one(i, planned)))
        tasks = {t for t in tasks if not t.done()}
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)


async def drive_concurrency(count: int, streams: int, send: Callable[[int, float | None], Awaitable[None]], *,
                            stop: Callable[[], bool] = lambda: False) -> None:
    """`streams` requests in flight at once (closed loop): each stream sends its next as its last ends."""
    counter = iter(range(count))

    async def stream() -> None:
        for i in counter:
            if stop():
                return
            await send(i, None)

    await asyncio.gather(*(stream() for _ in range(min(streams, count))))
