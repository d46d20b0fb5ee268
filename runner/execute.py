"""Running one configuration: build the model, run the timed loop, record the outcome.

Outcomes are data, not crashes: out-of-memory (`runner.record.is_out_of_memory`: a device's or the
host's, in any mode) is recorded as `oom` (and the memory freed), any other error as `failed` with
the error, a signal as `interrupted`.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

import runner.devices as devices
import runner.environment as environment
import runner.options as options
import runner.precision as precision
import runner.workloads as workloads
from joulebench import defaults
from runner.generation import GenerationWindows, measure_generation
from runner.interrupts import InterruptGuard, SweepInterrupted, signal_name
from runner.measure import Window, WindowPlan, run_window
from runner.options import RunConfig
from runner.power import PowerMeter, has_sensor
from runner.record import RunRecord, is_out_of_memory, now_iso, run_record
from runner.sensors import detect
from runner.serving import Served, serve

MAX_ERROR_CHARS = 2000


@dataclass(frozen=True)
class RunResult:
    record: RunRecord  # the result-file run, typed until the sweep writes it
    interrupted_by: int | None = None  # the signal that interrupted it


def _loss(output: Any) -> torch.Tensor:
    loss = output["loss"] if isinstance(output, dict) else output.loss
    if loss is None:
        raise RuntimeError("the model returned no loss; its inputs must include labels for training")
    return loss


def build(cfg: RunConfig, device: torch.device) -> tuple[torch.nn.Module, dict[str, torch.Tensor]]:
    """The model (random weights, seeded) on `device` and one synthetic batch."""
    spec = workloads.get(cfg.workload)
    prec = precision.for_workload(cfg.precision, spec.generates)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    if spec.generates:  # built in place: an 8B model's fp32 weights would not fit host memory first
        default_dtype = torch.get_default_dtype()
        torch.set_default_dtype(prec.weights_dtype or default_dtype)
        try:
            with device:
                model = spec.build(cfg.size)
        finally:
            torch.set_default_dtype(default_dtype)
    else:
        model = spec.build(cfg.size)
    if prec.weights_dtype is not None:
        model = model.to(dtype=prec.weights_dtype)
    model = model.to(device)
    train = cfg.mode == "train"
    model.train(train)
    inputs = precision.cast_inputs(spec.make_inputs(cfg.batch_size, cfg.size, device, train, gen), prec)
    if cfg.compile:
        model = torch.compile(model)  # type: ignore[assignment]
    return model, inputs


def train_step(model: torch.nn.Module, inputs: dict[str, torch.Tensor], cfg: RunConfig,
               device: torch.device) -> Callable[[], None]:
    """One optimizer step: m micro-batches of n (AdamW; GradScaler under fp16)."""
    prec = precision.get(cfg.precision)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    scaler = precision.grad_scaler(prec, device)
    m = cfg.grad_accum_steps

    def step() -> None:
        for _ in range(m):
            with precision.autocast(prec, device):
                loss = _loss(model(**inputs)) / m
            if scaler is not None:
                scaler.scale(loss).backward()
            else:
                loss.backward()
        if scaler is not None:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def window_plan(cfg: RunConfig, meter: PowerMeter) -> WindowPlan:
    """The warmup and window for `cfg` on this meter: on a real sensor each window starts at a
    random offset within one sensor update period, so repeats see the sensor at different phases."""
    return WindowPlan(steps=cfg.steps, duration_s=cfg.duration_s, min_window_s=cfg.min_window_s,
                      warmup_steps=cfg.warmup_steps, random_offset=has_sensor(meter))


def serving_requests(cfg: RunConfig) -> int:
    """How many requests a serving run sends (`runner.options.serving_requests`)."""
    return options.serving_requests(cfg.request_rate_per_s or 1.0, cfg.batch_size, steps=cfg.steps,
                                    duration_s=cfg.duration_s, min_window_s=cfg.min_window_s)


def measure_config(cfg: RunConfig, device: torch.device, meter: PowerMeter,
                   on_step: Callable[[int], None] | None = None) -> Window | GenerationWindows | Served:
    """Build and measure one configuration (assumes the TF32 flags are already set)."""
    model, inputs = build(cfg, device)
    prec = precision.for_workload(cfg.precision, workloads.get(cfg.workload).generates)
    window_args: dict[str, Any] = {"plan": window_plan(cfg, meter), "meter": meter, "on_step": on_step}
    if cfg.mode == "train":
        return run_window(train_step(model, inputs, cfg, device), device, **window_args)
    if cfg.max_new_tokens is not None and cfg.request_rate_per_s is not None:
        with torch.inference_mode():
            return serve(model, inputs, cfg.max_new_tokens, cfg.batch_size, cfg.request_rate_per_s,
                         serving_requests(cfg), device, meter=meter, on_step=on_step,
                         warmup_batches=defaults.WARMUP_STEPS if cfg.warmup_steps is None else cfg.warmup_steps)
    if cfg.max_new_tokens is not None:
        with torch.inference_mode():
            return measure_generation(model, inputs, cfg.max_new_tokens, device, **window_args)
    # Inference: inference mode and autocast are entered once around the whole loop.
    with torch.inference_mode(), precision.autocast(prec, device):
        return run_window(lambda: model(**inputs), device, **window_args)


def _error_text(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".strip()
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + " ..."


def _checked(on_step: Callable[[int], None] | None, guard: InterruptGuard | None) -> Callable[[int], None] | None:
    """The step callback, asking the guard after each step for a signal whose exception was dropped."""
    if guard is None:
        return on_step

    def step(done: int) -> None:
        guard.check()
        if on_step is not None:
            on_step(done)

    return step


def execute(cfg: RunConfig, *, meter: PowerMeter | None = None, guard: InterruptGuard | None = None,
            on_step: Callable[[int], None] | None = None, idle_power_w: float | None = None,
            requested: dict[str, Any] | None = None) -> RunResult:
    """Run one configuration and return its result-file run, whatever the outcome.
    `idle_power_w`: the idle baseline at this power setting (for net J/example); `requested`:
    the power setting the sweep asked for (config.power_limit_requested_w / power_mode_requested)."""
    own_meter = meter is None
    meter = meter or detect()  # the first sensor found (NVML, Jetson, RAPL), else the estimate
    started = now_iso()
    device = devices.resolve(cfg.device)
    status, error, interrupted_by = "ok", None, None
    captured = window = memory = None
    tf32: bool | None = None
    flags: list[str] = []
    armed = guard.armed() if guard is not None else contextlib.nullcontext()
    try:
        with armed:
            captured = environment.capture(device)
            if not devices.reset_peak_memory(device) and device.type == "cpu":
                flags.append("mem_peak_rss_not_reset")  # the RSS peak is the process lifetime's
            with precision.tf32_setting(precision.get(cfg.precision), device) as tf32:
                if cfg.precision == "tf32" and not tf32:
                    flags.append("tf32_not_supported_by_device")  # flags on, but no TF32 units (pre-Ampere)
                window = measure_config(cfg, device, meter, _checked(on_step, guard))
            memory = devices.read_peak_memory(device, devices.kind_of(device))
    except (SweepInterrupted, KeyboardInterrupt) as e:
        interrupted_by = e.signum if isinstance(e, SweepInterrupted) else int(signal.SIGINT)
        status, error = "interrupted", f"interrupted by {signal_name(interrupted_by)} during the run"
    except Exception as e:  # MemoryError is an Exception too: every mode's OOM is classified here
        if is_out_of_memory(e):
            status, error = "oom", _error_text(e)
        else:
            status, error = "failed", _error_text(e)
            print(f"run failed: {cfg.label()}: {error}", file=sys.stderr)
            traceback.print_exc(limit=-3, file=sys.stderr)  # the innermost frames, for a bug report
    finally:
        if own_meter:
            meter.close()
    # Outside the except blocks: the exception and its frames (model, activations) are gone.
    devices.free_memory(device)
    record = run_record(cfg, run_id=str(uuid.uuid4()), status=status, error=error, started_at=started,
                        ended_at=now_iso(), captured=captured, tf32_enabled=tf32, window=window,
                        memory=memory, flags=flags, idle_power_w=idle_power_w, requested=requested)
    return RunResult(record, interrupted_by)
