"""Power and energy: traces, integration, readings, energy figures, Jetson rails.

The one home for how JouleBench turns power into energy figures and how far they can be
trusted. It depends on nothing of the project's (only numpy and scipy), so the runner,
the importers, the store and the explorer use the same rules: the trapezoid integral, the
counter-vs-sampled disagreement limit, the short-window rule, idle subtraction, which Jetson
rails make a board's module power (`energy.rails`, applied by the power-log parsers in
`importers.powerlogs`), the aggregate of repeats (`energy.stats`), steady state
(`energy.steady`) and trust grades (`energy.grades`).
"""

from energy.figures import (
    DISAGREEMENT_LIMIT_PCT,
    MIN_SENSOR_PERIODS,
    disagreement_pct,
    energy_figures,
    idle_figures,
    reading_figures,
)
from energy.trace import EnergyReading, PowerTrace, interpolate_w, trapezoid_j, window_j

__all__ = [
    "DISAGREEMENT_LIMIT_PCT",
    "MIN_SENSOR_PERIODS",
    "EnergyReading",
    "PowerTrace",
    "disagreement_pct",
    "energy_figures",
    "idle_figures",
    "interpolate_w",
    "reading_figures",
    "trapezoid_j",
    "window_j",
]
