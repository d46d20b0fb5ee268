"""Reference data: sample_data/*.csv turned into result documents and ingested like any file.

Each CSV is one source (kind `reference`, keyed by its content hash), so the reference rows go
through the same validation and ingest path as a local run or an upload. Column types come
from the result-file schema; a column the schema does not know is an error, not a silent drop.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pyarrow as pa

import db.columns as columns
from joulebench import __version__
from joulebench.errors import ResultFileError
from joulebench.resultfile import LoadedResultFile, content_sha256, new_document, validate_document

REFERENCE_FORMAT = "joulebench-reference-csv"
CREATED_AT = "2026-11-22T00:00:00+00:00"  # fixed, so a document's content depends only on the CSV
RUN_FILE_GLOB = "runs_*.csv"
_RUN_LEVEL = {"status", "notes"}
_ENV_KEYS = set(columns.environment_fields())
_PROV_KEYS = {"citation"}


def reference_run_id(file_stem: str, ref_id: str) -> str:
    return f"ref:{file_stem}:{ref_id}"


def _convert(value: str, arrow_type: pa.DataType, where: str, file_name: str) -> Any:
    if value == "":
        return None
    try:
        if pa.types.is_integer(arrow_type):
            return int(value)
        if pa.types.is_floating(arrow_type):
            return float(value)
        if pa.types.is_boolean(arrow_type):
            if value not in ("true", "false"):
                raise ValueError("expected true or false")
            return value == "true"
    except ValueError as e:
        raise ResultFileError(file_name, [f"{where}: {value!r} is not a valid value ({e})"]) from e
    return value


def _read_csv(path: Path) -> tuple[bytes, list[dict[str, str]]]:
    data = path.read_bytes()
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8"))))
    return data, rows


def _typed(row: dict[str, str], types: dict[str, pa.DataType], line: int, file_name: str) -> dict[str, Any]:
    return {k: _convert(v, types[k], f"line {line}, column {k}", file_name) for k, v in row.items()}


def devices_document(path: Path) -> LoadedResultFile:
    data, rows = _read_csv(path)
    types = columns.catalog_device_fields()
    devices = []
    for line, row in enumerate(rows, start=2):
        unknown = set(row) - set(types)
        if unknown:
            raise ResultFileError(path.name, [f"unknown column(s) {sorted(unknown)}"])
        devices.append({k: v for k, v in _typed(row, types, line, path.name).items() if v is not None})
    doc = new_document([], producer_version=__version__, created_at=CREATED_AT, devices=devices)
    return _loaded(path.name, data, doc)


def runs_document(path: Path, device_kinds: dict[str, str],
                  catalog: dict[str, dict[str, Any]] | None = None) -> LoadedResultFile:
    """One runs file as a result document. With `catalog` (devices.csv's entries by name) the document carries
    the catalog entries of the devices its runs name, so a database seeded before those devices joined
    devices.csv gets them with the runs (db.writes adds a device the catalog lacks, never overwrites one)."""
    data, rows = _read_csv(path)
    config_t, metric_t, env_t = columns.config_fields(), columns.metric_fields(), columns.environment_fields()
    types: dict[str, pa.DataType] = {**config_t, **metric_t, **env_t, "ref_id": pa.string(),
                                     "device_name": pa.string(), "status": pa.string(),
                                     "notes": pa.string(), "citation": pa.string()}
    sha = content_sha256(data)
    runs = []
    for line, raw in enumerate(rows, start=2):
        unknown = set(raw) - set(types)
        if unknown:
            raise ResultFileError(path.name, [f"unknown column(s) {sorted(unknown)}"])
        row = _typed(raw, types, line, path.name)
        device = row["device_name"]
        if device not in device_kinds:
            raise ResultFileError(path.name, [f"line {line}, column device_name: {device!r} is not in devices.csv"])
        run: dict[str, Any] = {
            "run_id": reference_run_id(path.stem, row["ref_id"]),
            "status": row["status"] or "ok",
            "device": {"name": device, "kind": device_kinds[device]},
            "environment": {k: row[k] for k in env_t if row.get(k) is not None},
            "config": {k: row[k] for k in config_t if row.get(k) is not None},
            "metrics": {k: row[k] for k in metric_t if row.get(k) is not None},
            "provenance": {"source_kind": "reference", "file_name": path.name, "format": REFERENCE_FORMAT,
                           "tool": "joulebench", "content_sha256": sha, "citation": row["citation"]},
        }
        if row.get("notes"):
            run["notes"] = row["notes"]
        runs.append(run)
    named = sorted({r["device"]["name"] for r in runs})
    devices = [catalog[n] for n in named if n in catalog] if catalog else []
    doc = new_document(runs, producer_version=__version__, created_at=CREATED_AT, devices=devices or None)
    return _loaded(path.name, data, doc)


def _ref_to_run_id(value: str | None) -> str | None:
    if not value:
        return None
    file_part, _, ref_id = value.rpartition(":")
    return reference_run_id(Path(file_part).stem, ref_id)


def findings_document(path: Path) -> LoadedResultFile:
    data, rows = _read_csv(path)
    types = columns.finding_fields()
    findings = []
    for line, raw in enumerate(rows, start=2):
        raw = dict(raw)
        raw["subject_run_id"] = _ref_to_run_id(raw.pop("subject_ref_id", None)) or ""
        raw["baseline_run_id"] = _ref_to_run_id(raw.pop("baseline_ref_id", None)) or ""
        unknown = set(raw) - set(types)
        if unknown:
            raise ResultFileError(path.name, [f"unknown column(s) {sorted(unknown)}"])
        typed = _typed(raw, types, line, path.name)
        findings.append({k: v for k, v in typed.items() if v is not None})
    doc = new_document([], producer_version=__version__, created_at=CREATED_AT, findings=findings)
    return _loaded(path.name, data, doc)


def _loaded(name: str, data: bytes, doc: dict[str, Any]) -> LoadedResultFile:
    validate_document(doc, name)
    return LoadedResultFile(name=name, content_sha256=content_sha256(data), document=doc)


def power_mode_rows(path: Path) -> list[dict[str, Any]]:
    _, rows = _read_csv(path)
    numeric = {"cpu_cores", "cpu_max_mhz", "gpu_max_mhz", "memory_max_mhz", "power_budget_w"}
    out = []
    for line, row in enumerate(rows, start=2):
        out.append({k: (_convert(v, pa.float64(), f"line {line}, column {k}", path.name) if k in numeric
                        else (v or None)) for k, v in row.items()})
    return out


def reference_documents(folder: Path) -> list[LoadedResultFile]:
    """Devices first, then runs, then findings (findings point at runs)."""
    devices = devices_document(folder / "devices.csv")
    catalog = {d["name"]: d for d in devices.document["devices"]}
    kinds = {name: d["kind"] for name, d in catalog.items()}
    docs = [devices]
    docs += [runs_document(p, kinds, catalog) for p in sorted(folder.glob(RUN_FILE_GLOB))]
    if (folder / "findings.csv").exists():
        docs.append(findings_document(folder / "findings.csv"))
    return docs
