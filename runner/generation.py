"""Generation workloads: a batch of requests generated token by token, prefill and decode measured apart.

One step of the timed loop (`runner.measure.run_window`) is one batch of `batch_size` requests
(concurrent sequences): a prefill over the `seq_len`-token prompts, whose last logits give each
request's first output token, then `max_new_tokens - 1` decode steps with the KV cache. Decoding is
greedy and never stops early (there is no end-of-sequence check), so every request gets exactly
`max_new_tokens` tokens. The batch is full from the first decode step to the last, so the whole
decode is in the steady state.

Token times: a mark after the first token and after each decode step, from CUDA events on a GPU (no
synchronisation inside the loop) or the clock on a CPU, read after the window's final
synchronisation. Per request: time to first token (TTFT) = the prefill; end-to-end latency = its last
token's time; time per output token (TPOT) = (end-to-end - TTFT) / (output tokens - 1). Pooled over
the requests: the inter-token latency (ITL) = every gap between consecutive tokens
(joulebench.metrics defines each).

Energy: the generation window's energy is the sensor's, as for every workload. Its split needs a
second window of prefills alone (same model, batch and prompts, the same warmup and minimum window,
so a slow sensor sees it long enough): J per request's prefill = that window's energy / the requests
it prefilled, and decode energy = the generation window's energy - its requests x J per prefill.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

import torch

from joulebench.metrics import E2E, ITL, TPOT, TTFT, Percentiles, metric
from runner.clock import REAL_CLOCK, Clock
from runner.measure import Window, WindowPlan, run_window
from runner.power import PowerMeter


class TokenMarks:
    """Marks the start of each request batch and each output token; read after the last synchronisation."""

    def __init__(self, device: torch.device, clock: Clock = REAL_CLOCK) -> None:
        self.cuda = device.type == "cuda"
        self.clock = clock
        self.batches: list[list[Any]] = []

    def reset(self) -> None:
        self.batches = []

    def _mark(self) -> Any:
        if not self.cuda:
            return self.clock.now()
        event = torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def begin(self) -> None:
        self.batches.append([self._mark()])

    def token(self) -> None:
        self.batches[-1].append(self._mark())

    def times_ms(self) -> list[list[float]]:
        """Per batch: the time of each output token since the batch began, ms."""
        out = []
        for marks in self.batches:
            if self.cuda:
                out.append([float(marks[0].elapsed_time(m)) for m in marks[1:]])
            else:
                out.append([(m - marks[0]) * 1000.0 for m in marks[1:]])
        return out


def _cache_name(model: torch.nn.Module) -> str:
    """The KV cache's keyword and output field: `cache` from transformers 5.2x, `past_key_values` before."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def prefill(model: torch.nn.Module, input_ids: torch.Tensor, cache_name: str) -> tuple[torch.Tensor, Any]:
    """The prompts' forward pass with a fresh KV cache: each request's first token (greedy) and the cache.
    Only the last position's logits are computed (`logits_to_keep`), as generate() does."""
    out = model(input_ids=input_ids, use_cache=True, logits_to_keep=1)
    return out.logits[:, -1:].argmax(-1), out[cache_name]


def generate_step(model: torch.nn.Module, input_ids: torch.Tensor, max_new_tokens: int,
                  marks: TokenMarks) -> Callable[[], None]:
    """One batch of requests: prefill, then decode to exactly max_new_tokens tokens each."""
    name = _cache_name(model)

    def step() -> None:
        marks.begin()
        token, cache = prefill(model, input_ids, name)
        marks.token()
        for _ in range(max_new_tokens - 1):
            out = model(input_ids=token, use_cache=True, **{name: cache})
            token, cache = out.logits[:, -1:].argmax(-1), out[name]
            marks.token()

    return step


@dataclass
class GenerationWindows:
    """The generation window, its token times, and the window of prefills alone (for the energy split)."""

    window: Window
    token_times_ms: list[list[float]]  # per request batch: each output token's time since the batch began
    prefill: Window | None = None
    prefill_error: str | None = None
    flags: list[str] = field(default_factory=list)


def measure_generation(model: torch.nn.Module, inputs: dict[str, torch.Tensor], max_new_tokens: int,
                       device: torch.device, *, plan: WindowPlan, meter: PowerMeter,
                       on_step: Callable[[int], None] | None = None) -> GenerationWindows:
    """The generation window, then the prefill-only window (the model is warm; it gets its own warmup)."""
    input_ids = inputs["input_ids"]
    marks = TokenMarks(device)
    window = run_window(generate_step(model, input_ids, max_new_tokens, marks), device, plan=plan, meter=meter,
                        on_step=on_step, on_start=marks.reset)
    times = marks.times_ms()
    out = GenerationWindows(window, times)
    if max_new_tokens < 2:
        out.prefill_error = "with one output token per request there is no decode to split from the prefill"
        return out
    name = _cache_name(model)
    out.prefill = run_window(lambda: prefill(model, input_ids, name), device, plan=plan, meter=meter)
    out.flags += [f"prefill_{f}" for f in out.prefill.flags]
    return out


@dataclass
class TokenFigures:
    """A generation's or a serving run's token figures, typed; `columns()` gives the result file's fields
    (names from joulebench.metrics). Latencies as vLLM's `bench serve` defines them: TTFT per request, ITL
    every gap between consecutive tokens pooled over the requests, TPOT per request ((end-to-end - TTFT) /
    (output tokens - 1)), end-to-end latency per request."""

    output_tokens: int | None = None
    tokens_per_s: float | None = None
    decode_tokens_per_s: float | None = None
    prompt_tokens_per_s: float | None = None
    j_per_token: float | None = None
    decode_j_per_token: float | None = None
    prefill_j_per_request: float | None = None
    energy_split_missing_reason: str | None = None
    requests_completed: int | None = None
    requests_per_s: float | None = None
    j_per_request: float | None = None
    prompt_tokens_mean: float | None = None
    output_tokens_mean: float | None = None
    ttft: Percentiles | None = None
    itl: Percentiles | None = None
    tpot: Percentiles | None = None
    e2e: Percentiles | None = None

    def columns(self) -> dict[str, Any]:
        """The figures present, as result-file metrics (missing ones left out, never 0)."""
        out: dict[str, Any] = {metric(f.name).name: getattr(self, f.name) for f in fields(self)
                               if f.name not in _DISTRIBUTIONS}
        for name, dist in _DISTRIBUTIONS.items():
            out.update(dist.columns(getattr(self, name)))
        return {k: v for k, v in out.items() if v is not None}


_DISTRIBUTIONS = {"ttft": TTFT, "itl": ITL, "tpot": TPOT, "e2e": E2E}  # TokenFigures' latency fields


def request_latencies(batches: list[list[float]], weights: list[int]) -> TokenFigures:
    """TTFT, ITL, TPOT and end-to-end latency of batches of requests, from each batch's token times
    (ms since its requests were sent, one list per batch); `weights[i]` requests share batch i's times.
    A batch of one token has no gap: it adds to TTFT and end-to-end latency only."""
    gaps, gap_weights = [], []
    for times, w in zip(batches, weights, strict=True):
        gaps += [b - a for a, b in zip(times, times[1:])]
        gap_weights += [w] * (len(times) - 1)
    decoding = [(t, w) for t, w in zip(batches, weights, strict=True) if len(t) > 1]
    return TokenFigures(
        ttft=Percentiles.of([t[0] for t in batches], weights),
        itl=Percentiles.of(gaps, gap_weights),
        tpot=Percentiles.of([(t[-1] - t[0]) / (len(t) - 1) for t, _ in decoding], [w for _, w in decoding]),
        e2e=Percentiles.of([t[-1] for t in batches], weights))


def generation_figures(gen: GenerationWindows, *, batch_size: int, prompt_tokens: int, max_new_tokens: int,
                       energy_j: float | None) -> tuple[TokenFigures, str | None]:
    """Token figures of a measured generation and a note on the energy split."""
    window = gen.window
    batches = gen.token_times_ms
    requests = window.steps * batch_size
    output_tokens = requests * max_new_tokens
    decode_s = sum(t[-1] - t[0] for t in batches) / 1000.0
    prefill_s = sum(t[0] for t in batches) / 1000.0
    out = request_latencies(batches, [batch_size] * len(batches))  # every request of a batch shares its times
    out.output_tokens = output_tokens
    out.tokens_per_s = output_tokens / window.duration_s
    out.decode_tokens_per_s = window.steps * batch_size * (max_new_tokens - 1) / decode_s if decode_s > 0 else None
    out.prompt_tokens_per_s = window.steps * batch_size * prompt_tokens / prefill_s if prefill_s > 0 else None
    out.requests_completed = requests
    out.requests_per_s = requests / window.duration_s
    out.prompt_tokens_mean, out.output_tokens_mean = float(prompt_tokens), float(max_new_tokens)
    if energy_j is None:
        return out, None
    out.j_per_token = energy_j / output_tokens
    out.j_per_request = energy_j / requests if requests else None
    note = None
    pre = gen.prefill
    if pre is None or pre.energy.energy_j is None or pre.energy.energy_j <= 0 or pre.steps == 0:
        why = gen.prefill_error or (pre.energy.missing_reason if pre is not None else None) or (
            f"the prefill window ({pre.duration_s:.3g} s) measured no energy: shorter than the sensor resolves"
            if pre is not None and pre.steps else "no prefill window")
        out.energy_split_missing_reason = why
        return out, note
    per_request = pre.energy.energy_j / (pre.steps * batch_size)
    decode_j = energy_j - requests * per_request
    note = (f"energy split: {pre.steps} prefill batches alone over {pre.duration_s:.3g} s took "
            f"{pre.energy.energy_j:.4g} J = {per_request:.4g} J per request's prefill; decode = "
            f"{energy_j:.4g} J - {requests} x {per_request:.4g} J = {decode_j:.4g} J")
    out.prefill_j_per_request = per_request
    if decode_j > 0:
        out.decode_j_per_token = decode_j / (requests * (max_new_tokens - 1))
    else:
        out.energy_split_missing_reason = (f"the prefills alone ({requests} x {per_request:.4g} J) reach the whole "
                                           f"window's {energy_j:.4g} J: the window is too short for the sensor")
    return out, note
