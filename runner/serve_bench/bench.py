"""One serve-bench sweep: each load point (a rate or a concurrency) is one run, all in one result file,
imported through the same path as `joulebench run` (runner.output, runner.sweep.finish).

A point: warm-up requests (not measured), then the power meter's window around the whole load, the
requests timed on the clock the sampler stamps its samples with (`runner.clock.REAL_CLOCK`); the
steady state's energy is cut from the window's power trace (runner.serve_bench.measure). A server
that stops answering mid-point ends the sweep: the point is recorded as interrupted with the reason
and what was measured until then. SIGINT/SIGTERM do the same in every phase, the warm-up included (the
requests in flight are cancelled at once). Before each point its placeholder goes to the sweep's marker
(`ResultSink.about_to_run`), so a point in progress when serve-bench is killed (SIGKILL, the OOM killer) is
recorded as interrupted when the store next opens, as `joulebench run`'s are.

When the load ends, each request's token counts are decided by runner.serve_bench.counts (the client's count,
checked against the server's `usage`), before any figure is computed. Each run keeps every request of its point
(`requests`, runner.serve_bench.records; `requests_total` where joulebench.requests.retain cut them), the ones
its figures cover marked counted, and the client's own lag (runner.serve_bench.lag: send lag, CPU wait; a point
whose client fell behind is flagged client_bound).
"""

from __future__ import annotations

import asyncio
import random
import sys
import uuid
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TextIO

import httpx

import joulebench.requests as jr
from energy import EnergyReading
from energy.figures import energy_figures
from runner.clock import REAL_CLOCK, Clock
from runner.interrupts import InterruptGuard, signal_name
from runner.power import PowerMeter
from runner.record import Fields, RunRecord, now_iso
from runner.serve_bench import counts, measure, records
from runner.serve_bench.client import alive, request_body, stream_request
from runner.serve_bench.counts import Counted
from runner.serve_bench.lag import FLAG_CLIENT_BOUND, ClientLag, CpuMark, CpuUse, send_lags_ms
from runner.serve_bench.lengths import LengthPlan, PromptBuilder
from runner.serve_bench.load import drive_concurrency, drive_rate, frozen_heap, schedule_s
from runner.serve_bench.options import ServeBenchOptions, slo_text
from runner.serve_bench.result import RequestResult, ServerInfo, base_url

if TYPE_CHECKING:
    from runner.environment import Captured  # torch: imported only where a run starts

WORKLOAD = "serve-bench"
TASK = "text-generation"


@dataclass
class Point:
    """What one load point measured, before it becomes a run."""

    results: list[RequestResult]
    reading: EnergyReading
    sampler_offset_s: float | None  # the sampler's start on our clock (None: the meter did not say)
    window_s: float
    stopped: str | None = None  # why the point ended early (a dead server, a signal)
    signum: int | None = None
    counted: Counted | None = None  # how the token counts were decided (runner.serve_bench.counts)
    start_s: float | None = None  # the schedule's start on the requests' clock (their times are kept from it)
    held: set[int] = field(default_factory=set)  # requests that waited for a --max-concurrency slot
    cpu: CpuUse | None = None  # the event loop thread's CPU over the load (runner.serve_bench.lag)


def plan_requests(opts: ServeBenchOptions, point: float, seed: int, builder: PromptBuilder
                  ) -> list[tuple[RequestResult, str]]:
    """The point's requests, seeded: requested lengths and the prompt built for each."""
    rng = random.Random(seed)
    lengths = opts.lengths
    assert isinstance(lengths, LengthPlan)
    out = []
    for i, (p, o) in enumerate(lengths.draw(opts.request_count(point), rng)):
        prompt = builder.build(p, rng)
        out.append((RequestResult(i, p, o, prompt_tokens_client=builder.count_sent(prompt, opts.api)), prompt))
    return out


async def stoppable(work: Any, guard: InterruptGuard | None) -> bool:
    """Await `work`, cancelling it within 0.1 s of a signal (the guard's pending); True when it was stopped."""
    task = asyncio.ensure_future(work)
    while not task.done():
        await asyncio.wait({task}, timeout=0.1)
        if guard is not None and guard.pending is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            return True
    task.result()
    return False


async def _load(opts: ServeBenchOptions, info: ServerInfo, point: float, seed: int,
                planned: list[tuple[RequestResult, str]], clock: Clock, guard: InterruptGuard | None,
                state: dict[str, Any]) -> None:
    root = base_url(opts.target)
    url = root + ("/v1/chat/completions" if opts.api == "chat" else "/v1/completions")
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    in_flight = 0
    check = asyncio.Lock()

    def stop() -> bool:
        if guard is not None and guard.pending is not None and "signum" not in state:
            state["signum"] = guard.pending
            state["stopped"] = f"interrupted by {signal_name(guard.pending)}"
        return "stopped" in state

    async with httpx.AsyncClient(limits=limits) as http:
        async def send(i: int, planned_s: float | None) -> None:
            nonlocal in_flight
            result, prompt = planned[i]
            result.planned_s = planned_s
            result.in_flight_at_send = in_flight
            in_flight += 1
            try:
                await stream_request(http, url, request_body(opts.api, result.model or info.model, prompt,
                                                             result.output_tokens_requested),
                                     result, clock, opts.request_timeout_s, keep_text=opts.tokenizer is not None)
            except asyncio.CancelledError:  # the point was stopped with the request in flight
                result.error_kind, result.error = "failed", "cancelled: the run was stopped"
                raise
            finally:
                in_flight -= 1
                state["sent"].append(result)
            if result.error_kind == "failed" and "stopped" not in state:
                async with check:
                    if "stopped" not in state:
                        why = await alive(http, root)
                        if why is not None:
                            state["stopped"] = f"the server stopped answering: {why} (last request: {result.error})"

        state["start"] = clock.now()
        if opts.load_kind == "rate":
            times = schedule_s(point, len(planned), arrival=opts.arrival, burstiness=opts.burstiness, seed=seed)
            driver = asyncio.ensure_future(drive_rate(times, send, clock=clock, start_s=state["start"],
                                                      max_concurrency=opts.max_concurrency, stop=stop,
                                                      held=state["held"]))
        else:
            driver = asyncio.ensure_future(drive_concurrency(len(planned), int(point), send, stop=stop))
        while not driver.done():  # a signal cancels the requests in flight at once (a dead server fails them)
            await asyncio.wait({driver}, timeout=0.1)
            if stop() and "signum" in state:
                driver.cancel()
                await asyncio.gather(driver, return_exceptions=True)
        stop()


async def _warm_up(opts: ServeBenchOptions, info: ServerInfo, builder: PromptBuilder, clock: Clock) -> list[str]:
    """Sequential requests before the window (a server's first requests are slow); their errors. Each is bounded
    by --request-timeout; a signal cancels them (`stoppable`)."""
    url = base_url(opts.target) + ("/v1/chat/completions" if opts.api == "chat" else "/v1/completions")
    errors = []
    rng = random.Random(opts.seed)
    async with httpx.AsyncClient() as http:
        for i in range(opts.warmup_requests):
            r = RequestResult(i, 8, 4)
            await stream_request(http, url, request_body(opts.api, info.model, builder.build(8, rng), 4), r, clock,
                                 opts.request_timeout_s)
            if r.error:
                errors.append(r.error)
    return errors


def measure_point(opts: ServeBenchOptions, info: ServerInfo, point: float, seed: int, builder: PromptBuilder,
                  meter: PowerMeter, *, clock: Clock = REAL_CLOCK, guard: InterruptGuard | None = None,
                  planned: list[tuple[RequestResult, str]] | None = None) -> Point:
    """Warm up, then drive the point's load inside one meter window."""
    planned = planned if planned is not None else plan_requests(opts, point, seed, builder)
    state: dict[str, Any] = {"sent": [], "held": set()}
    with frozen_heap(), meter.window() as reading:
        mono0, wall0 = clock.now(), clock.wall()
        cpu0 = CpuMark.now()
        try:
            asyncio.run(_load(opts, info, point, seed, planned, clock, guard, state))
        except KeyboardInterrupt:
            state.setdefault("stopped", "interrupted by SIGINT")
        cpu = CpuUse.between(cpu0, CpuMark.now())
        window_s = clock.now() - state.get("start", mono0)
    offset = reading.started_wall_s - (wall0 - mono0) if reading.started_wall_s is not None else None
    counted = counts.reconcile(state["sent"], builder.tokenizer)
    return Point(state["sent"], reading, offset, window_s, state.get("stopped"), state.get("signum"), counted,
                 state.get("start", mono0), state["held"], cpu)


def config(opts: ServeBenchOptions, info: ServerInfo, point: float, seed: int, repeat: int,
           counted_label: str | None = None) -> dict[str, Any]:
    """The point's configuration; `counted_label`: the lengths counted, where not those asked (counts)."""
    lengths = opts.lengths
    assert isinstance(lengths, LengthPlan)
    prompt_mean, output_mean = lengths.requested_means()
    rate = opts.load_kind == "rate"
    out: dict[str, Any] = {
        "workload": WORKLOAD, "model": info.label[:200], "task": TASK, "mode": "infer",
        "load_kind": opts.load_kind, "request_rate_per_s": point if rate else None,
        "max_concurrency": opts.max_concurrency if rate else int(point),
        "arrival": opts.arrival if rate else None,
        "burstiness": opts.burstiness if rate and opts.arrival == "gamma" else None, "seed": seed,
        "engine": info.engine, "engine_version": info.engine_version,
        "prompt_tokens_requested": round(prompt_mean), "output_tokens_requested": round(output_mean),
        "length_distribution": lengths.describe() + (f" ({counted_label})" if counted_label else ""),
        "repeat_index": repeat, "tag": opts.tag,
        "sweep_id": opts.sweep_id,
        "gpu_count": len(opts.gpus) if opts.gpus else 1 if (opts.device or "").startswith("cuda") else None,
    }
    return {k: v for k, v in out.items() if v is not None}


def point_run(opts: ServeBenchOptions, info: ServerInfo, point: float, seed: int, repeat: int, measured: Point,
              captured: Any, started: str) -> dict[str, Any]:
    """One result-file run of a measured point (through runner.record.RunRecord)."""
    results = measured.results
    notes: list[str] = [f"{opts.load_kind} {point:g}: {len(results)} requests sent over {measured.window_s:.3g} s "
                        f"(seed {seed}; {opts.api} API at {base_url(opts.target)})"]
    flags = list(measured.reading.flags)
    counted = measured.counted or Counted()
    flags += [f for f in counted.flags if f not in flags]
    notes += counted.notes + list(info.notes)
    metrics: dict[str, Any] = {}
    status, error = "ok", None
    failed = [r for r in results if not r.ok]
    if failed:
        kinds = {k: sum(1 for r in failed if r.error_kind == k) for k in ("refused", "failed", "timed_out",
                                                                          "too_large")}
        notes.append("errors: " + ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in kinds.items() if n)
                     + f"; first: {failed[0].error}")
    steady = measure.steady_interval(results, opts.load_kind, int(point) if opts.load_kind == "concurrency" else None)
    counted_ids: set[int] | None = None  # the requests the figures cover (None: every request sent)
    if measured.stopped is not None:
        status, error = "interrupted", measured.stopped[:2000]
        ok = [r for r in results if r.ok]
        metrics = {"requests_completed": len(ok), "requests_failed": len(failed),
                   "output_tokens": sum(r.output_tokens or 0 for r in ok),
                   "energy_missing_reason": f"the run was interrupted ({measured.stopped[:300]}) before its "
                                            "steady state completed"}
        notes.append(f"measured until the stop: {len(ok)} requests completed, {len(failed)} failed")
    elif not any(r.ok for r in results):
        status, error = "failed", f"every request failed; first: {failed[0].error if failed else 'none sent'}"[:2000]
        metrics = {"requests_completed": 0, "requests_failed": len(failed),
                   "energy_missing_reason": "no request completed"}
    elif steady is None:
        status = "failed"
        error = ("the load never reached a steady state (too few requests between the ramp and the drain): "
                 "send more requests (--requests or --duration)")
        metrics = {"requests_completed": sum(1 for r in results if r.ok), "requests_failed": len(failed),
                   "energy_missing_reason": "no steady state"}
    else:
        metrics, load, more = measure.figures(results, steady, opts.load_kind, opts.slo)
        counted_ids = {r.index for r in measure.population(results, steady, load)}
        notes += more
        if load.overloaded:
            flags.append(measure.FLAG_OVERLOADED)
        if not metrics["requests_completed"]:  # a rate of 0 is no measurement: nothing was served inside it
            status = "failed"
            error = (f"no request completed inside the steady state ({steady.duration_s:.3g} s, {steady.why}): "
                     "nothing was served to measure; send more requests (--requests or --duration) or a lower rate")
            metrics = {"requests_completed": 0, "requests_failed": metrics["requests_failed"],
                       "energy_missing_reason": "no request completed inside the steady state"}
        else:
            if opts.slo:
                metrics["goodput_slo"] = slo_text(opts.slo)
            metrics.update(_energy(measured, steady, metrics, flags))
    start_s = measured.start_s if measured.start_s is not None else min((r.sent_s for r in results), default=0.0)
    client = ClientLag(tuple(send_lags_ms(steady.requests if steady else results, start_s, measured.held)),
                       measured.cpu, held=sum(1 for r in (steady.requests if steady else results)
                                              if r.index in measured.held))
    metrics.update(client.metrics())
    if client.lags_ms or client.cpu is not None:
        notes.append(client.note(metrics.get("ttft_p50_ms")))
    if client.bound(metrics.get("ttft_p50_ms")):
        flags.append(FLAG_CLIENT_BOUND)
    requests = records.point_requests(results, counted_ids, start_s)
    kept, retention = jr.retain(requests)
    if retention:
        flags.append(jr.FLAG_TRUNCATED)
        notes.append(retention)
    if requests:
        notes.append(f"every request kept ({len(requests)}; {sum(1 for r in requests if r.counted)} counted in the "
                     "figures): the latency figures, requests completed and failed and the mean lengths are "
                     "computed from the counted ones")
    if opts.tokenizer is None:
        notes.append("prompts of about the requested length (words; no --tokenizer): actual lengths are the server's")
    if info.engine is None:
        notes.append("the server did not name its engine (/version, /v1/models, headers): give --engine")
    if opts.server_device:
        notes.append(f"served on another machine: device as named (--server-device), power from its log "
                     f"({opts.power_log.name if opts.power_log else '?'}); this machine was the client, its software "
                     "not recorded")
    run = RunRecord(
        run_id=str(uuid.uuid4()), status=status, error=error, started_at=started, ended_at=now_iso(),
        device=captured.device, environment=dict(captured.environment),
        config=Fields({**config(opts, info, point, seed, repeat, counted.label), **_settings(captured)}, "config"),
        metrics=Fields(metrics, "metrics"),
        flags=flags,
        power_traces=measured.reading.traces if status == "ok" else [], notes="; ".join(notes)[:10_000],
    ).to_json()
    if requests:
        run["requests"] = [r.to_json() for r in kept]
        if retention:
            run["requests_total"] = len(requests)
    return run


def _settings(captured: Captured) -> dict[str, Any]:
    """The power setting in effect on the measured device (a GPU's limit, a Jetson's nvpmodel mode), where read."""
    out = {"power_limit_w": captured.power_limit_w, "power_mode": captured.power_mode}
    return {k: v for k, v in out.items() if v is not None}


def _energy(measured: Point, steady: measure.Steady, metrics: dict[str, Any], flags: list[str]) -> dict[str, Any]:
    reading = measured.reading
    out: dict[str, Any] = {k: v for k, v in reading.metrics.items() if v is not None}
    energy_j: float | None
    why: str | None
    if measured.sampler_offset_s is None:
        energy_j, why = None, "the meter did not say when its window started: the steady state cannot be cut from it"
    else:
        energy_j, why = measure.steady_energy_j(reading, steady.start_s - measured.sampler_offset_s,
                                                steady.end_s - measured.sampler_offset_s)
    out.update(energy_figures(energy_j, boundary=reading.boundary, method=reading.method,
                              examples=metrics.get("requests_completed"), duration_s=steady.duration_s,
                              missing_reason=why, flags=flags))
    if "energy_j" in out:
        if metrics.get("output_tokens"):
            out["j_per_token"] = out["energy_j"] / metrics["output_tokens"]
        if metrics.get("requests_completed"):
            out["j_per_request"] = out["energy_j"] / metrics["requests_completed"]
        if metrics.get("goodput_requests_per_s") is not None:  # the good requests over the same interval's energy
            out["goodput_requests_per_j"] = metrics["goodput_requests_per_s"] * steady.duration_s / out["energy_j"]
    return out


def sweep_rates(single_rps: float, saturation_rps: float, points: int) -> list[float]:
    """--rate sweep's rates: `points` evenly spaced from one stream's rate to saturation, the first above one
    stream's and the last at saturation (GuideLLM's sweep), 4 significant digits, each once, all above 0."""
    top = max(single_rps, saturation_rps)
    out: list[float] = []
    for k in range(1, points + 1):
        rate = float(f"{single_rps + (top - single_rps) * k / points:.4g}")
        if rate > 0 and rate not in out:
            out.append(rate)
    return out


def _measure(opts: ServeBenchOptions, info: ServerInfo, point: float, repeat: int, meter: PowerMeter,
             builder: PromptBuilder, captured: Any, guard: InterruptGuard, stream: TextIO) -> tuple[dict[str, Any],
                                                                                                     str | None]:
    """One point x repeat: warm-up, the load, the run; with why the sweep must stop (None: go on)."""
    seed = opts.seed + repeat
    started = now_iso()
    if opts.warmup_requests:
        print(f"warming up: {opts.warmup_requests} request(s), not measured", file=stream, flush=True)
        errors: list[str] = []
        if asyncio.run(stoppable(_warm_up_into(errors, opts, info, builder), guard)):
            signum = guard.pending or 0
            why = f"interrupted by {signal_name(signum)} during the warm-up"
            measured = Point([], EnergyReading(), None, 0.0, why, signum, Counted())
            return point_run(opts, info, point, seed, repeat, measured, captured, started), why
        if errors and len(errors) == opts.warmup_requests:
            print(f"warning: every warm-up request failed ({errors[0]})", file=stream, flush=True)
    print(f"{opts.load_kind} {point:g} (repeat {repeat}, seed {seed}): sending "
          f"{opts.request_count(point)} requests", file=stream, flush=True)
    measured = measure_point(opts, info, point, seed, builder, meter, guard=guard)
    for warning in (measured.counted.warnings if measured.counted else []):
        print(warning, file=stream, flush=True)
    return point_run(opts, info, point, seed, repeat, measured, captured, started), measured.stopped


async def _warm_up_into(errors: list[str], opts: ServeBenchOptions, info: ServerInfo, builder: PromptBuilder) -> None:
    errors += await _warm_up(opts, info, builder, REAL_CLOCK)


def placeholder(opts: ServeBenchOptions, info: ServerInfo, point: float, repeat: int, captured: Any) -> dict[str, Any]:
    """The point about to be measured, as it is recorded should the process be killed during it (the sweep's
    marker: ingest.recover)."""
    return RunRecord(
        run_id=str(uuid.uuid4()), status="interrupted", error="killed", started_at=now_iso(), ended_at=now_iso(),
        device=captured.device, environment=dict(captured.environment),
        config=Fields({**config(opts, info, point, opts.seed + repeat, repeat), **_settings(captured)}, "config"),
        metrics=Fields({}, "metrics"), flags=[], power_traces=[],
        notes=f"{opts.load_kind} {point:g}: the point in progress when serve-bench was killed").to_json()


def _probe_rate(run: dict[str, Any], what: str) -> tuple[float | None, str | None]:
    """A sweep probe's requests/s, or why it gave none."""
    rate = run.get("metrics", {}).get("requests_per_s")
    if run["status"] == "ok" and rate:
        return float(rate), None
    return None, (f"--rate sweep: the {what} probe measured no requests/s ({run['status']}: "
                  f"{run.get('error') or 'no steady state'}); the sweep stops, its probes kept")


def run_points(opts: ServeBenchOptions, info: ServerInfo, meter: PowerMeter, builder: PromptBuilder,
               captured: Any, sink: Any, guard: InterruptGuard, stream: TextIO | None = None) -> list[dict[str, Any]]:
    """Every point x repeat, each run added to the sink as it ends; stops at a dead server or a signal.

    --rate sweep: first one stream (concurrency 1) and the throughput probe (concurrency
    `opts.probe_concurrency`), each a run, then `opts.sweep_points` rates between their requests/s
    (`sweep_rates`), each a run (repeats: the rates again, new seeds). The runs share the result file (one
    source) and each one's notes name the sweep's single-stream and saturation rates."""
    stream = stream or sys.stderr
    runs: list[dict[str, Any]] = []

    def one(point_opts: ServeBenchOptions, point: float, repeat: int, note: str | None = None) -> bool:
        about_to_run = getattr(sink, "about_to_run", None)
        if about_to_run is not None:
            about_to_run(placeholder(point_opts, info, point, repeat, captured))
        run, stopped = _measure(point_opts, info, point, repeat, meter, builder, captured, guard, stream)
        if note:
            run["notes"] = f"{run['notes']}; {note}"[:10_000]
        runs.append(run)
        sink.add(run)
        if about_to_run is not None:
            about_to_run(None)
        if stopped is not None:
            print(f"stopped: {stopped}", file=stream, flush=True)
        return stopped is None

    plan: list[tuple[ServeBenchOptions, float, str | None]] = [(opts, p, None) for p in opts.points()]
    if opts.rate_sweep:
        closed = replace(opts, rates=[], concurrencies=[1], rate_sweep=False)
        found: dict[str, float] = {}
        for what, streams in (("single-stream", 1), ("saturation", opts.probe_concurrency)):
            if guard.pending is not None:
                return runs
            probe_opts = replace(closed, concurrencies=[streams], max_concurrency=None)
            if not one(probe_opts, float(streams), 0, f"rate sweep: the {what} probe (concurrency {streams})"):
                return runs
            rate, why = _probe_rate(runs[-1], what)
            if rate is None:
                print(why, file=stream, flush=True)
                return runs
            found[what] = rate
        rates = sweep_rates(found["single-stream"], found["saturation"], opts.sweep_points)
        print(f"rate sweep: one stream {found['single-stream']:.4g} requests/s, saturation "
              f"{found['saturation']:.4g} requests/s; rates {', '.join(f'{r:g}' for r in rates)}", file=stream,
              flush=True)
        rate_opts = replace(opts, rates=rates, rate_sweep=False)
        plan = [(rate_opts, r, f"rate sweep: rate {k} of {len(rates)} between one stream "
                               f"({found['single-stream']:.4g} requests/s) and saturation "
                               f"({found['saturation']:.4g} requests/s, concurrency {opts.probe_concurrency})")
                for k, r in enumerate(rates, 1)]
    for repeat in range(opts.repeats):
        for point_opts, point, note in plan:
            if guard.pending is not None:
                return runs
            if not one(point_opts, point, repeat, note):
                return runs
    return runs
