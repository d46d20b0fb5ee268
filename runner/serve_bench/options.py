"""serve-bench's options: ranges, lists, the SLO, checked before anything is sent or stored.

The options `joulebench run` shares (--request-rate, --duration, --repeats, --sample-hz, --tdp-w) use
its ranges (`joulebench.ranges.RUN_OPTIONS`); serve-bench's own are here, in the same form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from joulebench.errors import RunConfigError
from joulebench.ranges import OptionRange, Range, option_problem
from joulebench.slo import Limit, Slo, SloError
from joulebench.slo import parse_slo as parse

MAX_TOKENS = 1_048_576  # no model takes a longer prompt or output
MAX_REQUESTS = 1_000_000  # each request's token times are kept
SERVE_OPTIONS: dict[str, OptionRange] = {
    "--concurrency": OptionRange(Range(1, 100_000, integer=True), None, "no server holds more requests at once"),
    "--max-concurrency": OptionRange(Range(1, 100_000, integer=True), None, "no server holds more requests at once"),
    "--burstiness": OptionRange(Range(0.0, 1_000.0, low_open=True, least=0.01),
                                "the gamma shape: 1 is Poisson, under 1 burstier, above 1 more even",
                                "the gamma shape: past 1,000 arrivals are constant"),
    "--requests": OptionRange(Range(1, MAX_REQUESTS, integer=True), None, "each request's token times are kept"),
    "--warmup-requests": OptionRange(Range(0, 10_000, integer=True), None, "a warm-up of more requests is a run"),
    "--request-timeout": OptionRange(Range(0.0, 86_400.0, low_open=True, least=0.01), None,
                                     "a request longer than a day is a stuck server"),
    "--seed": OptionRange(Range(0, 2**31 - 1, integer=True)),
    "--sweep-points": OptionRange(Range(1, 100, integer=True), None, "more rates between one stream and saturation "
                                  "tell nothing a finer --rate list would not"),
    "tokens": OptionRange(Range(1, MAX_TOKENS, integer=True), None, "no model takes more tokens"),
}
ARRIVALS = ("poisson", "gamma", "constant")
APIS = ("completions", "chat")
SWEEP_PROBE_CONCURRENCY = 16  # --rate sweep's throughput probe, without --max-concurrency
SWEEP_POINTS = 4  # --rate sweep's rates between a single stream and saturation, without --sweep-points
SLO_METRICS = {"ttft": "ttft", "tpot": "tpot", "e2e": "e2e_latency", "e2e_latency": "e2e_latency"}


class ServeBenchError(RunConfigError):
    """A serve-bench option or target that cannot work; nothing is sent or stored."""

    title = "Invalid serve-bench options"


def number_problem(option: str, value: float, key: str | None = None) -> str | None:
    """Why `value` is outside `option`'s range (serve-bench's own table, else `run`'s), or None."""
    bound = SERVE_OPTIONS.get(key or option)
    if bound is None:
        return option_problem(option, value)
    if bound.range.contains(float(value)):
        return None
    why = bound.why_low if math.isfinite(value) and bound.range.low is not None and value <= bound.range.low \
        else bound.why_high
    shown = f"{value:g}" if math.isfinite(value) else str(value)
    return f"{option}: {shown} is not valid; expected {bound.range.describe()}" + (f" ({why})" if why else "")


def parse_numbers(option: str, text: str, convert: type, problems: list[str]) -> list[float]:
    """'0.5,1,2' -> [0.5, 1.0, 2.0], each checked against the option's range."""
    out: list[float] = []
    for item in str(text).split(","):
        item = item.strip()
        try:
            value = float(item)
        except ValueError:
            problems.append(f"{option}: {item[:40]!r} is not a number; write a comma list, e.g. 0.5,1,2")
            continue
        problem = number_problem(option, value)
        if problem:
            problems.append(problem)
            continue
        out.append(convert(value))
    return out


def parse_slo(text: str | None) -> list[Limit]:
    """`ttft_p90=500ms,tpot_p90=50ms` -> limits (joulebench.slo: one definition for serve-bench, Decide,
    `joulebench decide` and the stored goodput_slo); ServeBenchError naming the term that does not parse."""
    if text is None or not str(text).strip():
        return []
    try:
        return list(parse(str(text)).limits)
    except SloError as e:
        raise ServeBenchError(f"--slo: {str(e).removeprefix('SLO: ')}") from None


def slo_text(terms: list[Limit]) -> str | None:
    return Slo(tuple(terms)).text() or None


@dataclass
class ServeBenchOptions:
    """What `joulebench serve-bench` was asked to do; `points` (rates or concurrencies) make the sweep."""

    target: str
    model: str | None = None
    api: str = "completions"
    rates: list[float] = field(default_factory=list)
    concurrencies: list[int] = field(default_factory=list)
    rate_sweep: bool = False  # --rate sweep: probe one stream and saturation, then sweep_points rates between
    sweep_points: int = SWEEP_POINTS
    gpus: list[int] = field(default_factory=list)  # --gpus: the GPUs whose power is summed
    max_concurrency: int | None = None
    arrival: str = "poisson"
    burstiness: float = 1.0
    requests: int | None = None
    duration_s: float | None = None
    warmup_requests: int = 2
    seed: int = 0
    repeats: int = 1
    request_timeout_s: float = 300.0
    lengths: object = None  # lengths.LengthPlan
    tokenizer: Path | None = None
    slo: list[Limit] = field(default_factory=list)
    engine: str | None = None
    device: str | None = None
    db: str | None = None
    out: Path | None = None
    tag: str | None = None
    power_log: Path | None = None
    power_log_boundary: str | None = None
    tdp_w: float | None = None
    sample_hz: float = 10.0
    server_device: str | None = None  # a server on another machine: its device, measured by power_log
    sweep_id: str | None = None  # the id every run of this invocation shares (run.serve_bench sets one)

    @property
    def load_kind(self) -> str:
        return "rate" if self.rates or self.rate_sweep else "concurrency"

    @property
    def probe_concurrency(self) -> int:
        """--rate sweep's throughput probe: --max-concurrency requests in flight, else SWEEP_PROBE_CONCURRENCY."""
        return self.max_concurrency or SWEEP_PROBE_CONCURRENCY

    def points(self) -> list[float]:
        return list(self.rates) if self.rates else [float(c) for c in self.concurrencies]

    def request_count(self, point: float) -> int:
        """Requests per point: --requests, else --duration's worth at the rate (concurrency: 8 per stream),
        else 10 s's worth, at least 8."""
        if self.requests is not None:
            return self.requests
        if self.load_kind == "rate":
            return min(MAX_REQUESTS, max(8, math.ceil(point * (self.duration_s or 10.0))))
        return min(MAX_REQUESTS, max(8, int(point) * 8))
