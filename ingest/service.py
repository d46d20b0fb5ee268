"""The import service: convert (any known format), validate, then ingest now or queue.

Every result that reaches the database comes through here: a sweep's result file, a CLI
import, an upload, a queued file drained from the inbox, a killed sweep's file recovered at the
next open. A file that fails conversion or validation raises ResultFileError and touches
neither the database nor the inbox.
"""

from __future__ import annotations

import contextlib
import io
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path

import duckdb

import importers
import ingest.inbox as inbox
import ingest.recover as recover
from db import IngestReport, Store
from importers.archive import read_zip
from ingest.attach import PowerLogFile, load_with_power_log
from joulebench.errors import DatabaseBusyError, DatabaseError, JouleBenchError, ResultFileError, os_reason
from joulebench.paths import resolve_db_path

STALE_PARTIAL_S = 600.0  # a `.partial` file this old was left by a killed writer


def open_store(db: str | os.PathLike[str] | None = None, *, seed_reference: bool = True) -> Store:
    """Open read-write (creating, migrating and seeding as needed), then ingest what waits: the
    inbox, and the result files of sweeps that were killed before importing them."""
    store = Store.open(db, seed_reference=seed_reference)
    try:
        recover_killed_sweeps(store)
        drain_inbox(store)
    except BaseException:
        store.close()
        raise
    return store


def housekeeping_pending(db: str | os.PathLike[str] | None = None) -> bool:
    """Whether the inbox or a killed sweep has something to ingest (no database access)."""
    path = resolve_db_path(db)
    return bool(inbox.pending(path)) or bool(recover.orphans(path))


# --- the inbox ----------------------------------------------------------------------------------

def drain_inbox(store: Store) -> list[IngestReport]:
    """Ingest every queued file. A file that cannot be ingested, for whatever reason of its own
    (it fails validation, or a value breaks a database rule), moves to `rejected/` with the
    reason and the drain goes on: one file never blocks the database."""
    reports: list[IngestReport] = []
    inbox.remove_stale_partials(store.path, STALE_PARTIAL_S)
    for item in inbox.pending(store.path):
        try:
            data = item.path.read_bytes()
            loaded, fmt = _convert_queued(data, item)
        except Exception as e:  # noqa: BLE001 - the file's own fault, unreadable (F8) included: it goes aside
            _reject(store, item, reports, _file_reason(e))
            continue
        try:
            report = store.ingest(loaded, item.source_kind, fmt)
        except (OSError, duckdb.IOException, DatabaseError) as e:
            # not the file's fault (disk, permissions): leave it queued for the next open
            reports.append(IngestReport(item.original_name, "", "queued", message=f"left in the inbox: {e}"))
            break
        except Exception as e:  # noqa: BLE001 - a value that breaks a database rule must not block the rest
            _reject(store, item, reports, _file_reason(e))
            continue
        inbox.remove(item)
        store.log_intake("drained", item.original_name, report.runs_added, report.message or report.status)
        reports.append(report)
    return reports


def _file_reason(e: BaseException) -> str:
    if isinstance(e, JouleBenchError):
        return e.format_message()
    if isinstance(e, OSError):
        return f"the queued file cannot be read ({os_reason(e)}); fix its permissions and import it again"
    return f"{type(e).__name__}: {e}"


def _reject(store: Store, item: inbox.QueuedFile, reports: list[IngestReport], reason: str) -> None:
    """Move a queued file to rejected/ with its reason (if it cannot be moved either, it is skipped
    this time), log it, and let the drain go on."""
    with contextlib.suppress(OSError):
        inbox.reject(item, reason)
    store.log_intake("rejected", item.original_name, 0, reason)
    reports.append(IngestReport(item.original_name, "", "rejected", message=reason))


def _convert_queued(data: bytes, item: inbox.QueuedFile) -> tuple[importers.ImportedFile, str]:
    """Queued bytes back into a document, with the hints saved beside them."""
    hints, dirs, folder = inbox.sidecar(item)
    attach = inbox.attachment(item)
    if attach:
        files = read_zip(data, item.original_name)
        result = files.subset({k.removeprefix("result/"): k for k in files if k.startswith("result/")})
        logs = [files[k] for k in files if k.startswith("power_log/")]
        if not result or len(logs) != 1:
            raise ResultFileError(item.original_name, ["its inbox archive lacks the result file or the power log"])
        name = str(attach.get("source_name") or item.original_name)
        source = importers.Source(name=name, files=result, dirs=dirs, is_folder=folder)
        log = PowerLogFile(logs[0], str(attach.get("log_name") or "power-log"), attach.get("boundary"))
        return load_with_power_log(source, log, hints)
    if folder:  # a folder source travels as a zip of its files
        source = importers.Source(name=item.original_name, files=read_zip(data, item.original_name), dirs=dirs,
                                  is_folder=True)
        return importers.load_source(source, hints)
    return importers.load(data, item.original_name, hints=hints, dirs=dirs)


def _folder_zip(files: Mapping[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel in sorted(files):
            zf.writestr(zipfile.ZipInfo(rel, (1980, 1, 1, 0, 0, 0)), files[rel])
    return buf.getvalue()


def _queue(path: Path, source: importers.Source, loaded: importers.ImportedFile, fmt: str, source_kind: str,
           hints: importers.Hints | None, power_log: PowerLogFile | None) -> IngestReport:
    hints_json = hints.to_json() if hints else None
    if power_log is not None:
        files = {f"result/{rel}": data for rel, data in source.files.items()}
        files[f"power_log/{power_log.base_name}"] = power_log.data
        attach = {"source_name": source.name, "log_name": power_log.base_name, "boundary": power_log.boundary}
        queued = inbox.queue(path, _folder_zip(files), loaded.name, source_kind, hints=hints_json, dirs=source.dirs,
                             folder=source.is_folder, attach=attach)
    elif fmt == importers.JouleBenchImporter.NAME and not source.is_folder:  # self-describing: no hints needed
        queued = inbox.queue(path, next(iter(source.files.values())), source.name, source_kind)
    else:
        data = _folder_zip(source.files) if source.is_folder else next(iter(source.files.values()))
        queued = inbox.queue(path, data, source.name, source_kind, hints=hints_json, dirs=source.dirs,
                             folder=source.is_folder)
    return IngestReport(loaded.name, loaded.content_sha256, "queued",
                        message=f"database busy; queued in {queued.path.parent} and ingested on next open")


# --- importing ----------------------------------------------------------------------------------

def import_source(source: importers.Source, *, db: str | os.PathLike[str] | None = None,
                  source_kind: str = "upload", hints: importers.Hints | None = None,
                  power_log: PowerLogFile | None = None,
                  ) -> tuple[IngestReport, importers.ImportedFile]:
    """Convert (any known format), validate, then ingest now or queue in the inbox.

    A file that fails conversion or validation raises ResultFileError and touches neither the
    database nor the inbox. A queued file keeps its hints in a sidecar, so draining the inbox
    converts it with the same code and the same hints. With `power_log`, the log is attached to
    the source's runs first (`ingest.attach`): the pair is one source hashed over both files,
    and it is queued as a zip of both.
    """
    if power_log is not None:
        loaded, fmt = load_with_power_log(source, power_log, hints)
    else:
        loaded, fmt = importers.load_source(source, hints)
    path = resolve_db_path(db)
    try:
        with open_store(path) as store:
            return store.ingest(loaded, source_kind, fmt), loaded
    except DatabaseBusyError:
        return _queue(path, source, loaded, fmt, source_kind, hints, power_log), loaded


def import_bytes(data: bytes, name: str, *, db: str | os.PathLike[str] | None = None,
                 source_kind: str = "upload", hints: importers.Hints | None = None,
                 dirs: tuple[str, ...] = ()) -> IngestReport:
    """Import one file's bytes (any known format); see import_source."""
    return import_source(importers.Source.single(data, name, dirs), db=db, source_kind=source_kind,
                         hints=hints)[0]


def import_with_power_log(result_data: bytes, result_name: str, log_data: bytes, log_name: str, *,
                          db: str | os.PathLike[str] | None = None, source_kind: str = "upload",
                          hints: importers.Hints | None = None, boundary: str | None = None,
                          dirs: tuple[str, ...] = ()) -> tuple[IngestReport, importers.ImportedFile]:
    """Import one result file (any known format) with a power log attached to its runs.

    Each run with a known wall-clock window gets the log's samples inside it as a power trace
    and, when it has no energy of its own, the log's energy over the window (`boundary` as
    stated, else `wall` for a meter CSV, else the log's own); see `ingest.attach`. Returns the
    ingest report and the ImportedFile, whose `warnings` name each run left without the trace
    and why. Raises ResultFileError, touching neither database nor inbox, when either file is
    bad, the log has no timestamps, or no run could be aligned.
    """
    return import_source(importers.Source.single(result_data, result_name, dirs), db=db, source_kind=source_kind,
                         hints=hints, power_log=PowerLogFile(log_data, log_name, boundary))


def import_file(file: Path, *, db: str | os.PathLike[str] | None = None, source_kind: str = "upload",
                hints: importers.Hints | None = None) -> IngestReport:
    from importers.archive import read_file

    data = read_file(file)
    dirs = tuple(p for p in file.resolve().parent.parts[-8:] if p not in ("/", ""))
    return import_bytes(data, file.name, db=db, source_kind=source_kind, hints=hints, dirs=dirs)


# --- killed sweeps ------------------------------------------------------------------------------

def recover_killed_sweeps(store: Store) -> list[IngestReport]:
    """Ingest the result file of every sweep that was killed before it imported it (its runs
    finished before the kill, plus the run in progress recorded as interrupted)."""
    reports = []
    for orphan in recover.orphans(store.path):
        try:
            data = recover.document_bytes(orphan)
            if not data:  # killed before its first run began: nothing to recover
                recover.forget(orphan)
                continue
            loaded, fmt = importers.load(data, orphan.out_path.name)
            report = store.ingest(loaded, "local", fmt)
        except (OSError, duckdb.IOException, DatabaseError):
            break  # the disk or the database, not the file: try again at the next open
        except Exception as e:  # noqa: BLE001 - a damaged file must not block the database
            reason = e.format_message() if isinstance(e, JouleBenchError) else f"{type(e).__name__}: {e}"
            store.log_intake("rejected", orphan.out_path.name, 0, f"killed sweep's result file: {reason}")
            recover.forget(orphan)
            continue
        store.log_intake("recovered", orphan.out_path.name, report.runs_added,
                         f"a sweep (PID {orphan.pid}, started {orphan.started_at}) was killed before importing "
                         f"its result file; {report.runs_added} run(s) recovered")
        recover.forget(orphan)
        reports.append(report)
    return reports


__all__ = ["drain_inbox", "housekeeping_pending", "import_bytes", "import_file", "import_source",
           "import_with_power_log", "open_store", "recover_killed_sweeps"]
