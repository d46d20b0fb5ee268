"""Where a sweep's runs go: its result file, rewritten after every run, then the import service.

Nothing measured is lost to the file system or to a kill:
- the file name is unique (UTC time, PID and a random part), so two sweeps started in the same
  second never share a file;
- the file is written atomically after every run; when its folder cannot be written (disk full,
  permission denied, read-only file system) the runs stay in memory and go to the first folder
  that can be written (results/ next to the database, the user's data folder, the temporary
  folder, the working directory), and the sweep says where and why; no `.partial` file is left;
- a marker (`ingest.recover`) names the file, the folders it may fall back to and the run in
  progress, so a sweep killed before its import, or whose import a full disk refused, is imported
  at the next open of the database (wherever its file went), the run in progress recorded as
  interrupted;
- the import reads the runs from memory, so it works even when no file could be written.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from joulebench import __version__
from joulebench.errors import FileWriteError
from joulebench.files import write_atomic
from joulebench.paths import resolve_db_path, results_dir, user_data_dir
from joulebench.resultfile import dump_bytes, new_document
from runner.record import RunRecord

if TYPE_CHECKING:
    from db import IngestReport
    from ingest.recover import SweepMarker


def unique_out_path(db: str | os.PathLike[str] | None, kind: str = "run") -> Path:
    """results/joulebench-<kind>-<UTC time>-<pid>-<random>.json next to the database."""
    stem = f"joulebench-{kind}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    return results_dir(resolve_db_path(db)) / f"{stem}.json"


@dataclass
class ResultSink:
    """The sweep's runs, kept in memory and written after each one."""

    out_path: Path
    db: str | os.PathLike[str] | None
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    runs: list[RunRecord | dict[str, Any]] = field(default_factory=list)  # typed until written
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    write_error: FileWriteError | None = None  # the last failure, when no folder could be written
    marker: SweepMarker | None = None

    def start(self, *, recover: bool) -> None:
        """With `recover`, leave a marker so a killed sweep's runs are imported at the next open."""
        if not recover:
            return
        from ingest import recover as recovery

        try:
            self.marker = recovery.register(resolve_db_path(self.db), self.out_path, self._targets())
        except FileWriteError as e:
            print(f"warning: {e.format_message()}; if this sweep is killed, import its result file by hand",
                  file=self.stream, flush=True)

    def about_to_run(self, placeholder: dict[str, Any] | None) -> None:
        """The run about to start, recorded as interrupted should the process be killed."""
        if self.marker is None:
            return
        from ingest import recover as recovery

        try:
            recovery.set_current(self.marker, placeholder)
        except FileWriteError:
            pass  # the marker still names the file; only the run in progress would go unrecorded

    def add(self, run: RunRecord | dict[str, Any]) -> None:
        self.runs.append(run)
        self.write()

    def document(self) -> dict[str, Any]:
        runs = [r.to_json() if isinstance(r, RunRecord) else r for r in self.runs]
        return new_document(runs, producer_version=__version__, created_at=self.created_at)

    def data(self) -> bytes:
        return dump_bytes(self.document(), self.out_path)

    def write(self) -> Path | None:
        """Write the file; on failure fall back to a writable folder. None when none could be written."""
        data = self.data()
        tried: list[str] = []
        for target in self._targets():
            try:
                write_atomic(target, data)
            except FileWriteError as e:
                self.write_error = e
                tried.append(e.format_message())
                continue
            if target != self.out_path:
                print("warning: " + "; ".join(tried) + f"\nthe result file is written to {target} instead",
                      file=self.stream, flush=True)
                self.out_path = target
                self._move_marker()
            self.write_error = None
            return target
        print("warning: no folder could take the result file (" + "; ".join(tried) + "); the runs are kept in "
              "memory and imported from there", file=self.stream, flush=True)
        return None

    def _targets(self) -> list[Path]:
        name = self.out_path.name
        folders = [self.out_path.parent, results_dir(resolve_db_path(self.db)), user_data_dir() / "results",
                   Path(tempfile.gettempdir()) / "joulebench-results", Path.cwd()]
        out: list[Path] = []
        for folder in folders:
            if folder / name not in out:
                out.append(folder / name)
        return out

    def name_file_in_marker(self) -> None:
        """Write the result file's place into the marker again, if it can be written now (the marker also names
        every fallback, so the next open finds the file even when it cannot)."""
        self._move_marker()

    def _move_marker(self) -> None:
        if self.marker is None:
            return
        from ingest import recover as recovery

        self.marker.out_path = self.out_path.resolve()
        try:
            recovery.set_current(self.marker, self.marker.current)
        except FileWriteError:
            pass

    def ingest(self) -> IngestReport:
        """Import the runs (from memory) as local runs, or queue them when the database is busy; the
        marker is removed once they are in or queued."""
        from ingest import import_bytes
        from ingest import recover as recovery

        report = import_bytes(self.data(), self.out_path.name, db=self.db, source_kind="local")
        if self.marker is not None:
            recovery.finish(self.marker)
        return report

    def finish_without_ingest(self) -> None:
        if self.marker is not None:
            from ingest import recover as recovery

            recovery.finish(self.marker)

    def dump_to(self, stream: TextIO) -> None:
        """Last resort when nothing could be written nor imported: the document on `stream`."""
        stream.write(json.dumps(self.document()) + "\n")

