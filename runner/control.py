"""Power control: the GPU power limit (NVML, else `nvidia-smi -pl`) and the Jetson power mode
(`nvpmodel -m`, optionally `jetson_clocks`), always put back.

`PowerSettings` is the one way a setting changes: before the first change it writes what to
restore into a small state file next to the database, then restores it when the block ends
(normally, on an exception, on SIGINT / SIGTERM), at interpreter exit (`atexit`), and, if the
process was killed outright, at the next start (`restore_leftover`). Values are validated
against the device's min/max limits or its mode list before anything runs (zeus#143). Without
the privilege to change it, the message names the command to run, and the runs record the
setting actually in effect.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, TextIO

from joulebench import processes
from joulebench.errors import PowerControlError, PowerControlPermissionError, PowerSensorError
from joulebench.files import write_atomic
from joulebench.paths import power_state_file, resolve_db_path

CONTROLS: dict[str, Callable[[dict[str, Any]], PowerControl]] = {}  # KIND -> rebuild from state


def register_control(kind: str, factory: Callable[[dict[str, Any]], PowerControl]) -> None:
    CONTROLS[kind] = factory


def state_path_for(db: str | os.PathLike[str] | None) -> Path:
    return power_state_file(resolve_db_path(db))


class PowerControl(ABC):
    KIND: ClassVar[str]
    option: ClassVar[str]  # the command-line option that sets it
    changes_device: ClassVar[bool] = True  # False for a dry run: nothing to restore, no state file

    @abstractmethod
    def current(self) -> Any: ...

    @abstractmethod
    def apply(self, value: Any) -> None:
        """Set `value`; PowerControlPermissionError (naming the command) without the privilege."""

    def problems(self, values: list[Any]) -> list[str]:
        return []

    @abstractmethod
    def state(self) -> dict[str, Any]:
        """What `CONTROLS[KIND]` needs to rebuild this control in another process."""

    def describe(self, value: Any) -> str:
        return str(value)

    def close(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        pass


# --- NVIDIA: power limit -------------------------------------------------------------------------

class NvmlPowerLimit(PowerControl):
    KIND = "gpu_power_limit"
    option = "--power-limit"

    def __init__(self, index: int = 0) -> None:
        from runner.sensors import nvml

        self._nvml = nvml
        try:
            nvml.init()
            self.index = index
            self.handle = nvml.nvml_call("nvmlDeviceGetHandleByIndex", index)
        except PowerSensorError as e:
            raise PowerControlError(f"--power-limit needs an NVIDIA GPU with NVML: {e}") from e

    def current(self) -> float:  # Units: W
        mw = self._nvml.nvml_call("nvmlDeviceGetPowerManagementLimit", self.handle, what="reading the power limit")
        return mw / 1000.0

    def limits_w(self) -> tuple[float, float]:
        lo, hi = self._nvml.nvml_call("nvmlDeviceGetPowerManagementLimitConstraints", self.handle,
                                      what="reading the power limit range")  # Units: mW
        return lo / 1000.0, hi / 1000.0

    def problems(self, values: list[Any]) -> list[str]:
        try:
            lo, hi = self.limits_w()
        except PowerSensorError as e:
            return [f"--power-limit: cannot read this GPU's power limit range: {e}"]
        return [f"--power-limit: {v:g} W is outside this GPU's range {lo:g}-{hi:g} W"
                for v in values if not lo <= v <= hi]

    def command(self, watts: float) -> str:
        return f"sudo nvidia-smi -i {self.index} -pl {watts:g}"

    def apply(self, value: Any) -> None:
        watts = float(value)
        try:
            self._nvml.nvml_call("nvmlDeviceSetPowerManagementLimit", self.handle, round(watts * 1000),
                                 what="setting the power limit")
            return
        except self._nvml.NvmlPermissionError as e:
            nvml_error: Exception = e
        except PowerSensorError as e:
            raise PowerControlError(f"cannot set the power limit to {watts:g} W: {e}") from e
        if shutil.which("nvidia-smi"):
            done = subprocess.run(["nvidia-smi", "-i", str(self.index), "-pl", f"{watts:g}"],
                                  capture_output=True, text=True, timeout=30)
            if done.returncode == 0:
                return
        raise PowerControlPermissionError(
            f"not allowed to set GPU {self.index}'s power limit to {watts:g} W ({nvml_error})",
            command=self.command(watts)) from nvml_error

    def state(self) -> dict[str, Any]:
        return {"kind": self.KIND, "index": self.index}

    def describe(self, value: Any) -> str:
        return f"power limit {float(value):g} W"

    def close(self) -> None:
        self._nvml.shutdown()


register_control(NvmlPowerLimit.KIND, lambda s: NvmlPowerLimit(int(s.get("index", 0))))


# --- Jetson: nvpmodel power mode -----------------------------------------------------------------

_MODEL = re.compile(r"<\s*POWER_MODEL\s+ID\s*=\s*(\d+)\s+NAME\s*=\s*([^\s>]+)", re.IGNORECASE)


def jetson_modes(conf: Path | str = "/etc/nvpmodel.conf") -> dict[str, str]:
    """Mode id -> name from nvpmodel's configuration."""
    try:
        text = Path(conf).read_text(errors="replace")
    except OSError:
        return {}
    return {m.group(1): m.group(2) for m in _MODEL.finditer(text)}


class JetsonPowerMode(PowerControl):
    KIND = "jetson_power_mode"
    option = "--power-mode"

    def __init__(self, conf: Path | str = "/etc/nvpmodel.conf", jetson_clocks: bool = False,
                 clocks_file: Path | None = None) -> None:
        self.conf = Path(conf)
        self.modes = jetson_modes(conf)
        if not self.modes or not shutil.which("nvpmodel"):
            raise PowerControlError("--power-mode needs a Jetson with nvpmodel (no /etc/nvpmodel.conf modes found)")
        self.jetson_clocks = jetson_clocks  # maximise clocks after each mode (restored at the end)
        self.clocks_file = clocks_file

    def current(self) -> str:
        from runner.environment import jetson_power_mode

        mode = jetson_power_mode()
        if mode is None:
            raise PowerControlError("cannot read the power mode (`nvpmodel -q` failed)")
        return mode.split(" ", 1)[0]

    def problems(self, values: list[Any]) -> list[str]:
        valid = ", ".join(f"{k} ({v})" for k, v in self.modes.items())
        return [f"--power-mode: {v} is not a mode of this Jetson; valid: {valid}"
                for v in values if str(v) not in self.modes]

    def _run(self, args: list[str], command: str) -> None:
        if os.geteuid() != 0:
            raise PowerControlPermissionError(f"changing the Jetson power mode needs root ({args[0]})", command)
        done = subprocess.run(args, capture_output=True, text=True, timeout=60, input="no\n")
        if done.returncode != 0:
            raise PowerControlError(f"`{' '.join(args)}` failed: {(done.stderr or done.stdout).strip()[:300]}")

    def apply(self, value: Any) -> None:
        """Set the nvpmodel mode (clocks are `max_clocks`' job, so a restore never maximises them)."""
        mode = str(value)
        self._run(["nvpmodel", "-m", mode], f"sudo nvpmodel -m {mode}")

    def store_clocks(self, clocks_file: Path) -> None:
        """`jetson_clocks --store FILE`: the clocks to put back after the sweep."""
        self._run(["jetson_clocks", "--store", str(clocks_file)], f"sudo jetson_clocks --store {clocks_file}")

    def max_clocks(self) -> None:
        """`jetson_clocks`: CPU, GPU and memory clocks at their maximum for the current mode."""
        self._run(["jetson_clocks"], "sudo jetson_clocks")

    def restore_clocks(self, clocks_file: Path) -> None:
        self._run(["jetson_clocks", "--restore", str(clocks_file)], f"sudo jetson_clocks --restore {clocks_file}")

    def state(self) -> dict[str, Any]:
        return {"kind": self.KIND, "conf": str(self.conf)}

    def describe(self, value: Any) -> str:
        return f"power mode {value} ({self.modes.get(str(value), '?')})"


register_control(JetsonPowerMode.KIND, lambda s: JetsonPowerMode(s.get("conf", "/etc/nvpmodel.conf")))


# --- dry run: record what would be set, change nothing ----------------------------------------------

class DryRunPowerControl(PowerControl):
    """Records each setting it is asked to apply and applies none (`--power-dry-run`): the only
    power control allowed on a machine whose settings must not change, such as a lent GPU. Where
    the real control can be made it is used read-only, to read the setting in effect and to check
    the values against the card's range or the mode list; runs then record the setting in effect
    beside the one requested (flagged `power_setting_not_applied` where they differ)."""

    KIND = "dry_run"
    changes_device = False

    def __init__(self, option: str, reader: PowerControl | None = None, why_no_reader: str | None = None,
                 stream: TextIO | None = None) -> None:
        self.option = option  # type: ignore[misc]
        self.reader = reader
        self.why_no_reader = why_no_reader
        self.stream = stream or sys.stderr
        self.applied: list[Any] = []  # the settings it would have applied, in order

    @classmethod
    def around(cls, make_reader: Callable[[], PowerControl | None], option: str,
               stream: TextIO | None = None) -> DryRunPowerControl:
        try:
            return cls(option, make_reader(), stream=stream)
        except PowerControlError as e:
            return cls(option, None, e.format_message(), stream)

    def current(self) -> Any:
        """The setting in effect where it can be read (None where it cannot)."""
        if self.reader is None:
            return None
        try:
            return self.reader.current()
        except (PowerControlError, PowerSensorError):
            return None

    def problems(self, values: list[Any]) -> list[str]:
        return self.reader.problems(values) if self.reader is not None else []

    def apply(self, value: Any) -> None:
        self.applied.append(value)
        print(f"dry run: would set {self.describe(value)} (nothing changed)", file=self.stream, flush=True)

    def state(self) -> dict[str, Any]:
        return {"kind": self.KIND, "option": self.option}

    def describe(self, value: Any) -> str:
        if self.reader is not None:
            return self.reader.describe(value)
        return f"power limit {float(value):g} W" if self.option == "--power-limit" else f"power mode {value}"

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()


register_control(DryRunPowerControl.KIND, lambda s: DryRunPowerControl(s.get("option", "--power-limit")))


# --- the session that always restores ------------------------------------------------------------

def _read_state(state_path: Path) -> dict[str, Any] | None:
    try:
        found = json.loads(state_path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}  # damaged: no owner can be proven alive
    return found if isinstance(found, dict) else {}


def _describe_owner(state: dict[str, Any]) -> str:
    owner = state.get("owner") or {}
    return f"PID {owner.get('pid', '?')}, since {state.get('since', '?')}"


def restore_leftover(state_path: Path, stream: TextIO | None = None) -> bool:
    """Put back a setting a killed sweep left behind (its state file, its owner gone); True when one
    was restored. A state file whose owner still runs is that sweep's: left alone."""
    stream = stream or sys.stderr
    state = _read_state(state_path)
    if state is None or processes.alive(state.get("owner")):
        return False
    if not state.get("changed", True):  # the owner died before changing anything
        state_path.unlink(missing_ok=True)
        return False
    try:
        control = CONTROLS[state["control"]["kind"]](state["control"])
    except (OSError, ValueError, KeyError, TypeError, PowerControlError) as e:
        print(f"warning: {state_path} records a power setting to restore, but it cannot be used ({e}); "
              f"check the setting by hand and delete the file", file=stream)
        return False
    try:
        control.apply(state["restore"])
        clocks = state.get("jetson_clocks_file")
        if clocks and isinstance(control, JetsonPowerMode):
            control.restore_clocks(Path(clocks))
    except PowerControlError as e:
        print(f"warning: a killed JouleBench sweep left {control.describe(state['restore'])} to restore: "
              f"{e.format_message()}", file=stream)
        return False
    finally:
        control.close()
    state_path.unlink(missing_ok=True)
    what = control.describe(state["restore"]) + (" and the Jetson clocks" if state.get("jetson_clocks_file") else "")
    print(f"restored {what}, left changed by a JouleBench sweep that was killed ({_describe_owner(state)})",
          file=stream)
    return True


class PowerSettings:
    """`with PowerSettings(control, state_path) as s: s.apply(v)`; the original is put back.

    One owner at a time: entering claims the state file (created exclusively, with this process's
    PID and start time) and records the setting found; a second sweep that would change the power
    setting while the owner runs is refused with a message, and a sweep that finds a dead owner's
    file restores that setting first, so the setting restored at the end is always the one found
    before any sweep changed it. `--jetson-clocks` stores the clocks first and records the file, so
    they are restored after a normal end and, after a kill, at the next start.
    """

    def __init__(self, control: PowerControl, state_path: Path, stream: TextIO | None = None) -> None:
        self.control = control
        self.state_path = state_path
        self.stream = stream or sys.stderr
        self.original: Any = None
        self.changed = False
        self.clocks_file: Path | None = None
        self._owned = False
        self._sigterm_installed = False

    def _state(self) -> dict[str, Any]:
        return {"owner": processes.identity(), "since": datetime.now(UTC).isoformat(timespec="seconds"),
                "control": self.control.state(), "restore": self.original, "changed": self.changed,
                "jetson_clocks_file": str(self.clocks_file) if self.clocks_file else None}

    def _save(self) -> None:
        write_atomic(self.state_path, json.dumps(self._state()).encode())

    def _claim(self) -> None:
        for _ in range(3):
            restore_leftover(self.state_path, self.stream)  # first, so `original` is what no sweep set
            state = _read_state(self.state_path)
            if state is not None and processes.alive(state.get("owner")):
                raise PowerControlError(
                    f"another JouleBench sweep ({_describe_owner(state)}) is changing the power setting and will "
                    f"restore {state.get('restore')!r} when it ends; wait for it, or stop it with "
                    f"`kill -INT {(state.get('owner') or {}).get('pid', '<pid>')}` (its state: {self.state_path})")
            if state is not None:  # a dead owner's file that could not be restored: keep it, do not guess
                raise PowerControlError(f"{self.state_path} records a power setting a killed sweep left behind and "
                                        "it could not be restored (see the warning above); restore it by hand and "
                                        "delete the file")
            self.original = self.control.current()
            try:
                write_atomic(self.state_path, json.dumps(self._state()).encode(), exclusive=True)
            except FileExistsError:
                continue  # another sweep claimed it this instant: look again
            self._owned = True
            return
        raise PowerControlError(f"could not claim {self.state_path}; another sweep keeps changing it")

    def __enter__(self) -> PowerSettings:
        self._claim()
        atexit.register(self.restore)
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None)):
            signal.signal(signal.SIGTERM, _sigterm_to_exit)  # so `finally` blocks run on SIGTERM
            self._sigterm_installed = True
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.restore()
        finally:
            atexit.unregister(self.restore)
            if self._sigterm_installed:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)

    def apply(self, value: Any) -> bool:
        """Set `value`; False (after saying which command to run) when not permitted."""
        if not self.control.changes_device:  # a dry run records the setting and changes nothing
            self.control.apply(value)
            return True
        first = not self.changed
        if first:
            self.changed = True  # recorded before the change, so a kill mid-change restores it
            self._save()
        try:
            clocks = isinstance(self.control, JetsonPowerMode) and self.control.jetson_clocks
            if clocks and self.clocks_file is None:
                self._store_clocks()  # before the first mode changes them: the clocks found, not the mode's
            self.control.apply(value)
            if clocks:
                assert isinstance(self.control, JetsonPowerMode)
                self.control.max_clocks()
        except PowerControlPermissionError as e:
            if first:  # nothing was changed: nothing to restore
                self.changed = False
                self._save()
            print(f"warning: {e.format_message()}\nthe runs record the setting actually in effect",
                  file=self.stream, flush=True)
            return False
        return True

    def _store_clocks(self) -> None:
        assert isinstance(self.control, JetsonPowerMode)
        clocks_file = self.control.clocks_file or self.state_path.with_name("jetson-clocks.conf")
        self.control.store_clocks(clocks_file)
        self.clocks_file = clocks_file
        self._save()

    def restore(self) -> None:
        if not self._owned:
            return
        if self.changed:
            try:
                self.control.apply(self.original)
                if self.clocks_file is not None and isinstance(self.control, JetsonPowerMode):
                    self.control.restore_clocks(self.clocks_file)
            except PowerControlError as e:
                print(f"warning: could not restore {self.control.describe(self.original)}: {e.format_message()}; "
                      f"it will be retried at the next start ({self.state_path})", file=self.stream)
                self._owned = False  # the file stays for the next start
                return
            what = self.control.describe(self.original) + (" and the Jetson clocks" if self.clocks_file else "")
            print(f"restored {what}", file=self.stream, flush=True)
        self.changed = False
        self._owned = False
        self.state_path.unlink(missing_ok=True)


def _sigterm_to_exit(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
