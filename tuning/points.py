"""Measured power settings of one configuration, from the runs the store holds.

A *profile* here is one device running one configuration (workload, mode, precision, batch,
sequence or image size, accumulation, GPU count, compile) at several power settings: GPU power
limits or Jetson power modes. Runs at the same setting (repeats, a profile and a sweep) are
combined by their median. Every run left out is counted with its reason, so a person can see
why a profile has fewer points than they measured.

Time is seconds per unit of work: per sample when the runs know their throughput, else per run
when every run of the profile did the same work and comes from one file (a Zeus power-limit
profile measures the same number of steps at every limit; its files do not say how many
samples that is). Percent changes are the same in either unit.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from joulebench.configuration import POWER_PROFILE

# A Jetson power mode's features, from the power-mode table (sample_data/power_modes.csv).
MODE_FEATURES = ("cpu_cores", "cpu_max_mhz", "gpu_max_mhz", "memory_max_mhz")
MODE_FEATURE_LABELS = {"cpu_cores": "CPU cores", "cpu_max_mhz": "CPU MHz", "gpu_max_mhz": "GPU MHz",
                       "memory_max_mhz": "memory MHz"}

POWER_LIMIT = "power_limit"
POWER_MODE = "power_mode"
UNIT_SAMPLE = "sample"
UNIT_RUN = "run"
UNIT_TOKEN = "output token"  # generation runs of fixed batches: time and energy per output token


@dataclass(frozen=True)
class Point:
    """One power setting: measured (median over its runs) or predicted by a model."""

    label: str  # "125 W" or "mode 6 (30W)"
    x: tuple[float, ...] | None  # model inputs: (power limit W,) or the mode's features; None = unknown
    s_per_unit: float  # seconds per unit of work (1 / throughput)
    avg_power_w: float
    measured: bool = True
    runs: int = 1
    profile: bool = False  # at least one run came from `joulebench run --profile`
    mode_id: str | None = None

    @property
    def j_per_unit(self) -> float:
        return self.avg_power_w * self.s_per_unit

    @property
    def throughput_per_s(self) -> float:
        return 1.0 / self.s_per_unit

    @property
    def power_limit_w(self) -> float | None:
        return self.x[0] if self.x is not None and self.mode_id is None else None


@dataclass(frozen=True)
class PowerProfile:
    """The measured settings of one device and configuration."""

    kind: str  # POWER_LIMIT (GPU) or POWER_MODE (Jetson)
    config: Mapping[str, Any]  # the POWER_PROFILE view's fields: the configuration, power setting aside
    unit: str  # UNIT_SAMPLE, UNIT_TOKEN or UNIT_RUN
    points: tuple[Point, ...]
    left_out: tuple[str, ...] = field(default_factory=tuple)  # "3 runs: no energy measured"

    @property
    def device(self) -> str:
        return str(self.config.get("device_name"))

    @property
    def workload(self) -> str:
        return str(self.config.get("workload"))

    def describe(self) -> str:
        """'bert-base-ner train fp16 batch 8 seq 128' (what is known)."""
        c = self.config
        parts = [str(c.get("workload")), str(c.get("mode") or "")]
        if c.get("precision"):
            parts.append(str(c["precision"]))
        if c.get("batch_size"):
            accum = c.get("grad_accum_steps") or 1
            parts.append(f"batch {accum}x{c['batch_size']}" if accum > 1 else f"batch {c['batch_size']}")
        if c.get("seq_len"):
            parts.append(f"seq {c['seq_len']}")
        if c.get("image_size"):
            parts.append(f"image {c['image_size']}")
        if (c.get("gpu_count") or 1) > 1:
            parts.append(f"{c['gpu_count']} GPUs")
        if c.get("compile"):
            parts.append("compiled")
        return " ".join(p for p in parts if p)

    @property
    def unit_label(self) -> str:
        return self.unit

    @property
    def measured_labels(self) -> list[str]:
        return [p.label for p in self.points]


def _number(value: Any) -> float | None:
    if value is None:
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def limit_label(watts: float) -> str:
    return f"{watts:g} W"


def mode_id_of(power_mode: str) -> str:
    """'6 (30W)' -> '6' (how the runner and the importers write an nvpmodel mode)."""
    return str(power_mode).strip().split(" ", 1)[0]


def _power_w(row: Mapping[str, Any]) -> float | None:
    power = _number(row.get("avg_power_w"))
    if power is None:
        energy, duration = _number(row.get("energy_j")), _number(row.get("duration_s"))
        power = energy / duration if energy and duration else None
    return power if power and power > 0 else None


def _unit(rows: list[Mapping[str, Any]]) -> tuple[str, list[Mapping[str, Any]], list[str]]:
    """The unit of work of these runs, the runs usable in it, and what was left out."""
    if not rows:
        return UNIT_SAMPLE, [], []
    # generation batches generated back to back: per output token (a serving run's token rate is its steady
    # state's, not its window's, so serving runs stay per request)
    tokens = [r for r in rows if (_number(r.get("tokens_per_s")) or 0) > 0 and r.get("request_rate_per_s") is None
              and r.get("max_new_tokens") is not None]
    if tokens:
        dropped = len(rows) - len(tokens)
        return UNIT_TOKEN, tokens, [f"{dropped} run(s): no output tokens/s recorded"] if dropped else []
    with_rate = [r for r in rows if (_number(r.get("throughput_sps")) or 0) > 0]
    if with_rate:
        dropped = len(rows) - len(with_rate)
        note = [f"{dropped} run(s): no throughput (samples per second) recorded"] if dropped else []
        return UNIT_SAMPLE, with_rate, note
    timed = [r for r in rows if (_number(r.get("duration_s")) or 0) > 0]
    sources = {r.get("source_id") for r in timed}
    if timed and len(sources) == 1:
        dropped = len(rows) - len(timed)
        note = [f"{dropped} run(s): no duration recorded"] if dropped else []
        return UNIT_RUN, timed, note
    if timed:
        return UNIT_RUN, [], [f"{len(rows)} run(s): no throughput, and they come from {len(sources)} files, so "
                              "equal work per run cannot be assumed"]
    return UNIT_SAMPLE, [], [f"{len(rows)} run(s): neither throughput nor duration recorded"]


def _features(row: Mapping[str, Any]) -> tuple[float, ...] | None:
    values = [_number(row.get(name)) for name in MODE_FEATURES]
    if any(v is None or v <= 0 for v in values):
        return None
    return tuple(float(v) for v in values if v is not None)


def profile_from_rows(config: Mapping[str, Any], rows: Iterable[Mapping[str, Any]],
                      device_kind: str | None = None) -> PowerProfile:
    """One profile from the runs of one configuration (their power settings differ)."""
    rows = list(rows)
    jetson = device_kind == "jetson" or (
        any(r.get("power_mode") for r in rows) and not any(_number(r.get("power_limit_w")) for r in rows))
    kind = POWER_MODE if jetson else POWER_LIMIT
    left_out: list[str] = []
    if kind == POWER_LIMIT:
        usable = [r for r in rows if (_number(r.get("power_limit_w")) or 0) > 0]
    else:
        usable = [r for r in rows if r.get("power_mode")]
    if len(usable) < len(rows):
        left_out.append(f"{len(rows) - len(usable)} run(s): no power {'limit' if kind == POWER_LIMIT else 'mode'} "
                        "recorded")
    powered = [r for r in usable if _power_w(r) is not None]
    if len(powered) < len(usable):
        left_out.append(f"{len(usable) - len(powered)} run(s): no energy or average power measured")
    unit, timed, notes = _unit(powered)
    left_out += notes

    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in timed:
        key = limit_label(float(r["power_limit_w"])) if kind == POWER_LIMIT else str(r["power_mode"]).strip()
        groups.setdefault(key, []).append(r)
    points = []
    for label, members in groups.items():
        times = [1.0 / float(r["tokens_per_s"]) if unit == UNIT_TOKEN else
                 1.0 / float(r["throughput_sps"]) if unit == UNIT_SAMPLE else float(r["duration_s"]) for r in members]
        powers = [p for p in (_power_w(r) for r in members) if p is not None]
        first = members[0]
        if kind == POWER_LIMIT:
            x: tuple[float, ...] | None = (float(first["power_limit_w"]),)
            mode_id = None
        else:
            x = _features(first)
            mode_id = mode_id_of(str(first["power_mode"]))
            label = f"mode {label}"
        points.append(Point(label, x, statistics.median(times), statistics.median(powers), True, len(members),
                            any(bool(r.get("profile")) for r in members), mode_id))
    points.sort(key=lambda p: (p.x is None, p.x or (), p.label))
    return PowerProfile(kind, dict(config), unit, tuple(points), tuple(left_out))


def profiles_from_runs(runs: pl.DataFrame) -> list[PowerProfile]:
    """One profile per configuration in `runs` (rows of `db.queries.power_setting_runs`), the
    configuration with the most measured settings first."""
    if runs.is_empty():
        return []
    keys = [c for c in POWER_PROFILE.fields if c in runs.columns]
    out = []
    for _, group in runs.group_by(keys, maintain_order=True):
        rows = group.to_dicts()
        config = {k: rows[0].get(k) for k in keys}
        kind = rows[0].get("device_kind")
        out.append(profile_from_rows(config, rows, str(kind) if kind else None))
    out.sort(key=lambda p: -len(p.points))
    return out
