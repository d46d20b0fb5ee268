"""Cheap power-setting profiles: `joulebench run ... --power-limit 100,125,150,170 --profile`.

Where a sweep builds the model again for every power setting, a profile builds each configuration
once and measures every setting inside the same process: change the setting, let it settle, run
warm up, measure a window with `runner.measure.run_window` (so the energy-grade window rules of the
measurement code apply), go on. Each setting becomes its own run, marked `config.profile`, with the
setting requested and the one in effect. The idle baseline is measured once per setting (not per
configuration). The result file is written after every setting, and the previous setting is put
back as in a sweep (`runner.control.PowerSettings`): at the end, on an error, on SIGINT/SIGTERM.
With `--power-dry-run` nothing is changed: the settings are recorded as requested, not applied.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

import torch

import runner.devices as devices
import runner.environment as environment
import runner.precision as precision
import runner.record as record
from joulebench.errors import JouleBenchError
from runner.control import PowerControl, PowerSettings, restore_leftover, state_path_for
from runner.execute import MAX_ERROR_CHARS, build, train_step, window_plan
from runner.generation import GenerationWindows, measure_generation
from runner.idle import idle_power_w, measure_idle
from runner.interrupts import InterruptGuard, SweepInterrupted, signal_name
from runner.measure import Window, run_window
from runner.options import RunConfig, SweepOptions
from runner.output import ResultSink, unique_out_path
from runner.power import PowerMeter, has_sensor
from runner.report import Progress
from runner.sweep import SweepResult, finish, make_meter


@dataclass
class _State:
    """What the loop shares: the result, idle power per setting, where the file goes."""

    options: SweepOptions
    result: SweepResult
    sink: ResultSink
    guard: InterruptGuard
    meter: PowerMeter
    stream: TextIO
    progress: Progress
    idle_w: dict[str, float | None] = field(default_factory=dict)
    index: int = 0

    def save(self, run: record.RunRecord) -> None:
        self.result.runs.append(run)
        self.sink.add(run)  # finished settings survive even a hard kill
        self.sink.about_to_run(None)


def _wait(seconds: float, guard: InterruptGuard, sleep: Callable[[float], None] = time.sleep) -> None:
    deadline = time.monotonic() + seconds
    while guard.pending is None and time.monotonic() < deadline:
        sleep(min(0.1, max(0.0, deadline - time.monotonic())))


def _error_text(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".strip()
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + " ..."


def _requested(options: SweepOptions, setting: Any) -> dict[str, Any]:
    key = "power_limit_requested_w" if options.power_limits_w else "power_mode_requested"
    return {key: setting, "profile": True}


@contextlib.contextmanager
def _window_context(cfg: RunConfig, device: torch.device) -> Iterator[None]:
    """Inference mode and autocast around an inference window (training enters autocast per step)."""
    if cfg.mode == "train":
        yield
        return
    with torch.inference_mode(), precision.autocast(precision.get(cfg.precision), device):
        yield


def run_profile(options: SweepOptions, *, meter: PowerMeter | None = None, control: PowerControl | None = None,
                ingest: bool = True, stream: TextIO | None = None) -> SweepResult:
    """Validate (RunConfigError before anything runs), then per configuration: build once, and
    per power setting apply, settle, measure. SIGINT/SIGTERM end it cleanly; the setting is restored."""
    stream = stream or sys.stderr
    state_path = state_path_for(options.db)
    restore_leftover(state_path, stream)
    options.validate()
    settings: list[Any] = list(options.power_values() or [])
    sink = ResultSink(options.out or unique_out_path(options.db, "profile"), options.db, stream)
    result = SweepResult(out_path=sink.out_path)
    control = control or options.make_control()
    assert control is not None  # validate() requires --power-limit or --power-mode with --profile
    own_meter = meter is None
    meter = meter or make_meter(options, stream)
    configs = options.expand(sensor=has_sensor(meter))  # energy-grade windows on a real sensor
    dry = "" if control.changes_device else " (dry run: settings recorded, not applied)"
    print(f"profile: {len(configs)} configuration(s) x {len(settings)} setting(s), one model build each{dry}",
          file=stream, flush=True)
    sink.start(recover=ingest)
    with InterruptGuard() as guard:
        state = _State(options, result, sink, guard, meter, stream, Progress(len(configs) * len(settings), stream))
        try:
            with PowerSettings(control, state_path, stream) as power:
                for cfg in configs:
                    if guard.pending is not None:
                        break
                    _profile_config(cfg, settings, control, power, state)
        finally:
            if own_meter:
                meter.close()
            control.close()
        finish(result, sink, guard, ingest=ingest, stream=stream)
    return result


def _profile_config(cfg: RunConfig, settings: list[Any], control: PowerControl, power: PowerSettings,
                    state: _State) -> None:
    """One configuration: one model build, then every setting in turn. A failure ends this
    configuration (recorded at the setting it happened); an interrupt ends the profile."""
    device = devices.resolve(cfg.device)
    at = _Where(settings[0], record.now_iso())
    status, error = "ok", None
    try:
        _measure_settings(cfg, settings, control, power, state, device, at)
    except (SweepInterrupted, KeyboardInterrupt) as e:
        signum = e.signum if isinstance(e, SweepInterrupted) else int(signal.SIGINT)
        state.guard.pending = state.guard.pending or signum
        status, error = "interrupted", f"interrupted by {signal_name(signum)} during the profile"
    except JouleBenchError:
        raise  # a power control or sensor error: the profile cannot go on (the setting is restored)
    except Exception as e:
        if record.is_out_of_memory(e):  # the one classifier every mode uses (a device's, the host's, wrapped)
            status, error = "oom", _error_text(e)
        else:
            status, error = "failed", _error_text(e)
            print(f"profile failed at {control.describe(at.setting)}: {cfg.label()}: {error}", file=state.stream)
            traceback.print_exc(limit=-3, file=state.stream)
    # Outside the except blocks: the exception and its frames (model, activations) are gone.
    devices.free_memory(device)
    if status != "ok":
        run = record.run_record(cfg, run_id=str(uuid.uuid4()), status=status, error=error, started_at=at.started,
                                ended_at=record.now_iso(), captured=at.captured, tf32_enabled=None, window=None,
                                memory=None, flags=at.flags, requested=_requested(state.options, at.setting))
        state.save(run)
        state.progress.finish(state.index, run)
        state.index += 1


@dataclass
class _Where:
    """Where a configuration's profile is: the setting being measured, since when, what is in effect."""

    setting: Any
    started: str
    captured: environment.Captured | None = None
    flags: list[str] = field(default_factory=list)


def _measure_settings(cfg: RunConfig, settings: list[Any], control: PowerControl, power: PowerSettings,
                      state: _State, device: torch.device, at: _Where) -> None:
    prec = precision.get(cfg.precision)
    with state.guard.armed():
        at.captured = environment.capture(device)
        if not devices.reset_peak_memory(device) and device.type == "cpu":
            at.flags.append("mem_peak_rss_not_reset")
        with precision.tf32_setting(prec, device) as tf32:
            if cfg.precision == "tf32" and not tf32:
                at.flags.append("tf32_not_supported_by_device")
            model, inputs = build(cfg, device)
            step: Callable[[], object]
            step = train_step(model, inputs, cfg, device) if cfg.mode == "train" else (lambda: model(**inputs))
            for setting in settings:
                at.setting, at.started = setting, record.now_iso()
                at.captured = _at_setting(setting, control, power, state, device)
                state.sink.about_to_run(record.placeholder(cfg, _requested(state.options, setting)))
                state.progress.start(state.index, cfg)
                window: Window | GenerationWindows
                if cfg.max_new_tokens is not None:  # a generation workload: prefill and decode apart
                    with torch.inference_mode():
                        window = measure_generation(model, inputs, cfg.max_new_tokens, device,
                                                    plan=window_plan(cfg, state.meter), meter=state.meter,
                                                    on_step=state.progress.step_callback(cfg))
                else:
                    with _window_context(cfg, device):
                        window = run_window(step, device, plan=window_plan(cfg, state.meter), meter=state.meter,
                                            on_step=state.progress.step_callback(cfg))
                run = _run(cfg, setting, state, device, at.started, at.captured, tf32, window, at.flags)
                state.save(run)
                state.progress.finish(state.index, run)
                state.index += 1
                if state.guard.pending is not None:
                    return


def _at_setting(setting: Any, control: PowerControl, power: PowerSettings, state: _State,
                device: torch.device) -> environment.Captured:
    """Apply the setting, settle, measure the idle baseline once per setting; what is in effect."""
    options, stream = state.options, state.stream
    print(f"setting {control.describe(setting)}", file=stream, flush=True)
    if power.apply(setting) and options.settle_s:
        print(f"    settling for {options.settle_s:g} s", file=stream, flush=True)
        _wait(options.settle_s, state.guard)
    key = str(setting)
    if options.idle and key not in state.idle_w and state.guard.pending is None:
        print(f"    idle baseline: {options.idle_s:g} s", file=stream, flush=True)
        requested = _requested(options, setting)
        idle = measure_idle(state.meter, options.idle_s, options.resolved_device(), requested=requested,
                            tag=options.tag)
        state.result.runs.append(idle)
        state.sink.add(idle)
        state.idle_w[key] = idle_power_w(idle)
    if state.guard.pending is not None:
        raise SweepInterrupted(state.guard.pending)
    return environment.capture(device)


def _run(cfg: RunConfig, setting: Any, state: _State, device: torch.device, started: str,
         captured: environment.Captured, tf32: bool | None, window: Window | GenerationWindows,
         flags: list[str]) -> record.RunRecord:
    memory = devices.read_peak_memory(device, devices.kind_of(device))
    return record.run_record(cfg, run_id=str(uuid.uuid4()), status="ok", error=None, started_at=started,
                             ended_at=record.now_iso(), captured=captured, tf32_enabled=tf32, window=window,
                             memory=memory, flags=list(flags), idle_power_w=state.idle_w.get(str(setting)),
                             requested=_requested(state.options, setting))
