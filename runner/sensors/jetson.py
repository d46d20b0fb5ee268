"""Jetson modules: the INA3221 power monitor rails read from sysfs (default), boundary `jetson_module`.

Which rails make the module's power comes from the board table in `energy.rails` (the same
table the log parsers use): the **input rail** alone where the board has one (`VDD_IN` on
TX1/TX2/Xavier NX/Orin NX/Orin Nano, `POM_5V_IN` on Nano); its other rails are fed from it, so
adding them double-counts (jetson-stats#51) and they are recorded as traces without a boundary.
A board without an input rail (AGX Xavier, AGX Orin) is measured as the sum of the rails on its
regulator inputs, never a rail fed from one of them (AGX Orin's VDDQ_VDD2_1V8AO); such a run
carries the flag `energy_sum_of_rails`. Rails that fit no board give no energy, with the reason.

Two sysfs layouts are read:
- L4T r32 (JetPack 4) `ina3221x` iio driver: `.../iio:device*/rail_name_N`, `in_power{N}_input` (mW);
- L4T r34+ (JetPack 5/6) `ina3221` hwmon driver: `.../hwmon/hwmon*/in{N}_label`,
  `in{N}_input` (mV) and `curr{N}_input` (mA): power = mV x mA / 1000 mW.

jtop (jetson-stats, AGPL-3.0, the optional `[jetson]` extra) is used only when it is installed
and its service runs, and only when sysfs gave nothing: `JtopSensor`, the one place it is imported.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from energy.rails import FLAG_SUM_OF_RAILS, INPUT_RAILS, ModulePower, module_power
from runner.sensors.base import Sensor, SensorError, SensorUnavailable

__all__ = ["INPUT_RAILS", "Ina3221Sensor", "JtopSensor", "find_rails", "input_rail", "is_jetson"]
I2C_DRIVERS = ("sys/bus/i2c/drivers/ina3221x", "sys/bus/i2c/drivers/ina3221")
INA3221_PERIOD_S = 0.05  # the monitors' default conversion/averaging time is well under this


@dataclass(frozen=True)
class Rail:
    name: str
    power_file: Path | None = None  # mW (iio layout)
    voltage_file: Path | None = None  # mV (hwmon layout)
    current_file: Path | None = None  # mA (hwmon layout)

    def read_mw(self) -> float:
        try:
            if self.power_file is not None:
                return float(self.power_file.read_text().strip())
            assert self.voltage_file is not None and self.current_file is not None
            return float(self.voltage_file.read_text()) * float(self.current_file.read_text()) / 1000.0
        except (OSError, ValueError) as e:
            raise SensorError(f"INA3221 rail {self.name}: {e}") from e


def _text(path: Path) -> str | None:
    try:
        return path.read_text().strip().strip("\x00")
    except OSError:
        return None


def find_rails(root: Path | str = "/") -> list[Rail]:
    """Every INA3221 rail under `root` (a fake tree in tests), in a stable order."""
    root = Path(root)
    rails: list[Rail] = []
    for driver in I2C_DRIVERS:
        base = root / driver
        if not base.is_dir():
            continue
        for dev in sorted(base.glob("*-00*")):
            for iio in sorted(dev.glob("iio:device*")):
                for name_file in sorted(iio.glob("rail_name_*")):
                    n = name_file.name.rsplit("_", 1)[1]
                    name = _text(name_file)
                    if name and (iio / f"in_power{n}_input").exists():
                        rails.append(Rail(name, power_file=iio / f"in_power{n}_input"))
            for hw in sorted(dev.glob("hwmon/hwmon*")):
                for label in sorted(hw.glob("in*_label")):
                    m = re.fullmatch(r"in(\d+)_label", label.name)
                    name = _text(label)
                    if not m or not name or name.upper() == "NC":
                        continue
                    n = m.group(1)
                    if (hw / f"in{n}_input").exists() and (hw / f"curr{n}_input").exists():
                        rails.append(Rail(name, voltage_file=hw / f"in{n}_input", current_file=hw / f"curr{n}_input"))
    return rails


def input_rail(names: list[str]) -> str | None:
    """The module's input rail among `names`, or None (a board without one is summed by `module_power`)."""
    return next((r for r in INPUT_RAILS if r in names), None)


def _board_rule(sensor: Sensor, names: list[str]) -> ModulePower:
    """The board table's choice of rails; a summed board flags its runs."""
    choice = module_power(names)
    if choice.summed and FLAG_SUM_OF_RAILS not in sensor.flags:
        sensor.flags.append(FLAG_SUM_OF_RAILS)
    sensor.boundary = choice.boundary
    return choice


class Ina3221Sensor(Sensor):
    NAME = "ina3221"
    power_source = "ina3221_rail"  # the rail's instantaneous power from sysfs
    boundary = "jetson_module"
    energy_method = "sampled"
    period_s = INA3221_PERIOD_S

    def __init__(self, root: Path | str = "/") -> None:
        super().__init__()
        self.rails = {r.name: r for r in find_rails(root)}
        if not self.rails:
            raise SensorUnavailable("no INA3221 power monitor rails in sysfs (not a Jetson?)")
        self.module = _board_rule(self, list(self.rails))
        for rail in self.rails.values():
            rail.read_mw()  # readable now, or SensorError at detection rather than mid-run

    def domains(self) -> list[str]:
        return list(self.rails)

    def total_domains(self) -> list[str]:
        return list(self.module.rails)

    @property
    def total_missing_reason(self) -> str | None:
        return self.module.missing_reason

    def read_power_w(self) -> dict[str, float]:
        return {name: rail.read_mw() / 1000.0 for name, rail in self.rails.items()}  # mW -> W


class JtopSensor(Sensor):  # pragma: no cover - needs a Jetson with the jtop service
    """jetson-stats' jtop client: only when the `[jetson]` extra is installed and its service runs."""

    NAME = "jtop"
    power_source = "jtop"
    boundary = "jetson_module"
    energy_method = "sampled"
    period_s = 0.5  # jtop's default update interval

    def __init__(self) -> None:
        super().__init__()
        try:
            from jtop import jtop  # AGPL-3.0: imported here only
        except ImportError as e:
            raise SensorUnavailable("jetson-stats is not installed (pip install 'joulebench[jetson]')") from e
        try:
            self._jtop = jtop(interval=self.period_s)
            self._jtop.start()
        except Exception as e:  # JtopException: the jtop.service is not active
            raise SensorUnavailable(f"jtop is not usable: {e}") from e
        rails = self._rails()
        self.names = list(rails)
        self.module = _board_rule(self, self.names)

    def _rails(self) -> dict[str, float]:
        power: dict[str, Any] = getattr(self._jtop, "power", {}) or {}
        return {name: float(v.get("power", 0.0)) / 1000.0 for name, v in (power.get("rail") or {}).items()}

    def domains(self) -> list[str]:
        return self.names

    def total_domains(self) -> list[str]:
        return list(self.module.rails)

    @property
    def total_missing_reason(self) -> str | None:
        return self.module.missing_reason

    def read_power_w(self) -> dict[str, float]:
        return self._rails()  # mW -> W

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._jtop.close()


def is_jetson(root: Path | str = "/") -> bool:
    root = Path(root)
    return (root / "etc/nv_tegra_release").exists() or "tegra" in (_text(root / "proc/device-tree/compatible") or "")
