"""The seam for energy measurement: a power meter opens a window around the measured steps.

The measurement loop calls `meter.window()` right after the device is synchronised at the
window start and leaves it right after the synchronisation at the end. Sensors (NVML, Jetson
INA3221 rails, RAPL) come later and plug in here; until then `NoPowerMeter` is the default,
so energy is recorded as missing, with a reason, and never as 0.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

NO_SENSOR_REASON = "no power sensor: energy measurement not available on this device yet"


@dataclass
class PowerTrace:
    domain: str  # e.g. gpu0, VDD_IN, package-0
    boundary: str  # gpu_board, jetson_module, cpu_package, system, wall, estimated
    method: str  # counter, sampled, reported, estimated
    t_s: list[float] = field(default_factory=list)  # seconds from the window start
    power_w: list[float] = field(default_factory=list)


@dataclass
class EnergyReading:
    """What a meter measured over one window; filled in when the window closes."""

    energy_j: float | None = None
    boundary: str | None = None
    method: str | None = None
    missing_reason: str | None = None
    traces: list[PowerTrace] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)


class PowerMeter(Protocol):
    """One measurement window at a time; `window()` must close the window even on error."""

    name: str

    def window(self) -> contextlib.AbstractContextManager[EnergyReading]: ...


class NoPowerMeter:
    """The meter for a device without a sensor: every window reports energy missing."""

    name = "none"

    def __init__(self, reason: str = NO_SENSOR_REASON) -> None:
        self.reason = reason

    @contextlib.contextmanager
    def window(self) -> Iterator[EnergyReading]:
        reading = EnergyReading()
        try:
            yield reading
        finally:
            reading.missing_reason = self.reason


def default_meter() -> PowerMeter:
    """The meter for this device. Sensor detection (NVML, Jetson rails, RAPL) comes with issue 4."""
    return NoPowerMeter()
