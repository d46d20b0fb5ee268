"""How result-file fields map onto database columns, derived from the shipped JSON Schema.

The schema is the one definition of the run fields: `config.*` and `metrics.*` keys are run
columns of the same name, `environment.*` keys are columns of `environments`, catalog device
keys are columns of `devices` (`name` -> `device_name`).
"""

from __future__ import annotations

from functools import cache

import pyarrow as pa

from joulebench.resultfile import schema

_ARROW = {"integer": pa.int64(), "number": pa.float64(), "string": pa.string(), "boolean": pa.bool_()}


def _props(def_name: str) -> dict[str, dict]:
    props: dict[str, dict] = schema()["$defs"][def_name]["properties"]
    return props


def _arrow_type(spec: dict) -> pa.DataType:
    declared = spec.get("type")
    if declared is None:  # an enum of strings
        return pa.string()
    types = [declared] if isinstance(declared, str) else list(declared)
    main = [t for t in types if t != "null"][0]
    return _ARROW[main]


@cache
def config_fields() -> dict[str, pa.DataType]:
    return {k: _arrow_type(v) for k, v in _props("config").items()}


@cache
def metric_fields() -> dict[str, pa.DataType]:
    return {k: _arrow_type(v) for k, v in _props("metrics").items()}


@cache
def environment_fields() -> dict[str, pa.DataType]:
    return {k: _arrow_type(v) for k, v in _props("environment").items()}


@cache
def catalog_device_fields() -> dict[str, pa.DataType]:
    return {k: _arrow_type(v) for k, v in _props("catalog_device").items()}


@cache
def finding_fields() -> dict[str, pa.DataType]:
    return {k: _arrow_type(v) for k, v in _props("finding").items()}


PROVENANCE_COLUMNS = {
    "source_kind": "origin_kind",
    "file_name": "origin_file_name",
    "format": "origin_format",
    "tool": "origin_tool",
    "tool_version": "origin_tool_version",
    "content_sha256": "origin_sha256",
    "imported_at": "origin_imported_at",
    "citation": "citation",
}

TIMESTAMP = pa.timestamp("us", tz="UTC")

# Computed at ingest (db.grading), never read from a file: a file cannot grade itself.
GRADE_COLUMNS = {"config_key": pa.string(), "trust_grade": pa.string(), "trust_reasons": pa.list_(pa.string())}


@cache
def run_arrow_schema() -> pa.Schema:
    fields = [
        ("run_id", pa.string()), ("source_id", pa.int32()), ("device_name", pa.string()),
        ("env_id", pa.string()), ("status", pa.string()), ("error", pa.string()),
        ("started_at", TIMESTAMP), ("ended_at", TIMESTAMP),
        *config_fields().items(), *metric_fields().items(),
        ("flags", pa.list_(pa.string())), ("notes", pa.string()),
        *GRADE_COLUMNS.items(),
    ]
    for key, column in PROVENANCE_COLUMNS.items():
        fields.append((column, TIMESTAMP if key == "imported_at" else pa.string()))
    return pa.schema(fields)
