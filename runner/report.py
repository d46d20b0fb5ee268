"""What a sweep shows a person: a progress bar on stderr, a summary table at the end."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
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
    the step count of the run in progress is updated in place."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_draw = 0.0

    def _bar(self, done: int) -> str:
        filled = round(BAR_WIDTH * done / self.total) if self.total else BAR_WIDTH
        return "[" + "#" * filled + "-" * (BAR_WIDTH - filled) + "]"

    def start(self, index: int, cfg: RunConfig) -> None:
        print(f"{self._bar(index)} run {index + 1}/{self.total}: {cfg.label()}", file=self.stream, flush=True)

    def step_callback(self, cfg: RunConfig) -> Callable[[int], None] | None:
        """A per-step callback for a terminal (None otherwise: no cost inside the timed loop)."""
        if not self.tty:
            return None
        goal = f"/{cfg.steps}" if cfg.steps else f" in {cfg.duration_s:g} s"

        def on_step(done: int) -> None:
            now = time.monotonic()
            if now - self._last_draw >= 0.5:
                self._last_draw = now
                self.stream.write(f"\r    measured step {done}{goal}")
                self.stream.flush()

        return on_step

    def finish(self, index: int, record: dict[str, Any]) -> None:
        clear = "\r\033[K" if self.tty else ""
        print(f"{clear}    {outcome_line(record)}", file=self.stream, flush=True)
        if index + 1 == self.total:
            print(f"{self._bar(self.total)} {self.total}/{self.total} done", file=self.stream, flush=True)


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
