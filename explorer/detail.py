"""Run detail: split one run's row into the sections the page shows."""

from __future__ import annotations

from typing import Any

from db import columns
from explorer.text import human_field, sig

PROVENANCE_FIELDS = ("source_kind", "source_file", "source_format", "source_sha256", "source_imported_at",
                     "origin_kind", "origin_file_name", "origin_format", "origin_tool", "origin_tool_version",
                     "origin_sha256", "origin_imported_at", "citation")
ENERGY_FIELDS = ("energy_j", "energy_missing_reason", "energy_boundary", "energy_method", "avg_power_w",
                 "j_per_sample", "j_per_iteration", "idle_power_w", "net_j_per_sample")


def sections(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Configuration, performance, energy, environment, provenance; missing values shown as such."""
    metrics = [k for k in columns.metric_fields() if k not in ENERGY_FIELDS]
    return {
        "Configuration": {k: run.get(k) for k in ("device_name", "device_kind", *columns.config_fields())},
        "Performance": {k: run.get(k) for k in metrics},
        "Energy": {k: run.get(k) for k in ENERGY_FIELDS},
        "Environment": {k: run.get(k) for k in columns.environment_fields()},
        "Provenance": {k: run.get(k) for k in PROVENANCE_FIELDS},
    }


MEASURED_SECTIONS = ("Performance", "Energy")


def as_rows(section: dict[str, Any], missing: str = "not stated") -> list[dict[str, str]]:
    """Field and value for a person: names with units, numbers to four significant figures, and
    missing values as words ('not measured' for measurements, 'not stated' for the rest)."""
    return [{"Field": human_field(k), "Value": missing if v is None else
             sig(v, 4) if isinstance(v, float) else str(v)} for k, v in section.items()]
