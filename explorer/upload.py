"""Upload: preview what a file would import, then import it through the same code as the CLI."""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import importers
from db import IngestReport
from db.location import locate
from decision.text import as_fields
from explorer import bounded
from importers.archive import MLPERF_SUMMARY, sources_from_bytes
from importers.base import column_unit
from ingest import import_with_power_log
from ingest.attach import load_pair
from ingest.service import import_sources
from joulebench.errors import JouleBenchError, NothingToImportError, ResultFileError
from joulebench.labels import NOT_STATED, describe_not_stated
from joulebench.metrics import label as metric_label


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
    figures: list[dict[str, Any]] = field(default_factory=list)  # the first runs' values, for the page's table


def hints(device: str, boundary: str, precision: str, mode: str, units: str = "") -> importers.Hints:
    """The upload form's answers for what a file cannot say; empty means not given. `units` is
    'COLUMN=UNIT' pairs separated by commas or new lines, as `--unit` takes them."""
    pairs = []
    for item in re.split(r"[,\n]", units):
        if item.strip():
            try:
                pairs.append(column_unit(item.strip()))
            except ValueError as e:
                raise ResultFileError("Units of columns", [str(e)]) from e
    try:
        return importers.Hints(device=device.strip() or None, boundary=boundary or None,
                               precision=precision or None, mode=mode or None, units=tuple(pairs))
    except ResultFileError as e:  # checked as the CLI's flags are: said with the form's field names
        raise ResultFileError("What the files cannot say", [as_fields(p) for p in e.problems]) from e


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
    """The preview itself, in this process (the child's side of `preview`): an archive's sources
    (an MLPerf submission, a folder of files) are read as the CLI reads them and shown together."""
    try:
        if log is not None:
            found = [load_pair(data, name, log.data, log.name, boundary=log.boundary, hints=given)]
            refused: list[str] = []
        else:
            found, refused = [], []
            for source in sources_from_bytes(data, name, upload=True):
                bounded.check_time()
                try:
                    found.append(importers.load_source(source, given))
                except ResultFileError as e:
                    refused.append(e.format_message())
    except ResultFileError as e:
        return Preview(name, error=e.format_message())
    if not found:
        more = f"\n... and {len(refused) - 5:,} more" if len(refused) > 5 else ""
        return Preview(name, error="\n".join(refused[:5]) + more)
    runs = [r for loaded, _ in found for r in loaded.runs]
    counts: dict[str, int] = {}
    for loaded, _ in found:
        for label, n in loaded.not_stated().items():
            counts[label] = counts.get(label, 0) + n
    devices = sorted({r["device"]["name"] for r in runs if r["device"] is not None})
    if "device" in counts:
        devices.append(NOT_STATED)
    others = [w for loaded, _ in found for w in loaded.warnings if not w.startswith("not stated in the file:")]
    others += [f"skipped: {r}" for r in refused[:5]]
    missing = sorted({m for loaded, _ in found for m in loaded.missing_fields()})
    formats = ", ".join(dict.fromkeys(fmt for _, fmt in found))
    return Preview(name, formats, len(runs), devices, sorted({r["config"]["workload"] for r in runs}), missing,
                   describe_not_stated(counts, len(runs)) if counts else "", others,
                   figures=[_figures(r) for r in runs[:PREVIEW_RUNS]])


PREVIEW_RUNS = 8  # runs whose values the preview shows


def _figures(run: dict[str, Any]) -> dict[str, Any]:
    """One run's labels and headline figures, as the preview's table shows them."""
    config, metrics = run.get("config") or {}, run.get("metrics") or {}
    return {"Device": (run.get("device") or {}).get("name") or NOT_STATED, "Workload": config.get("workload"),
            "Mode": config.get("mode") or NOT_STATED, "Precision": config.get("precision") or NOT_STATED,
            "Batch": config.get("batch_size"),
            **{metric_label(k): metrics.get(k) for k in ("throughput_sps", "j_per_sample", "avg_power_w")},
            "Status": run.get("status")}


MLPERF_PARTS = re.compile(r"^(mlperf_log_.*|.*\.json|user\.conf|mlperf\.conf|.*\.log)$", re.IGNORECASE)


def units(files: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """The uploaded files as the units to import: an MLPerf submission's files uploaded separately
    (a summary, its detail and accuracy logs, the system description) become one archive, read as
    the CLI reads the folder; every other file (a zip too) is a unit of its own."""
    if not any(n == MLPERF_SUMMARY for n, _ in files):
        return files
    parts = [(n, d) for n, d in files if MLPERF_PARTS.match(n) and not n.lower().endswith(".zip")]
    if len(parts) < 2:
        return files
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, d in parts:
            zf.writestr(n, d)
    names = {n for n, _ in parts}
    return [("mlperf-submission.zip", buf.getvalue()), *[(n, d) for n, d in files if n not in names]]


def import_upload(name: str, data: bytes, db: str, given: importers.Hints | None = None,
                  log: PowerLog | None = None) -> list[IngestReport]:
    """Raises ResultFileError for a file that cannot be imported; nothing is imported from it. The
    import runs in a bounded child process (explorer.bounded), through the CLI's code; an archive
    gives one report per source in it."""
    locate(db).refuse_write()
    return bounded.call(import_here, name, data, db, given, log, name=name)


def import_here(name: str, data: bytes, db: str, given: importers.Hints | None = None,
                log: PowerLog | None = None) -> list[IngestReport]:
    """The import itself, in this process (the child's side of `import_upload`): all of an archive's
    sources in one transaction, committed only if it finishes within the child's time limit (so a stopped
    upload imports nothing); a source that cannot be imported is reported `rejected` with its reason (the
    preview listed it as skipped) and the others are imported."""
    if log is not None:
        return [import_with_power_log(data, name, log.data, log.name, db=db, source_kind="upload", hints=given,
                                      boundary=log.boundary)[0]]
    sources = sources_from_bytes(data, name, upload=True)
    outcomes = import_sources([(source, None) for source in sources], db=db, source_kind="upload", hints=given,
                              checkpoint=bounded.check_time)
    reports = []
    for outcome in outcomes:
        if outcome.report is not None:
            reports.append(outcome.report)
        elif len(sources) == 1 and outcome.error is not None:
            raise outcome.error
        elif outcome.error is not None and not isinstance(outcome.error, NothingToImportError):
            reports.append(IngestReport(outcome.source.name, "", "rejected", message=outcome.error.format_message()))
        # a README or a config beside the results is skipped, as the CLI skips it in a folder
    if not any(r.status != "rejected" for r in reports):
        problems = [r.message for r in reports[:5]] or ["(whole archive): no file in it holds benchmark figures"]
        raise ResultFileError(name, problems)
    return reports
