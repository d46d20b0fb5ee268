"""The inbox: result files wait here while another process holds the database.

DuckDB lets one process hold a database file. A runner or an upload must never lose a result
to that lock, so a file that cannot be ingested now is copied, atomically, into a folder next
to the database (`<name>.inbox/`) and ingested the next time the database is opened. A file
that turns out to be invalid moves to `<name>.inbox/rejected/` with the reason beside it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from importers.base import Hints
from joulebench.errors import FileWriteError, ResultFileError
from joulebench.files import write_atomic
from joulebench.paths import inbox_dir

REJECTED = "rejected"
UPLOADS = "uploads"  # the Upload page's own queue (explorer.upload_queue): a folder, so `pending` never lists it


@dataclass(frozen=True)
class QueuedFile:
    path: Path
    original_name: str
    source_kind: str


def _sidecar_path(path: Path) -> Path:
    """Hidden, so `pending` never lists it as a file of its own."""
    return path.with_name(f".{path.name}.hints.json")


def queue(db_path: Path, data: bytes, original_name: str, source_kind: str, *,
          hints: dict[str, Any] | None = None, dirs: tuple[str, ...] = (), folder: bool = False,
          attach: dict[str, Any] | None = None) -> QueuedFile:
    """Place a result file in the inbox; safe against crashes (write, fsync, rename).

    What conversion needs besides the bytes (the user's hints, the folder names the file sat
    in, whether it is a zipped result folder, and for a result file with a power log attached,
    `attach`: the two names and the stated boundary, the bytes being a zip of both) goes in a
    sidecar written before the file.
    """
    with Together(db_path) as together:
        queued = together.add(data, original_name, source_kind, hints=hints, dirs=dirs, folder=folder, attach=attach)
        together.publish()
    return queued


class Together:
    """The files of one user action queued together: each is written (and fsynced) under a hidden
    `.partial` name as it comes, and all take their names at `publish()`, so an import stopped before
    then queues nothing: leaving the `with` block without publishing removes them (and a killed writer's
    are removed by `remove_stale_partials`)."""

    def __init__(self, db_path: Path) -> None:
        self.inbox = inbox_dir(db_path)
        self._staged: dict[Path, Path] = {}  # final name -> hidden temporary name

    def __enter__(self) -> Together:
        return self

    def __exit__(self, *exc: object) -> None:
        for tmp in self._staged.values():  # not published: an error or Ctrl-C stopped the import
            with contextlib.suppress(OSError):
                tmp.unlink()
        self._staged.clear()

    def add(self, data: bytes, original_name: str, source_kind: str, *, hints: dict[str, Any] | None = None,
            dirs: tuple[str, ...] = (), folder: bool = False, attach: dict[str, Any] | None = None) -> QueuedFile:
        digest = hashlib.sha256(data).hexdigest()[:16]
        safe_name = "".join(c if c.isalnum() or c in "._-" else "_" for c in Path(original_name).name)[:120]
        target = self.inbox / f"{digest}__{source_kind}__{safe_name}"
        if hints or dirs or folder or attach:
            side: dict[str, Any] = {"hints": hints or {}, "dirs": list(dirs), "folder": folder}
            if attach:
                side["attach"] = attach
            write_atomic(_sidecar_path(target), json.dumps(side).encode())  # hidden: harmless alone
        if not target.exists() and target not in self._staged:
            tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.partial")
            try:
                self.inbox.mkdir(parents=True, exist_ok=True)
                with open(tmp, "xb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
            except OSError as e:
                with contextlib.suppress(OSError):
                    tmp.unlink()
                raise FileWriteError(target, e) from e
            self._staged[target] = tmp
        return QueuedFile(target, original_name, source_kind)

    def publish(self) -> None:
        """Give every staged file its name (renames only: no data is written now)."""
        for target, tmp in self._staged.items():
            try:
                tmp.replace(target)
            except OSError as e:
                raise FileWriteError(target, e) from e
        self._staged.clear()


def uploads_dir(db_path: Path) -> Path:
    """Where the Upload page queues files and keeps each one's state (explorer.upload_queue)."""
    return inbox_dir(db_path) / UPLOADS


def pending(db_path: Path) -> list[QueuedFile]:
    folder = inbox_dir(db_path)
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.iterdir(), key=_queued_order):
        if not path.is_file() or path.name.startswith("."):
            continue
        parts = path.name.split("__", 2)
        if len(parts) == 3:
            out.append(QueuedFile(path, parts[2], parts[1]))
    return out


def _queued_order(path: Path) -> tuple[int, str]:
    """First queued, first ingested."""
    try:
        return path.stat().st_mtime_ns, path.name
    except OSError:
        return 0, path.name


def sidecar(item: QueuedFile) -> tuple[Any, tuple[str, ...], bool]:
    """(hints, folder names, is a zipped result folder) saved with a queued file."""
    side = _sidecar_path(item.path)
    if not side.exists():
        return None, (), False
    try:
        data = json.loads(side.read_text())
        return Hints.from_json(data.get("hints")), tuple(map(str, data.get("dirs", []))), bool(data.get("folder"))
    except (ValueError, TypeError, AttributeError) as e:
        raise ResultFileError(item.original_name, [f"its inbox hints file is damaged ({e})"]) from e


def attachment(item: QueuedFile) -> dict[str, Any] | None:
    """For a queued result file + power log pair: {source_name, log_name, boundary}; else None."""
    side = _sidecar_path(item.path)
    if not side.exists():
        return None
    try:
        found = json.loads(side.read_text()).get("attach")
    except (ValueError, AttributeError) as e:
        raise ResultFileError(item.original_name, [f"its inbox hints file is damaged ({e})"]) from e
    return found if isinstance(found, dict) else None


def remove_stale_partials(db_path: Path, older_than_s: float) -> int:
    """Delete `.partial` files a killed writer left in the inbox; how many."""
    folder = inbox_dir(db_path)
    if not folder.is_dir():
        return 0
    removed = 0
    now = time.time()
    for path in folder.glob(".*.partial"):
        with contextlib.suppress(OSError):
            if now - path.stat().st_mtime > older_than_s:
                path.unlink()
                removed += 1
    return removed


def remove(item: QueuedFile) -> None:
    item.path.unlink()
    _sidecar_path(item.path).unlink(missing_ok=True)


def reject(item: QueuedFile, reason: str) -> Path:
    folder = item.path.parent / REJECTED
    folder.mkdir(exist_ok=True)
    target = folder / item.path.name
    item.path.replace(target)
    side = _sidecar_path(item.path)
    if side.exists():
        side.replace(_sidecar_path(target))
    target.with_name(target.name + ".error.json").write_text(
        json.dumps({"file": item.original_name, "reason": reason}, indent=1)
    )
    return target
