"""Run detail: split one run's row into the sections the page shows; its trust grade and the
aggregate of its configuration's repeats."""

from __future__ import annotations

from typing import Any

from db import columns
from db.grading import STAT_METRICS
from energy.stats import Aggregate
from explorer.aggregates import GRADE_COLORS, GRADE_MEANINGS, grade_legend, reason_rows

__all__ = ["GRADE_COLORS", "GRADE_MEANINGS", "badge", "configuration_rows", "grade_legend", "reason_rows",
           "sections"]

PROVENANCE_FIELDS = ("source_kind", "source_file", "source_format", "source_sha256", "source_imported_at",
                     "origin_kind", "origin_file_name", "origin_format", "origin_tool", "origin_tool_version",
                     "origin_sha256", "origin_imported_at", "citation")
ENERGY_FIELDS = ("energy_j", "energy_missing_reason", "energy_boundary", "energy_method", "avg_power_w",
                 "j_per_sample", "j_per_iteration", "idle_power_w", "net_j_per_sample")
MEASUREMENT_FIELDS = ("duration_s", "warmup_s", "warmup_steady", "start_offset_s", "sample_period_s",
                      "sensor_update_period_s", "power_trace_source", "energy_counter_j", "energy_sampled_j",
                      "energy_disagreement_pct", "idle_energy_j", "gpu_clock_avg_mhz", "gpu_clock_min_mhz",
                      "memory_clock_avg_mhz", "throttle_reasons")
FIGURE_LABELS = {"throughput_sps": "Throughput (samples/s)", "j_per_sample": "Energy per example (J)",
                 "net_j_per_sample": "Net energy per example (J)", "j_per_iteration": "Energy per iteration (J)",
                 "avg_power_w": "Average power (W)", "energy_j": "Energy (J)", "latency_p50_ms": "p50 latency (ms)",
                 "latency_p99_ms": "p99 latency (ms)", "duration_s": "Window (s)"}


def sections(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Configuration, performance, energy, measurement, environment, provenance; missing values
    shown as such."""
    shown = set(ENERGY_FIELDS) | set(MEASUREMENT_FIELDS)
    metrics = [k for k in columns.metric_fields() if k not in shown]
    return {
        "Configuration": {k: run.get(k) for k in ("device_name", "device_kind", *columns.config_fields())},
        "Performance": {k: run.get(k) for k in metrics},
        "Energy": {k: run.get(k) for k in ENERGY_FIELDS},
        "Measurement": {k: run.get(k) for k in MEASUREMENT_FIELDS},
        "Environment": {k: run.get(k) for k in columns.environment_fields()},
        "Provenance": {k: run.get(k) for k in PROVENANCE_FIELDS},
    }


def as_rows(section: dict[str, Any]) -> list[dict[str, str]]:
    return [{"field": k, "value": "missing" if v is None else str(v)} for k, v in section.items()]


def badge(grade: str | None) -> tuple[str, str]:
    """(label, colour) of a trust grade badge; an ungraded run shows grey."""
    if grade not in GRADE_COLORS:
        return "Trust grade: not graded", "gray"
    return f"Trust grade {grade}", GRADE_COLORS[grade]


def configuration_aggregate(config: dict[str, Any], metric: str) -> Aggregate | None:
    """A stored aggregate (a `data.configuration` row) back as an Aggregate."""
    n, mean = config.get(f"{metric}_n"), config.get(f"{metric}_mean")
    if n is None or mean is None:
        return None
    return Aggregate(int(n), float(mean), config.get(f"{metric}_std"), config.get(f"{metric}_cov_pct"),
                     config.get(f"{metric}_ci95_low"), config.get(f"{metric}_ci95_high"))


def configuration_rows(config: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per figure the configuration's repeats measured: n, mean, 95 % interval, CoV."""
    rows = []
    for metric in STAT_METRICS:
        agg = configuration_aggregate(config, metric)
        if agg is None:
            continue
        interval = "-" if agg.ci95_low is None else f"{agg.ci95_low:.4g} to {agg.ci95_high:.4g}"
        rows.append({"figure": FIGURE_LABELS.get(metric, metric), "n": agg.n, "mean": f"{agg.mean:.4g}",
                     "95 % interval": interval, "CoV %": "-" if agg.cov_pct is None else f"{agg.cov_pct:.2g}"})
    return rows
