"""From timed requests to a point's figures: the steady state, overload, latency, goodput, energy.

Steady state (as ML.ENERGY takes it): the interval in which the target load is in flight, warm-up and
drain left out. At a rate it opens when the first request completes (the ramp from an empty server is
over) and closes at the last send (after it only the drain is left); at a concurrency N it opens when
the N-th request is sent and closes at the last send. The steady requests are those sent inside it,
and every figure is over them: output tokens/s and requests/s (their tokens and number over the
interval's length), J/token and J/request (the interval's energy, cut from the power trace, over their
tokens and number), and the TTFT, ITL, TPOT and end-to-end percentiles. In a steady state the work
of the requests the interval cuts at its start balances that of those it cuts at its end; the notes
give the tokens that arrived inside the interval as a check.

Definitions (vLLM `bench serve`): TTFT = sent to first token; ITL = every gap between consecutive
tokens, pooled over requests; TPOT per request = (e2e - TTFT) / (output tokens - 1); e2e = sent to
last token. Percentiles interpolate linearly between ranks (NumPy's default).

Overloaded: at a rate, arrivals outpacing completions show as the queue (requests in flight when one
is sent) or TTFT growing from the first third of the steady requests to the last, or completions
falling behind sends inside the interval. Such a point keeps its throughput and energy but offers no
latency percentiles (they would describe a queue growing without end, not a steady state); nor does a
point with fewer than MIN_LATENCY_REQUESTS completed steady requests. Either way `latency_missing_reason`
says why, where the percentiles would be.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from energy import EnergyReading
from energy.trace import window_j
from joulebench.metrics import E2E, ITL, TPOT, TTFT, Distribution, Percentiles, metric
from runner.serve_bench.client import RequestResult
from runner.serve_bench.options import SloTerm

FLAG_OVERLOADED = "overloaded"
FILLED = ("requests_completed", "requests_failed", "output_tokens", "tokens_per_s", "requests_per_s", "duration_s",
          "examples", "throughput_sps", "sample_unit", "prompt_tokens_mean", "output_tokens_mean",
          "goodput_requests_per_s", "goodput_slo", "goodput_requests_per_j", "latency_missing_reason", "j_per_token",
          "j_per_request")
for _name in FILLED:  # each column this package fills is one joulebench.metrics defines (KeyError otherwise)
    metric(_name)
QUEUE_GROWTH = 2.0  # the last third's mean in-flight count at least twice the first third's ...
QUEUE_GROWTH_MIN = 2.0  # ... and at least 2 requests more
TTFT_GROWTH = 2.0  # the last third's median TTFT at least twice the first third's ...
TTFT_GROWTH_MIN_MS = 50.0  # ... and at least 50 ms more
TTFT_MIN_REQUESTS = 30  # TTFT's trend is judged over at least 30 steady requests (thirds of 10)
MIN_LATENCY_REQUESTS = 5  # fewer completed steady requests give no percentiles (a p90 of 4 values is one value)


def stats(distribution: Distribution, values: Sequence[float | None]) -> dict[str, float | None]:
    """A distribution's columns (mean, p50/p90/p95/p99) over the values given (None left out)."""
    return distribution.columns(Percentiles.of([v for v in values if v is not None]))


@dataclass
class Steady:
    start_s: float
    end_s: float
    requests: list[RequestResult]
    why: str  # how the interval was found
    saturated: bool = False  # no request completed before the last was sent: the whole load is the interval

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


def steady_interval(results: list[RequestResult], load_kind: str, streams: int | None) -> Steady | None:
    """The steady state's interval and the requests sent in it; None when the load never got there."""
    sent = sorted(results, key=lambda r: r.sent_s)
    if len(sent) < 2:
        return None
    end = sent[-1].sent_s
    if load_kind == "concurrency" and streams:
        if len(sent) <= streams:
            return None
        start, why = sent[streams - 1].sent_s, f"from the {streams}th send (all {streams} streams busy) to the last"
    else:
        done = [r.end_s for r in results if r.ok and r.end_s is not None]
        if not done:
            return None
        start, why = min(done), "from the first completion (the ramp over) to the last send (the drain left out)"
        if sum(1 for r in sent if start <= r.sent_s <= end) < 2:  # the server never caught up: a growing queue
            last = max(r.token_s[-1] for r in results if r.ok)
            return Steady(sent[0].sent_s, last, sent, "fewer than 2 requests were sent after the first completed: "
                          "from the first send to the last token (every request)", saturated=True)
    inside = [r for r in sent if start <= r.sent_s <= end]
    if end <= start or len(inside) < 2:
        return None
    return Steady(start, end, inside, why)


@dataclass
class Overload:
    overloaded: bool
    evidence: list[str] = field(default_factory=list)


def _thirds(values: list[float]) -> tuple[list[float], list[float]]:
    k = max(1, len(values) // 3)
    return values[:k], values[-k:]


def _median(values: list[float]) -> float:
    found = Percentiles.of(values)
    return found.p50 if found is not None else math.nan


def overload(steady: Steady, results: list[RequestResult], load_kind: str) -> Overload:
    """Whether arrivals outpaced completions over the steady state, with the evidence either way."""
    if load_kind != "rate":
        return Overload(False, ["closed loop (fixed concurrency): a request is sent only when one completes"])
    reqs = steady.requests
    if steady.saturated:
        return Overload(True, [f"{len(reqs) - 1} or more of the {len(reqs)} requests were sent before the first "
                               "completed"])
    out = Overload(False)
    if len(reqs) >= 6:
        first, last = _thirds([float(r.in_flight_at_send) for r in reqs])
        a, b = sum(first) / len(first), sum(last) / len(last)
        grew = b >= QUEUE_GROWTH * a and b - a >= QUEUE_GROWTH_MIN
        out.evidence.append(f"requests in flight at send: {a:.3g} in the first third, {b:.3g} in the last"
                            + (" (growing)" if grew else ""))
        out.overloaded |= grew
        ttft = [r.ttft_ms for r in reqs if r.ttft_ms is not None]
        if len(ttft) >= TTFT_MIN_REQUESTS:  # fewer: one slow request (another process's burst) is a trend
            f, last_t = _thirds(ttft)
            a, b = _median(f), _median(last_t)
            grew = b >= TTFT_GROWTH * a and b - a >= TTFT_GROWTH_MIN_MS
            out.evidence.append(f"median TTFT {a:.4g} ms in the first third, {b:.4g} ms in the last"
                                + (" (growing)" if grew else ""))
            out.overloaded |= grew
    sends = len(reqs)
    completions = sum(1 for r in results if r.end_s is not None and steady.start_s <= r.end_s <= steady.end_s)
    behind = sends - completions > max(3, 0.2 * sends)
    out.evidence.append(f"{sends} sent and {completions} completed inside the steady state"
                        + (" (completions behind)" if behind else ""))
    out.overloaded |= behind
    return out


def tokens_inside(results: list[RequestResult], start_s: float, end_s: float) -> float:
    """Output tokens that arrived inside [start_s, end_s]: each request's usage spread over its events."""
    total = 0.0
    for r in results:
        if not r.token_s or not r.output_tokens:
            continue
        per_event = r.output_tokens / len(r.token_s)
        total += per_event * sum(1 for t in r.token_s if start_s <= t <= end_s)
    return total


def meets(r: RequestResult, slo: list[SloTerm]) -> bool:
    for term in slo:
        value = {"ttft": r.ttft_ms, "tpot": r.tpot_ms, "e2e_latency": r.e2e_ms}[term.metric]
        if value is None and term.metric == "tpot" and r.ok:
            continue  # one output token: no time per output token to hold to the target
        if value is None or value > term.limit_ms:
            return False
    return True


def steady_energy_j(reading: EnergyReading, start_s: float, end_s: float) -> tuple[float | None, str | None]:
    """The energy of [start_s, end_s] (sampler time) cut from the reading's boundary traces."""
    if reading.energy_j is None:
        return None, reading.missing_reason or "the meter measured no energy"
    traces = [t for t in reading.traces if t.boundary is not None]
    if not traces:
        return None, "the meter gave no power trace to cut the steady state's energy from"
    if any(len(t.t_s) < 2 for t in traces):
        return None, "fewer than 2 power samples: the steady state is shorter than the sampler resolves"
    return sum(window_j(t.t_s, t.power_w, start_s, end_s) for t in traces), None


def figures(results: list[RequestResult], steady: Steady, load_kind: str, slo: list[SloTerm]
            ) -> tuple[dict[str, Any], Overload, list[str]]:
    """The point's serving figures over the steady requests (energy added by the caller)."""
    reqs = steady.requests
    ok = [r for r in reqs if r.ok]
    out_tokens = sum(r.output_tokens or 0 for r in ok)
    span = steady.duration_s
    notes: list[str] = []
    out: dict[str, Any] = {
        "requests_completed": len(ok), "requests_failed": len(reqs) - len(ok),
        "output_tokens": out_tokens, "tokens_per_s": out_tokens / span, "requests_per_s": len(ok) / span,
        "duration_s": span, "examples": len(ok), "throughput_sps": len(ok) / span, "sample_unit": "request",
        "prompt_tokens_mean": _mean([r.prompt_tokens for r in ok]),
        "output_tokens_mean": _mean([r.output_tokens for r in ok]),
    }
    load = overload(steady, results, load_kind)
    if load.overloaded:
        out["latency_missing_reason"] = ("overloaded: arrivals outpaced completions; the percentiles would describe "
                                         "a queue growing without end, not a steady state")
        notes.append("overloaded: arrivals outpaced completions (" + "; ".join(load.evidence) + "); latency "
                     "percentiles are not given: they would describe a queue growing without end, not a steady state")
    elif len(ok) < MIN_LATENCY_REQUESTS:
        out["latency_missing_reason"] = (f"too few requests in the steady state: {len(ok)} completed, percentiles "
                                         f"need at least {MIN_LATENCY_REQUESTS}; send more (--requests or --duration)")
    else:
        out.update(stats(TTFT, [r.ttft_ms for r in ok]))
        out.update(stats(ITL, [g for r in ok for g in r.gaps_ms()]))
        out.update(stats(TPOT, [r.tpot_ms for r in ok]))
        out.update(stats(E2E, [r.e2e_ms for r in ok]))
    if slo:
        good = [r for r in ok if meets(r, slo)]
        out["goodput_requests_per_s"] = len(good) / span
        notes.append(f"goodput: {len(good)} of {len(ok)} completed steady requests met every SLO term")
    events = sum(len(r.token_s) for r in ok)
    if events < out_tokens:
        notes.append(f"the server sent {events} text events for {out_tokens} output tokens (several tokens in one "
                     "event): ITL is the gap between events, as vLLM bench serve measures it")
    inside = tokens_inside(results, steady.start_s, steady.end_s)
    notes.append(f"steady state {span:.3g} s, {steady.why}: {len(reqs)} requests sent in it; tokens arriving inside "
                 f"it: {inside:.0f}, tokens of its requests: {out_tokens}")
    return out, load, notes


def _mean(values: list[int | None]) -> float | None:
    v = [x for x in values if x is not None]
    return sum(v) / len(v) if v else None
