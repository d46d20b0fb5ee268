"""Upload: preview what a file would import, then import it through the same code as the CLI."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import importers
from db import IngestReport
from explorer import bounded
from ingest import import_bytes, import_with_power_log
from ingest.attach import load_pair
from joulebench.errors import JouleBenchError, ResultFileError
from joulebench.labels import NOT_STATED, describe_not_stated


@dataclass
class Preview:
    name: str
    format: str = ""
    runs: int = 0
    devices: list[str] = field(default_factory=list)
    workloads: list[str] = field(default_factory=list)
    missing_fields: list[str] = field(default_factory=list)
    not_stated: str = ""  # 'device (all 3 runs), mode (all 3 runs)': filled after import, in the review
    warnings: list[str] = field(default_factory=list)
    error: str = ""


def hints(device: str, boundary: str, precision: str, mode: str) -> importers.Hints:
    """The upload form's answers for what a file cannot say; empty means not given."""
    return importers.Hints(device=device.strip() or None, boundary=boundary or None,
                           precision=precision or None, mode=mode or None)


@dataclass(frozen=True)
class PowerLog:
    """A power log to attach to the runs of the uploaded result file (aligned by wall-clock time)."""

    name: str
    data: bytes
    boundary: str | None = None


PREVIEWS_KEPT = 64
_previews: OrderedDict[tuple[Any, ...], Preview] = OrderedDict()


def preview(name: str, data: bytes, given: importers.Hints | None = None, log: PowerLog | None = None) -> Preview:
    """What the file would import, read in a bounded child process (explorer.bounded) so that no
    file can hold the app server; kept per content, hints and log, since every rerun asks again."""
    key = (name, hashlib.sha256(data).hexdigest(), given,
           (log.name, hashlib.sha256(log.data).hexdigest(), log.boundary) if log else None)
    if key not in _previews:
        try:
            _previews[key] = bounded.call(read_preview, name, data, given, log, name=name)
        except JouleBenchError as e:
            _previews[key] = Preview(name, error=e.format_message())
        while len(_previews) > PREVIEWS_KEPT:
            _previews.popitem(last=False)
    return _previews[key]


def read_preview(name: str, data: bytes, given: importers.Hints | None = None, log: PowerLog | None = None
                 ) -> Preview:
    """The preview itself, in this process (the child's side of `preview`)."""
    try:
        if log is None:
            loaded, fmt = importers.load(data, name, hints=given)
        else:
            loaded, fmt = load_pair(data, name, log.data, log.name, boundary=log.boundary, hints=given)
    except ResultFileError as e:
        return Preview(name, error=e.format_message())
    runs = loaded.runs
    counts = loaded.not_stated()
    devices = sorted({r["device"]["name"] for r in runs if r["device"] is not None})
    if "device" in counts:
        devices.append(NOT_STATED)
    others = [w for w in loaded.warnings if not w.startswith("not stated in the file:")]
    return Preview(name, fmt, len(runs), devices, sorted({r["config"]["workload"] for r in runs}),
                   loaded.missing_fields(), describe_not_stated(counts, len(runs)) if counts else "", others)


def import_upload(name: str, data: bytes, db: str, given: importers.Hints | None = None,
                  log: PowerLog | None = None) -> IngestReport:
    """Raises ResultFileError for a file that cannot be imported; nothing is imported from it. The
    import runs in a bounded child process (explorer.bounded), through the CLI's code."""
    return bounded.call(import_here, name, data, db, given, log, name=name)


def import_here(name: str, data: bytes, db: str, given: importers.Hints | None = None,
                log: PowerLog | None = None) -> IngestReport:
    """The import itself, in this process (the child's side of `import_upload`)."""
    if log is None:
        return import_bytes(data, name, db=db, source_kind="upload", hints=given)
    return import_with_power_log(data, name, log.data, log.name, db=db, source_kind="upload", hints=given,
                                 boundary=log.boundary)[0]
