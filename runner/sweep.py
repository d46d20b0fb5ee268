"""A sweep: one run per combination of the options, one result file, one ingest.

With --power-limit / --power-mode the combinations run once per power setting (outer loop):
set it, wait the settle time, measure the idle baseline (unless --no-idle), then the runs.
The previous setting is restored when the sweep ends however it ends (runner.control).
"""

from __future__ import annotations

import contextlib
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import runner.record as record
from joulebench.errors import JouleBenchError
from joulebench.paths import progress_file
from runner.control import PowerSettings, restore_leftover, state_path_for
from runner.execute import execute
from runner.idle import idle_power_w, measure_idle
from runner.interrupts import InterruptGuard, exit_code, signal_name
from runner.options import RunConfig, SweepOptions
from runner.output import ResultSink, unique_out_path
from runner.power import PowerMeter, has_sensor
from runner.record import RunRecord
from runner.report import Progress

if TYPE_CHECKING:
    from db import IngestReport


@dataclass
class SweepResult:
    runs: list[RunRecord | dict[str, Any]] = field(default_factory=list)  # runs recorded here, or read back
    out_path: Path | None = None
    ingest: IngestReport | None = None
    ingest_error: JouleBenchError | None = None
    interrupted_by: int | None = None

    @property
    def exit_code(self) -> int:
        """128 + signal when interrupted; the ingest error's code; 1 when a run failed; else 0.
        Out-of-memory is an outcome, not a failure."""
        if self.interrupted_by is not None:
            return exit_code(self.interrupted_by)
        if self.ingest_error is not None:
            return self.ingest_error.exit_code
        return 1 if any(r["status"] == "failed" for r in self.runs) else 0


def make_meter(options: SweepOptions, stream: TextIO) -> PowerMeter:
    """The power meter for this sweep (detection in the fixed order of runner.sensors)."""
    from runner.sensors import detect_meter

    detection = detect_meter(options.resolved_device(), power_log=options.power_log,
                             log_boundary=options.power_log_boundary, tdp_w=options.tdp_w, rate_hz=options.sample_hz)
    meter = detection.meter
    describe = getattr(meter, "describe", lambda: meter.name)()
    print(f"energy: {describe}", file=stream, flush=True)
    return meter


def _describe_plan(configs: list[RunConfig], stream: TextIO) -> None:
    """One line on how each run warms up and how long it measures."""
    if not configs:
        return
    cfg = configs[0]
    warmup = "until power and step time are steady" if cfg.warmup_steps is None else f"{cfg.warmup_steps} step(s)"
    if cfg.steps is not None:
        window = f"{cfg.steps} step(s)"
    elif cfg.duration_s is not None:
        window = f"{cfg.duration_s:g} s"
    else:
        window = f"at least {cfg.min_window_s:g} s"
    repeats = 1 + max(c.repeat_index for c in configs)
    print(f"each run: warmup {warmup}, window {window}; {repeats} repeat(s) per configuration", file=stream,
          flush=True)


def _wait(seconds: float, guard: InterruptGuard) -> None:
    deadline = time.monotonic() + seconds
    while guard.pending is None and time.monotonic() < deadline:
        time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))


def run_sweep(options: SweepOptions, *, meter: PowerMeter | None = None, ingest: bool = True,
              stream: TextIO | None = None) -> SweepResult:
    """Validate (raising RunConfigError before anything runs), run every combination, write the
    result file after each run, then ingest it. SIGINT/SIGTERM end the sweep cleanly."""
    stream = stream or sys.stderr
    state_path = state_path_for(options.db)
    restore_leftover(state_path, stream)  # a setting a killed sweep left behind
    options.validate()
    control = options.make_control()
    own_meter = meter is None
    meter = meter or make_meter(options, stream)
    configs = options.expand(sensor=has_sensor(meter))  # energy-grade defaults on a real sensor
    sink = ResultSink(options.out or unique_out_path(options.db), options.db, stream)
    result = SweepResult(out_path=sink.out_path)
    settings: list[Any] = list(options.power_values() or [None])
    progress = Progress(len(configs) * len(settings), stream, progress_file(sink.out_path),
                        idle_runs=len(settings) if options.idle else 0, idle_s=options.idle_s)
    _describe_plan(configs, stream)
    sink.start(recover=ingest)
    with InterruptGuard() as guard:
        try:
            with PowerSettings(control, state_path, stream) if control else contextlib.nullcontext() as power:
                _loop(options, configs, settings, control, power, meter, guard, progress, result, sink, stream)
        finally:
            progress.close()
            if own_meter:
                meter.close()
            if control is not None:
                control.close()
        finish(result, sink, guard, ingest=ingest, stream=stream)
    return result


def finish(result: SweepResult, sink: ResultSink, guard: InterruptGuard, *, ingest: bool, stream: TextIO) -> None:
    """After the last run (or an interrupt): say why it stopped, write the result file, import it;
    where neither can be done, print the runs as a result file rather than lose them."""
    result.interrupted_by = guard.pending
    if result.interrupted_by is not None:
        print(f"{signal_name(result.interrupted_by)} received: stopping; keeping {len(result.runs)} run(s)",
              file=stream, flush=True)
    if not result.runs:
        sink.finish_without_ingest()
        result.out_path = None
        return
    written = sink.write()
    result.out_path = written
    if written is not None:
        print(f"wrote {len(result.runs)} run(s) to {written}", file=stream, flush=True)
    if not ingest:
        sink.finish_without_ingest()
        return
    try:
        result.ingest = sink.ingest()
    except JouleBenchError as e:
        result.ingest_error = e
        sink.name_file_in_marker()  # a full disk may have taken the file elsewhere: the next open must find it
        why = " ".join(e.format_message().split())[:300]
        print(f"{_not_imported(sink, written)} (why: {why})", file=stream, flush=True)
    if written is None and result.ingest is None:
        print("the runs could be neither written nor imported; here they are as a result file:",
              file=stream, flush=True)
        sink.dump_to(sys.stdout)


def _not_imported(sink: ResultSink, written: Path | None) -> str:
    """Where the runs of a sweep whose import failed are, as the disk shows it now (not as hoped)."""
    if written is None or not written.exists():
        return "the runs were not imported, and no result file holds them (none could be written)"
    marker = sink.marker
    later = ("; the next open of the database imports it" if marker is not None and marker.path.exists()
             else f"; import it with `joulebench import {written} --kind local`")
    return f"the runs were not imported: {written} holds them{later}"


def _loop(options: SweepOptions, configs: list[Any], settings: list[Any], control: Any, power: Any,
          meter: PowerMeter, guard: InterruptGuard, progress: Progress, result: SweepResult, sink: ResultSink,
          stream: TextIO) -> None:
    """Per power setting: set it and settle, the idle baseline, then every configuration."""
    index = 0
    for setting in settings:
        if guard.pending is not None:
            return
        requested: dict[str, Any] | None = None
        if setting is not None and control is not None and power is not None:
            key = "power_limit_requested_w" if options.power_limits_w else "power_mode_requested"
            requested = {key: setting}
            print(f"setting {control.describe(setting)}", file=stream, flush=True)
            if power.apply(setting) and options.settle_s:
                print(f"    settling for {options.settle_s:g} s", file=stream, flush=True)
                _wait(options.settle_s, guard)
        idle_w = None
        if options.idle and guard.pending is None:
            print(f"    idle baseline: {options.idle_s:g} s", file=stream, flush=True)
            progress.idle(options.idle_s)
            idle = measure_idle(meter, options.idle_s, options.resolved_device(), guard=guard,
                                requested=requested, tag=options.tag)
            result.runs.append(idle)
            sink.add(idle)
            idle_w = idle_power_w(idle)
            shown = f"{idle_w:.2f} W" if idle_w else idle["metrics"].get("energy_missing_reason", "-")
            print(f"    idle power: {shown}", file=stream, flush=True)
            if idle["status"] == "interrupted":
                return
        for cfg in configs:
            if guard.pending is not None:
                return
            progress.start(index, cfg)
            sink.about_to_run(record.placeholder(cfg, requested))
            outcome = execute(cfg, meter=meter, guard=guard, on_step=progress.step_callback(cfg),
                              idle_power_w=idle_w, requested=requested)
            result.runs.append(outcome.record)
            sink.add(outcome.record)  # finished runs survive even a hard kill
            sink.about_to_run(None)
            progress.finish(index, outcome.record)
            index += 1
            if outcome.interrupted_by is not None:
                return
