"""Real runs on this CPU (no sensor here): energy recorded and labelled `estimated`, the idle
baseline and net J/example, `joulebench idle`, and an external power log aligned by time."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from cli.main import main
from db import Store

RUN = ["run", "--workload", "bert-tiny", "--batch-size", "2", "--seq-len", "16", "--warmup", "1",
       "--duration", "0.6", "--idle-seconds", "0.5"]


def test_a_real_cpu_run_records_estimated_energy_idle_and_net(seeded_db: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run.json"
    assert main([*RUN, "--db", str(seeded_db), "--out", str(out)]) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert "energy: estimate (CPU utilisation x" in err and "idle power:" in err
    idle, run = json.loads(out.read_text())["runs"]
    assert idle["config"] == {"workload": "idle", "mode": "idle"} and idle["status"] == "ok"
    idle_measured = "idle_power_w" in idle["metrics"]
    if idle_measured:
        assert idle["metrics"]["idle_power_w"] > 0 and idle["metrics"]["energy_boundary"] == "estimated"
    else:  # a completely idle CPU estimates 0 J: stored missing with the reason, never 0
        assert "0.0 J" in idle["metrics"]["energy_missing_reason"]
    m = run["metrics"]
    assert (m["energy_boundary"], m["energy_method"]) == ("estimated", "estimated")
    assert m["energy_j"] > 0 and m["j_per_sample"] == pytest.approx(m["energy_j"] / m["examples"])
    assert m["avg_power_w"] == pytest.approx(m["energy_j"] / m["duration_s"])
    if idle_measured:  # net J/example beside the gross (the arithmetic: test_net_energy_*)
        assert m["idle_power_w"] == idle["metrics"]["idle_power_w"]
        assert m["idle_energy_j"] == pytest.approx(m["idle_power_w"] * m["duration_s"])
        if "net_energy_nonpositive" not in run["flags"]:
            assert m["net_j_per_sample"] == pytest.approx((m["energy_j"] - m["idle_energy_j"]) / m["examples"])
    assert run["power_traces"][0]["boundary"] == "estimated" and len(run["power_traces"][0]["t_s"]) >= 3
    assert m["sample_period_s"] == pytest.approx(0.1)
    with Store.open(seeded_db) as store:
        rows = store.query("SELECT mode, energy_boundary, energy_method, energy_j > 0, idle_power_w > 0, "
                           "sample_period_s FROM runs WHERE origin_kind = 'local' ORDER BY mode").rows()
    assert rows[1] == ("infer", "estimated", "estimated", True, True if idle_measured else None, 0.1)
    assert rows[0][0] == "idle" and rows[0][5] == 0.1


def test_joulebench_idle_records_an_idle_run(seeded_db: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "idle.json"
    assert main(["idle", "--seconds", "0.5", "--tdp-w", "35", "--db", str(seeded_db), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    (run,) = json.loads(out.read_text())["runs"]
    assert run["config"]["mode"] == "idle" and "tdp_assumed" not in run["flags"]  # --tdp-w given
    if "idle_power_w" in run["metrics"]:
        assert "boundary estimated" in printed and 0 < run["metrics"]["idle_power_w"] <= 35.0 * 1.25
    else:  # nothing at all ran on the CPU: 0 J estimated, stored as missing with the reason
        assert "not measured" in printed and run["metrics"]["energy_missing_reason"]


def test_a_wall_meter_log_is_aligned_to_the_run_window(seeded_db: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "meter.csv"
    now = time.time()  # a meter logging 1 Hz at a steady 42 W from before the run to after it
    log.write_text("timestamp,watts\n" + "".join(f"{now - 30 + i:.3f},42\n" for i in range(300)))
    out = tmp_path / "run.json"
    assert main([*RUN, "--no-idle", "--power-log", str(log), "--db", str(seeded_db), "--out", str(out)]) == 0
    runs = json.loads(out.read_text())["runs"]
    assert [r["config"]["repeat_index"] for r in runs] == [0, 1, 2]  # a power log is a sensor: 3 repeats
    for run in runs:
        m = run["metrics"]
        assert (m["energy_boundary"], m["energy_method"]) == ("wall", "sampled")
        # the window as the meter sees it (wall clock) vs as the run times it (perf_counter): within a ms or so
        assert m["energy_j"] == pytest.approx(42.0 * m["duration_s"], rel=0.02)
        assert "window_short_for_sensor" in run["flags"]  # a 0.6 s window with a 1 Hz meter
        assert "window_under_minimum" in run["flags"]  # --duration 0.6 under the 10 s minimum


def test_bad_power_options_fail_before_anything_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--power-limit", "150", "--device", "cpu", "--tdp-w", "-3", "--db", str(tmp_path / "x.duckdb")])
    err = capsys.readouterr().err
    assert code == 2 and "--tdp-w: -3 is not valid" in err and "--power-limit needs a CUDA device" in err
    assert not (tmp_path / "results").exists()


def test_net_energy_per_example_subtracts_idle_power_x_duration() -> None:
    from energy import idle_figures as idle_metrics

    flags: list[str] = []
    m = {"energy_j": 120.0, "duration_s": 10.0, "examples": 40}
    assert idle_metrics(m, 5.0, flags) == {"idle_power_w": 5.0, "idle_energy_j": 50.0,
                                          "net_j_per_sample": (120.0 - 50.0) / 40}
    assert idle_metrics({**m, "energy_j": 40.0}, 5.0, flags) == {"idle_power_w": 5.0, "idle_energy_j": 50.0}
    assert flags == ["net_energy_nonpositive"]  # never a zero or negative net figure
    assert idle_metrics(m, None, flags) == {}
