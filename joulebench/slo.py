"""A service-level objective, defined once: latency limits every request is held to (TTFT, ITL, TPOT, end-to-end
latency, as joulebench.metrics defines them), each optionally stated at a percentile (the share of requests it must
hold for). `joulebench serve-bench --slo`, `joulebench decide --slo`, Decide's and Compare's typed limits and the
stored `goodput_slo` all read and write it here: `ttft_p90<=500ms,tpot_p90<=50ms,itl<=0.2s` (`=` is read as `<=`)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from joulebench.metrics import E2E, ITL, TPOT, TTFT, Distribution
from joulebench.ranges import Range, field_range

METRICS: dict[str, Distribution] = {"ttft": TTFT, "itl": ITL, "tpot": TPOT, "e2e": E2E}
_ALIASES = {"e2e_latency": "e2e", "e2el": "e2e"}
_TERM = re.compile(r"(ttft|itl|tpot|e2e_latency|e2el|e2e)(?:_p(50|90|95|99))?\s*(?:<=|=|<)\s*([0-9.eE+-]+)\s*(ms|s)")


class SloError(ValueError):
    """An SLO that does not parse; the message names the term and the fix."""


@dataclass(frozen=True)
class Limit:
    metric: str  # ttft | itl | tpot | e2e
    limit_ms: float
    percentile: int | None = None  # the attainment target the limit is stated at; each request is held to limit_ms

    def text(self) -> str:
        return f"{self.metric}{f'_p{self.percentile}' if self.percentile else ''}<={self.limit_ms:g}ms"


@dataclass(frozen=True)
class Slo:
    limits: tuple[Limit, ...]

    def text(self) -> str:
        return ",".join(limit.text() for limit in self.limits)

    def label(self) -> str:
        """For a person: 'TTFT ≤ 500 ms (p90), TPOT ≤ 50 ms'."""
        return ", ".join(f"{METRICS[x.metric].title} ≤ {x.limit_ms:g} ms" + (f" (p{x.percentile})" if x.percentile
                                                                                 else "") for x in self.limits)


def parse_slo(text: str) -> Slo:
    """`ttft<=500ms,tpot_p90<=50ms,itl<=0.2s` -> Slo; SloError naming the term that does not parse."""
    limits: list[Limit] = []
    for item in (text or "").split(","):
        if not item.strip():
            continue
        m = _TERM.fullmatch(item.strip().lower())
        try:
            value = float(m.group(3)) if m else math.nan
        except ValueError:
            value = math.nan
        if m is None or not math.isfinite(value) or value <= 0:
            raise SloError(f"SLO: {item.strip()[:60]!r} does not parse; write limits like ttft<=500ms,tpot_p90<=50ms "
                           "(ttft, itl, tpot, e2e; optional p50/p90/p95/p99; a positive value in ms or s)")
        metric = _ALIASES.get(m.group(1), m.group(1))
        if any(x.metric == metric for x in limits):
            raise SloError(f"SLO: {metric} is limited twice; give one limit per metric")
        limit_ms = value * (1000.0 if m.group(4) == "s" else 1.0)
        if not limit_range(metric).contains(limit_ms):
            raise SloError(f"SLO: {item.strip()[:60]!r}: {limit_ms:g} ms is outside the range of a "
                           f"{METRICS[metric].title} figure; enter {limit_range(metric).describe()} ms")
        limits.append(Limit(metric, limit_ms, int(m.group(2)) if m.group(2) else None))
    if not limits:
        raise SloError("SLO: no limit given; write limits like ttft<=500ms,tpot<=50ms")
    return Slo(tuple(limits))


def limit_range(metric: str) -> Range:
    """The range a typed limit on `metric` is checked against: the result schema's range of that latency's
    columns (joulebench.ranges, as every typed value), above 0 (a limit of 0 ms no request could meet)."""
    stored = field_range("metrics", METRICS[metric].p90.name)
    return Range(0.0, stored.high, low_open=True)


PERCENTILES = (50, 90, 95, 99)
