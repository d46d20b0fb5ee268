"""What to optimise when choosing a power setting, and the constraints a setting must meet.

Every goal is a weighted sum of energy and time per unit of work, the form of Zeus's cost
(eta x energy + (1 - eta) x max power x time, ml-energy/zeus): energy is eta = 1, speed is
eta = 0, balanced is Zeus's eta, and cost weighs joules by the electricity price and seconds by
the device's price over its life.
"""

from __future__ import annotations

from dataclasses import dataclass

GOALS = ("energy", "speed", "balanced", "cost")
DEFAULT_ETA = 0.5


@dataclass(frozen=True)
class Goal:
    name: str = "energy"
    eta: float = DEFAULT_ETA  # balanced: the weight of energy (Zeus's eta_knob)
    usd_per_j: float | None = None  # cost: electricity (and PUE) per joule
    usd_per_s: float | None = None  # cost: hardware per second of use (price / (lifetime x utilisation))

    def __post_init__(self) -> None:
        if self.name not in GOALS:
            raise ValueError(f"goal {self.name!r} is not one of {', '.join(GOALS)}")
        if not 0.0 <= self.eta <= 1.0:
            raise ValueError(f"eta {self.eta:g} is not between 0 and 1")
        if self.name == "cost" and (self.usd_per_j is None or self.usd_per_s is None):
            raise ValueError("the cost goal needs a price per joule and a hardware price per second")

    def weights(self, max_power_w: float) -> tuple[float, float]:
        """(weight of J per unit, weight of s per unit) of the objective to minimise."""
        if self.name == "energy":
            return 1.0, 0.0
        if self.name == "speed":
            return 0.0, max_power_w
        if self.name == "balanced":
            return self.eta, (1.0 - self.eta) * max_power_w
        assert self.usd_per_j is not None and self.usd_per_s is not None
        return self.usd_per_j, self.usd_per_s

    def describe(self, max_power_w: float) -> str:
        if self.name == "energy":
            return "energy: the fewest joules per unit of work"
        if self.name == "speed":
            return "speed: the highest throughput"
        if self.name == "balanced":
            return (f"balanced (Zeus): minimise {self.eta:g} x energy + {1 - self.eta:g} x {max_power_w:g} W x time")
        return "cost: electricity + hardware per unit of work"


@dataclass(frozen=True)
class Constraints:
    max_power_w: float | None = None  # average power at most this
    min_throughput: float | None = None  # units of work per second (samples/s) at least this
