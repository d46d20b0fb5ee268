"""Energy figures from an energy and what it was spent on, and the validity rules.

One set of rules for the runner, the importers and power logs attached to imported runs:
- energy is positive and finite or it is missing, with a reason (never stored as 0);
- J/example = energy / examples, J/iteration = energy / optimizer steps, average power =
  energy / duration;
- net J/example subtracts the idle power over the window: (energy - idle_power_w x duration)
  / examples; a net energy at or below zero is left out and flagged;
- a hardware counter and the integral of polled power that disagree by more than
  DISAGREEMENT_LIMIT_PCT are flagged;
- a window shorter than MIN_SENSOR_PERIODS sensor update periods is flagged.
"""

from __future__ import annotations

import math
from typing import Any

from energy.trace import EnergyReading

DISAGREEMENT_LIMIT_PCT = 5.0
MIN_SENSOR_PERIODS = 3  # a window shorter than this many sensor periods is flagged

FLAG_DISAGREE = "energy_counter_vs_sampled_disagree"
FLAG_SHORT_WINDOW = "window_short_for_sensor"
FLAG_NONPOSITIVE = "energy_nonpositive"
FLAG_NET_NONPOSITIVE = "net_energy_nonpositive"


def energy_figures(energy_j: float | None, *, boundary: str | None, method: str | None,
                   examples: float | None = None, optimizer_steps: float | None = None,
                   duration_s: float | None = None, missing_reason: str | None = None,
                   what: str = "the sensor", flags: list[str] | None = None) -> dict[str, Any]:
    """energy_j, energy_boundary, energy_method, avg_power_w, j_per_sample, j_per_iteration.

    Missing energy (None, zero, negative, non-finite) gives `energy_missing_reason` instead;
    a zero or negative figure also adds the `energy_nonpositive` flag to `flags`.
    """
    if energy_j is None:
        return {"energy_missing_reason": missing_reason or "energy not measured"}
    if not math.isfinite(energy_j) or energy_j <= 0:
        if flags is not None and FLAG_NONPOSITIVE not in flags:
            flags.append(FLAG_NONPOSITIVE)
        return {"energy_missing_reason": f"{what} reported {energy_j!r} J (zero, negative or not finite); "
                                         "not a usable measurement"}
    out: dict[str, Any] = {"energy_j": energy_j, "energy_boundary": boundary, "energy_method": method}
    if duration_s:
        out["avg_power_w"] = energy_j / duration_s
    if examples:
        out["j_per_sample"] = energy_j / examples
    if optimizer_steps:
        out["j_per_iteration"] = energy_j / optimizer_steps
    return {k: v for k, v in out.items() if v is not None}


# The most power one device can draw over a window: its TDP x 1.5 (boost and transients), else
# 1.5 kW (no single GPU or module draws more: B200 1 kW, GB300 1.4 kW), times the GPUs used. A whole
# system or a wall meter also feeds CPUs, memory and fans: it gets 1.5 kW per GPU whatever the TDP.
PLAUSIBLE_TDP_FACTOR = 1.5
PLAUSIBLE_DEVICE_MAX_W = 1500.0
DEVICE_BOUNDARIES = ("gpu_board", "jetson_module", "cpu_package", "estimated")
FLAG_POWER_IMPLAUSIBLE = "avg_power_implausible"


def implausible_power_reason(avg_power_w: float | None, *, tdp_w: float | None, gpu_count: int | None,
                             boundary: str | None) -> str | None:
    """Why an average power (energy / time) cannot be the device's: above its plausible maximum,
    so the energy and the time were measured over different windows; None when plausible."""
    if avg_power_w is None:
        return None
    count = max(1, gpu_count or 1)
    if tdp_w and boundary in DEVICE_BOUNDARIES:
        limit, basis = PLAUSIBLE_TDP_FACTOR * tdp_w * count, f"{PLAUSIBLE_TDP_FACTOR:g} x its TDP of {tdp_w:,.0f} W"
    else:
        limit, basis = PLAUSIBLE_DEVICE_MAX_W * count, f"{PLAUSIBLE_DEVICE_MAX_W:,.0f} W per device"
    if count > 1:
        basis += f" x {count} devices"
    if avg_power_w <= limit:
        return None
    return (f"energy / time gives {avg_power_w:,.0f} W, above the device's plausible maximum ({basis} = "
            f"{limit:,.0f} W): the energy and the time cover different windows, so no average power is derived "
            "(the energy and the energy per example stay)")


def idle_figures(metrics: dict[str, Any], idle_power_w: float | None, flags: list[str]) -> dict[str, Any]:
    """idle_power_w, idle_energy_j and net_j_per_sample for a run's metrics; gross figures stay."""
    if idle_power_w is None:
        return {}
    out: dict[str, Any] = {"idle_power_w": idle_power_w}
    energy, duration, examples = metrics.get("energy_j"), metrics.get("duration_s"), metrics.get("examples")
    if energy and duration:
        idle_j = idle_power_w * duration
        out["idle_energy_j"] = idle_j
        if examples:
            if energy - idle_j > 0:
                out["net_j_per_sample"] = (energy - idle_j) / examples
            elif FLAG_NET_NONPOSITIVE not in flags:
                flags.append(FLAG_NET_NONPOSITIVE)
    return out


def disagreement_pct(counter_j: float, sampled_j: float) -> float | None:
    """|counter - sampled| / counter in %, None when the counter is not positive."""
    if not counter_j > 0:
        return None
    return abs(counter_j - sampled_j) / counter_j * 100.0


def compare_counter_and_sampled(counter_j: float, sampled_j: float, flags: list[str]) -> dict[str, Any]:
    """Both figures and their disagreement, flagged over the limit."""
    out: dict[str, Any] = {"energy_counter_j": counter_j if counter_j > 0 else None,
                           "energy_sampled_j": sampled_j if sampled_j > 0 else None}
    pct = disagreement_pct(counter_j, sampled_j)
    if pct is not None:
        out["energy_disagreement_pct"] = pct
        if pct > DISAGREEMENT_LIMIT_PCT and FLAG_DISAGREE not in flags:
            flags.append(FLAG_DISAGREE)
    return out


def window_is_short(duration_s: float, period_s: float | None) -> bool:
    return bool(period_s) and duration_s < MIN_SENSOR_PERIODS * period_s  # type: ignore[operator]


def reading_figures(reading: EnergyReading, *, examples: float | None, optimizer_steps: float | None,
                    duration_s: float | None) -> dict[str, Any]:
    """A meter's reading as result-file metrics: its extra metrics (both energies, sampling period,
    clocks) and the energy figures, or the reason energy is missing."""
    extra = {k: v for k, v in reading.metrics.items() if v is not None}
    return {**extra, **energy_figures(reading.energy_j, boundary=reading.boundary, method=reading.method,
                                      examples=examples, optimizer_steps=optimizer_steps, duration_s=duration_s,
                                      missing_reason=reading.missing_reason, flags=reading.flags)}
