"""The profiling loop (`joulebench run --profile`) with a fake power control and a simulated sensor:
one model build, change / settle / measure per setting, each setting its own run marked as a profile,
the previous setting restored after an error and on SIGINT, and the dry run that changes nothing."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from energy import EnergyReading
from runner import environment
from runner import profile as profile_module
from runner.control import DryRunPowerControl, PowerControl
from runner.options import SweepOptions


class FakeLimit(PowerControl):
    """A GPU whose power limit is a number in memory; remembers when each value was applied."""

    KIND = "test_fake_limit"
    option = "--power-limit"

    def __init__(self, start_w: float = 170.0) -> None:
        self.value = start_w
        self.applied: list[tuple[float, float]] = []  # (monotonic time, watts)

    def current(self) -> float:
        return self.value

    def apply(self, value: Any) -> None:
        self.value = float(value)
        self.applied.append((time.monotonic(), float(value)))

    def state(self) -> dict[str, Any]:
        return {"kind": self.KIND}


class SimulatedSensor:
    """Power follows the control's limit, capped by the workload's demand (150 W); remembers when
    each window opened."""

    name = "simulated"
    boundary = "gpu_board"
    method = "counter"

    def __init__(self, control: PowerControl | None) -> None:
        self.control = control
        self.opened: list[float] = []

    @contextlib.contextmanager
    def window(self) -> Iterator[EnergyReading]:
        reading = EnergyReading()
        t0 = time.monotonic()
        self.opened.append(t0)
        try:
            yield reading
        finally:
            seconds = max(time.monotonic() - t0, 1e-3)
            limit = float(self.control.current() or 150.0) if self.control is not None else 150.0
            reading.energy_j = min(limit, 150.0) * seconds
            reading.boundary, reading.method, reading.duration_s = self.boundary, self.method, seconds

    def close(self) -> None:
        pass


def _options(tmp_path: Path, **kw: Any) -> SweepOptions:
    base: dict[str, Any] = dict(workloads=["bert-tiny"], batch_sizes=[1], seq_lens=[8], warmup=1, steps=2,
                                device="cpu", db=str(tmp_path / "db.duckdb"), out=tmp_path / "profile.json",
                                power_limits_w=[100.0, 125.0, 150.0, 170.0], profile=True, settle_s=0.3, repeats=1,
                                idle=False)
    base.update(kw)
    return SweepOptions(**base)


@pytest.fixture
def in_effect(monkeypatch: pytest.MonkeyPatch) -> list[FakeLimit]:
    """environment.capture reports the fake control's limit as the one in effect (NVML would), and the
    options check no real GPU's range (the control is the fake)."""
    monkeypatch.setattr(SweepOptions, "_control_problems", lambda self: [])
    holder: list[FakeLimit] = []
    real = environment.capture

    def capture(device: Any) -> environment.Captured:
        captured = real(device)
        return dataclasses.replace(captured, power_limit_w=holder[0].value) if holder else captured

    monkeypatch.setattr(environment, "capture", capture)
    return holder


def test_every_setting_is_measured_on_one_built_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      in_effect: list[FakeLimit]) -> None:
    builds: list[str] = []
    real_build = profile_module.build
    monkeypatch.setattr(profile_module, "build", lambda cfg, dev: builds.append(cfg.workload) or real_build(cfg, dev))
    control = FakeLimit(start_w=200.0)
    in_effect.append(control)
    sensor = SimulatedSensor(control)
    result = profile_module.run_profile(_options(tmp_path), meter=sensor, control=control, ingest=True)
    assert builds == ["bert-tiny"]  # one build for four settings
    runs = json.loads((tmp_path / "profile.json").read_text())["runs"]
    assert [r["config"]["power_limit_requested_w"] for r in runs] == [100.0, 125.0, 150.0, 170.0]
    assert [r["config"]["power_limit_w"] for r in runs] == [100.0, 125.0, 150.0, 170.0]  # in effect
    assert all(r["config"]["profile"] is True and r["status"] == "ok" for r in runs)
    assert all("power_setting_not_applied" not in r["flags"] for r in runs)
    powers = [r["metrics"]["avg_power_w"] for r in runs]
    # the simulated sensor's cap; 5 %: the runner times the window apart from the sensor, and on a loaded
    # machine the two clocks differ by a few % (152.9 W seen), while the settings are 17 % or more apart
    assert powers == pytest.approx([100.0, 125.0, 150.0, 150.0], rel=5e-2)
    # settle: each window opens at least --settle seconds after its setting was applied
    applied = [t for t, _ in control.applied[:4]]
    assert all(opened - t >= 0.3 for t, opened in zip(applied, sensor.opened))
    assert [w for _, w in control.applied] == [100.0, 125.0, 150.0, 170.0, 200.0]  # then restored to 200 W
    assert result.exit_code == 0 and result.ingest is not None and result.ingest.runs_added == 4
    from db import Store

    with Store.open_read_only(tmp_path / "db.duckdb") as store:
        stored = store.query("SELECT power_limit_w, profile FROM runs WHERE origin_kind = 'local' "
                             "ORDER BY power_limit_w").rows()
    assert stored == [(100.0, True), (125.0, True), (150.0, True), (170.0, True)]


def test_an_error_mid_profile_is_recorded_and_the_limit_restored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                in_effect: list[FakeLimit]) -> None:
    real_window = profile_module.run_window
    calls = []

    def failing(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        return real_window(*args, **kw)

    monkeypatch.setattr(profile_module, "run_window", failing)
    control = FakeLimit(start_w=160.0)
    in_effect.append(control)
    result = profile_module.run_profile(_options(tmp_path, settle_s=0.0), meter=SimulatedSensor(control),
                                        control=control, ingest=False)
    statuses = [(r["config"]["power_limit_requested_w"], r["status"]) for r in result.runs]
    assert statuses == [(100.0, "ok"), (125.0, "failed")]  # this configuration stops at its failure
    assert "illegal memory access" in result.runs[1]["error"] and result.exit_code == 1
    assert control.value == 160.0 and not (tmp_path / "power-restore.json").exists()


def test_sigint_mid_profile_keeps_finished_settings_and_restores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 in_effect: list[FakeLimit]) -> None:
    real_window = profile_module.run_window
    calls = []

    def interrupted(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the third window runs
            time.sleep(1)
        return real_window(*args, **kw)

    monkeypatch.setattr(profile_module, "run_window", interrupted)
    control = FakeLimit(start_w=200.0)
    in_effect.append(control)
    result = profile_module.run_profile(_options(tmp_path, settle_s=0.0), meter=SimulatedSensor(control),
                                        control=control, ingest=False)
    assert [r["status"] for r in result.runs] == ["ok", "ok", "interrupted"]
    assert result.interrupted_by == signal.SIGINT and result.exit_code == 130
    assert [w for _, w in control.applied] == [100.0, 125.0, 150.0, 200.0]  # 170 W never set; 200 W restored


def test_a_dry_run_records_the_settings_and_changes_nothing(tmp_path: Path) -> None:
    dry = DryRunPowerControl("--power-limit", None, "no NVIDIA GPU here")
    options = _options(tmp_path, power_dry_run=True, settle_s=0.0, idle=True, idle_s=0.2)
    result = profile_module.run_profile(options, meter=SimulatedSensor(None), control=dry, ingest=False)
    assert dry.applied == [100.0, 125.0, 150.0, 170.0]  # what it would have set; no restore to apply
    measured = [r for r in result.runs if r["config"]["mode"] != "idle"]
    idle = [r for r in result.runs if r["config"]["mode"] == "idle"]
    assert len(measured) == 4 and len(idle) == 4  # one idle baseline per setting
    for run in measured:
        assert run["config"]["profile"] is True and "power_limit_w" not in run["config"]  # none in effect here
        assert "power_setting_not_applied" in run["flags"]
    assert not (tmp_path / "power-restore.json").exists()


def test_dry_run_and_profile_options_are_checked_before_anything_runs(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    db = str(tmp_path / "x.duckdb")
    assert main(["run", "--profile", "--device", "cpu", "--db", db]) == 2
    assert "--profile measures several power settings" in capsys.readouterr().err
    assert main(["run", "--profile", "--device", "cpu", "--power-limit", "100,150", "--db", db]) == 2
    assert "--power-limit needs a CUDA device" in capsys.readouterr().err  # no dry run: a real change
    assert main(["run", "--profile", "--power-dry-run", "--device", "cpu", "--power-limit", "100,150",
                 "--check", "--db", db]) == 0
    plan = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert plan["profile"] is True and plan["power_dry_run"] is True and plan["measured_runs"] == 2


def test_a_generation_workload_is_profiled_token_by_token(tmp_path: Path, in_effect: list[FakeLimit]) -> None:
    """Issue 19: J/token against the power limit. The simulated sensor draws min(limit, 150 W), so at the same
    speed a request's tokens cost less energy at 100 W than at 150 W; the split into prefill and decode is
    made at every setting."""
    control = FakeLimit(start_w=200.0)
    in_effect.append(control)
    options = _options(tmp_path, workloads=["llm-tiny"], batch_sizes=[2], seq_lens=[16], max_new_tokens=[8],
                       steps=None, duration_s=0.3, power_limits_w=[100.0, 150.0], settle_s=0.0)
    result = profile_module.run_profile(options, meter=SimulatedSensor(control), control=control, ingest=True)
    assert result.exit_code == 0
    runs = json.loads((tmp_path / "profile.json").read_text())["runs"]
    assert [r["config"]["power_limit_w"] for r in runs] == [100.0, 150.0]
    m = [r["metrics"] for r in runs]
    assert all(x["output_tokens"] > 0 and x["decode_j_per_token"] > 0 and x["prefill_j_per_request"] > 0 for x in m)
    # J/token = W / tokens/s: the window's average power over its token rate
    for x in m:
        assert x["j_per_token"] == pytest.approx(x["avg_power_w"] / x["tokens_per_s"], rel=1e-6)
    assert [x["avg_power_w"] for x in m] == pytest.approx([100.0, 150.0], rel=5e-2)
    # the recommendation works per output token: the fewest J/token measured (at the lower limit when both settings
    # ran at the same speed; on a busy machine the 100 W run can be more than 1.5x slower, and then 150 W is fewer)
    from db import Store, queries
    from tuning import UNIT_TOKEN, Goal, profiles_from_runs, recommend

    with Store.open_read_only(tmp_path / "db.duckdb") as store:
        device = runs[0]["device"]["name"]
        profile = profiles_from_runs(queries.power_setting_runs(store, device, "llm-tiny"))[0]
    assert profile.unit == UNIT_TOKEN and profile.config["max_new_tokens"] == 8
    point = {p.label: p for p in profile.points}["100 W"]
    assert point.j_per_unit == pytest.approx(m[0]["j_per_token"], rel=1e-6)
    rec = recommend(profile, Goal("energy"))
    fewest = min(profile.points, key=lambda p: p.j_per_unit or float("inf")).label
    assert rec.best is not None and rec.best.point.label == fewest and "J/output token" in rec.sentence()
