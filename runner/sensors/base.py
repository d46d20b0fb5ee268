"""The one sensor interface every power source implements (units in every name).

A sensor reads, per *domain* (gpu0, VDD_IN, package-0, dram-0, cpu):
- `read_power_w()`: instantaneous power in W, or None when it has no power reading;
- `read_energy_j()`: a cumulative energy counter in J (monotonic: wraps already undone), or None.
`total_domains()` are the domains whose energies add up to the boundary's energy, never
overlapping (a Jetson's input rail alone, never the input rail plus the rails it feeds).
Vendor errors are translated here, at the boundary, into `SensorError` / `SensorUnavailable`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from joulebench.errors import PowerSensorError


class SensorError(PowerSensorError):
    """A sensor that was found failed to read."""


class SensorUnavailable(SensorError):
    """This sensor family is not present (or not readable) on this machine; detection moves on."""


class Sensor(ABC):
    NAME: ClassVar[str]
    boundary: str = "system"  # gpu_board, jetson_module, cpu_package, system, wall, estimated
    energy_method: str = "sampled"  # counter, sampled, estimated: how the energy figure is obtained
    period_s: float = 0.1  # the sensor's update period: the sampler never polls faster
    has_counter: bool = False  # read_energy_j returns a counter
    independent_power: bool = True  # read_power_w is a real polled reading (not derived from the counter)
    power_source: str = "polled"  # which reading the power trace holds (metrics.power_trace_source)

    def __init__(self) -> None:
        self.flags: list[str] = []

    @property
    def counter_is_source(self) -> bool:
        """Read the counter on every sample (power is derived from it; wraps are caught early)."""
        return self.has_counter and not self.independent_power

    @abstractmethod
    def domains(self) -> list[str]: ...

    def total_domains(self) -> list[str]:
        return self.domains()

    def read_power_w(self) -> dict[str, float] | None:  # Units: W
        return None

    def read_energy_j(self) -> dict[str, float] | None:  # Units: J, cumulative
        return None

    def read_extras(self) -> dict[str, float]:
        """Per-sample extras (clocks in MHz, throttle bitmask), summarised per window."""
        return {}

    def summarize_extras(self, samples: list[dict[str, Any]]) -> dict[str, Any]:
        return {}

    def describe(self) -> str:
        return f"{self.NAME} ({self.boundary}, {self.energy_method})"

    def close(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        pass
