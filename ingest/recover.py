"""Recovering the runs of a sweep that was killed before it could import its result file.

A sweep writes its result file after every run, but imports it only at the end. When it starts
it leaves a marker in `<db>.sweeps/` (its PID and process start time, its result file), and
before each run it records that run in the marker as `interrupted` ("the process was killed
during this run"). It deletes the marker once the file is imported or queued. A marker whose
process is gone therefore means a killed sweep: the next open of the database ingests its
result file, with the run that was in progress recorded as interrupted, and logs that it did.

The marker also names, when it is made (while the disk still takes it), every folder the sweep may fall
back to when its result folder cannot be written (`fallbacks`: a full disk, a permission lost): a sweep
whose disk filled up may then write its file to one of them and be unable to update its marker, and its
import fails on the same full disk. The next open looks at all of them and ingests the newest file of that
name, so the import that sweep promised happens once space is freed.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from joulebench import __version__, processes
from joulebench.files import write_atomic
from joulebench.paths import sweeps_dir
from joulebench.resultfile import new_document

KILLED_ERROR = ("the process was killed during this run (SIGKILL, power loss or the out-of-memory killer); "
                "the runs it had finished were recovered at the next start")


@dataclass
class SweepMarker:
    path: Path
    out_path: Path
    pid: int
    start_ticks: int | None
    started_at: str
    current: dict[str, Any] | None = None  # the run in progress, as an interrupted run
    fallbacks: tuple[Path, ...] = ()  # where else the sweep may have written its file (same name)

    def to_json(self) -> dict[str, Any]:
        return {"out_path": str(self.out_path), "pid": self.pid, "start_ticks": self.start_ticks,
                "started_at": self.started_at, "current": self.current, "fallbacks": [str(p) for p in self.fallbacks]}

    def result_file(self) -> Path | None:
        """The newest of the result file's places that holds it (its own, then its fallbacks); None if none."""
        found: list[tuple[int, int, Path]] = []
        for rank, path in enumerate((self.out_path, *self.fallbacks)):
            try:
                found.append((path.stat().st_mtime_ns, -rank, path))
            except OSError:
                continue
        return max(found)[2] if found else None


def register(db_path: Path, out_path: Path, fallbacks: Sequence[Path] = ()) -> SweepMarker:
    """Mark a sweep as in progress (its result file is `out_path`; `fallbacks`: the other paths it may be
    written to when that one's folder cannot take it)."""
    me = processes.identity()
    marker = SweepMarker(sweeps_dir(db_path) / f"sweep-{me['pid']}-{uuid.uuid4().hex[:8]}.json",
                         out_path.resolve(), int(me["pid"] or 0), me["start_ticks"],
                         datetime.now(UTC).isoformat(timespec="seconds"),
                         fallbacks=tuple(p.resolve() for p in fallbacks if p.resolve() != out_path.resolve()))
    _save(marker)
    return marker


def set_current(marker: SweepMarker, run: dict[str, Any] | None) -> None:
    """The run about to start (recorded as interrupted should the process die), or None."""
    if run is not None:
        run = {**run, "status": "interrupted", "error": KILLED_ERROR}
        run["metrics"] = {"energy_missing_reason": "the process was killed before the measured window completed"}
        for key in ("power_traces", "step_times_ms"):
            run.pop(key, None)
    marker.current = run
    _save(marker)


def finish(marker: SweepMarker) -> None:
    """The sweep's file is imported or queued: nothing left to recover."""
    with contextlib.suppress(OSError):
        marker.path.unlink()


forget = finish


def _save(marker: SweepMarker) -> None:
    write_atomic(marker.path, json.dumps(marker.to_json()).encode())


def orphans(db_path: Path) -> list[SweepMarker]:
    """Markers of sweeps whose process is gone."""
    folder = sweeps_dir(db_path)
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("sweep-*.json")):
        try:
            data = json.loads(path.read_text())
            marker = SweepMarker(path, Path(data["out_path"]), int(data["pid"]), data.get("start_ticks"),
                                 str(data.get("started_at") or "?"), data.get("current"),
                                 tuple(Path(p) for p in data.get("fallbacks") or ()))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # being written this instant, or damaged: not ours to judge
        if not processes.alive({"pid": marker.pid, "start_ticks": marker.start_ticks}):
            found.append(marker)
    return found


def document_bytes(marker: SweepMarker) -> bytes:
    """The killed sweep's result file, with the run in progress added as interrupted; b"" when
    it holds no run at all."""
    runs: list[dict[str, Any]] = []
    created_at = marker.started_at
    found = marker.result_file()
    if found is not None:
        document = json.loads(found.read_bytes())
        runs = list(document.get("runs", []))
        created_at = document.get("created_at", created_at)
    if marker.current is not None and marker.current.get("run_id") not in {r.get("run_id") for r in runs}:
        runs.append(marker.current)
    if not runs:
        return b""
    return json.dumps(new_document(runs, producer_version=__version__, created_at=created_at)).encode()
