"""From timed requests to a point's figures: the steady state, overload, latency, goodput, energy.

Steady state (as ML.ENERGY takes it): the interval in which the target load is in flight, warm-up and
drain left out. At a rate it opens when the first request completes (the ramp from an empty server is
over) and closes at the last send (after it only the drain is left); at a concurrency N it opens when
the N-th request is sent and closes at the last send. Every figure of a point is over one interval and one
population of requests:
- a point that kept up: the requests sent inside the interval. Output tokens/s and requests/s are their
  tokens and number over the interval's length, J/token and J/request the interval's energy (cut from the
  power trace) over them, and TTFT, ITL, TPOT and end-to-end percentiles theirs. In a steady state the work
  of the requests the interval cuts at its start balances that of those it cuts at its end; the notes
  give the tokens that arrived inside the interval as a check.
- an overloaded point (below): what was served inside the interval, never what was offered. Output tokens
  are the tokens that arrived inside it (each request's count spread over its text events), requests those
  whose last token arrived inside it (failed: those that failed inside it); tokens/s, requests/s, goodput,
  J/token and J/request are those over the interval's length and energy. (Its requests' tokens over the
  interval would report the offered load as throughput: a queue's requests finish after the interval.)
Token counts are the ones runner.serve_bench.counts decided (the client's, where the server's usage is missing
or disagrees with the stream). Requests completed and failed, the mean token counts and the latency percentiles
are joulebench.requests.aggregate's over the point's counted requests (`population`), the one aggregation the
store recomputes them with from the requests the run keeps (runner.serve_bench.records).

Definitions (vLLM `bench serve`): TTFT = sent to first token; ITL = every gap between consecutive
tokens, pooled over requests; TPOT per request = (e2e - TTFT) / (output tokens - 1); e2e = sent to
last token. Percentiles interpolate linearly between ranks (NumPy's default).

Overloaded: at a rate, arrivals outpacing completions show as the queue (requests in flight when one
is sent) or TTFT growing from the first third of the steady requests to the last, or completions
falling behind sends inside the interval. Such a point's throughput and energy are what was served (above); it offers no
latency percentiles (they would describe a queue growing without end, not a steady state); nor does a
point with fewer than MIN_LATENCY_REQUESTS completed steady requests. Either way `latency_missing_reason`
says why, where the percentiles would be.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import joulebench.requests as jr
from energy import EnergyReading
from energy.trace import window_j
from joulebench.metrics import E2E, ITL, TPOT, TTFT, Percentiles, metric
from joulebench.slo import Limit
from runner.serve_bench import records
from runner.serve_bench.result import RequestResult

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


def meets(r: RequestResult, slo: list[Limit]) -> bool:
    for term in slo:
        gaps = r.gaps_ms()
        value = {"ttft": r.ttft_ms, "tpot": r.tpot_ms, "e2e": r.e2e_ms,
                 "itl": max(gaps) if gaps else None}[term.metric]
        if value is None and term.metric == "itl" and r.ok:
            continue  # one token, no gap: nothing to hold to an ITL limit (as TPOT)
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


def served(results: list[RequestResult], steady: Steady) -> tuple[list[RequestResult], list[RequestResult], float]:
    """What an overloaded point served inside its steady state: the requests whose last token arrived inside it,
    the requests that failed inside it, and the output tokens that arrived inside it."""
    inside = [r for r in results if r.ok and steady.start_s <= r.token_s[-1] <= steady.end_s]
    failed = [r for r in results if not r.ok and r.end_s is not None and steady.start_s <= r.end_s <= steady.end_s]
    return inside, failed, tokens_inside(results, steady.start_s, steady.end_s)


def population(results: list[RequestResult], steady: Steady, load: Overload) -> list[RequestResult]:
    """The requests a point's figures cover (the module's rule): the steady state's, or, overloaded, those that
    completed or failed inside it. runner.serve_bench.records marks these counted in the stored requests."""
    if load.overloaded:
        ok, failed, _ = served(results, steady)
        return ok + failed
    return list(steady.requests)


def figures(results: list[RequestResult], steady: Steady, load_kind: str, slo: list[Limit]
            ) -> tuple[dict[str, Any], Overload, list[str]]:
    """The point's serving figures over one population and interval (the module's definitions; energy added by
    the caller over the same interval). Requests completed and failed, the mean token counts and the latency
    percentiles are joulebench.requests.aggregate's over the point's counted requests (`population`): the one
    aggregation, which recomputes them from the stored requests."""
    reqs = steady.requests
    load = overload(steady, results, load_kind)
    inside = tokens_inside(results, steady.start_s, steady.end_s)
    counted = population(results, steady, load)
    agg = jr.aggregate(jr.frame(records.point_requests(counted, None, 0.0))).metrics
    ok = [r for r in counted if r.ok]
    if load.overloaded:
        out_tokens: int = round(inside)
        basis = (f"what was served inside it: {len(ok)} requests completed and {out_tokens} output tokens arrived "
                 f"(its {len(reqs)} requests' own {sum(r.output_tokens or 0 for r in reqs if r.ok)} tokens are "
                 "the offered load, not the throughput)")
    else:
        out_tokens = sum(r.output_tokens or 0 for r in ok)
        basis = f"tokens arriving inside it: {inside:.0f}, tokens of its requests: {out_tokens}"
    span = steady.duration_s
    notes: list[str] = []
    done = int(agg["requests_completed"])
    out: dict[str, Any] = {
        "requests_completed": done, "requests_failed": int(agg["requests_failed"]),
        "output_tokens": out_tokens, "tokens_per_s": out_tokens / span, "requests_per_s": done / span,
        "duration_s": span, "examples": done, "throughput_sps": done / span, "sample_unit": "request",
        **{k: agg[k] for k in ("prompt_tokens_mean", "output_tokens_mean") if k in agg},
    }
    if load.overloaded:
        out["latency_missing_reason"] = ("overloaded: arrivals outpaced completions; the percentiles would describe "
                                         "a queue growing without end, not a steady state")
        notes.append("overloaded: arrivals outpaced completions (" + "; ".join(load.evidence) + "); latency "
                     "percentiles are not given: they would describe a queue growing without end, not a steady state")
    elif done < MIN_LATENCY_REQUESTS:
        out["latency_missing_reason"] = (f"too few requests in the steady state: {done} completed, percentiles "
                                         f"need at least {MIN_LATENCY_REQUESTS}; send more (--requests or --duration)")
    else:
        out.update({m.name: agg[m.name] for d in (TTFT, ITL, TPOT, E2E) for m in d.metrics() if m.name in agg})
    if slo:
        good = [r for r in ok if meets(r, slo)]
        out["goodput_requests_per_s"] = len(good) / span
        notes.append(f"goodput: {len(good)} of {len(ok)} completed steady requests met every SLO term")
    events = sum(len(r.token_s) for r in ok)
    tokens = sum(r.output_tokens or 0 for r in ok)
    if events < tokens:
        notes.append(f"the server sent {events} text events for {tokens} output tokens (several tokens in one "
                     "event): ITL is the gap between events, as vLLM bench serve measures it")
    notes.append(f"steady state {span:.3g} s, {steady.why}: {len(reqs)} requests sent in it; figures over {basis}")
    return out, load, notes
