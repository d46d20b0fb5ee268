"""Run work on an uploaded file in a child process bounded in time and memory.

The app server must keep answering whatever a file does: an importer that meets a pathological
file (quadratic parsing, a bomb that slips past a cap) must not freeze every page. So the Upload
page previews and imports each file in a child Python process (`python -m explorer.bounded`) with
an address-space limit; the answer comes back pickled. Past its time limit the child stops itself
at its next `check_time()` (an import calls it between files and before its one commit, so a stopped
import commits nothing), and is killed `grace_s` later if it has not. Every way of stopping an import says
the same sentence (`STOPPED`), and only when it is true: a child that had begun its commit when it was
killed says so on stderr first (`check_time.committing()`), and is then reported as possibly imported.

The child dies with the process that started it (kill -9 of the app included): the kernel sends it SIGKILL
when its parent goes (Linux's PR_SET_PDEATHSIG; elsewhere a thread watches the parent's PID), and
`check_time()`, called before the commit, refuses to commit for a parent that is gone. An import killed
that way commits nothing; one killed inside its commit is whole or absent (one DuckDB transaction), and
the Upload queue says which it found on return (explorer.upload_queue).

    report = bounded.call(upload.import_upload, name, data, db, name=name)
"""

from __future__ import annotations

import ctypes
import os
import pickle
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from joulebench.errors import JouleBenchError, ResultFileError

TIME_LIMIT_S = 60.0  # a file of the largest size accepted (64 MiB) imports in well under this
MEMORY_LIMIT_BYTES = 3 * 1024**3  # address space: DuckDB and the import of a 64 MiB file fit
# glibc's malloc reserves 64 MiB of address space per thread arena (DuckDB's, polars' and Arrow's threads):
# 2.9 GB of the child's 3 GB before any work; two arenas leave the limit to the work (1.9 GB at rest)
CHILD_ENV = {"MALLOC_ARENA_MAX": "2"}
# after its time limit, how long a child that has not stopped itself has before it is killed: its next check, the
# rollback and its exit take well under a second on a quiet machine, but many seconds on a loaded one
GRACE_S = 30.0  # at most: half the time limit, at least 2 s (`grace_s`), so a short limit still stops work soon


def grace_s(time_limit_s: float) -> float:
    return min(GRACE_S, max(2.0, time_limit_s / 2))
ARCHIVE_FIX = ("a benchmark result file reads in seconds: check that this is one; an archive of many files: split "
               "it, or import it from the command line (no time limit): joulebench import FILE")
NOTHING_IMPORTED = "nothing was imported"
STOPPED = f"so it was stopped before its import was committed; {NOTHING_IMPORTED}"  # every stop says this
COMMITTING = b"joulebench-bounded: committing\n"  # on the child's stderr, as its commit begins
PR_SET_PDEATHSIG = 1  # linux/prctl.h
PARENT_POLL_S = 0.5  # without prctl: how often the child looks whether its parent is gone

_deadline: float | None = None  # in the child: time.monotonic() at which its work must stop
_limit: tuple[str, float] = ("", TIME_LIMIT_S)  # in the child: the file's name and its time limit

T = TypeVar("T")


class BoundedError(JouleBenchError):
    """A child's error that is not a ResultFileError, carried back by its class name and message."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind, self.message = kind, message
        super().__init__(message)

    def format_message(self) -> str:
        return self.message


def request(fn: Callable[..., Any], *args: Any, name: str, time_limit_s: float = TIME_LIMIT_S,
            memory_limit_bytes: int = MEMORY_LIMIT_BYTES, **kwargs: Any) -> bytes:
    """What `call` sends the child on its stdin: fn(*args, **kwargs), its limits and its deadline."""
    return pickle.dumps((fn.__module__, fn.__qualname__, args, kwargs, memory_limit_bytes, name, time_limit_s,
                         time.monotonic() + time_limit_s, os.getpid()))


def stopped_message(name: str, limit_s: float) -> ResultFileError:
    """The refusal of an import stopped by its time limit, whichever stage it was in."""
    return ResultFileError(name, [f"(whole file): reading it took longer than {limit_s:.0f} s, {STOPPED}. "
                                  f"{ARCHIVE_FIX}"])


def _maybe_committed(name: str, why: str) -> ResultFileError:
    return ResultFileError(name, [f"(whole file): {why} after its import had begun to commit, so it is in the store "
                                  "whole or not at all (never in part): import it again to be sure (nothing is added "
                                  "twice)"])


def call(fn: Callable[..., T], *args: Any, name: str, time_limit_s: float = TIME_LIMIT_S,
         memory_limit_bytes: int = MEMORY_LIMIT_BYTES, **kwargs: Any) -> T:
    """fn(*args, **kwargs) in a child process; ResultFileError naming `name` when it runs past
    `time_limit_s` or out of memory; the child's JouleBenchError raised again here."""
    sent = request(fn, *args, name=name, time_limit_s=time_limit_s, memory_limit_bytes=memory_limit_bytes, **kwargs)
    kill_after_s = time_limit_s + grace_s(time_limit_s)
    try:
        done = subprocess.run([sys.executable, "-m", "explorer.bounded"], input=sent, capture_output=True,
                              timeout=kill_after_s, check=False, env={**os.environ, **CHILD_ENV})
    except subprocess.TimeoutExpired as e:  # subprocess.run has killed the child (its stderr so far kept)
        if COMMITTING in (e.stderr or b""):
            raise _maybe_committed(name, f"it was stopped {kill_after_s:.0f} s after it began") from e
        raise stopped_message(name, time_limit_s) from e
    try:
        outcome = pickle.loads(done.stdout)
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError, ValueError) as e:
        memory = b"MemoryError" in done.stderr or done.returncode in (-9, 137)
        why = (f"reading it needed more than {memory_limit_bytes / 1024**3:.0f} GB of memory" if memory
               else f"the reader stopped unexpectedly (exit code {done.returncode})")
        if COMMITTING in done.stderr:
            raise _maybe_committed(name, why) from e
        raise ResultFileError(name, [f"(whole file): {why}, so it was refused; {NOTHING_IMPORTED}"]) from e
    kind = outcome[0]
    if kind == "ok":
        result: T = outcome[1]
        return result
    if kind == "file":
        raise ResultFileError(outcome[1], outcome[2])
    if kind == "memory":
        raise ResultFileError(name, [f"(whole file): reading it needed more than {memory_limit_bytes / 1024**3:.0f} "
                                     f"GB of memory, so it was refused; {NOTHING_IMPORTED}"])
    raise BoundedError(outcome[1], outcome[2])


class ParentGone(BaseException):
    """In the child: the process that asked for the work has ended (the app was killed): stop, commit nothing.
    A BaseException, so no `except Exception` on the way turns it into a refusal that carries on."""


class _CheckTime:
    """`check_time()`: in the child, raise the time limit's ResultFileError once its deadline has passed, and
    ParentGone once its parent has ended (work that can stop cleanly calls it between steps; an import calls it
    between files and right before its commit); nothing outside a bounded child."""

    def __call__(self) -> None:
        if _parent is not None and os.getppid() != _parent:
            raise ParentGone(f"the process that started this import (PID {_parent}) has ended")
        if _deadline is not None and time.monotonic() > _deadline:
            name, limit_s = _limit
            raise stopped_message(name, limit_s)

    def committing(self) -> None:
        """The commit begins (ingest calls this after the last check): said on stderr, so a parent that kills the
        child from now on does not claim that nothing was imported."""
        if _deadline is not None:
            sys.stderr.buffer.write(COMMITTING)
            sys.stderr.buffer.flush()


check_time = _CheckTime()
_parent: int | None = None  # in the child: the PID of the process that started it


def die_with_parent(parent: int) -> None:
    """In the child: be killed when `parent` ends (prctl where the kernel has it, else a watching thread), and
    end now if it already has."""
    armed = False
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent:  # it ended before the line above took effect
        os._exit(3)
    if not armed:
        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(PARENT_POLL_S)
            os._exit(3)

        threading.Thread(target=watch, name="joulebench-bounded-parent", daemon=True).start()


def _serve() -> None:
    global _deadline, _limit, _parent
    (module, qualname, args, kwargs, memory_limit, name, time_limit_s, deadline,
     parent) = pickle.loads(sys.stdin.buffer.read())
    _deadline, _limit, _parent = deadline, (name, time_limit_s), parent
    die_with_parent(parent)
    resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    try:
        import importlib

        fn: Any = importlib.import_module(module)
        for part in qualname.split("."):
            fn = getattr(fn, part)
        outcome: tuple[Any, ...] = ("ok", fn(*args, **kwargs))
    except ResultFileError as e:
        outcome = ("file", e.file_name, e.problems)
    except ParentGone:
        return  # nobody is left to read an answer; the import's transaction was rolled back
    except MemoryError:
        outcome = ("memory",)
    except JouleBenchError as e:
        outcome = ("error", type(e).__name__, e.format_message())
    except Exception as e:  # noqa: BLE001 - reported to the page as a refusal, never a traceback
        outcome = ("error", type(e).__name__, f"cannot be read ({type(e).__name__}: {e})")
    sys.stdout.buffer.write(pickle.dumps(outcome))


if __name__ == "__main__":
    from explorer import bounded  # this file again, as the module the work imports: check_time reads its deadline

    bounded._serve()


__all__ = ["GRACE_S", "MEMORY_LIMIT_BYTES", "NOTHING_IMPORTED", "STOPPED", "TIME_LIMIT_S", "BoundedError", "ParentGone",
           "call", "check_time", "die_with_parent", "request", "stopped_message"]
