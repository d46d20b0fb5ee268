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
import contextlib
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
from pathlib import Path
from typing import Any, ClassVar, TextIO

from joulebench.errors import PowerControlError, PowerControlPermissionError, PowerSensorError

STATE_FILE_NAME = "power-restore.json"
CONTROLS: dict[str, Callable[[dict[str, Any]], PowerControl]] = {}  # KIND -> rebuild from state


def register_control(kind: str, factory: Callable[[dict[str, Any]], PowerControl]) -> None:
    CONTROLS[kind] = factory


def state_path_for(db: str | os.PathLike[str] | None) -> Path:
    from joulebench.paths import resolve_db_path

    return resolve_db_path(db).parent / STATE_FILE_NAME


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
        self.jetson_clocks = jetson_clocks
        self.clocks_file = clocks_file
        self._clocks_stored = False

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
        mode = str(value)
        self._run(["nvpmodel", "-m", mode], f"sudo nvpmodel -m {mode}")
        if self.jetson_clocks and self.clocks_file is not None:
            if not self._clocks_stored:
                self._run(["jetson_clocks", "--store", str(self.clocks_file)], "sudo jetson_clocks --store")
                self._clocks_stored = True
            self._run(["jetson_clocks"], "sudo jetson_clocks")

    def restore_clocks(self) -> None:
        if self._clocks_stored and self.clocks_file is not None:
            self._run(["jetson_clocks", "--restore", str(self.clocks_file)], "sudo jetson_clocks --restore")

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

def restore_leftover(state_path: Path, stream: TextIO | None = None) -> bool:
    """Put back a setting a killed run left behind (its state file); True when one was restored."""
    stream = stream or sys.stderr
    if not state_path.exists():
        return False
    try:
        state = json.loads(state_path.read_text())
        control = CONTROLS[state["control"]["kind"]](state["control"])
    except (OSError, ValueError, KeyError, PowerControlError) as e:
        print(f"warning: {state_path} records a power setting to restore, but it cannot be used ({e}); "
              f"check the setting by hand and delete the file", file=stream)
        return False
    try:
        control.apply(state["restore"])
    except PowerControlPermissionError as e:
        print(f"warning: a killed JouleBench run left {control.describe(state['restore'])} to restore: "
              f"{e.format_message()}", file=stream)
        return False
    finally:
        control.close()
    state_path.unlink(missing_ok=True)
    print(f"restored {control.describe(state['restore'])}, left changed by a JouleBench run that was killed",
          file=stream)
    return True


class PowerSettings:
    """`with PowerSettings(control, state_path) as s: s.apply(v)`; the original is put back."""

    def __init__(self, control: PowerControl, state_path: Path, stream: TextIO | None = None) -> None:
        self.control = control
        self.state_path = state_path
        self.stream = stream or sys.stderr
        self.original: Any = None
        self.changed = False
        self._sigterm_installed = False

    def __enter__(self) -> PowerSettings:
        restore_leftover(self.state_path, self.stream)
        self.original = self.control.current()
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
        if not self.changed:
            self.state_path.parent.mkdir(parents=True, exist_ok=True)
            self.state_path.write_text(json.dumps({"control": self.control.state(), "restore": self.original}))
        try:
            self.control.apply(value)
        except PowerControlPermissionError as e:
            if not self.changed:
                self.state_path.unlink(missing_ok=True)
            print(f"warning: {e.format_message()}\nthe runs record the setting actually in effect",
                  file=self.stream, flush=True)
            return False
        self.changed = True
        return True

    def restore(self) -> None:
        if not self.changed:
            return
        with contextlib.suppress(PowerControlError):
            if isinstance(self.control, JetsonPowerMode):
                self.control.restore_clocks()
        try:
            self.control.apply(self.original)
        except PowerControlError as e:
            print(f"warning: could not restore {self.control.describe(self.original)}: {e.format_message()}; "
                  f"it will be retried at the next start ({self.state_path})", file=self.stream)
            return
        self.changed = False
        self.state_path.unlink(missing_ok=True)
        print(f"restored {self.control.describe(self.original)}", file=self.stream, flush=True)


def _sigterm_to_exit(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
