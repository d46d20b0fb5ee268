"""Power control: limits validated before anything runs, permission messages, and the previous
setting restored after an exception, SIGINT, SIGTERM, and at the next start after a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from unittest import mock

import pynvml as real_pynvml
import pytest

from joulebench.errors import PowerControlPermissionError, RunConfigError
from runner.control import NvmlPowerLimit, PowerSettings, restore_leftover
from runner.options import SweepOptions

REPO = Path(__file__).resolve().parent.parent

# A fake control in its own process: the "device" is a file holding the limit in W. Ctrl-C is made to raise
# KeyboardInterrupt as in a terminal even when the tests were started from a shell that ignores SIGINT (a
# background job inherits SIG_IGN, and Python then keeps it).
FAKE = '''
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from pathlib import Path
from runner.control import PowerControl, PowerSettings, register_control, restore_leftover

class FileLimit(PowerControl):
    KIND = "test_file_limit"
    option = "--power-limit"
    def __init__(self, path): self.path = Path(path)
    def current(self): return float(self.path.read_text())
    def apply(self, value): self.path.write_text(str(float(value)))
    def state(self): return {"kind": self.KIND, "path": str(self.path)}

register_control(FileLimit.KIND, lambda s: FileLimit(s["path"]))
mode, device, state = sys.argv[1], sys.argv[2], Path(sys.argv[3])
if mode == "restore":
    sys.exit(0 if restore_leftover(state) else 1)
with PowerSettings(FileLimit(device), state) as power:
    power.apply(100)
    print("applied", flush=True)
    if mode == "exception":
        raise RuntimeError("the workload crashed")
    time.sleep(60)
'''


def _start(mode: str, device: Path, state: Path) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-c", FAKE, mode, str(device), str(state)], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("how", ["exception", "SIGINT", "SIGTERM"])
def test_the_previous_limit_is_restored(how: str, tmp_path: Path) -> None:
    device, state = tmp_path / "limit", tmp_path / "power-restore.json"
    device.write_text("170.0")
    proc = _start("exception" if how == "exception" else "wait", device, state)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "applied"
        if how != "exception":  # (with the exception it may already be restored)
            assert device.read_text() == "100.0" and json.loads(state.read_text())["restore"] == 170.0
            proc.send_signal(getattr(signal, how))
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert device.read_text() == "170.0", err
    assert not state.exists() and "restored 170.0" in err
    assert proc.returncode != 0


def test_a_killed_run_is_restored_at_the_next_start(tmp_path: Path) -> None:
    device, state = tmp_path / "limit", tmp_path / "power-restore.json"
    device.write_text("170.0")
    proc = _start("wait", device, state)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "applied"
    proc.kill()  # SIGKILL: no finally, no atexit
    proc.wait(timeout=120)
    assert device.read_text() == "100.0" and state.exists()
    done = subprocess.run([sys.executable, "-c", FAKE, "restore", str(device), str(state)], cwd=REPO,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert device.read_text() == "170.0" and not state.exists() and "was killed" in done.stderr


def test_restore_leftover_without_a_state_file_does_nothing(tmp_path: Path) -> None:
    assert restore_leftover(tmp_path / "none.json") is False


@pytest.fixture
def nvml() -> Any:
    with mock.patch("runner.sensors.nvml.pynvml", autospec=True) as m:
        for name in dir(real_pynvml):
            if name.startswith(("NVMLError", "NVML_", "nvmlClocks")):
                setattr(m, name, getattr(real_pynvml, name))
        m.nvmlDeviceGetHandleByIndex.return_value = "handle0"
        m.nvmlDeviceGetPowerManagementLimit.return_value = 170_000  # mW
        m.nvmlDeviceGetPowerManagementLimitConstraints.return_value = (100_000, 170_000)
        yield m


def test_limits_outside_the_cards_range_fail_before_anything_runs(nvml: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SweepOptions, "resolved_device", lambda self: "cuda:0")
    monkeypatch.setattr("runner.devices.device_problem", lambda spec: None)
    monkeypatch.setattr("runner.precision.problem", lambda *a: None)
    opts = SweepOptions(power_limits_w=[90, 125, 250])
    with pytest.raises(RunConfigError) as info:
        opts.validate()
    assert info.value.problems == ["--power-limit: 90 W is outside this GPU's range 100-170 W",
                                   "--power-limit: 250 W is outside this GPU's range 100-170 W"]
    nvml.nvmlDeviceSetPowerManagementLimit.assert_not_called()  # zeus#143: nothing was set


def test_power_limit_on_a_cpu_is_refused() -> None:
    with pytest.raises(RunConfigError, match="--power-limit needs a CUDA device"):
        SweepOptions(power_limits_w=[100], device="cpu").validate()
    with pytest.raises(RunConfigError, match="give one of them"):
        SweepOptions(power_limits_w=[100], power_modes=["0"], device="cpu").validate()


def test_set_limit_in_milliwatts_and_no_permission_names_the_command(nvml: Any, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    control = NvmlPowerLimit(0)
    assert control.current() == 170.0 and control.limits_w() == (100.0, 170.0)
    control.apply(125)
    nvml.nvmlDeviceSetPowerManagementLimit.assert_called_with("handle0", 125_000)
    nvml.nvmlDeviceSetPowerManagementLimit.side_effect = real_pynvml.NVMLError_NoPermission()
    monkeypatch.setattr("runner.control.shutil.which", lambda name: None)  # no nvidia-smi fallback here
    with pytest.raises(PowerControlPermissionError) as info:
        control.apply(150)
    assert info.value.command == "sudo nvidia-smi -i 0 -pl 150"
    assert "sudo nvidia-smi -i 0 -pl 150" in info.value.format_message()
    # in a session: a warning naming the command, nothing to restore, no state file left behind
    err: list[str] = []

    class Stream:
        def write(self, s: str) -> None:
            err.append(s)

        def flush(self) -> None:
            pass

    state = tmp_path / "power-restore.json"
    with PowerSettings(control, state, Stream()) as power:  # type: ignore[arg-type]
        assert power.apply(150) is False
    assert not state.exists() and "sudo nvidia-smi -i 0 -pl 150" in "".join(err)


def test_nvidia_smi_fallback_when_nvml_refuses(nvml: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    nvml.nvmlDeviceSetPowerManagementLimit.side_effect = real_pynvml.NVMLError_NoPermission()
    monkeypatch.setattr("runner.control.shutil.which", lambda name: "/usr/bin/nvidia-smi")
    calls: list[list[str]] = []

    def run(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        calls.append(args)
        return subprocess.CompletedProcess(args, 0, "", "")

    monkeypatch.setattr("runner.control.subprocess.run", run)
    NvmlPowerLimit(0).apply(140)
    assert calls == [["nvidia-smi", "-i", "0", "-pl", "140"]]


def test_settle_wait_stops_on_a_signal() -> None:
    from runner.interrupts import InterruptGuard
    from runner.sweep import _wait

    guard = InterruptGuard()
    guard.pending = signal.SIGTERM
    t = time.monotonic()
    _wait(30, guard)
    assert time.monotonic() - t < 1


# --- one owner at a time (issue 9, case 4) --------------------------------------------------------

def test_a_second_sweep_is_refused_while_the_first_holds_the_power_setting(tmp_path: Path) -> None:
    device, state = tmp_path / "limit", tmp_path / "power-restore.json"
    device.write_text("170.0")
    first = _start("wait", device, state)
    try:
        assert first.stdout is not None and first.stdout.readline().strip() == "applied"
        second = subprocess.run([sys.executable, "-c", FAKE, "wait", str(device), str(state)], cwd=REPO,
                                env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, timeout=60)
        assert second.returncode != 0 and "applied" not in second.stdout
        assert f"another JouleBench sweep (PID {first.pid}" in second.stderr and "will restore 170.0" in second.stderr
        assert json.loads(state.read_text())["restore"] == 170.0  # what the first sweep found stays recorded
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert device.read_text() == "170.0" and not state.exists()


def test_after_a_killed_sweep_the_next_one_restores_first_and_keeps_the_true_original(tmp_path: Path) -> None:
    device, state = tmp_path / "limit", tmp_path / "power-restore.json"
    device.write_text("170.0")
    killed = _start("wait", device, state)
    assert killed.stdout is not None and killed.stdout.readline().strip() == "applied"
    killed.kill()
    killed.wait(timeout=120)
    assert device.read_text() == "100.0"  # left at the killed sweep's setting
    second = _start("wait", device, state)
    try:
        assert second.stdout is not None and second.stdout.readline().strip() == "applied"
        assert json.loads(state.read_text())["restore"] == 170.0  # not the 100 W the killed sweep left
        second.send_signal(signal.SIGINT)
        _, err = second.communicate(timeout=120)
    finally:
        if second.poll() is None:
            second.kill()
            second.wait()
    assert "left changed by a JouleBench sweep that was killed" in err
    assert device.read_text() == "170.0" and not state.exists()


# --- Jetson clocks restored (issue 9, case 5) ------------------------------------------------------

FAKE_TOOLS = {
    "nvpmodel": '''#!/bin/sh
if [ "$1" = "-q" ]; then echo "NV Power Mode: MODE$(cat "$FAKE/mode")"; cat "$FAKE/mode"; exit 0; fi
if [ "$1" = "-m" ]; then echo "$2" > "$FAKE/mode"; echo "nvpmodel -m $2" >> "$FAKE/calls"; exit 0; fi
exit 1
''',
    "jetson_clocks": '''#!/bin/sh
echo "jetson_clocks $*" >> "$FAKE/calls"
if [ "$1" = "--store" ]; then cat "$FAKE/clocks" > "$2"; exit 0; fi
if [ "$1" = "--restore" ]; then cat "$2" > "$FAKE/clocks"; exit 0; fi
echo max > "$FAKE/clocks"
''',
}

JETSON = '''
import sys, time
from pathlib import Path
from runner.control import JetsonPowerMode, PowerSettings
conf, clocks, state, mode = sys.argv[1:5]
control = JetsonPowerMode(conf, jetson_clocks=True, clocks_file=Path(clocks))
with PowerSettings(control, Path(state)) as power:
    power.apply(mode)
    print("applied", flush=True)
    if len(sys.argv) > 5:
        time.sleep(60)
'''


@pytest.fixture
def fake_jetson(tmp_path: Path) -> dict[str, Any]:
    fake = tmp_path / "jetson"
    bin_dir = fake / "bin"
    bin_dir.mkdir(parents=True)
    for name, text in FAKE_TOOLS.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    (fake / "mode").write_text("0\n")
    (fake / "clocks").write_text("dynamic\n")
    conf = fake / "nvpmodel.conf"
    conf.write_text("< POWER_MODEL ID=0 NAME=MAXN >\n< POWER_MODEL ID=6 NAME=15W >\n")
    env = dict(os.environ, PYTHONPATH=str(REPO), FAKE=str(fake), PATH=f"{bin_dir}:{os.environ['PATH']}")
    args = [str(conf), str(tmp_path / "jetson-clocks.conf"), str(tmp_path / "power-restore.json"), "6"]
    return {"fake": fake, "env": env, "args": args, "state": tmp_path / "power-restore.json"}


@pytest.mark.skipif(os.geteuid() != 0, reason="the power-mode control refuses without root, as on a Jetson")
def test_jetson_clocks_are_restored_after_a_normal_end(fake_jetson: dict[str, Any]) -> None:
    done = subprocess.run([sys.executable, "-c", JETSON, *fake_jetson["args"]], cwd=REPO, env=fake_jetson["env"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    fake = fake_jetson["fake"]
    assert (fake / "mode").read_text().strip() == "0" and (fake / "clocks").read_text().strip() == "dynamic"
    calls = (fake / "calls").read_text().splitlines()
    # the clocks are stored before the first mode changes them (issue 17: they were stored after
    # `nvpmodel -m`, so the restore put back the first swept mode's clocks, not the ones found)
    assert calls[:3] == [f"jetson_clocks --store {fake.parent / 'jetson-clocks.conf'}", "nvpmodel -m 6",
                         "jetson_clocks "]
    assert calls[3:] == ["nvpmodel -m 0", f"jetson_clocks --restore {fake.parent / 'jetson-clocks.conf'}"]
    assert "restored power mode 0 (MAXN) and the Jetson clocks" in done.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="the power-mode control refuses without root, as on a Jetson")
def test_jetson_clocks_are_restored_at_the_next_start_after_a_kill(fake_jetson: dict[str, Any]) -> None:
    proc = subprocess.Popen([sys.executable, "-c", JETSON, *fake_jetson["args"], "wait"], cwd=REPO,
                            env=fake_jetson["env"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "applied"
    proc.kill()
    proc.wait(timeout=120)
    fake = fake_jetson["fake"]
    assert (fake / "clocks").read_text().strip() == "max"
    assert json.loads(fake_jetson["state"].read_text())["jetson_clocks_file"]
    restore = ("import sys; from pathlib import Path; from runner.control import restore_leftover; "
               "sys.exit(0 if restore_leftover(Path(sys.argv[1])) else 1)")
    done = subprocess.run([sys.executable, "-c", restore, str(fake_jetson["state"])], cwd=REPO,
                          env=fake_jetson["env"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (fake / "mode").read_text().strip() == "0" and (fake / "clocks").read_text().strip() == "dynamic"
    assert not fake_jetson["state"].exists() and "and the Jetson clocks" in done.stderr
