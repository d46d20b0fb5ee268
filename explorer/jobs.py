"""Runs started from the browser: one runner process at a time, in its own process group.

The runner writes its result file after every finished run and imports it at the end, so the
app never needs the database while a run goes on. The job's state lives in a small JSON file
next to the database, so a page reload (or another browser tab) sees the same run. The app
process never imports the runner (nor torch): options are checked by `joulebench run --check`
in a child process, with the same code as the CLI.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from db.location import locate
from decision.text import count
from joulebench import defaults, processes
from joulebench.errors import FileWriteError, RunConfigError, RunInProgressError
from joulebench.files import write_atomic
from joulebench.paths import REPO_ROOT, job_file, progress_file, results_dir

# Popen objects of the runs this server started, so finished ones are reaped and their exit
# codes known; a run left over from an earlier server is followed by its PID.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


# The New run form's labels, and the `joulebench run` option each fills: the runner's messages
# name options, the page shows them with the form's own labels.
FORM_LABELS: dict[str, str] = {
    "--workload": "Workload(s)", "--mode": "Mode(s)", "--precision": "Precision(s)",
    "--batch-size": "Batch size(s)", "--seq-len": "Sequence length(s)", "--tag": "Tag",
    "--max-new-tokens": "Output tokens per request", "--request-rate": "Requests per second (serving)",
    "--steps": "Measured steps", "--min-window": "Minimum window (s)", "--warmup": "Warmup steps",
    "--repeats": "Repeats",
    "--idle-seconds": "Idle baseline (s), 0 = off", "--power-limit": "GPU power limit(s), W",
    "--power-mode": "Jetson power mode(s)",
}


# The serve-bench form's labels, and the `joulebench serve-bench` option each fills.
SERVE_FORM_LABELS: dict[str, str] = {
    "--target": "Server URL", "--model": "Model (empty: the server's only one)",
    "--rate": "Requests per second (a sweep: 0.5,1,2,4)", "--concurrency": "Concurrency (a sweep: 1,4,16)",
    "--requests": "Requests per point", "--prompt-tokens": "Prompt tokens per request",
    "--output-tokens": "Output tokens per request",
    "--slo": "Latency target for goodput", "--engine": "Engine (when the server does not say)",
    "--repeats": "Repeats", "--tag": "Tag",
}


def in_form_words(message: str, labels: dict[str, str] | None = None) -> str:
    """A runner message with its option names replaced by the form's labels ('--batch-size: 0 is
    not valid' -> 'Batch size(s): 0 is not valid')."""
    labels = FORM_LABELS if labels is None else labels
    for flag in sorted(labels, key=len, reverse=True):
        message = message.replace(flag, labels[flag])
    return message


# `joulebench serve-bench --check` asks the server within its probe's limit (runner.serve_bench.probe's
# PROBE_TIMEOUT_S, 10 s, over connect, headers and body); the rest is the child's start on a busy machine.
SERVE_CHECK_TIMEOUT_S = 25.0
RUN_CHECK_TIMEOUT_S = 120.0


def _checked(argv: list[str], labels: dict[str, str], timeout_s: float = RUN_CHECK_TIMEOUT_S) -> Plan:
    """Run `argv` (ending in --check) in a child process: the plan it prints, or RunConfigError listing every
    problem it names, in the form's words (also when the check does not end within `timeout_s`)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL,
                              cwd=REPO_ROOT, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    except subprocess.TimeoutExpired:
        what = ("the server did not answer the check (GET /v1/models) in time: is it running, on this host and "
                "port, and not overloaded?" if labels is SERVE_FORM_LABELS else "the options' check did not finish")
        raise RunConfigError([f"{what} (stopped after {timeout_s:g} s); nothing was started"]) from None
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        problems = [in_form_words(line.removeprefix("error:").strip(), labels) for line in lines
                    if not line.startswith("invalid run")]
        raise RunConfigError([p for p in problems if p] or [f"the runner refused the options ({done.returncode})"])
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return Plan(int(found["measured_runs"]), int(found["idle_runs"]), list(found["runs"]))


@dataclass(frozen=True)
class RunRequest:
    """The New run form, as the strings `joulebench run` takes (comma lists make a sweep)."""

    workload: str = defaults.WORKLOAD
    mode: str = defaults.MODE
    precision: str = defaults.PRECISION
    batch_size: str = str(defaults.BATCH_SIZE)
    seq_len: str = ""
    max_new_tokens: str = ""  # generation workloads (llm-*): output tokens per request; empty: the workload's
    request_rate: str = ""  # generation workloads: serve Poisson arrivals at this rate; empty: batches back to back
    # None: the runner's defaults for the power meter it finds (joulebench.defaults): on a sensor,
    # windows of at least MIN_WINDOW_S after a warmup until steady, SENSOR_REPEATS repeats; on the
    # estimate, STEPS steps after WARMUP_STEPS warmup steps, REPEATS repeat
    steps: int | None = None
    warmup: int | None = None
    repeats: int | None = None
    tag: str = ""
    idle_seconds: float = defaults.IDLE_S  # idle baseline before the runs; 0 switches it off
    power_limit: str = ""  # GPU power limits in W, a comma list sweeps them
    power_mode: str = ""  # Jetson nvpmodel modes, a comma list sweeps them
    profile: bool = False  # every power setting in one process on one built model (runner.profile)
    power_dry_run: bool = False  # record the power settings, change nothing
    min_window_s: float | None = None

    def argv(self, db: Path, out: Path) -> list[str]:
        args = [sys.executable, "-m", "runner", "run", "--workload", self.workload, "--mode", self.mode,
                "--precision", self.precision, "--batch-size", self.batch_size, "--db", str(db), "--out", str(out)]
        for option, value in (("--steps", self.steps), ("--warmup", self.warmup), ("--repeats", self.repeats),
                              ("--min-window", self.min_window_s)):
            if value is not None:
                args += [option, f"{value:g}" if isinstance(value, float) else str(value)]
        for option, text in (("--seq-len", self.seq_len), ("--max-new-tokens", self.max_new_tokens),
                             ("--request-rate", self.request_rate)):
            if text.strip():
                args += [option, text.strip()]
        if self.tag.strip():
            args += ["--tag", self.tag.strip()]
        args += ["--idle-seconds", f"{self.idle_seconds:g}"] if self.idle_seconds > 0 else ["--no-idle"]
        if self.power_limit.strip():
            args += ["--power-limit", self.power_limit.strip()]
        if self.power_mode.strip():
            args += ["--power-mode", self.power_mode.strip()]
        if self.profile:
            args.append("--profile")
        if self.power_dry_run:
            args.append("--power-dry-run")
        return args

    def plan(self, db: Path) -> Plan:
        """Validate exactly as `joulebench run` does, in a child process (RunConfigError listing
        every problem, before anything runs); the runs it would make."""
        return _checked([*self.argv(db, results_dir(db) / "unused.json"), "--check"], FORM_LABELS)


@dataclass(frozen=True)
class ServeBenchRequest:
    """The New run page's serve-bench form, as the strings `joulebench serve-bench` takes: a running
    OpenAI-compatible server measured under load, one run per rate or concurrency (comma lists sweep)."""

    target: str
    rate: str = ""  # open-loop arrivals, requests/s; or
    concurrency: str = ""  # a fixed number of requests in flight
    requests: int | None = None  # per point; None: serve-bench's default
    prompt_tokens: str = "128"
    output_tokens: str = "128"
    slo: str = ""  # e.g. ttft_p90=500ms,tpot_p90=50ms
    engine: str = ""
    model: str = ""
    repeats: int = 1
    tag: str = ""

    def argv(self, db: Path, out: Path) -> list[str]:
        args = [sys.executable, "-m", "runner", "serve-bench", "--target", self.target.strip(), "--db", str(db),
                "--out", str(out), "--prompt-tokens", self.prompt_tokens.strip() or "128",
                "--output-tokens", self.output_tokens.strip() or "128", "--repeats", str(self.repeats)]
        for option, text in (("--rate", self.rate), ("--concurrency", self.concurrency), ("--slo", self.slo),
                             ("--engine", self.engine), ("--model", self.model), ("--tag", self.tag)):
            if text.strip():
                args += [option, text.strip()]
        if self.requests is not None:
            args += ["--requests", str(self.requests)]
        return args

    def plan(self, db: Path) -> Plan:
        """Check the options and ask the server, as `joulebench serve-bench --check` does, in a child process."""
        return _checked([*self.argv(db, results_dir(db) / "unused.json"), "--check"], SERVE_FORM_LABELS,
                        SERVE_CHECK_TIMEOUT_S)


@dataclass(frozen=True)
class Plan:
    measured_runs: int  # one per configuration and power setting
    idle_runs: int  # idle baselines, one per power setting
    labels: list[str]


@dataclass
class Job:
    pid: int
    started_at: str
    planned_runs: int  # measured runs, idle baselines not counted
    out_path: str
    log_path: str
    request: dict[str, Any] = field(default_factory=dict)
    exit_code: int | None = None
    cancelled: bool = False
    planned_idle: int = 0
    start_ticks: int | None = None


@dataclass(frozen=True)
class JobStatus:
    job: Job
    running: bool
    runs: list[dict[str, Any]]  # finished measured runs (idle baselines left out), as the result file holds them
    log_tail: list[str]
    progress: dict[str, Any] = field(default_factory=dict)  # the runner's own progress file, when written
    idle_runs: list[dict[str, Any]] = field(default_factory=list)  # the idle baselines it holds

    def recorded(self) -> str:
        """What the result file holds, counted as the runner counts what it adds to the database:
        '3 runs recorded (3 measured)', '2 runs recorded (1 measured, 1 idle baseline); the measured run was
        interrupted' (an interrupted run is one of those counted, said of its kind, never counted again)."""
        every = [*self.runs, *self.idle_runs]
        parts, stopped = [], []
        for runs, kind in ((self.runs, "measured run"), (self.idle_runs, "idle baseline")):
            if runs:
                parts.append(f"{len(runs):,} measured" if kind == "measured run" else count(len(runs), kind))
            cut = sum(1 for r in runs if r.get("status") == "interrupted")
            if cut:
                stopped.append(f"the {kind}" if cut == len(runs) == 1 else
                               f"all {count(cut, kind)}" if cut == len(runs) else count(cut, kind))
        told = f"{count(len(every), 'run')} recorded" + (f" ({', '.join(parts)})" if parts else "")
        if stopped:
            cut_runs = sum(1 for r in every if r.get("status") == "interrupted")
            told += f"; {' and '.join(stopped)} {'was' if cut_runs == 1 else 'were'} interrupted"
        return told

    @property
    def fraction_done(self) -> float:
        """Runs done plus the share of the current run's measured steps (never over 1)."""
        if not self.job.planned_runs:
            return 1.0
        done = float(len(self.runs))
        steps, planned = self.progress.get("steps_done"), self.progress.get("steps_planned")
        if self.running and steps and planned and self.progress.get("phase") == "measuring":
            done += min(1.0, steps / planned)
        return min(1.0, done / self.job.planned_runs)

    def describe(self) -> str:
        """'Run 1 of 2: bert-tiny infer fp32 batch 2 seq 128 · measured step 3 of 5 · about 12 s left'."""
        p = self.progress
        head = f"{len(self.runs):,} of {count(self.job.planned_runs, 'run')} done"
        parts = [head]
        if p.get("phase") == "idle baseline":
            parts.append(f"measuring the idle baseline ({p.get('window_s') or 0:g} s)")
        elif p.get("current"):
            now = f"run {len(self.runs) + 1}: {p['current']}"
            if p.get("phase") == "measuring" and p.get("steps_done"):
                goal = (f" of {p['steps_planned']}" if p.get("steps_planned")
                        else f" ({p.get('window_s') or 0:g} s window)")
                now += f" · measured step {p['steps_done']}{goal}"
            elif p.get("phase"):
                now += f" · {p['phase']}"
            parts.append(now)
        if p.get("eta_s") is not None:
            parts.append(f"about {_duration(float(p['eta_s']))} left")
        return " · ".join(parts)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def _save(db: Path, job: Job) -> None:
    write_atomic(job_file(db), json.dumps(asdict(job)).encode())


def current(db: Path) -> Job | None:
    path = job_file(db)
    try:
        return Job(**json.loads(path.read_text()))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError):
        return None  # a damaged job file: no run is known to be going


def _alive(job: Job) -> bool:
    child = _CHILDREN.get(job.pid)
    if child is not None:
        code = child.poll()
        if code is None:
            return True
        job.exit_code = code
        return False
    return processes.alive({"pid": job.pid, "start_ticks": job.start_ticks})


def start(db: Path, request: RunRequest | ServeBenchRequest) -> Job:
    """Start a run in its own process; refuse while another is going, or when the options are bad."""
    locate(str(db)).refuse_write()
    previous = current(db)
    if previous is not None and _alive(previous):
        raise RunInProgressError(
            f"a run started at {previous.started_at} (PID {previous.pid}) is still going; "
            "wait for it to finish or cancel it first")
    plan = request.plan(db)
    stem = f"joulebench-app-run-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"
    results = results_dir(db)
    try:
        results.mkdir(parents=True, exist_ok=True)
        out, log = results / f"{stem}.json", results / f"{stem}.log"
        log_file = open(log, "wb")  # noqa: SIM115 - handed to the child, closed below
    except OSError as e:
        raise FileWriteError(results, e) from e
    with log_file:
        child = subprocess.Popen(request.argv(db, out), stdout=log_file, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, cwd=REPO_ROOT, start_new_session=True,
                                 env=dict(os.environ, HF_HUB_OFFLINE="1"))
    _CHILDREN[child.pid] = child
    job = Job(child.pid, datetime.now(UTC).isoformat(timespec="seconds"), plan.measured_runs, str(out), str(log),
              asdict(request), planned_idle=plan.idle_runs, start_ticks=processes.start_ticks(child.pid))
    _save(db, job)
    return job


def running(db: Path) -> bool:
    """Whether a run started from the app is still going (reads only the job file)."""
    job = current(db)
    return job is not None and _alive(job)


def status(db: Path) -> JobStatus | None:
    job = current(db)
    if job is None:
        return None
    alive = _alive(job)
    if not alive:
        _save(db, job)
    runs: list[dict[str, Any]] = []
    try:
        runs = json.loads(Path(job.out_path).read_text()).get("runs", [])
    except (OSError, ValueError):
        pass  # not written yet (first run still going) or being replaced this instant
    runs = [r for r in runs if isinstance(r, dict)]
    idle = [r for r in runs if (r.get("config") or {}).get("mode") == "idle"]
    runs = [r for r in runs if (r.get("config") or {}).get("mode") != "idle"]
    try:
        lines = Path(job.log_path).read_text(errors="replace").splitlines()[-12:]
    except OSError:
        lines = []
    progress: dict[str, Any] = {}
    try:
        found = json.loads(progress_file(Path(job.out_path)).read_text())
        progress = found if isinstance(found, dict) else {}
    except (OSError, ValueError):
        pass  # not written yet, or a run from before the runner reported progress
    return JobStatus(job, alive, runs, lines, progress, idle)


def cancel(db: Path, *, wait_s: float = 0.0) -> bool:
    """Ask the run to stop as Ctrl-C would: finished runs kept, the current one recorded as interrupted."""
    job = current(db)
    if job is None or not _alive(job):
        return False
    os.killpg(job.pid, signal.SIGINT)
    job.cancelled = True
    _save(db, job)
    deadline = time.monotonic() + wait_s
    while wait_s and time.monotonic() < deadline and _alive(job):
        time.sleep(0.1)
    return True


def _grade(run: dict[str, Any]) -> str | None:
    """The run's trust grade by the rules ingest applies (energy.grades)."""
    from energy.grades import RunFacts, grade_run

    try:
        return grade_run(RunFacts.from_result_run(run, origin_kind="local")).grade
    except (KeyError, TypeError):  # a run the runner is still writing: graded when it lands
        return None


def summary_rows(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per finished run for the page's table, with headers a person reads: the figures of the run's kind
    (joulebench.metrics.HEADLINE: a serving point's tokens/s, J/token, TTFT ...; a batch run's throughput, p99
    latency, J/example), labelled by the metric catalogue; missing values stay None (shown as 'not measured')."""
    from joulebench.configuration import label_parts
    from joulebench.metrics import HEADLINE, RunKind, label, run_kind

    rows = []
    for run in runs:
        cfg, m = run.get("config", {}), run.get("metrics", {})
        kind = run_kind(cfg)
        row: dict[str, Any] = {"Status": run.get("status"), "Workload": cfg.get("workload"), "Mode": cfg.get("mode")}
        if kind is RunKind.SERVING:  # a serve-bench point: its engine, load and request lengths, not a batch
            row["Engine"] = cfg.get("engine")
            row["Load"] = " · ".join(label_parts(cfg, ("request_rate_per_s", "max_concurrency"))) or None
            row["Lengths"] = " · ".join(label_parts(cfg, ("prompt_tokens_requested", "output_tokens_requested")))
        else:
            row.update({"Precision": cfg.get("precision"), "Batch": cfg.get("batch_size"),
                        "Sequence length": cfg.get("seq_len")})
        for name in HEADLINE[kind]:
            value = m.get(name)
            row[label(name)] = value if isinstance(value, (int, float)) and math.isfinite(value) else None
        row.update({"Energy measured at, or why not": m.get("energy_boundary") or m.get("energy_missing_reason"),
                    "Repeat": cfg.get("repeat_index"), "Trust grade": _grade(run), "Run": run.get("run_id")})
        if kind is RunKind.SERVING:
            row["Overloaded"] = "overloaded" in (run.get("flags") or [])
        rows.append(row)
    return rows
