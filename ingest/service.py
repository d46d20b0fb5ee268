"""The import service: convert (any known format), validate, then ingest now or queue.

Every result that reaches the database comes through here: a sweep's result file, a CLI
import, an upload, a queued file drained from the inbox, a killed sweep's file recovered at the
next open. A file that fails conversion or validation raises ResultFileError and touches
neither the database nor the inbox.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

import importers
import ingest.inbox as inbox
import ingest.plausibility as plausibility
import ingest.recover as recover
from db import IngestReport, Store
from db.writes import Batch, MixedBatchError
from importers.archive import read_zip
from ingest.attach import PowerLogFile, load_with_power_log
from ingest.device_map import name_devices
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
    """Ingest every queued file, all in one transaction (the files of one upload or archive come in
    together, or none does: a drain stopped before its commit leaves them all queued). A file that
    cannot be ingested, for whatever reason of its own (it fails validation, or a value breaks a
    database rule), moves to `rejected/` with the reason and the drain goes on without it: one file
    never blocks the database."""
    inbox.remove_stale_partials(store.path, STALE_PARTIAL_S)
    rejected: list[IngestReport] = []
    skip: set[Path] = set()  # rejected (moved aside, or left where it is if it cannot be moved)
    reports: list[IngestReport] = []
    buffered = True
    while True:
        items = [item for item in inbox.pending(store.path) if item.path not in skip]
        try:
            reports, done = _drain_together(store, items, rejected, skip, buffered) if items else ([], [])
        except _Refused as refused:  # its values broke a database rule: the batch rolled back; again without it
            _reject(refused.item, rejected, skip, _file_reason(refused.error))
            continue
        except MixedBatchError:  # one of several files appended together: again, a file at a time, to know which
            buffered = False
            continue
        except (OSError, duckdb.IOException, DatabaseError) as e:
            # not a file's fault (disk, permissions): leave them queued for the next open (said only of those there)
            waiting = sum(1 for item in items if item.path.exists())
            where = (f"{waiting} of {len(items)} queued file(s) still wait in {items[0].path.parent} for the next open"
                     if waiting else "the queued files are no longer in the inbox")
            reports, done = [IngestReport(items[0].original_name, "", "queued",
                                          message=f"not ingested ({e}); {where}")], []
        break
    for report in rejected:  # outside the batch: a batch that rolls back keeps these
        store.log_intake("rejected", report.file_name, 0, report.message)
    for item, report in zip(done, reports[:len(done)], strict=True):  # none when the database failed
        inbox.remove(item)  # after the commit: a kill before this leaves it queued, ingested again as already imported
        store.log_intake("drained", item.original_name, report.runs_added, report.message or report.status)
    return rejected + reports


class _Refused(Exception):
    """A file whose values the database refused in a batch (which DuckDB then rolls back whole): a
    queued file, or the index of a source."""

    def __init__(self, item: Any, error: BaseException) -> None:
        super().__init__(str(error))
        self.item, self.error = item, error


def _drain_together(store: Store, items: list[inbox.QueuedFile], rejected: list[IngestReport],
                    skip: set[Path], buffered: bool) -> tuple[list[IngestReport], list[inbox.QueuedFile]]:
    reports: list[IngestReport] = []
    done: list[inbox.QueuedFile] = []
    with Batch(store.con, store.path, buffered=buffered) as batch:
        for item in items:
            try:
                data = item.path.read_bytes()
                loaded, fmt = _convert_queued(data, item)
            except Exception as e:  # noqa: BLE001 - the file's own fault, unreadable (F8) included: it goes aside
                _reject(item, rejected, skip, _file_reason(e))
                continue
            try:
                report, _ = _add_named(batch, store, loaded, item.source_kind, fmt)
            except (OSError, duckdb.IOException, DatabaseError, MixedBatchError):
                raise
            except Exception as e:  # noqa: BLE001 - a value that breaks a database rule must not block the rest
                raise _Refused(item, e) from e
            reports.append(report)
            done.append(item)
        batch.commit()
    return reports, done


def _file_reason(e: BaseException) -> str:
    if isinstance(e, JouleBenchError):
        return e.format_message()
    if isinstance(e, OSError):
        return f"the queued file cannot be read ({os_reason(e)}); fix its permissions and import it again"
    return f"{type(e).__name__}: {e}"


def _reject(item: inbox.QueuedFile, reports: list[IngestReport], skip: set[Path], reason: str) -> None:
    """Move a queued file to rejected/ with its reason (if it cannot be moved either, it is skipped
    this time) and let the drain go on; the drain logs it outside its batch."""
    skip.add(item.path)
    with contextlib.suppress(OSError):
        inbox.reject(item, reason)
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


def _queue(together: inbox.Together, source: importers.Source, loaded: importers.ImportedFile, fmt: str,
           source_kind: str, hints: importers.Hints | None, power_log: PowerLogFile | None) -> IngestReport:
    hints_json = hints.to_json() if hints else None
    if power_log is not None:
        files = {f"result/{rel}": data for rel, data in source.files.items()}
        files[f"power_log/{power_log.base_name}"] = power_log.data
        attach = {"source_name": source.name, "log_name": power_log.base_name, "boundary": power_log.boundary}
        queued = together.add(_folder_zip(files), loaded.name, source_kind, hints=hints_json, dirs=source.dirs,
                              folder=source.is_folder, attach=attach)
    elif fmt == importers.JouleBenchImporter.NAME and not source.is_folder:  # self-describing: no hints needed
        queued = together.add(next(iter(source.files.values())), source.name, source_kind)
    else:
        data = _folder_zip(source.files) if source.is_folder else next(iter(source.files.values()))
        queued = together.add(data, source.name, source_kind, hints=hints_json, dirs=source.dirs,
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
            return _ingest_named(store, loaded, source_kind, fmt)
    except DatabaseBusyError:
        with inbox.Together(path) as together:
            report = _queue(together, source, loaded, fmt, source_kind, hints, power_log)
            together.publish()
        return report, loaded


@dataclass
class Outcome:
    """What one source of an import came to: its report and what was read (`loaded`, its power traces
    dropped once written), or the error that refused it (NothingToImportError: nothing in it to import)."""

    source: importers.Source
    report: IngestReport | None = None
    loaded: importers.ImportedFile | None = None
    error: ResultFileError | None = None


def import_sources(pairs: Sequence[tuple[importers.Source, PowerLogFile | None]], *,
                   db: str | os.PathLike[str] | None = None, source_kind: str = "upload",
                   hints: importers.Hints | None = None, checkpoint: Callable[[], None] | None = None,
                   ) -> list[Outcome]:
    """Import the sources of one user action (an archive, a folder, the files of one command) all or
    nothing: each is converted and validated, then written into ONE transaction that commits after the
    last (`db.writes.Batch`), with one database open and one grading pass for all. A source that fails
    conversion or validation is refused (its Outcome's `error`) and the others go on; a source whose
    values the database refuses is refused the same way (the transaction is begun again without it).
    Whatever stops the import before its commit (an exception, Ctrl-C, a kill, `checkpoint` raising:
    the Upload page's time limit) leaves the database as it was. When another process holds the
    database, the sources are queued in the inbox together (`inbox.Together`), to be ingested together."""
    path = resolve_db_path(db)
    try:
        store = open_store(path)
    except DatabaseBusyError:
        return _queue_together(path, pairs, source_kind, hints, checkpoint)
    with store:
        refused: dict[int, ResultFileError] = {}
        buffered = True
        while True:
            try:
                return _write_together(store, pairs, refused, source_kind, hints, checkpoint, buffered)
            except MixedBatchError:  # one of several sources appended together: again, one at a time, to know which
                buffered = False
            except _Refused as e:  # the transaction rolled back; begin it again without that source
                refused[int(e.item)] = e.error if isinstance(e.error, ResultFileError) else ResultFileError(
                    pairs[int(e.item)][0].name, [_file_reason(e.error)])


def _add_named(batch: Batch, store: Store, loaded: importers.ImportedFile, source_kind: str, fmt: str
               ) -> tuple[IngestReport, importers.ImportedFile]:
    """Add one document to the batch with its devices under their catalog names (`ingest.device_map`: the
    mapping decided and recorded in the batch's transaction; an ambiguous name is said in the warnings), once its
    figures are checked against each other (`ingest.plausibility`: flagged, or the file refused)."""
    loaded = plausibility.check(loaded, fmt)
    try:
        named = name_devices(store.con, loaded, fmt)
    except duckdb.Error as e:
        batch.fail(e, loaded.name)
    report = batch.add(named.loaded, source_kind=source_kind, file_format=fmt)
    named.record_runs(store.con, report.run_ids)
    return report, named.loaded  # type: ignore[return-value]  # an ImportedFile stays one


def _ingest_named(store: Store, loaded: importers.ImportedFile, source_kind: str, fmt: str
                  ) -> tuple[IngestReport, importers.ImportedFile]:
    """One document in a transaction of its own (`_add_named`)."""
    with Batch(store.con, store.path) as batch:
        report, loaded = _add_named(batch, store, loaded, source_kind, fmt)
        batch.commit()
    return report, loaded


def _convert(source: importers.Source, power_log: PowerLogFile | None, hints: importers.Hints | None
             ) -> tuple[importers.ImportedFile, str]:
    try:
        if power_log is not None:
            return load_with_power_log(source, power_log, hints)
        return importers.load_source(source, hints)
    finally:
        source.release()  # one file's bytes in memory at a time


def _written(loaded: importers.ImportedFile) -> importers.ImportedFile:
    """What a report needs of a written document (its runs' labels and figures), without the power
    traces and step times, so an archive of long traces is not held in memory until its commit."""
    runs = [{k: v for k, v in run.items() if k not in ("power_traces", "step_times_ms")}
            for run in loaded.document.get("runs", [])]
    return dataclasses.replace(loaded, document={**loaded.document, "runs": runs})


def _write_together(store: Store, pairs: Sequence[tuple[importers.Source, PowerLogFile | None]],
                    refused: dict[int, ResultFileError], source_kind: str, hints: importers.Hints | None,
                    checkpoint: Callable[[], None] | None, buffered: bool) -> list[Outcome]:
    outcomes: list[Outcome] = []
    with Batch(store.con, store.path, buffered=buffered) as batch:
        for i, (source, power_log) in enumerate(pairs):
            if checkpoint is not None:
                checkpoint()
            if i in refused:
                outcomes.append(Outcome(source, error=refused[i]))
                continue
            try:
                loaded, fmt = _convert(source, power_log, hints)
            except ResultFileError as e:
                outcomes.append(Outcome(source, error=e))
                continue
            try:
                report, loaded = _add_named(batch, store, loaded, source_kind, fmt)
            except ResultFileError as e:
                raise _Refused(i, e) from e
            outcomes.append(Outcome(source, report, _written(loaded)))
        if checkpoint is not None:
            checkpoint()
            _committing(checkpoint)
        batch.commit()
    return outcomes


def _committing(checkpoint: Callable[[], None]) -> None:
    """Tell a checkpoint that has a `committing()` (explorer.bounded's) that the commit begins now: whoever stops
    the import from here on cannot say that nothing was imported."""
    said = getattr(checkpoint, "committing", None)
    if callable(said):
        said()


def _queue_together(path: Path, pairs: Sequence[tuple[importers.Source, PowerLogFile | None]], source_kind: str,
                    hints: importers.Hints | None, checkpoint: Callable[[], None] | None) -> list[Outcome]:
    outcomes: list[Outcome] = []
    with inbox.Together(path) as together:
        for source, power_log in pairs:
            if checkpoint is not None:
                checkpoint()
            try:
                loaded, fmt = _convert(source, power_log, hints)
            except ResultFileError as e:
                outcomes.append(Outcome(source, error=e))
                continue
            outcomes.append(Outcome(source, _queue(together, source, loaded, fmt, source_kind, hints, power_log),
                                    _written(loaded)))
            source.release()
        if checkpoint is not None:
            checkpoint()
        together.publish()
    return outcomes


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
            report, _ = _ingest_named(store, loaded, "local", fmt)
        except (OSError, duckdb.IOException, DatabaseError):
            break  # the disk or the database, not the file: try again at the next open
        except Exception as e:  # noqa: BLE001 - a damaged file must not block the database
            reason = e.format_message() if isinstance(e, JouleBenchError) else f"{type(e).__name__}: {e}"
            store.log_intake("rejected", orphan.out_path.name, 0,
                             f"result file of a sweep that ended without importing it: {reason}")
            recover.forget(orphan)
            continue
        store.log_intake("recovered", orphan.out_path.name, report.runs_added, _ended(orphan, report.runs_added))
        recover.forget(orphan)
        reports.append(report)
    return reports


def _ended(orphan: recover.SweepMarker, runs_added: int) -> str:
    """How a sweep ended, as far as its marker tells: only that its process is gone, and whether a run
    was in progress then (killed or crashed during it) or not (its own import failed, or it stopped
    between runs). A sweep that exited is never called killed."""
    how = ("ended during a run (its process is gone: killed or crashed), the run in progress recorded as "
           "interrupted" if orphan.current is not None else
           "ended with no run in progress (its own import had failed, or it was stopped between runs)")
    return (f"a sweep (PID {orphan.pid}, started {orphan.started_at}) {how}, without importing its result file; "
            f"{runs_added} run(s) recovered")


__all__ = ["Outcome", "drain_inbox", "housekeeping_pending", "import_bytes", "import_file", "import_source",
           "import_sources", "import_with_power_log", "open_store", "recover_killed_sweeps"]
