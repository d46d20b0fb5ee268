"""The results store: the one API the runner, the CLI and the app use to reach the database."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import polars as pl

import importers
from db import inbox, seed
from db.connection import connect, first_row
from db.ingest import IngestReport, ingest_loaded
from db.migrate import apply_migrations
from joulebench.errors import DatabaseBusyError, ResultFileError
from joulebench.paths import SAMPLE_DATA_DIR, resolve_db_path
from joulebench.resultfile import LoadedResultFile

if TYPE_CHECKING:
    from importers.attach import PowerLogFile


@dataclass(frozen=True)
class DbInfo:
    path: Path
    schema_version: int
    runs: int
    devices: int
    findings: int
    inbox_pending: int
    sources: pl.DataFrame  # kind, file_name, format, runs, imported_at
    runs_by_source_kind: pl.DataFrame
    runs_by_device: pl.DataFrame


class Store:
    """An open database. Use as a context manager; it holds DuckDB's file lock while open."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path) -> None:
        self.con = con
        self.path = path
        self.inbox_reports: list[IngestReport] = []

    @classmethod
    def open(cls, db: str | os.PathLike[str] | None = None, *, seed_reference: bool = True,
             sample_data: Path = SAMPLE_DATA_DIR) -> Store:
        """Open, creating and migrating the file if needed, and ingest the inbox.

        A database created by this call is seeded with the reference data (unless
        `seed_reference` is false); an existing one is never re-seeded.
        """
        path = resolve_db_path(db)
        con = connect(path)
        store = cls(con, path)
        try:
            created = 1 in apply_migrations(con)  # the initial migration ran now: a new database
            if seed_reference and created:
                store.seed(sample_data)
            store.inbox_reports = store.drain_inbox()
        except BaseException:
            con.close()
            raise
        return store

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing -------------------------------------------------------------------------
    def ingest(self, loaded: LoadedResultFile, source_kind: str, file_format: str | None = None) -> IngestReport:
        if file_format:
            return ingest_loaded(self.con, loaded, source_kind=source_kind, file_format=file_format)
        return ingest_loaded(self.con, loaded, source_kind=source_kind)

    def seed(self, folder: Path) -> list[IngestReport]:
        reports = [self.ingest(doc, "reference", seed.REFERENCE_FORMAT) for doc in seed.reference_documents(folder)]
        modes = folder / "power_modes.csv"
        if modes.exists():
            self.add_power_modes(seed.power_mode_rows(modes))
        return reports

    def add_power_modes(self, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        frame = pl.DataFrame(rows, infer_schema_length=None)
        self.con.register("_modes", frame.to_arrow())
        try:
            self.con.execute(
                "INSERT INTO power_modes BY NAME SELECT * FROM _modes "
                "WHERE (device_name, mode_id) NOT IN (SELECT (device_name, mode_id) FROM power_modes)"
            )
        finally:
            self.con.unregister("_modes")

    def drain_inbox(self) -> list[IngestReport]:
        reports = []
        for item in inbox.pending(self.path):
            data = item.path.read_bytes()
            try:
                hints, dirs, folder = inbox.sidecar(item)
                attach = inbox.attachment(item)
                if attach:
                    loaded, fmt = _convert_pair(data, item.original_name, attach, hints, dirs, folder)
                else:
                    loaded, fmt = _convert(data, item.original_name, hints, dirs, folder)
                report = self.ingest(loaded, item.source_kind, fmt)
            except ResultFileError as e:
                inbox.reject(item, e.format_message())
                reports.append(IngestReport(item.original_name, "", "rejected", message=e.format_message()))
                continue
            inbox.remove(item)
            reports.append(report)
        return reports

    # --- reading -------------------------------------------------------------------------
    def schema_version(self) -> int:
        row = first_row(self.con, "SELECT max(version) FROM schema_migrations")
        return int(row[0]) if row and row[0] is not None else 0

    def query(self, sql: str, params: list[Any] | None = None) -> pl.DataFrame:
        return self.con.sql(sql, params=params or None).pl()

    def info(self) -> DbInfo:
        def count(table: str) -> int:
            row = first_row(self.con, f"SELECT count(*) FROM {table}")
            return int(row[0]) if row else 0

        return DbInfo(
            path=self.path,
            schema_version=self.schema_version(),
            runs=count("runs"),
            devices=count("devices"),
            findings=count("findings"),
            inbox_pending=len(inbox.pending(self.path)),
            sources=self.query(
                "SELECT kind, file_name, format, run_count AS runs, finding_count AS findings, imported_at "
                "FROM sources ORDER BY source_id"),
            runs_by_source_kind=self.query(
                "SELECT s.kind AS source_kind, count(*) AS runs FROM runs r JOIN sources s USING (source_id) "
                "GROUP BY 1 ORDER BY 1"),
            runs_by_device=self.query(
                "SELECT r.device_name, d.kind, count(*) AS runs FROM runs r JOIN devices d USING (device_name) "
                "GROUP BY 1, 2 ORDER BY runs DESC, 1"),
        )


def _convert(data: bytes, name: str, hints: importers.Hints | None, dirs: tuple[str, ...],
             folder: bool) -> tuple[importers.ImportedFile, str]:
    """Queued bytes back into a document: a folder source travels as a zip of its files."""
    if folder:
        from importers.archive import read_zip

        source = importers.Source(name=name, files=read_zip(data, name), dirs=dirs, is_folder=True)
        return importers.load_source(source, hints)
    return importers.load(data, name, hints=hints, dirs=dirs)


def _convert_pair(data: bytes, name: str, attach: dict[str, Any], hints: importers.Hints | None,
                  dirs: tuple[str, ...], folder: bool) -> tuple[importers.ImportedFile, str]:
    """A queued result + power log pair (a zip of `result/...` and `power_log/<name>`) back into
    the attached document, with the same code as a direct import."""
    from importers.archive import read_zip
    from importers.attach import PowerLogFile, load_with_power_log

    files = read_zip(data, name)
    result = {k.removeprefix("result/"): v for k, v in files.items() if k.startswith("result/")}
    logs = [v for k, v in files.items() if k.startswith("power_log/")]
    if not result or len(logs) != 1:
        raise ResultFileError(name, ["its inbox archive lacks the result file or the power log"])
    source_name = str(attach.get("source_name") or name)
    if folder:
        source = importers.Source(name=source_name, files=result, dirs=dirs, is_folder=True)
    else:
        source = importers.Source(name=source_name, files=result, dirs=dirs)
    log = PowerLogFile(logs[0], str(attach.get("log_name") or "power-log"), attach.get("boundary"))
    return load_with_power_log(source, log, hints)


def _pair_zip(source: importers.Source, log_name: str, log_data: bytes) -> bytes:
    files = {f"result/{rel}": data for rel, data in source.files.items()}
    files[f"power_log/{log_name}"] = log_data
    return _folder_zip(importers.Source(name=source.name, files=files, is_folder=True))


def import_source(source: importers.Source, *, db: str | os.PathLike[str] | None = None,
                  source_kind: str = "upload", hints: importers.Hints | None = None,
                  power_log: PowerLogFile | None = None,
                  ) -> tuple[IngestReport, importers.ImportedFile]:
    """Convert (any known format), validate, then ingest now or queue in the inbox.

    A file that fails conversion or validation raises ResultFileError and touches neither
    the database nor the inbox. A queued file keeps its hints in a sidecar, so draining the
    inbox converts it with the same code and the same hints.

    With `power_log`, the log is attached to the source's runs first (`importers.attach`): the
    pair is one source hashed over both files, and it is queued as a zip of both.
    """
    if power_log is not None:
        from importers.attach import load_with_power_log

        loaded, fmt = load_with_power_log(source, power_log, hints)
    else:
        loaded, fmt = importers.load_source(source, hints)
    path = resolve_db_path(db)
    try:
        with Store.open(path) as store:
            return store.ingest(loaded, source_kind, fmt), loaded
    except DatabaseBusyError:
        if power_log is not None:
            attach = {"source_name": source.name, "log_name": power_log.base_name, "boundary": power_log.boundary}
            queued = inbox.queue(path, _pair_zip(source, power_log.base_name, power_log.data), loaded.name,
                                 source_kind, hints=hints.to_json() if hints else None, dirs=source.dirs,
                                 folder=source.is_folder, attach=attach)
            report = IngestReport(loaded.name, loaded.content_sha256, "queued",
                                  message=f"database busy; queued in {queued.path.parent} and ingested on next open")
            return report, loaded
        data = _folder_zip(source) if source.is_folder else next(iter(source.files.values()))
        if fmt == importers.JouleBenchImporter.NAME:  # self-describing: no hints needed
            queued = inbox.queue(path, data, source.name, source_kind)
        else:
            queued = inbox.queue(path, data, source.name, source_kind, hints=hints.to_json() if hints else None,
                                 dirs=source.dirs, folder=source.is_folder)
        report = IngestReport(source.name, loaded.content_sha256, "queued",
                              message=f"database busy; queued in {queued.path.parent} and ingested on next open")
        return report, loaded


def _folder_zip(source: importers.Source) -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel in sorted(source.files):
            zf.writestr(zipfile.ZipInfo(rel, (1980, 1, 1, 0, 0, 0)), source.files[rel])
    return buf.getvalue()


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

    For the Upload page and other callers holding bytes. Each run with a known wall-clock
    window gets the log's samples inside it as a power trace and, when it has no energy of
    its own, the log's energy over the window (`boundary` as stated, else `wall` for a meter
    CSV, else the log's own); see `importers.attach`. Returns the ingest report (imported,
    already_imported or queued) and the ImportedFile, whose `warnings` name each run left
    without the trace and why. Raises ResultFileError, touching neither database nor inbox,
    when either file is bad, the log has no timestamps, or no run could be aligned.
    """
    from importers.attach import PowerLogFile

    return import_source(importers.Source.single(result_data, result_name, dirs), db=db, source_kind=source_kind,
                         hints=hints, power_log=PowerLogFile(log_data, log_name, boundary))


def import_file(file: Path, *, db: str | os.PathLike[str] | None = None, source_kind: str = "upload",
                hints: importers.Hints | None = None) -> IngestReport:
    try:
        data = file.read_bytes()
    except OSError as e:
        raise ResultFileError(str(file), [f"cannot read the file: {e.strerror}"]) from e
    dirs = tuple(p for p in file.resolve().parent.parts[-8:] if p not in ("/", ""))
    return import_bytes(data, file.name, db=db, source_kind=source_kind, hints=hints, dirs=dirs)
