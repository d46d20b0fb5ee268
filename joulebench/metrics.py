"""Every metric JouleBench stores or shows, defined once: its name (the column and the result file's
`metrics.*` field), unit, meaning, population, better direction and the label a person reads.

The result schema's `metrics` properties are exactly these names, and each property's description
is the metric's `meaning` (tests/test_itl_tpot.py checks both). No metric name is built from parts
anywhere else: code looks a name up here (`metric("j_per_token")`, `TTFT.p90`, `ITL.stat("p90")`).

Token latencies as vLLM's `bench serve` defines them, each with its mean and p50/p90/p95/p99:
- TTFT: a request sent to its first output token (per request; queueing included where there is a queue);
- ITL: every gap between consecutive output tokens, pooled over the requests (one value per gap);
- TPOT: per request, (end-to-end latency - TTFT) / (output tokens - 1);
- end-to-end latency: a request sent to its last output token (per request).
A pooled ITL and a per-request TPOT differ whenever requests differ in length or a server streams
several tokens at once, so they are stored apart and never compared with each other.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum

from joulebench.configuration import FIELDS, Role


class Population(StrEnum):
    """What one value of a metric summarises."""

    RUN = "per run"  # describes the run or how it was measured: one value
    WINDOW = "per window"  # a total or a rate over the measured window (a serving run: its steady state)
    STEP = "per step"  # a statistic of the window's step (batch) times
    REQUEST = "per request"  # a statistic over the requests, one value per request
    TOKENS = "pooled over tokens"  # a statistic over every gap between consecutive tokens, all requests together


class Better(StrEnum):
    LOWER = "lower"
    HIGHER = "higher"
    NONE = "none"  # neither: a description, a count of work done, a reason


@dataclass(frozen=True)
class Metric:
    name: str  # the column; the result file's metrics.<name>
    unit: str | None  # None: text, a flag or a pure number
    meaning: str  # one sentence; the result schema's description
    population: Population
    better: Better
    label: str  # for a person, with its unit

    def __str__(self) -> str:
        return self.name

    @property
    def aggregated(self) -> bool:
        """Aggregated per configuration with its 95 % interval and trust grade (db.grading's config_stats)."""
        return self.name in AGGREGATED

    @property
    def higher_is_better(self) -> bool:
        return self.better is Better.HIGHER

    def title(self) -> str:
        """'Energy per output token (J), lower is better'."""
        return self.label if self.better is Better.NONE else f"{self.label}, {self.better.value} is better"


METRICS: dict[str, Metric] = {}


def _define(name: str, unit: str | None, population: Population, better: Better, label: str,
            meaning: str) -> Metric:
    if name in METRICS:
        raise ValueError(f"metric {name} is defined twice")
    m = Metric(name, unit, meaning, population, better, label)
    METRICS[name] = m
    return m


def metric(name: str) -> Metric:
    """The definition of `name`; KeyError naming the metric when JouleBench has none."""
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"{name!r} is not a JouleBench metric (joulebench/metrics.py defines them)") from None


def is_metric(name: str) -> bool:
    return name in METRICS


# --- distributions: a mean and percentiles, each its own column ---------------------------------------

STATS = ("avg", "p50", "p90", "p95", "p99")
QUANTILES = {"p50": 50, "p90": 90, "p95": 95, "p99": 99}


@dataclass(frozen=True)
class Percentiles:
    """A mean and the p50/p90/p95/p99 of some values (NumPy's linear interpolation between ranks)."""

    avg: float
    p50: float
    p90: float
    p95: float
    p99: float

    def stat(self, name: str) -> float:
        return {"avg": self.avg, "p50": self.p50, "p90": self.p90, "p95": self.p95, "p99": self.p99}[name]

    @staticmethod
    def of(values: Sequence[float], weights: Sequence[int] | None = None) -> Percentiles | None:
        """The statistics of `values`, `weights[i]` copies of `values[i]` (the requests of one batch share
        a time, so a batch of 65,536 is one value, not 65,536 copies); None for no values. The same
        figures as the list with each value repeated."""
        weights = weights if weights is not None else [1] * len(values)
        pairs = sorted((v, w) for v, w in zip(values, weights, strict=True) if w > 0)
        if not pairs:
            return None
        ends, total = [], 0
        for _, w in pairs:
            total += w
            ends.append(total)  # the repeated list's index just past each value's copies

        def at(k: int) -> float:
            return pairs[bisect.bisect_right(ends, k)][0]

        def pct(q: float) -> float:
            rank = (total - 1) * q / 100.0
            lo, hi = math.floor(rank), math.ceil(rank)
            return at(lo) + (at(hi) - at(lo)) * (rank - lo)

        return Percentiles(avg=sum(v * w for v, w in pairs) / total, p50=pct(50), p90=pct(90), p95=pct(95),
                           p99=pct(99))


@dataclass(frozen=True)
class Distribution:
    """One latency's columns: its mean and percentiles (and, for step latency, its maximum)."""

    key: str  # e.g. ttft; also the `<key>_nonpositive` flag of a zero latency stored as missing
    title: str  # e.g. TTFT
    avg: Metric
    p50: Metric
    p90: Metric
    p95: Metric
    p99: Metric
    max: Metric | None = None

    def stat(self, name: str) -> Metric:
        """The column of one statistic: avg, p50, p90, p95, p99 (or max where there is one)."""
        found = {"avg": self.avg, "p50": self.p50, "p90": self.p90, "p95": self.p95, "p99": self.p99,
                 "max": self.max}.get(name)
        if found is None:
            raise KeyError(f"{self.title} has no statistic {name!r}; it has {', '.join(STATS)}")
        return found

    def metrics(self) -> tuple[Metric, ...]:
        out = (self.avg, self.p50, self.p90, self.p95, self.p99)
        return out + ((self.max,) if self.max is not None else ())

    def columns(self, values: Percentiles | None) -> dict[str, float | None]:
        """The result file's fields of `values` (each None when there are none)."""
        return {self.stat(s).name: (values.stat(s) if values is not None else None) for s in STATS}


def _ms(name: str, population: Population, label: str, meaning: str) -> Metric:
    return _define(name, "ms", population, Better.LOWER, label, meaning)


# --- the measured window --------------------------------------------------------------------------------
W, RUN, STEP, REQ, TOK = Population.WINDOW, Population.RUN, Population.STEP, Population.REQUEST, Population.TOKENS
LOW, HIGH, NONE = Better.LOWER, Better.HIGHER, Better.NONE

_define("examples", "examples", W, NONE, "Examples", "examples processed in the measured window")
_define("optimizer_steps", "steps", W, NONE, "Optimizer steps", "optimizer steps in the measured window")
_define("duration_s", "s", W, NONE, "Window (s)", "measured window wall time, s")
_define("throughput_sps", "examples/s", W, HIGH, "Throughput (samples/s)", "examples per second")
_define("iterations_per_s", "iterations/s", W, HIGH, "Iterations/s", "iterations per second as reported")
_define("throughput_derivation", None, RUN, NONE, "Throughput derived as",
        "formula, when throughput_sps was derived from another figure")

LATENCY = Distribution(
    "latency", "Latency",
    avg=_ms("latency_avg_ms", STEP, "Mean latency per batch (ms)", "mean per-batch latency, ms"),
    p50=_ms("latency_p50_ms", STEP, "p50 latency per batch (ms)", "p50 latency, ms"),
    p90=_ms("latency_p90_ms", STEP, "p90 latency per batch (ms)", "p90 latency, ms"),
    p95=_ms("latency_p95_ms", STEP, "p95 latency per batch (ms)", "p95 latency, ms"),
    p99=_ms("latency_p99_ms", STEP, "p99 latency per batch (ms)", "p99 latency, ms"),
    max=_ms("latency_max_ms", STEP, "Max latency per batch (ms)", "max latency, ms"),
)

_define("weak_scaling", None, RUN, HIGH, "Weak scaling (x)",
        "throughput relative to one device (or one node), as the run's own throughputs give it")
_define("weak_scaling_as_printed", None, RUN, NONE, "Weak scaling as printed (x)",
        "weak scaling as the source printed it, only where that differs from weak_scaling (which is corrected); "
        "the run's notes say why")
_define("mem_peak_allocated_mb", "MB", RUN, LOW, "Peak allocated memory (MB)", "peak torch allocated memory, MB")
_define("mem_peak_reserved_mb", "MB", RUN, LOW, "Peak reserved memory (MB)", "peak torch reserved memory, MB")
_define("mem_peak_rss_mb", "MB", RUN, LOW, "Peak process memory (MB)", "peak process resident memory, MB")
_define("mem_used_device_mb", "MB", RUN, LOW, "Device memory used (MB)",
        "device memory in use as reported by a tool, MB")

# --- energy and power -------------------------------------------------------------------------------------
_define("energy_j", "J", W, LOW, "Energy (J)",
        "energy over the measured window, J; null with energy_missing_reason when not measured, never 0")
_define("energy_missing_reason", None, RUN, NONE, "Why no energy", "why energy_j is null")
_define("avg_power_missing_reason", None, RUN, NONE, "Why no average power",
        "why avg_power_w is null while energy_j is known (e.g. derived from mismatched windows: above the "
        "device's plausible maximum)")
_define("energy_boundary", None, RUN, NONE, "Measured at",
        "where power was measured: one of gpu_board, jetson_module, cpu_package, system, wall, estimated")
_define("energy_method", None, RUN, NONE, "Energy method",
        "how energy was obtained: one of counter, sampled, reported, estimated")
_define("avg_power_w", "W", W, LOW, "Average power (W)", "energy / duration, W")
_define("j_per_sample", "J/example", W, LOW, "Energy per example (J)", "energy per example, J")
_define("j_per_iteration", "J/step", W, LOW, "Energy per iteration (J)", "energy per optimizer step, J")
_define("idle_power_w", "W", RUN, LOW, "Idle power (W)", "idle power at the same power setting, W")
_define("net_j_per_sample", "J/example", W, LOW, "Net energy per example, idle subtracted (J)",
        "(energy - idle power x duration) / examples, J; left out (flagged) when not positive")
_define("energy_counter_j", "J", W, NONE, "Energy, counter (J)",
        "energy from the hardware energy counter over the window, J (kept beside energy_sampled_j)")
_define("energy_sampled_j", "J", W, NONE, "Energy, sampled (J)",
        "energy integrated from the polled power samples (trapezoid rule), J")
_define("energy_disagreement_pct", "%", W, LOW, "Counter vs sampled (%)",
        "|counter - sampled| / counter x 100 where both exist; over 5 is flagged")
_define("sample_period_s", "s", RUN, NONE, "Sampling period (s)", "power sampling period used for the window, s")
_define("idle_energy_j", "J", W, NONE, "Idle energy (J)",
        "idle power x window duration: the part of energy_j the device draws doing nothing, J")
_define("gpu_clock_avg_mhz", "MHz", W, NONE, "GPU clock mean (MHz)",
        "mean SM clock over the window's power samples, MHz")
_define("gpu_clock_min_mhz", "MHz", W, NONE, "GPU clock min (MHz)", "lowest SM clock seen in the window, MHz")
_define("memory_clock_avg_mhz", "MHz", W, NONE, "Memory clock mean (MHz)",
        "mean memory clock over the window's power samples, MHz")
_define("throttle_reasons", None, W, NONE, "Throttle reasons",
        "clock throttle reasons NVML reported during the window, comma-separated (e.g. sw_power_cap,hw_thermal)")
_define("sample_unit", None, RUN, NONE, "Sample is",
        "what one sample of throughput_sps, examples and j_per_sample is: sample (the file says samples), image, "
        "sequence, request (an LLM or serving request), video, frame; null when the file does not say")

# --- tokens -----------------------------------------------------------------------------------------------
_define("tokens_per_s", "tokens/s", W, HIGH, "Output tokens/s",
        "tokens per second: generated (output) tokens when inferring, tokens processed when training; all devices "
        "of the run together")
_define("output_tokens", "tokens", W, NONE, "Output tokens",
        "output tokens generated in the measured window, all requests together")
_define("prompt_tokens_per_s", "tokens/s", W, HIGH, "Prompt tokens/s",
        "prompt (input) tokens processed per second, all devices of the run together")
_define("decode_tokens_per_s", "tokens/s", W, HIGH, "Decode tokens/s",
        "output tokens per second while decoding (the first token of each request, which the prefill gives, and "
        "the prefill time left out)")
_define("j_per_token", "J/token", W, LOW, "Energy per output token (J)", "energy per token counted in tokens_per_s, J")
_define("decode_j_per_token", "J/token", W, LOW, "Decode energy per token (J)",
        "decode energy per decoded token, J: the window's energy less its prefills' energy (measured in a window "
        "of prefills alone), over the tokens decoded")
_define("prefill_j_per_request", "J/request", W, LOW, "Prefill energy per request (J)",
        "energy of one request's prefill, J: a window of prefills alone, its energy over the requests it prefilled")
_define("energy_split_missing_reason", None, RUN, NONE, "Why no energy split",
        "why the prefill / decode energy split is missing; for a serving run, why its steady-state token figures "
        "are")

TTFT = Distribution(
    "ttft", "TTFT",
    avg=_ms("ttft_avg_ms", REQ, "Time to first token mean (ms)",
            "mean time to first token of a request (sent to first token), ms"),
    p50=_ms("ttft_p50_ms", REQ, "Time to first token p50 (ms)", "median time to first token, ms"),
    p90=_ms("ttft_p90_ms", REQ, "Time to first token p90 (ms)", "90th percentile time to first token, ms"),
    p95=_ms("ttft_p95_ms", REQ, "Time to first token p95 (ms)", "95th percentile time to first token, ms"),
    p99=_ms("ttft_p99_ms", REQ, "Time to first token p99 (ms)", "99th percentile time to first token, ms"),
)
_TPOT = "per request, (end-to-end latency - TTFT) / (output tokens - 1)"
TPOT = Distribution(
    "tpot", "TPOT",
    avg=_ms("tpot_avg_ms", REQ, "Time per output token mean (ms)",
            f"mean time per output token after the first (TPOT: {_TPOT}), ms"),
    p50=_ms("tpot_p50_ms", REQ, "Time per output token p50 (ms)", f"median time per output token (TPOT: {_TPOT}), ms"),
    p90=_ms("tpot_p90_ms", REQ, "Time per output token p90 (ms)",
            f"90th percentile time per output token (TPOT: {_TPOT}), ms"),
    p95=_ms("tpot_p95_ms", REQ, "Time per output token p95 (ms)",
            f"95th percentile time per output token (TPOT: {_TPOT}), ms"),
    p99=_ms("tpot_p99_ms", REQ, "Time per output token p99 (ms)",
            f"99th percentile time per output token (TPOT: {_TPOT}), ms"),
)
_ITL = "every gap between consecutive output tokens, pooled over the requests"
ITL = Distribution(
    "itl", "ITL",
    avg=_ms("itl_avg_ms", TOK, "Inter-token latency mean (ms)", f"mean inter-token latency (ITL: {_ITL}), ms"),
    p50=_ms("itl_p50_ms", TOK, "Inter-token latency p50 (ms)", f"median inter-token latency (ITL: {_ITL}), ms"),
    p90=_ms("itl_p90_ms", TOK, "Inter-token latency p90 (ms)",
            f"90th percentile inter-token latency (ITL: {_ITL}), ms"),
    p95=_ms("itl_p95_ms", TOK, "Inter-token latency p95 (ms)",
            f"95th percentile inter-token latency (ITL: {_ITL}), ms"),
    p99=_ms("itl_p99_ms", TOK, "Inter-token latency p99 (ms)",
            f"99th percentile inter-token latency (ITL: {_ITL}), ms"),
)
_E2E = "a request sent to its last output token"
E2E = Distribution(
    "e2e", "End-to-end latency",
    avg=_ms("e2e_latency_avg_ms", REQ, "End-to-end latency mean (ms)", f"mean end-to-end latency ({_E2E}), ms"),
    p50=_ms("e2e_latency_p50_ms", REQ, "End-to-end latency p50 (ms)", f"median end-to-end latency ({_E2E}), ms"),
    p90=_ms("e2e_latency_p90_ms", REQ, "End-to-end latency p90 (ms)",
            f"90th percentile end-to-end latency ({_E2E}), ms"),
    p95=_ms("e2e_latency_p95_ms", REQ, "End-to-end latency p95 (ms)",
            f"95th percentile end-to-end latency ({_E2E}), ms"),
    p99=_ms("e2e_latency_p99_ms", REQ, "End-to-end latency p99 (ms)",
            f"99th percentile end-to-end latency ({_E2E}), ms"),
)
DISTRIBUTIONS = (LATENCY, TTFT, ITL, TPOT, E2E)
# each distribution by the stem of its column names (ttft_p90_ms, e2e_latency_p90_ms, latency_p99_ms)
LATENCY_BY_BASE = {"ttft": TTFT, "tpot": TPOT, "itl": ITL, "e2e_latency": E2E, "latency": LATENCY}

# --- serving ----------------------------------------------------------------------------------------------
_define("requests_per_s", "requests/s", W, HIGH, "Requests completed per second",
        "requests completed per second over the measured window (a serving run: its steady state)")
_define("j_per_request", "J/request", W, LOW, "Energy per request (J)",
        "energy per completed request, J: the window's (a serving run: its steady state's) energy over its requests")
_define("requests_completed", "requests", W, NONE, "Requests completed",
        "requests that completed in the measured window")
_define("requests_failed", "requests", W, LOW, "Requests failed",
        "requests refused, failed or timed out in the measured window")
_define("goodput_requests_per_s", "requests/s", W, HIGH, "Goodput (requests/s)",
        "requests per second that met the service-level objective in goodput_slo")
_define("goodput_slo", None, RUN, NONE, "Goodput SLO",
        "the service-level objective goodput counts against, e.g. ttft_p90<=500ms,tpot_p90<=50ms (each request "
        "held to each limit)")
_define("goodput_requests_per_j", "requests/J", W, HIGH, "Goodput per joule (requests/J)",
        "requests that met the service-level objective in goodput_slo per joule of the measured window's (a serving "
        "run: its steady state's) energy")
_define("latency_missing_reason", None, RUN, NONE, "Why no latency percentiles",
        "why the TTFT, ITL, TPOT and end-to-end latency figures are null while requests completed (an overloaded "
        "point, too few requests in the steady state)")
_define("prompt_tokens_mean", "tokens", REQ, NONE, "Prompt tokens (mean)",
        "actual prompt length per request, mean over the requests, tokens")
_define("output_tokens_mean", "tokens", REQ, NONE, "Output tokens (mean)",
        "actual output length per request, mean over the requests, tokens")
# the serving client's own lag (runner.serve_bench.lag): a point whose client fell behind is flagged client_bound
_CLIENT_LAG = "a request's actual minus its scheduled send time, over the steady state's scheduled requests"
_define("client_send_lag_p50_ms", "ms", REQ, LOW, "Client send lag p50 (ms)",
        f"median client send lag ({_CLIENT_LAG}), ms")
_define("client_send_lag_p99_ms", "ms", REQ, LOW, "Client send lag p99 (ms)",
        f"99th percentile client send lag ({_CLIENT_LAG}), ms")
_define("client_send_lag_max_ms", "ms", REQ, LOW, "Client send lag max (ms)",
        f"largest client send lag ({_CLIENT_LAG}), ms")
_define("client_cpu_wait_pct", "%", W, LOW, "Client CPU wait (%)",
        "share of the load's wall time the client's event loop thread was runnable but waiting for a CPU (the "
        "kernel's run-queue delay), %")
_define("client_cpu_busy_pct", "%", W, LOW, "Client CPU busy (%)",
        "the client's event loop thread's CPU time over the load's wall time, % of one core")

# --- how the run was measured -----------------------------------------------------------------------------
_define("throughput_unit_not_stated", "1/s", W, NONE, "Throughput, unit not stated (/s)",
        "a throughput per second as published whose unit (samples, tokens, images, iterations, ...) the file does "
        "not state; never compared with throughput_sps, tokens_per_s or iterations_per_s")
_define("sensor_update_period_s", "s", RUN, NONE, "Sensor update period (s)",
        "how often the energy sensor's reading actually changed, s (observed: NVML on an H100 about 0.1); above 0, "
        "at most 3600")
_define("power_trace_source", None, RUN, NONE, "Power trace source",
        "which reading the power trace holds: nvml_instant_field, nvml_power_usage (a 1 s average on recent GPUs), "
        "ina3221_rail, jtop, rapl_counter, estimated, power_log, or another tool's name")
_define("warmup_s", "s", RUN, NONE, "Warmup (s)", "time spent warming up before the measured window, s; 0 to 86400")
_define("warmup_steady", None, RUN, NONE, "Warmup steady",
        "true when the warmup ended because power and step time were steady, false when it hit its time cap; null "
        "for a fixed number of warmup steps")
_define("start_offset_s", "s", RUN, NONE, "Start offset (s)",
        "random extra warmup before the window, within one sensor update period, s; 0 to 3600")

del W, RUN, STEP, REQ, TOK, LOW, HIGH, NONE


# --- figures derived for a person, never stored (money at the reader's settings) ---------------------------
DERIVED: dict[str, Metric] = {
    m.name: m for m in (
        Metric("cost_per_1m_samples", "currency per 1M examples",
               "electricity + amortised hardware per million examples, at the reader's prices (decision.money)",
               Population.WINDOW, Better.LOWER, "Cost per 1M samples"),
        Metric("electricity_cost_per_1m", "currency per 1M examples",
               "electricity per million examples at the reader's electricity price (decision.money)",
               Population.WINDOW, Better.LOWER, "Electricity per 1M samples"),
    )}

# Aggregated per configuration (n, mean, 95 % interval, spread) and graded: db.grading's STAT_METRICS, in the order
# the store writes them (a new figure goes last).
AGGREGATED: tuple[str, ...] = (
    "throughput_sps", "j_per_sample", "net_j_per_sample", "j_per_iteration", "avg_power_w", "energy_j",
    "latency_p50_ms", "latency_p99_ms", "duration_s", "tokens_per_s", "j_per_token", "decode_j_per_token",
    "ttft_p90_ms", "itl_p90_ms", "tpot_p90_ms", "j_per_request", "goodput_requests_per_j", "goodput_requests_per_s",
    "requests_per_s", "e2e_latency_p90_ms",
)


class RunKind(StrEnum):
    """What a run measured, which decides the figures that summarise it."""

    SAMPLES = "samples"  # batches of examples: training or batch inference
    GENERATION = "generation"  # LLM generation in fixed batches, on this machine
    SERVING = "serving"  # requests to a serving engine at a load


# The figures that summarise a run of each kind, in the order a person reads them (New run's Done table, Run
# detail's headline, the CLI's summary).
HEADLINE: dict[RunKind, tuple[str, ...]] = {
    RunKind.SAMPLES: ("throughput_sps", "latency_p99_ms", "j_per_sample", "avg_power_w"),
    RunKind.GENERATION: ("tokens_per_s", "j_per_token", "ttft_p90_ms", "tpot_p90_ms", "avg_power_w"),
    RunKind.SERVING: ("tokens_per_s", "requests_per_s", "j_per_token", "j_per_request", "ttft_p90_ms", "itl_p90_ms",
                      "tpot_p90_ms", "e2e_latency_p90_ms", "goodput_requests_per_s", "avg_power_w"),
}
# a load offered or an engine named makes a run a serving point (joulebench.configuration's LOAD and ENGINE fields)
_SERVING_FIELDS = tuple(f.name for f in FIELDS if f.role in (Role.LOAD, Role.ENGINE))
_GENERATION_FIELDS = ("max_new_tokens", "output_tokens_requested")
KIND_FIELDS = (*_SERVING_FIELDS, *_GENERATION_FIELDS)  # every field run_kind reads


def run_kind(config: dict) -> RunKind:
    """The kind of a run from its configuration (a result file's config, or a runs row): a load or an engine makes it
    a serving run, a fixed output length a generation run."""
    if any(config.get(f) is not None for f in _SERVING_FIELDS):
        return RunKind.SERVING
    if any(config.get(f) is not None for f in _GENERATION_FIELDS):
        return RunKind.GENERATION
    return RunKind.SAMPLES


def short(name: str) -> str:
    """A latency statistic as limits and sentences name it, the field's acronym: 'TPOT p90', 'TTFT mean' (a metric
    that is no distribution's statistic: its label without the unit)."""
    for d in DISTRIBUTIONS:
        for stat in STATS:
            if d.stat(stat).name == name:
                return f"{d.title} {'mean' if stat == 'avg' else stat}"
    return label(name).split(" (", 1)[0]


def latency_metrics() -> Iterator[tuple[Distribution, Metric]]:
    """Every latency column (unit ms) with its distribution: a zero or negative one is no measurement."""
    for d in DISTRIBUTIONS:
        for m in d.metrics():
            yield d, m


def label(name: str) -> str:
    """A metric's label for a person (the name itself when it is not a metric)."""
    found = METRICS.get(name) or DERIVED.get(name)
    return found.label if found is not None else name


def figure(name: str) -> Metric:
    """A stored metric or a derived figure; KeyError naming it when JouleBench has neither."""
    if name in DERIVED:
        return DERIVED[name]
    return metric(name)
