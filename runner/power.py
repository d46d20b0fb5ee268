"""The seam for energy measurement: a power meter opens a window around the measured steps.

The measurement loop calls `meter.window()` right after the device is synchronised at the
window start and leaves it right after the synchronisation at the end. The meters that do the
measuring live in `runner.sensors` (detected in a fixed order by `runner.sensors.detect`);
`NoPowerMeter` remains for callers that want energy recorded as missing, with a reason.

Readings, traces and the integration rule live in the `energy` package.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Protocol

from energy import EnergyReading

NO_SENSOR_REASON = "no power sensor: energy measurement not available on this device yet"


class PowerMeter(Protocol):
    """One measurement window at a time; `window()` must close the window even on error."""

    name: str
    boundary: str
    method: str

    def window(self) -> contextlib.AbstractContextManager[EnergyReading]: ...

    def close(self) -> None: ...


class NoPowerMeter:
    """The meter for a device without a sensor: every window reports energy missing."""

    name = "none"
    boundary = "estimated"
    method = "estimated"

    def __init__(self, reason: str = NO_SENSOR_REASON) -> None:
        self.reason = reason

    @contextlib.contextmanager
    def window(self) -> Iterator[EnergyReading]:
        reading = EnergyReading()
        try:
            yield reading
        finally:
            reading.missing_reason = self.reason

    def close(self) -> None:
        pass


def has_sensor(meter: object) -> bool:
    """A real sensor (NVML, INA3221, jtop, RAPL, a power log), not the estimate or no meter:
    such runs get energy-grade windows and repeats by default."""
    return getattr(meter, "method", "estimated") != "estimated" and getattr(meter, "name", "none") != "none"

