"""The Upload page's queue: every file accounted for, whether or not the page stays open.

"Import N files" only queues: each file's bytes and what the form said are written beside the database
(`ingest.inbox.uploads_dir`, one `<token>.json` state file per file, its bytes beside it) before anything
else happens, and a worker thread of the app server (not of the page's session, so closing the tab does not
stop it) imports them one at a time, each in a bounded child process (`explorer.bounded`, as before). The
state file says where each file is: queued, importing, imported (runs added), imported before, refused (why),
or waiting in the inbox (the database was busy); the page reads these files, never the database, so it shows
them while an import holds the database, after a reload, and to another tab.

A server that stops mid-import leaves a file `importing`: its bounded child dies with it and commits nothing
(explorer.bounded), unless it was inside its commit, which is all or nothing. The next worker (the next time the
Upload page is opened, or a file is queued) imports it again (`resumed`), which is safe (a file imported before
adds nothing), and says what it found: runs added now, or the file already in the store whole, never a bare
"imported before" for runs the stopped import itself had committed.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import importers
from db.connection import connect
from explorer import bounded, upload
from ingest.inbox import uploads_dir
from joulebench import processes
from joulebench.errors import DatabaseBusyError, JouleBenchError
from joulebench.files import write_atomic
from joulebench.paths import resolve_db_path

QUEUED, IMPORTING, IMPORTED, ALREADY, REFUSED, INBOX = ("queued", "importing", "imported", "imported_before",
                                                        "refused", "inbox")
PENDING = (QUEUED, IMPORTING)
SHOWN_S = 24 * 3600.0  # the page lists the uploads of the last day
KEPT_S = 7 * 24 * 3600.0  # a finished upload's state file is removed after a week
FREE_WAIT_S = 20.0  # the worker waits this long for a database another process holds, before queuing in the inbox
RUN_LINKS = 20  # run ids kept per file, for the page's links
PAGE_WAIT_S = 30.0  # after the click, the page waits this long for its files before it lets them finish unseen
SHOWN_ITEMS = 30  # the page lists this many uploads at most, newest first


@dataclass
class Upload:
    """One uploaded file (or one MLPerf submission's files, as one archive) and where it is."""

    token: str  # time-ordered: '<ns>-<pid>-<n>'
    name: str
    queued_at: float  # time.time()
    state: str = QUEUED
    runs_added: int = 0
    runs_duplicate: int = 0
    sources: int = 0  # sources imported (an archive holds several)
    source_ids: list[int] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)
    reason: str = ""  # refused: why; imported: what in an archive was skipped; inbox: why it waits
    hints: dict[str, Any] = field(default_factory=dict)
    log_name: str | None = None
    log_boundary: str | None = None
    worker: int | None = None  # the server process importing it
    finished_at: float | None = None
    resumed: bool = False  # taken up again after the server that was importing it stopped

    @property
    def pending(self) -> bool:
        return self.state in PENDING


def shown(item: Upload) -> tuple[str, str]:
    """How the page shows a file's state: (the kind of box: info, success, warning or error; the sentence,
    plain text that the page escapes)."""
    if item.state == QUEUED:
        return "info", f"{item.name}: queued; it is imported in turn, whether or not this page stays open."
    if item.state == IMPORTING:
        return "info", f"{item.name}: importing now."
    if item.state == IMPORTED:
        from_sources = f" from {item.sources:,} files in it" if item.sources > 1 else ""
        skipped = f" {item.reason}." if item.reason else ""
        return "success", (f"{item.name}: {item.runs_added:,} run{'' if item.runs_added == 1 else 's'} added"
                           f"{from_sources}, {item.runs_duplicate:,} already present.{skipped}")
    if item.state == ALREADY and item.resumed:
        return "success", (f"{item.name}: the app stopped while importing it; on its return the file was in the store "
                           "whole (that import had committed before the stop, or the same file was imported "
                           "earlier), so nothing needed adding.")
    if item.state == ALREADY:
        return "info", f"{item.name}: imported before; nothing added."
    if item.state == INBOX:
        return "warning", f"{item.name}: {item.reason}."
    return "error", "Refused, nothing imported: " + item.reason


def _folder(db: str) -> Path:
    return uploads_dir(resolve_db_path(db))


def _write(folder: Path, item: Upload) -> None:
    write_atomic(folder / f"{item.token}.json", json.dumps(asdict(item)).encode())


_counter = 0
_counter_lock = threading.Lock()


def queue(db: str, units: list[tuple[str, bytes]], given: importers.Hints | None = None,
          log: upload.PowerLog | None = None) -> list[Upload]:
    """Write each file and its state beside the database (the bytes first, so a state file always has them),
    then start the worker; returns at once. Raises FileWriteError when the disk refuses."""
    global _counter
    folder = _folder(db)
    folder.mkdir(parents=True, exist_ok=True)
    queued = []
    for name, data in units:
        with _counter_lock:
            _counter += 1
            token = f"{time.time_ns():020d}-{os.getpid()}-{_counter:04d}"
        write_atomic(folder / f"{token}.data", data)
        if log is not None:
            write_atomic(folder / f"{token}.log", log.data)
        item = Upload(token, name, time.time(), hints=given.to_json() if given else {},
                      log_name=log.name if log else None, log_boundary=log.boundary if log else None)
        _write(folder, item)
        queued.append(item)
    start(db)
    return queued


def uploads(db: str, within_s: float = SHOWN_S) -> list[Upload]:
    """The uploads queued in the last `within_s` seconds, newest first, as their state files say."""
    folder = _folder(db)
    if not folder.is_dir():
        return []
    found = []
    since = time.time() - within_s
    for path in sorted(folder.glob("*.json"), reverse=True):
        item = _read(path)
        if item is not None and item.queued_at >= since:
            found.append(item)
    return found


def done(db: str, tokens: list[str]) -> bool:
    """Whether none of these uploads is still queued or importing."""
    wanted = set(tokens)
    return not any(item.pending for item in uploads(db, KEPT_S) if item.token in wanted)


def wait(db: str, tokens: list[str], limit_s: float) -> bool:
    """Wait (at most `limit_s`) until these uploads are done; whether they are."""
    deadline = time.monotonic() + limit_s
    while not done(db, tokens):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def _read(path: Path) -> Upload | None:
    try:
        raw = json.loads(path.read_text())
        return Upload(**{k: v for k, v in raw.items() if k in Upload.__dataclass_fields__})
    except (OSError, ValueError, TypeError):
        return None  # being replaced (write_atomic renames), or not ours


# --- the worker: a thread of the server process, one per database ------------------------------------

_workers: dict[str, threading.Thread] = {}
_workers_lock = threading.Lock()


def start(db: str) -> None:
    """Start the worker for `db` unless one runs (or nothing waits); the Upload page calls this on every run,
    so a server restarted with files queued picks them up."""
    if not any(item.pending for item in uploads(db, KEPT_S)):
        return
    with _workers_lock:
        running = _workers.get(db)
        if running is not None and running.is_alive():
            return
        worker = threading.Thread(target=_work, args=(db,), name=f"joulebench-uploads-{len(_workers)}", daemon=True)
        _workers[db] = worker
        worker.start()


def _work(db: str) -> None:
    folder = _folder(db)
    _tidy(folder)
    while True:
        waiting = [item for item in reversed(uploads(db, KEPT_S))
                   if item.state == QUEUED or (item.state == IMPORTING and item.worker in (os.getpid(), None))
                   or (item.state == IMPORTING and not processes.alive({"pid": item.worker}))]
        if not waiting:
            return
        item = waiting[0]
        item.resumed = item.resumed or item.state == IMPORTING  # a server stopped during its import
        item.state, item.worker = IMPORTING, os.getpid()
        _write(folder, item)
        try:
            _import(db, folder, item)
        except Exception as e:  # noqa: BLE001 - a file must never be left 'importing' by a surprise: say why
            item.state, item.reason = REFUSED, f"{item.name}: it could not be imported ({type(e).__name__}: {e})"
        item.finished_at = time.time()
        _write(folder, item)
        for suffix in (".data", ".log"):
            with contextlib.suppress(OSError):
                (folder / f"{item.token}{suffix}").unlink()


def _import(db: str, folder: Path, item: Upload) -> None:
    try:
        data = (folder / f"{item.token}.data").read_bytes()
        log = (upload.PowerLog(item.log_name, (folder / f"{item.token}.log").read_bytes(), item.log_boundary)
               if item.log_name else None)
    except OSError as e:
        item.state, item.reason = REFUSED, f"{item.name}: its queued copy cannot be read ({e}); upload it again"
        return
    given = importers.Hints.from_json(item.hints) if item.hints else None
    try:
        reports = bounded.call(import_when_free, item.name, data, db, given, log, name=item.name)
    except JouleBenchError as e:
        item.state, item.reason = REFUSED, e.format_message()
        return
    if len(reports) == 1 and reports[0].file_name:
        item.name = reports[0].file_name  # with a power log: 'result.json + power.csv'
    done = [r for r in reports if r.status in ("imported", "already_imported")]
    skipped = [r for r in reports if r.status == "rejected"]
    item.sources = sum(1 for r in done if r.status == "imported")
    item.runs_added = sum(r.runs_added for r in done)
    item.runs_duplicate = sum(r.runs_duplicate for r in done)
    item.source_ids = [r.source_id for r in done if r.source_id is not None]
    item.run_ids = [run for r in done for run in r.run_ids][:RUN_LINKS]
    item.reason = "; ".join([*(f"{r.file_name} skipped: {r.message}" for r in skipped[:5]),
                             *(r.message for r in done if r.status == "imported" and r.message)][:5])
    if any(r.status == "queued" for r in reports):
        item.state = INBOX
        item.reason = ("another process held the database, so it waits in the inbox; the app imports it as soon "
                       "as the database is free (Overview's intake log says when)")
    elif item.sources:
        item.state = IMPORTED
    else:
        item.state = ALREADY


def import_when_free(name: str, data: bytes, db: str, given: importers.Hints | None = None,
                     log: upload.PowerLog | None = None) -> Any:
    """In the bounded child: wait up to FREE_WAIT_S for a database that another process holds (a page's short
    read, the CLI), then import as the page always did (`upload.import_here`; still busy: queued in the inbox)."""
    path, deadline = resolve_db_path(db), time.monotonic() + FREE_WAIT_S
    while path.exists():  # never created here: a new database is born whole by the import itself
        bounded.check_time()
        try:
            connect(path, wait_s=0.5).close()
            break
        except DatabaseBusyError:
            if time.monotonic() > deadline:
                break
    return upload.import_here(name, data, db, given, log)


def _tidy(folder: Path) -> None:
    """Remove the state files of uploads finished more than KEPT_S ago, and bytes no state file names."""
    if not folder.is_dir():
        return
    now = time.time()
    states = set()
    for path in folder.glob("*.json"):
        item = _read(path)
        if item is not None:
            states.add(item.token)
            if not item.pending and now - (item.finished_at or item.queued_at) > KEPT_S:
                with contextlib.suppress(OSError):
                    path.unlink()
    for path in [*folder.glob("*.data"), *folder.glob("*.log")]:
        with contextlib.suppress(OSError):
            if path.stem not in states and now - path.stat().st_mtime > 3600:
                path.unlink()


__all__ = ["ALREADY", "IMPORTED", "IMPORTING", "INBOX", "PAGE_WAIT_S", "QUEUED", "REFUSED", "SHOWN_ITEMS", "Upload",
           "done", "import_when_free", "queue", "shown", "start", "uploads", "wait"]
