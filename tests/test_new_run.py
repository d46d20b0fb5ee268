"""New run page: a real bert-tiny run started from the app, refused twice, cancelled."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from db import Store
from explorer import jobs
from joulebench.errors import RunConfigError, RunInProgressError
from tests.helpers import shown

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def _wait(db: Path, until, timeout_s: float = 120.0) -> jobs.JobStatus:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state = jobs.status(db)
        if state is not None and until(state):
            return state
        time.sleep(0.2)
    raise AssertionError(f"timed out; last status: {jobs.status(db)}")


def _page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/new_run.py").run()
    assert not at.exception
    return at


def test_start_a_bert_tiny_run_from_the_page_and_see_it_recorded(db: Path) -> None:
    at = _page()
    at.text_input(key="workload").set_value("bert-tiny")
    at.text_input(key="mode").set_value("infer,train")
    at.text_input(key="batch").set_value("2")
    at.number_input(key="steps").set_value(3)
    at.number_input(key="idle").set_value(1.0)  # a short idle baseline first
    at.button[0].click().run()
    assert not at.exception and not at.error
    state = _wait(db, lambda s: not s.running)
    assert state.job.exit_code == 0 and (state.job.planned_runs, state.job.planned_idle) == (2, 1)
    modes = [(r["config"]["mode"], r["status"]) for r in state.runs]
    assert modes == [("infer", "ok"), ("train", "ok")]  # the idle baseline is not counted as a run
    measured = state.runs
    assert all(r["metrics"]["throughput_sps"] > 0 for r in measured)
    assert all(r["metrics"]["energy_boundary"] == "estimated" for r in measured)  # no sensor here: labelled
    with Store.open(db) as store:
        local = store.query("SELECT mode, throughput_sps FROM runs r JOIN sources s USING (source_id) "
                            "WHERE s.kind = 'local' ORDER BY mode")
    assert local["mode"].to_list() == ["idle", "infer", "train"]
    done = _page()
    assert "Done: 3 runs recorded (2 measured, 1 idle baseline)." in done.success[0].value  # as the runner counts
    assert done.dataframe[0].value["Status"].tolist() == ["ok", "ok"]
    links = {link.proto.label: link.proto.query_string for link in done.get("page_link")}
    run_ids = [r["run_id"] for r in state.runs]
    assert links["See these 2 runs in Compare"] == "&".join(f"run={i}" for i in run_ids)  # not the idle baseline


def test_bad_options_fail_before_anything_starts(db: Path) -> None:
    with pytest.raises(RunConfigError, match="fp16 is not available on a CPU"):
        jobs.start(db, jobs.RunRequest(precision="fp16"))
    assert jobs.current(db) is None
    at = _page()
    at.text_input(key="precision").set_value("fp16")
    at.button[0].click().run()
    assert "Precision(s): fp16 is not available on a CPU" in shown(at.error[0].value)  # the form's own label
    at.text_input(key="precision").set_value("fp32")
    at.text_input(key="power_limit").set_value("100,150")
    at.button[0].click().run()
    said = shown(at.error[0].value)
    assert "GPU power limit(s), W" in said and "--power-limit" not in said  # no NVIDIA GPU: refused before it starts
    assert jobs.current(db) is None


def _stop_left_running(db: Path) -> None:
    """A run a failed test leaves going (a million steps) is stopped by its PID, not left to burn a core."""
    state = jobs.status(db)
    if state is not None and state.running:
        os.killpg(state.job.pid, signal.SIGKILL)


def test_second_run_is_refused_and_cancel_keeps_an_interrupted_record(db: Path) -> None:
    jobs.start(db, jobs.RunRequest(workload="bert-tiny", batch_size="2", steps=1_000_000, idle_seconds=0))
    try:
        _wait(db, lambda s: any("run 1/1" in line for line in s.log_tail))
        with pytest.raises(RunInProgressError, match="still going"):
            jobs.start(db, jobs.RunRequest())
        at = _page()
        assert "A run is in progress" in at.info[0].value
        assert jobs.cancel(db, wait_s=60)
        state = _wait(db, lambda s: not s.running)
    finally:
        _stop_left_running(db)
    assert state.job.cancelled and state.job.exit_code == 130
    assert [r["status"] for r in state.runs] == ["interrupted"]
    with Store.open(db) as store:
        statuses = store.query("SELECT status FROM runs r JOIN sources s USING (source_id) WHERE s.kind = 'local'")
    assert statuses["status"].to_list() == ["interrupted"]
    assert "Cancelled" in _page().warning[0].value


def test_the_runner_reports_steps_and_time_left_in_a_progress_file(tmp_path: Path) -> None:
    import io
    import json

    from joulebench.paths import progress_file
    from runner.options import RunConfig
    from runner.report import Progress

    path = progress_file(tmp_path / "sweep.json")
    assert path.name == "sweep.progress.json"
    progress = Progress(2, io.StringIO(), path, idle_runs=1, idle_s=10.0)
    progress.idle(10.0)
    assert json.loads(path.read_text())["phase"] == "idle baseline"
    cfg = RunConfig("bert-tiny", "infer", "fp32", 2, 1, 128, "cpu", False, 0, 5, None, 0)
    progress.start(0, cfg)
    on_step = progress.step_callback(cfg)
    assert on_step is not None  # a progress file asks for steps even without a terminal
    for done in (1, 2, 3):
        progress._last_write = 0.0  # let every step write (the runner writes at most twice a second)
        on_step(done)
        time.sleep(0.05)
    state = json.loads(path.read_text())
    assert (state["runs_done"], state["runs_planned"], state["steps_done"], state["steps_planned"]) == (0, 2, 3, 5)
    assert state["phase"] == "measuring" and state["eta_s"] is not None and state["eta_s"] > 0
    progress.finish(0, {"status": "ok", "metrics": {}})
    assert json.loads(path.read_text())["runs_done"] == 1
    progress.close()
    assert not path.exists()  # gone when the sweep ends


def test_job_status_reads_runs_without_the_idle_baseline_and_says_the_time_left() -> None:
    job = jobs.Job(pid=1, started_at="2026-11-23T10:00:00+00:00", planned_runs=1, out_path="x.json",
                   log_path="x.log", planned_idle=1)
    progress = {"runs_done": 0, "runs_planned": 1, "phase": "measuring", "current": "bert-tiny infer fp32 batch 2",
                "steps_done": 3, "steps_planned": 5, "eta_s": 12.4}
    state = jobs.JobStatus(job, True, [], [], progress)
    assert state.describe() == ("0 of 1 run done · run 1: bert-tiny infer fp32 batch 2 · measured step 3 of 5 "
                                "· about 12 s left")
    assert state.fraction_done == pytest.approx(0.6)
    idle = jobs.JobStatus(job, True, [], [], {"phase": "idle baseline", "window_s": 10.0, "eta_s": 40})
    assert "measuring the idle baseline (10 s)" in idle.describe() and idle.fraction_done == 0.0


def test_runner_messages_use_the_forms_labels() -> None:
    assert jobs.in_form_words("--batch-size: 0 is not valid") == "Batch size(s): 0 is not valid"
    assert jobs.in_form_words("--idle-seconds: -1 is not valid") == "Idle baseline (s), 0 = off: -1 is not valid"


def test_empty_fields_leave_the_window_to_the_runner_defaults(db: Path) -> None:
    from joulebench import defaults

    argv = jobs.RunRequest().argv(db, db.parent / "out.json")
    assert not {"--steps", "--warmup", "--repeats", "--min-window"} & set(argv)  # the runner picks per sensor
    chosen = jobs.RunRequest(steps=50, warmup=5, repeats=3, min_window_s=2.5).argv(db, db.parent / "out.json")
    assert chosen[chosen.index("--steps") + 1] == "50" and chosen[chosen.index("--min-window") + 1] == "2.5"
    assert jobs.RunRequest().plan(db).measured_runs == defaults.REPEATS  # no sensor here: one short run
    at = _page()
    shown = " ".join(c.value for c in at.caption)
    assert f"at least {defaults.MIN_WINDOW_S:g} s" in shown and f"{defaults.SENSOR_REPEATS} repeats" in shown
    assert at.number_input(key="steps").value is None and at.number_input(key="repeats").value is None


def test_the_cancel_message_counts_what_the_runner_recorded() -> None:
    """Issue 17 item 10: cancelled during the idle baseline, the page said '0 run(s) recorded' while
    the runner said '1 run(s) added' (the interrupted idle baseline, which the page left out)."""
    job = jobs.Job(pid=1, started_at="2026-11-24T10:00:00+00:00", planned_runs=1, out_path="x", log_path="y",
                   cancelled=True, planned_idle=1)
    idle = {"status": "interrupted", "config": {"mode": "idle"}}
    state = jobs.JobStatus(job, False, [], [], {}, [idle])
    assert state.recorded() == "1 run recorded (1 idle baseline); the idle baseline was interrupted"
    measured = [{"status": "ok", "config": {"mode": "infer"}}] * 2
    done = jobs.JobStatus(job, False, measured, [], {}, [{"status": "ok", "config": {"mode": "idle"}}])
    assert done.recorded() == "3 runs recorded (2 measured, 1 idle baseline)"
    assert jobs.JobStatus(job, False, [], [], {}).recorded() == "0 runs recorded"
