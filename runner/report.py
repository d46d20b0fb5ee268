"""What a sweep shows a person: a progress bar on stderr, a summary table at the end."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from joulebench.text import table
from runner.options import RunConfig

BAR_WIDTH = 20


def _num(value: Any, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def outcome_line(record: dict[str, Any]) -> str:
    m = record.get("metrics", {})
    if record["status"] != "ok":
        return f"{record['status']}: {record.get('error', '')}"
    mem = m.get("mem_peak_allocated_mb", m.get("mem_peak_rss_mb"))
    return (f"ok  {_num(m.get('throughput_sps'))} samples/s  p50 {_num(m.get('latency_p50_ms'), 2)} ms  "
            f"p99 {_num(m.get('latency_p99_ms'), 2)} ms  peak memory {_num(mem, 0)} MB")


class Progress:
    """`[#####---------------] 3/8 bert-tiny train fp32 batch 4 seq 128` per run; on a terminal,
    the step count of the run in progress is updated in place.

    With `progress_path`, the same progress is also kept in a small JSON file beside the result
    file while the sweep runs (at most twice a second, never fsynced; removed at the end): runs
    done and planned, the run in progress with its steps done and planned (or its window in
    seconds), and an estimate of the time left. The app reads it; nothing in the runner waits on
    it, and a failure to write it is ignored.
    """

    def __init__(self, total: int, stream: TextIO | None = None, progress_path: Path | None = None,
                 idle_runs: int = 0, idle_s: float = 0.0) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_draw = 0.0
        self.path = progress_path
        self.idle_left = idle_runs
        self.idle_s = idle_s
        self.done = 0
        self._run_walls: list[float] = []
        self._state: dict[str, Any] = {}
        self._run_started = self._window_started = 0.0
        self._last_write = 0.0

    def _bar(self, done: int) -> str:
        filled = round(BAR_WIDTH * done / self.total) if self.total else BAR_WIDTH
        return "[" + "#" * filled + "-" * (BAR_WIDTH - filled) + "]"

    # --- the progress file ---------------------------------------------------------------
    def _eta_s(self, current_left_s: float | None) -> float | None:
        """Time left: the run in progress, the runs after it (the mean of the finished ones, else
        this one's projected length) and the idle baselines still to come."""
        runs_after = max(0, self.total - self.done - (1 if self._state.get("phase") != "idle baseline" else 0))
        if self._run_walls:
            per_run = sum(self._run_walls) / len(self._run_walls)
        elif current_left_s is not None and self._run_started:
            per_run = time.monotonic() - self._run_started + current_left_s
        else:
            return None
        return (current_left_s or 0.0) + runs_after * per_run + self.idle_left * self.idle_s

    def _write(self, force: bool = False, current_left_s: float | None = None) -> None:
        if self.path is None:
            return
        now = time.monotonic()
        if not force and now - self._last_write < 0.5:
            return
        self._last_write = now
        eta = self._eta_s(current_left_s)
        doc = {"runs_done": self.done, "runs_planned": self.total, **self._state,
               "eta_s": None if eta is None else round(eta, 1), "updated_at": time.time()}
        tmp = self.path.with_name(f".{self.path.name}.partial")
        with contextlib.suppress(OSError):
            tmp.write_text(json.dumps(doc))
            os.replace(tmp, self.path)

    def idle(self, seconds: float) -> None:
        """An idle baseline starts (it is not a run: it is not counted in runs done)."""
        self._state = {"phase": "idle baseline", "current": f"idle baseline, {seconds:g} s", "steps_done": None,
                       "steps_planned": None, "window_s": seconds}
        self.idle_left = max(0, self.idle_left - 1)
        self._write(force=True, current_left_s=seconds)

    def close(self) -> None:
        """The sweep is over: its progress file goes (the result file and the job say the rest)."""
        if self.path is not None:
            for leftover in (self.path, self.path.with_name(f".{self.path.name}.partial")):
                with contextlib.suppress(OSError):
                    leftover.unlink()

    # --- per run --------------------------------------------------------------------------
    def start(self, index: int, cfg: RunConfig) -> None:
        print(f"{self._bar(index)} run {index + 1}/{self.total}: {cfg.label()}", file=self.stream, flush=True)
        self._run_started = time.monotonic()
        self._window_started = 0.0
        self._state = {"phase": "building and warming up", "current": cfg.label(), "steps_done": 0,
                       "steps_planned": cfg.steps, "window_s": cfg.duration_s}
        self._write(force=True)

    def step_callback(self, cfg: RunConfig) -> Callable[[int], None] | None:
        """A per-step callback for a terminal or a progress file (None otherwise: no cost inside
        the timed loop); it draws or writes at most twice a second."""
        if not self.tty and self.path is None:
            return None
        goal = f"/{cfg.steps}" if cfg.steps else f" in {cfg.duration_s:g} s"

        def on_step(done: int) -> None:
            now = time.monotonic()
            if not self._window_started:
                self._window_started = now  # the end of the first measured step
                self._state["phase"] = "measuring"
            if self.tty and now - self._last_draw >= 0.5:
                self._last_draw = now
                self.stream.write(f"\r    measured step {done}{goal}")
                self.stream.flush()
            if self.path is not None and now - self._last_write >= 0.5:
                elapsed = now - self._window_started
                if cfg.steps:
                    left = elapsed / (done - 1) * (cfg.steps - done) if done > 1 else None
                else:
                    left = max(0.0, (cfg.duration_s or 0.0) - elapsed)
                self._state.update(steps_done=done, window_elapsed_s=round(elapsed, 1))
                self._write(current_left_s=left)

        return on_step

    def finish(self, index: int, record: dict[str, Any]) -> None:
        clear = "\r\033[K" if self.tty else ""
        print(f"{clear}    {outcome_line(record)}", file=self.stream, flush=True)
        if index + 1 == self.total:
            print(f"{self._bar(self.total)} {self.total}/{self.total} done", file=self.stream, flush=True)
        self.done = index + 1
        if self._run_started:
            self._run_walls.append(time.monotonic() - self._run_started)
        self._state = {"phase": "between runs", "current": None}
        self._write(force=True, current_left_s=0.0)


def summary(records: Sequence[dict[str, Any]]) -> str:
    rows = []
    for r in records:
        c, m = r["config"], r.get("metrics", {})
        batch = f"{c.get('grad_accum_steps', 1)}x{c['batch_size']}" if c.get("grad_accum_steps", 1) > 1 \
            else str(c.get("batch_size") or "-")
        mem = m.get("mem_peak_allocated_mb", m.get("mem_peak_rss_mb"))
        energy = _num(m.get("j_per_sample"), 4) if m.get("j_per_sample") else "-"
        net = _num(m.get("net_j_per_sample"), 4) if m.get("net_j_per_sample") else "-"
        power = _num(m.get("avg_power_w"), 1) if m.get("avg_power_w") else "-"
        rows.append((c["workload"], c["mode"], c.get("precision"), batch, c.get("seq_len") or c.get("image_size"),
                     c.get("repeat_index", 0), r["status"], _num(m.get("throughput_sps")),
                     _num(m.get("latency_p50_ms"), 2), _num(m.get("latency_p90_ms"), 2),
                     _num(m.get("latency_p99_ms"), 2), _num(mem, 0), power, energy, net,
                     m.get("energy_boundary") or "-"))
    return table(("workload", "mode", "precision", "batch", "size", "repeat", "status", "samples/s",
                  "p50 ms", "p90 ms", "p99 ms", "peak mem MB", "avg W", "J/sample", "net J/sample", "measured at"),
                 rows)
