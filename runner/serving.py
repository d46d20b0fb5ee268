"""Serving: requests arriving at a given rate against one model, generated in batches of up to `batch_size`.

Arrivals are a Poisson process (exponential gaps at `request_rate_per_s`, seeded, so a repeat replays
the same arrivals). The server is transformers' own generation loop behind a queue, the baseline the
issue allows: when it is free it takes up to `batch_size` waiting requests (or waits for the next
arrival), prefills them together and decodes them to exactly `max_new_tokens` tokens (request-level
batching: a request arriving meanwhile waits for the batch to finish). A request's TTFT and end-to-end
latency count its time in the queue; its TPOT is (end-to-end - TTFT) / (output tokens - 1); the ITL is
every gap between consecutive tokens, pooled over the requests (joulebench.metrics).

The steady state, as ML.ENERGY reports it, is the time while the target concurrency is in flight:
the batches that hold `batch_size` requests. The token figures (tokens/s, J/token, decode J/token) are
taken over those batches only, as are requests/s and J/request; energy is cut from the window's power
trace over their intervals. The window's own figures (energy, examples/s, J/example) and the latencies
cover every request.
"""

from __future__ import annotations

import bisect
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from energy.trace import window_j
from joulebench.metrics import Percentiles
from runner.clock import REAL_CLOCK, Clock
from runner.devices import synchronize
from runner.generation import TokenFigures, TokenMarks, generate_step
from runner.measure import Warmup, Window
from runner.power import PowerMeter

SERVING_SEED = 0


def arrivals(rate_per_s: float, count: int, seed: int = SERVING_SEED) -> list[float]:
    """`count` Poisson arrival times (s from the start) at `rate_per_s`, the same for the same seed."""
    rng = random.Random(seed)
    t, out = 0.0, []
    for _ in range(count):
        t += rng.expovariate(rate_per_s)
        out.append(t)
    return out


@dataclass
class Served:
    """The serving window: every batch's start, end and size, and every request's timing."""

    window: Window
    batches: list[tuple[float, float, int]] = field(default_factory=list)  # (start s, end s, requests)
    ttft_ms: list[float] = field(default_factory=list)  # per request, queueing included
    gaps_ms: list[float] = field(default_factory=list)  # inter-token times of each batch, one per gap
    gap_weights: list[int] = field(default_factory=list)  # requests sharing each gap (its batch's size)
    tpot_ms: list[float] = field(default_factory=list)  # (last token - first token) / (tokens - 1), per request
    latency_ms: list[float] = field(default_factory=list)  # arrival to last token, per request
    requests: int = 0
    rate_per_s: float = 0.0


def serve(model: torch.nn.Module, inputs: dict[str, torch.Tensor], max_new_tokens: int, batch_size: int,
          rate_per_s: float, requests: int, device: torch.device, *, meter: PowerMeter, warmup_batches: int,
          on_step: Callable[[int], None] | None = None, clock: Clock = REAL_CLOCK,
          sleep: Callable[[float], None] = time.sleep) -> Served:
    """Warm up with full batches, then serve `requests` Poisson arrivals inside one meter window."""
    prompts = inputs["input_ids"]
    marks = TokenMarks(device, clock)
    made: dict[int, Callable[[], None]] = {}  # a step per batch size met, made when first met (not all of them)

    def step(n: int) -> Callable[[], None]:
        if n not in made:
            made[n] = generate_step(model, prompts[:n], max_new_tokens, marks)
        return made[n]

    step(batch_size)  # the one used most, made before the window
    t0 = clock.now()
    for _ in range(warmup_batches):
        step(batch_size)()
    synchronize(device)
    warm = Warmup(steps=warmup_batches, duration_s=clock.now() - t0)
    due = arrivals(rate_per_s, requests)
    out = Served(Window(0, 0.0, [], warmup=warm), requests=requests, rate_per_s=rate_per_s)
    with meter.window() as energy:
        start = clock.now()
        done = 0
        while done < requests:
            now = clock.now() - start
            if due[done] > now:  # nothing waiting: idle until the next arrival
                sleep(min(due[done] - now, 0.05))
                continue
            waiting = bisect.bisect_right(due, now, lo=done) - done  # arrivals are in time order
            n = min(waiting, batch_size)
            run = step(n)
            marks.reset()
            begin = clock.now() - start
            run()
            synchronize(device)
            end = clock.now() - start
            times = marks.times_ms()[0]  # each token's time since the batch began
            for arrived in due[done:done + n]:
                wait_ms = (begin - arrived) * 1000.0
                out.ttft_ms.append(wait_ms + times[0])
                out.latency_ms.append(wait_ms + times[-1])
                if len(times) > 1:
                    out.tpot_ms.append((times[-1] - times[0]) / (len(times) - 1))
            gaps = [b - a for a, b in zip(times, times[1:])]
            out.gaps_ms += gaps
            out.gap_weights += [n] * len(gaps)
            out.batches.append((begin, end, n))
            done += n
            if on_step is not None:
                on_step(len(out.batches))
        elapsed = clock.now() - start
    out.window = Window(steps=len(out.batches), duration_s=elapsed,
                        step_times_ms=[(b - a) * 1000.0 for a, b, _ in out.batches], energy=energy, warmup=warm)
    return out


def served_figures(served: Served, *, batch_size: int, max_new_tokens: int) -> tuple[TokenFigures, str]:
    """The serving run's token figures: latencies over every request, tokens/s, requests/s, J/token and
    J/request over the steady state (full batches); and a note saying what they cover."""
    out = TokenFigures(output_tokens=served.requests * max_new_tokens, requests_completed=served.requests,
                       output_tokens_mean=float(max_new_tokens), ttft=Percentiles.of(served.ttft_ms),
                       itl=Percentiles.of(served.gaps_ms, served.gap_weights), tpot=Percentiles.of(served.tpot_ms),
                       e2e=Percentiles.of(served.latency_ms))
    full = [(a, b) for a, b, n in served.batches if n == batch_size]
    partial = len(served.batches) - len(full)
    steady_s = sum(b - a for a, b in full)
    note = (f"serving: {served.requests} requests arriving at {served.rate_per_s:g}/s (Poisson, seed "
            f"{SERVING_SEED}) in {len(served.batches)} batches, {len(full)} of them full ({batch_size} requests) "
            f"over {steady_s:.3g} s of the {served.window.duration_s:.3g} s window; token figures over the full "
            f"batches only (the steady state)")
    if not full:
        out.energy_split_missing_reason = (f"no batch held {batch_size} requests: the target concurrency was never "
                                           "in flight (raise --request-rate or lower --batch-size)")
        return out, note
    requests = len(full) * batch_size
    tokens = requests * max_new_tokens
    out.tokens_per_s, out.requests_per_s = tokens / steady_s, requests / steady_s
    traces = [t for t in served.window.energy.traces if t.boundary is not None]
    if traces and served.window.energy.energy_j is not None:
        steady_j = sum(window_j(t.t_s, t.power_w, a, b) for t in traces for a, b in full)
        if math.isfinite(steady_j) and steady_j > 0:
            out.j_per_token, out.j_per_request = steady_j / tokens, steady_j / requests
            note += f"; {steady_j:.4g} J in the steady state, cut from the power trace"
        else:  # e.g. a CPU-utilisation estimate whose samples around a short steady state read 0 W
            out.energy_split_missing_reason = (
                f"the power trace gives {steady_j:.4g} J over the steady state's {steady_s:.3g} s (zero, negative or "
                "not finite): not a usable measurement; send more requests (--requests) for a longer steady state")
    elif served.window.energy.energy_j is not None:
        out.energy_split_missing_reason = "the meter gave no power trace to cut the steady state's energy from"
    if partial:
        note += f"; {partial} partial batch(es) left out of the token figures"
    return out, note
