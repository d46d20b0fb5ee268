"""Run detail: split one run's row into the sections the page shows, as text; its trust grade
and the aggregate of its configuration's repeats.

A label the file did not state shows as 'not stated'; a label a person (or a folder name)
supplied says so beside the value; a figure stored corrected shows what the source printed.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import polars as pl

from db import columns
from db.grading import STAT_METRICS
from decision.aggregates import GRADE_COLORS, GRADE_MEANINGS, grade_legend, reason_rows
from decision.markdown import md
from decision.text import NOT_MEASURED, human_field, sig, when
from energy.stats import Aggregate
from joulebench.labels import NOT_STATED
from joulebench.metrics import E2E, HEADLINE, ITL, TPOT, TTFT, label, run_kind

__all__ = ["GRADE_COLORS", "GRADE_MEANINGS", "as_rows", "badge", "configuration_aggregate", "configuration_rows",
           "grade_legend", "reason_rows", "sections", "supplied_note"]

PROVENANCE_FIELDS = ("source_kind", "source_file", "source_format", "source_sha256", "source_imported_at",
                     "origin_kind", "origin_file_name", "origin_format", "origin_tool", "origin_tool_version",
                     "origin_sha256", "origin_imported_at", "citation")
ENERGY_FIELDS = ("energy_j", "energy_missing_reason", "energy_boundary", "energy_method", "avg_power_w",
                 "avg_power_missing_reason",
                 "j_per_sample", "j_per_iteration", "idle_power_w", "net_j_per_sample")
LABEL_OF_FIELD = {"device_name": "device", "mode": "mode", "precision": "precision", "batch_size": "batch_size",
                  "energy_boundary": "energy_boundary"}
AS_PRINTED = {"weak_scaling": "weak_scaling_as_printed"}  # corrected figure -> the value the source printed
MEASUREMENT_FIELDS = ("duration_s", "warmup_s", "warmup_steady", "start_offset_s", "sample_period_s",
                      "sensor_update_period_s", "power_trace_source", "energy_counter_j", "energy_sampled_j",
                      "energy_disagreement_pct", "idle_energy_j", "gpu_clock_avg_mhz", "gpu_clock_min_mhz",
                      "memory_clock_avg_mhz", "throttle_reasons")
MEASURED_SECTIONS = ("Performance", "Energy")
# a serving point's latency percentiles: withheld together, with the run's latency_missing_reason in their place
SERVING_LATENCY_FIELDS = frozenset(m.name for d in (TTFT, ITL, TPOT, E2E) for m in d.metrics())
WITHHOLDABLE = SERVING_LATENCY_FIELDS | {"latency_p99_ms"}  # said "withheld" with the reason where missing


def headline(run: dict[str, Any]) -> list[tuple[str, str]]:
    """The figures that summarise this run, for its kind (a serving point: tokens/s, J/token, TTFT ...; a batch run:
    throughput, p99 latency, J/example, power), each with its label from the metric catalogue."""
    return [(label(name), name) for name in HEADLINE[run_kind(run)]]


def withheld_text(run: dict[str, Any]) -> str | None:
    """'withheld: overloaded: ...' where a serving run's latency percentiles were withheld, else None."""
    why = run.get("latency_missing_reason")
    return f"withheld: {why}" if why else None


def sections(run: dict[str, Any], supplied: pl.DataFrame | None = None) -> dict[str, dict[str, str]]:
    """Configuration, performance, energy, measurement, environment, provenance; missing values
    shown as words ('not measured' for a measurement, 'not stated' for the rest), numbers to four
    significant figures."""
    by_label = {} if supplied is None else {r["label"]: r for r in supplied.iter_rows(named=True)}
    not_stated = set(run.get("labels_not_stated") or ())
    measured = {k for title in MEASURED_SECTIONS for k in (ENERGY_FIELDS if title == "Energy" else
                                                            columns.metric_fields())}

    def shown(key: str) -> str:
        label = LABEL_OF_FIELD.get(key)
        if label in not_stated:
            return NOT_STATED
        value = run.get(key)
        if value is None and key == "avg_power_w" and run.get("avg_power_missing_reason"):
            text = f"{NOT_MEASURED}: {run['avg_power_missing_reason']}"
        elif value is None and key in SERVING_LATENCY_FIELDS and (withheld := withheld_text(run)):
            text = withheld
        elif value is None:
            text = NOT_MEASURED if key in measured else NOT_STATED
        else:
            text = sig(value, 4) if isinstance(value, float) else when(value) if isinstance(value, datetime) \
                else ("yes" if value else "no") if isinstance(value, bool) else str(value)
        if label in by_label:
            text += f" ({supplied_note(by_label[label])})"
        printed = run.get(AS_PRINTED.get(key, ""))
        if printed is not None:
            text += f" (corrected; the source printed {printed:g}, see the notes)"
        return text

    elsewhere = set(ENERGY_FIELDS) | set(MEASUREMENT_FIELDS) | set(AS_PRINTED.values())
    metrics = [k for k in columns.metric_fields() if k not in elsewhere]
    keys = {
        "Configuration": ("device_name", "device_kind", *columns.config_fields()),
        "Performance": tuple(metrics),
        "Energy": ENERGY_FIELDS,
        "Measurement": MEASUREMENT_FIELDS,
        "Environment": tuple(columns.environment_fields()),
        "Provenance": PROVENANCE_FIELDS + (("pushed_by", "pushed_at") if run.get("pushed_by") else ()),
    }
    return {title: {k: shown(k) for k in fields} for title, fields in keys.items()}


def pushed_line(run: dict[str, Any]) -> str | None:
    """'Pushed to the team store by box-a on 2026-11-25 07:05 UTC.' (None for a run not read from one)."""
    if not run.get("pushed_by"):
        return None
    at = run.get("pushed_at")
    when = f" on {at.astimezone(UTC):%Y-%m-%d %H:%M} UTC" if at is not None else ""
    return f"Pushed to the team store by {md(run['pushed_by'])}{when}."


def supplied_note(row: dict[str, Any]) -> str:
    """'supplied by alice on 2026-11-23 with joulebench label' / 'from the folder name, at import'."""
    how = {"import": "at import", "cli": "with joulebench label", "upload_page": "on the Upload page",
           "run_detail_page": "on Run detail"}.get(row["via"], row["via"])
    when = row["supplied_at"].strftime("%Y-%m-%d %H:%M UTC") if row.get("supplied_at") is not None else "?"
    if row["origin"] == "folder_name":
        return f"not in the file: from the folder name, {how} on {when}"
    return f"not in the file: supplied by {row['supplied_by']} {how} on {when}"


def as_rows(section: dict[str, str]) -> list[dict[str, str]]:
    """Field names for a person (with units), values as the section gives them."""
    return [{"Field": human_field(k), "Value": v} for k, v in section.items()]


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
    return Aggregate.bounded(int(n), float(mean), config.get(f"{metric}_std"), config.get(f"{metric}_cov_pct"),
                             config.get(f"{metric}_ci95_low"), config.get(f"{metric}_ci95_high"))


def configuration_rows(config: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per figure the configuration's repeats measured: n, mean, 95 % interval, CoV."""
    rows = []
    for metric in STAT_METRICS:
        agg = configuration_aggregate(config, metric)
        if agg is None:
            continue
        interval = agg.interval_text(sig)
        rows.append({"Figure": label(metric), "Repeats (n)": agg.n, "Mean": sig(agg.mean),
                     "95 % interval": interval,
                     "Spread (CoV %)": "needs 2 or more repeats" if agg.cov_pct is None else f"{agg.cov_pct:.2g}"})
    return rows
