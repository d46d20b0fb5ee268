"""Runs started from the browser: one runner process at a time, in its own process group.

The runner writes its result file after every finished run and imports it at the end, so the
app never needs the database while a run goes on. The job's state lives in a small JSON file
next to the database, so a page reload (or another browser tab) sees the same run.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from joulebench.errors import RunInProgressError
from joulebench.paths import REPO_ROOT

# Popen objects of the runs this server started, so finished ones are reaped and their exit
# codes known; a run left over from an earlier server is followed by its PID.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


@dataclass(frozen=True)
class RunRequest:
    """The New run form, as the strings `joulebench run` takes (comma lists make a sweep)."""

    workload: str = "bert-tiny"
    mode: str = "infer"
    precision: str = "fp32"
    batch_size: str = "8"
    seq_len: str = ""
    steps: int = 20
    warmup: int = 3
    repeats: int = 1
    tag: str = ""
    idle_seconds: float = 10.0  # idle baseline before the runs; 0 switches it off
    power_limit: str = ""  # GPU power limits in W, a comma list sweeps them
    power_mode: str = ""  # Jetson nvpmodel modes, a comma list sweeps them

    def argv(self, db: Path, out: Path) -> list[str]:
        args = [sys.executable, "-m", "runner", "run", "--workload", self.workload, "--mode", self.mode,
                "--precision", self.precision, "--batch-size", self.batch_size, "--steps", str(self.steps),
                "--warmup", str(self.warmup), "--repeats", str(self.repeats), "--db", str(db), "--out", str(out)]
        if self.seq_len.strip():
            args += ["--seq-len", self.seq_len.strip()]
        if self.tag.strip():
            args += ["--tag", self.tag.strip()]
        args += ["--idle-seconds", f"{self.idle_seconds:g}"] if self.idle_seconds > 0 else ["--no-idle"]
        if self.power_limit.strip():
            args += ["--power-limit", self.power_limit.strip()]
        if self.power_mode.strip():
            args += ["--power-mode", self.power_mode.strip()]
        return args

    def planned_runs(self) -> int:
        """Validate like `joulebench run` does (RunConfigError before anything runs); count the runs,
        idle baselines included."""
        from runner import options

        opts = options.from_strings(workload=self.workload, mode=self.mode, precision=self.precision,
                                    batch_size=self.batch_size, seq_len=self.seq_len.strip() or None,
                                    steps=self.steps, warmup=self.warmup, repeats=self.repeats,
                                    idle=self.idle_seconds > 0, idle_s=self.idle_seconds or 10.0,
                                    power_limit=self.power_limit.strip() or None,
                                    power_mode=self.power_mode.strip() or None)
        opts.validate()
        settings = len(opts.power_limits_w or opts.power_modes or [None])
        return len(opts.expand()) + (settings if opts.idle else 0)  # one idle run per power setting


@dataclass
class Job:
    pid: int
    started_at: str
    planned_runs: int
    out_path: str
    log_path: str
    request: dict[str, Any] = field(default_factory=dict)
    exit_code: int | None = None
    cancelled: bool = False


@dataclass(frozen=True)
class JobStatus:
    job: Job
    running: bool
    runs: list[dict[str, Any]]  # finished runs, as the result file holds them
    log_tail: list[str]

    @property
    def fraction_done(self) -> float:
        return min(1.0, len(self.runs) / self.job.planned_runs) if self.job.planned_runs else 1.0


def _job_file(db: Path) -> Path:
    return db.with_name(db.stem + ".job.json")


def _save(db: Path, job: Job) -> None:
    tmp = _job_file(db).with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(job)))
    tmp.replace(_job_file(db))


def current(db: Path) -> Job | None:
    path = _job_file(db)
    if not path.exists():
        return None
    return Job(**json.loads(path.read_text()))


def _alive(job: Job) -> bool:
    child = _CHILDREN.get(job.pid)
    if child is not None:
        code = child.poll()
        if code is None:
            return True
        job.exit_code = code
        return False
    try:
        os.kill(job.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    cmdline = Path(f"/proc/{job.pid}/cmdline")
    return not cmdline.exists() or b"runner" in cmdline.read_bytes()  # a reused PID is not our run


def start(db: Path, request: RunRequest) -> Job:
    """Start a run in its own process; refuse while another is going."""
    previous = current(db)
    if previous is not None and _alive(previous):
        raise RunInProgressError(
            f"a run started at {previous.started_at} (PID {previous.pid}) is still going; "
            "wait for it to finish or cancel it first")
    planned = request.planned_runs()
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    results = db.parent / "results"
    results.mkdir(parents=True, exist_ok=True)
    out, log = results / f"joulebench-app-run-{stamp}.json", results / f"joulebench-app-run-{stamp}.log"
    with open(log, "wb") as log_file:
        child = subprocess.Popen(request.argv(db, out), stdout=log_file, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, cwd=REPO_ROOT, start_new_session=True,
                                 env=dict(os.environ, HF_HUB_OFFLINE="1"))
    _CHILDREN[child.pid] = child
    job = Job(child.pid, datetime.now(UTC).isoformat(timespec="seconds"), planned, str(out), str(log),
              asdict(request))
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
    try:
        lines = Path(job.log_path).read_text(errors="replace").splitlines()[-12:]
    except OSError:
        lines = []
    return JobStatus(job, alive, runs, lines)


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


def summary_rows(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per finished run for the page's table; missing values stay None."""
    rows = []
    for run in runs:
        cfg, m = run.get("config", {}), run.get("metrics", {})
        throughput = m.get("throughput_sps")
        rows.append({
            "status": run.get("status"), "workload": cfg.get("workload"), "mode": cfg.get("mode"),
            "precision": cfg.get("precision"), "batch_size": cfg.get("batch_size"), "seq_len": cfg.get("seq_len"),
            "throughput_sps": None if throughput is None or not math.isfinite(throughput) else throughput,
            "latency_p99_ms": m.get("latency_p99_ms"), "j_per_sample": m.get("j_per_sample"),
            "energy": m.get("energy_boundary") or m.get("energy_missing_reason"), "run_id": run.get("run_id"),
        })
    return rows
