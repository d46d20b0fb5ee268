"""Ctrl-C / SIGTERM to a running sweep: finished runs kept, the one in progress recorded as
interrupted, the result file written and ingested, a non-zero exit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from db import Store

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_during_a_sweep_keeps_finished_runs(sig: int, code: int, seeded_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    # three runs of ~1.5 s each; the signal arrives early in the second
    cmd = [sys.executable, "-m", "runner", "run", "--workload", "bert-tiny", "--batch-size", "1,2,4",
           "--seq-len", "16", "--warmup", "1", "--duration", "1.5", "--no-idle", "--db", str(seeded_db),
           "--out", str(out)]
    env = dict(os.environ, PYTHONUNBUFFERED="1", HF_HUB_OFFLINE="1")
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        seen = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line, f"the sweep ended early: {''.join(seen)}"
            seen.append(line)
            if "run 2/3" in line:
                break
        time.sleep(0.3)
        proc.send_signal(sig)
        stdout, rest = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = "".join(seen) + rest
    assert proc.returncode == code, stderr
    assert f"{signal.Signals(sig).name} received" in stderr and "Traceback" not in stderr

    doc = json.loads(out.read_text())
    statuses = [(r["config"]["batch_size"], r["status"]) for r in doc["runs"]]
    assert statuses == [(1, "ok"), (2, "interrupted")]  # the third never started
    finished, interrupted = doc["runs"]
    assert finished["metrics"]["throughput_sps"] > 0 and finished["config"]["measured_steps"] >= 1
    assert interrupted["error"] == f"interrupted by {signal.Signals(sig).name} during the run"
    assert "step_times_ms" not in interrupted and interrupted["config"]["workload"] == "bert-tiny"
    assert "database: imported, 2 run(s) added" in stdout

    with Store.open(seeded_db) as store:
        rows = store.query("SELECT batch_size, status FROM runs WHERE origin_kind = 'local' ORDER BY 1").rows()
    assert rows == [(1, "ok"), (2, "interrupted")]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the exception Python drops
def test_a_signal_whose_exception_a_destructor_dropped_still_stops_the_run() -> None:
    """Seen beside two CPU hogs: New run's Cancel sent SIGINT while the garbage collector ran a `__del__`; the
    handler's exception was raised there, Python printed 'Exception ignored' and dropped it, and the run went on.
    The guard stays armed and the step loop asks it again: the run stops at its next step, recorded interrupted."""
    from runner.execute import execute
    from runner.interrupts import InterruptGuard
    from runner.options import RunConfig

    class Collected:
        def __del__(self) -> None:
            guard._handle(signal.SIGINT, None)  # raised in a destructor: printed and dropped by Python

    steps: list[int] = []

    def on_step(done: int) -> None:
        steps.append(done)
        if done == 3:
            Collected()  # collected at once, as the garbage collector would

    cfg = RunConfig("bert-tiny", "infer", "fp32", 2, 1, 16, "cpu", False, 1, 10_000, None, 0)
    with InterruptGuard() as guard:
        record = execute(cfg, guard=guard, on_step=on_step).record
    assert guard.pending == signal.SIGINT
    assert record["status"] == "interrupted" and "SIGINT" in record["error"]
    assert steps == [1, 2, 3]  # the next step's check stopped it
