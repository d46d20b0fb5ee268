"""What a sweep shows a person: a progress bar on stderr, a summary table at the end.

The summary has one row per configuration: its repeats' mean ± 95 % confidence interval
(energy.stats), n, and the trust grade of the aggregate (energy.grades, the rules ingest
applies), with the grades' legend and the reasons for any grade below A.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from energy.grades import GRADE_MEANINGS, Grade, RunFacts, grade_aggregate, grade_run
from energy.stats import Aggregate, aggregate
from joulebench.configuration import NAMES
from joulebench.metrics import label
from joulebench.text import table
from runner.options import RunConfig

BAR_WIDTH = 20


def _num(value: Any, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def outcome_line(record: Mapping[str, Any]) -> str:
    m = record.get("metrics", {})
    if record["status"] != "ok":
        return f"{record['status']}: {record.get('error', '')}"
    mem = m.get("mem_peak_allocated_mb", m.get("mem_peak_rss_mb"))
    if m.get("output_tokens") is not None:
        return (f"ok  {_num(m.get('tokens_per_s'))} tokens/s  TTFT p50 {_num(m.get('ttft_p50_ms'), 2)} ms  "
                f"ITL p50 {_num(m.get('itl_p50_ms'), 2)} ms  TPOT p50 {_num(m.get('tpot_p50_ms'), 2)} ms  "
                f"{_num(m.get('j_per_token'), 4)} J/token  "
                f"peak memory {_num(mem, 0)} MB")
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
        if cfg.steps:
            goal = f"/{cfg.steps}"
        elif cfg.duration_s is not None:
            goal = f" in {cfg.duration_s:g} s"
        else:
            goal = f" (window of at least {cfg.min_window_s:g} s)"

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

    def finish(self, index: int, record: Mapping[str, Any]) -> None:
        clear = "\r\033[K" if self.tty else ""
        print(f"{clear}    {outcome_line(record)}", file=self.stream, flush=True)
        if index + 1 == self.total:
            print(f"{self._bar(self.total)} {self.total}/{self.total} done", file=self.stream, flush=True)
        self.done = index + 1
        if self._run_started:
            self._run_walls.append(time.monotonic() - self._run_started)
        self._state = {"phase": "between runs", "current": None}
        self._write(force=True, current_left_s=0.0)


def _config_of(record: Mapping[str, Any]) -> tuple:
    """What a repeat repeats: every field of joulebench.configuration the run states (the device and where its
    energy was measured included), never its repeat index, seed or steps."""
    c, m = record["config"], record.get("metrics", {})
    row = {**c, "device_name": record["device"]["name"], "energy_boundary": m.get("energy_boundary")}
    return tuple((n, str(row[n])) for n in NAMES if row.get(n) is not None)


def _mean_ci(agg: Aggregate | None, digits: int) -> str:
    """'632.1 ± 93.4' (the 95 % interval's half width), '632.1' for one run, '-' for none."""
    if agg is None:
        return "-"
    if agg.ci95_half is None:
        return f"{agg.mean:,.{digits}f}"
    return f"{agg.mean:,.{digits}f} ± {agg.ci95_half:,.{digits}f}"


@dataclass
class ConfigSummary:
    """A configuration's repeats in this sweep: their aggregate and its trust grade."""

    records: list[Mapping[str, Any]]
    stats: dict[str, Aggregate | None]
    grade: Grade

    @property
    def first(self) -> Mapping[str, Any]:
        return self.records[0]


SUMMARY_METRICS = ("throughput_sps", "latency_p50_ms", "latency_p99_ms", "avg_power_w", "j_per_sample",
                   "net_j_per_sample", "duration_s")
TOKEN_METRICS = ("tokens_per_s", "decode_tokens_per_s", "ttft_p50_ms", "itl_p50_ms", "itl_p90_ms", "tpot_p50_ms",
                 "tpot_p90_ms", "j_per_token", "decode_j_per_token", "prefill_j_per_request")


def summarize(records: Sequence[Mapping[str, Any]]) -> list[ConfigSummary]:
    """Group a sweep's runs by configuration and grade each run and each aggregate (energy.grades,
    the rules ingest applies), in the order the configurations first ran."""
    groups: dict[tuple, list[Mapping[str, Any]]] = {}
    for r in records:
        groups.setdefault(_config_of(r), []).append(r)
    out = []
    for members in groups.values():
        ok = [r for r in members if r["status"] == "ok"]
        stats = {k: aggregate(r.get("metrics", {}).get(k) for r in ok) for k in SUMMARY_METRICS + TOKEN_METRICS}
        run_grades = [grade_run(RunFacts.from_result_run(r, origin_kind="local")).grade for r in ok]
        energy, label = stats["j_per_sample"], "J/sample"
        if energy is None:
            energy, label = stats["avg_power_w"], "average power"
        grade = grade_aggregate(run_grades, [r["status"] for r in members], throughput=stats["throughput_sps"],
                                energy=energy, energy_label=label)
        out.append(ConfigSummary(members, stats, grade))
    return out


def _status(records: list[Mapping[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for r in records:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    if len(counts) == 1:
        return next(iter(counts))
    return ", ".join(f"{n} {s}" for s, n in counts.items())


def summary(records: Sequence[Mapping[str, Any]]) -> str:
    """One row per configuration: its repeats' mean ± 95 % interval, n and trust grade; below the
    table, what each grade means and why a configuration is graded below A."""
    rows = []
    notes = []
    token_rows = []
    for i, cs in enumerate(summarize(records), start=1):
        c, m = cs.first["config"], cs.first.get("metrics", {})
        batch = f"{c.get('grad_accum_steps', 1)}x{c['batch_size']}" if c.get("grad_accum_steps", 1) > 1 \
            else str(c.get("batch_size") or "-")
        mem = m.get("mem_peak_allocated_mb", m.get("mem_peak_rss_mb"))
        st = cs.stats
        n = max((a.n for a in st.values() if a is not None), default=0)
        rows.append((i, c["workload"], c["mode"], c.get("precision"), batch, c.get("seq_len") or c.get("image_size"),
                     n, _status(cs.records), _mean_ci(st["throughput_sps"], 1), _mean_ci(st["latency_p50_ms"], 2),
                     _mean_ci(st["latency_p99_ms"], 2), _num(mem, 0), _mean_ci(st["avg_power_w"], 1),
                     _mean_ci(st["j_per_sample"], 4), _mean_ci(st["net_j_per_sample"], 4),
                     _mean_ci(st["duration_s"], 2), cs.grade.grade, m.get("energy_boundary") or "-"))
        if c.get("max_new_tokens") is not None:
            token_rows.append((i, c["workload"], f"{c.get('seq_len')} + {c['max_new_tokens']}",
                               *(_mean_ci(st[k], 4 if "j_per" in k else 2 if k.endswith("_ms") else 1)
                                 for k in TOKEN_METRICS)))
        if cs.grade.limiting:
            notes.append(f"  {i} ({cs.grade.grade}): " + "; ".join(f"{r.check}: {r.text}" for r in cs.grade.limiting))
            by_check: dict[tuple[str, str], list[str]] = {}  # (check, cap) -> the runs' texts
            for r in cs.records:
                if r["status"] == "ok":
                    for reason in grade_run(RunFacts.from_result_run(r, origin_kind="local")).limiting:
                        by_check.setdefault((reason.check, reason.cap), []).append(reason.text)
            notes += [f"      {len(texts)} run(s) {check} ({cap}), e.g. {texts[0]}"
                      for (check, cap), texts in sorted(by_check.items())]
    out = table(("#", "workload", "mode", "precision", "batch", "size", "n", "status", "samples/s", "p50 ms",
                 "p99 ms", "peak mem MB", "avg W", "J/sample", "net J/sample", "window s", "grade", "measured at"),
                rows)
    if token_rows:
        out += "\n\ngeneration (a sample is a request; tokens are output tokens):\n" + table(
            ("#", "workload", "prompt + new", *(label(k) for k in TOKEN_METRICS)), token_rows)
    legend = "\n".join(f"  {g}: {text}" for g, text in GRADE_MEANINGS.items())
    out += ("\n\nmean ± 95 % confidence interval (Student's t) over n repeats; trust grades "
            f"(docs/trust-grades.md):\n{legend}")
    if notes:
        out += "\n\nwhy below A:\n" + "\n".join(notes)
    return out
