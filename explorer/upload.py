"""Upload: preview what a file would import, then import it through the same code as the CLI."""

from __future__ import annotations

from dataclasses import dataclass, field

from db import IngestReport, import_bytes
from joulebench.errors import ResultFileError
from joulebench.resultfile import load_result_bytes

# Fields a buyer compares on; the preview says which of them a file does not carry at all.
KEY_FIELDS = ("throughput_sps", "latency_p99_ms", "energy_j", "j_per_sample", "avg_power_w", "energy_boundary")


@dataclass
class Preview:
    name: str
    format: str = ""
    runs: int = 0
    devices: list[str] = field(default_factory=list)
    workloads: list[str] = field(default_factory=list)
    missing_fields: list[str] = field(default_factory=list)
    error: str = ""


def preview(name: str, data: bytes) -> Preview:
    try:
        loaded = load_result_bytes(data, name)
    except ResultFileError as e:
        return Preview(name, error=e.format_message())
    runs = loaded.document.get("runs", [])
    metrics = [r.get("metrics") or {} for r in runs]
    return Preview(
        name, "joulebench-result", len(runs),
        sorted({r["device"]["name"] for r in runs}), sorted({r["config"]["workload"] for r in runs}),
        [f for f in KEY_FIELDS if runs and all(m.get(f) is None for m in metrics)],
    )


def import_upload(name: str, data: bytes, db: str) -> IngestReport:
    """Raises ResultFileError for a file that cannot be imported; nothing is imported from it."""
    return import_bytes(data, name, db=db, source_kind="upload")
