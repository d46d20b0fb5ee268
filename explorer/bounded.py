"""Run work on an uploaded file in a child process bounded in time and memory.

The app server must keep answering whatever a file does: an importer that meets a pathological
file (quadratic parsing, a bomb that slips past a cap) must not freeze every page. So the Upload
page previews and imports each file in a child Python process (`python -m explorer.bounded`) with
an address-space limit; the answer comes back pickled. Past its time limit the child stops itself
at its next `check_time()` (an import calls it between files and before its one commit, so a stopped
import commits nothing), and is killed a little later (GRACE_S at most) if it has not.

    report = bounded.call(upload.import_upload, name, data, db, name=name)
"""

from __future__ import annotations

import os
import pickle
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

from joulebench.errors import JouleBenchError, ResultFileError

TIME_LIMIT_S = 60.0  # a file of the largest size accepted (64 MiB) imports in well under this
MEMORY_LIMIT_BYTES = 3 * 1024**3  # address space: DuckDB and the import of a 64 MiB file fit
# glibc's malloc reserves 64 MiB of address space per thread arena (DuckDB's, polars' and Arrow's threads):
# 2.9 GB of the child's 3 GB before any work; two arenas leave the limit to the work (1.9 GB at rest)
CHILD_ENV = {"MALLOC_ARENA_MAX": "2"}
GRACE_S = 15.0  # after its time limit, how long a child that has not stopped itself has before it is killed (at most)
ARCHIVE_FIX = ("a benchmark result file reads in seconds: check that this is one; an archive of many files: split "
               "it, or import it from the command line (no time limit): joulebench import FILE")

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
                         time.monotonic() + time_limit_s))


def call(fn: Callable[..., T], *args: Any, name: str, time_limit_s: float = TIME_LIMIT_S,
         memory_limit_bytes: int = MEMORY_LIMIT_BYTES, **kwargs: Any) -> T:
    """fn(*args, **kwargs) in a child process; ResultFileError naming `name` when it runs past
    `time_limit_s` or out of memory; the child's JouleBenchError raised again here."""
    sent = request(fn, *args, name=name, time_limit_s=time_limit_s, memory_limit_bytes=memory_limit_bytes, **kwargs)
    try:
        done = subprocess.run([sys.executable, "-m", "explorer.bounded"], input=sent, capture_output=True,
                              timeout=time_limit_s + min(GRACE_S, max(2.0, time_limit_s / 4)), check=False,
                              env={**os.environ, **CHILD_ENV})
    except subprocess.TimeoutExpired as e:  # subprocess.run has killed the child
        why = (f"(whole file): reading it took longer than {time_limit_s:.0f} s, so it was stopped; an import is "
               f"all or nothing, so import it again to be sure it is whole (nothing is added twice). {ARCHIVE_FIX}")
        raise ResultFileError(name, [why]) from e
    try:
        outcome = pickle.loads(done.stdout)
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError, ValueError) as e:
        memory = b"MemoryError" in done.stderr or done.returncode in (-9, 137)
        why = (f"reading it needed more than {memory_limit_bytes / 1024**3:.0f} GB of memory" if memory
               else f"the reader stopped unexpectedly (exit code {done.returncode})")
        raise ResultFileError(name, [f"(whole file): {why}, so it was refused; nothing was imported"]) from e
    kind = outcome[0]
    if kind == "ok":
        result: T = outcome[1]
        return result
    if kind == "file":
        raise ResultFileError(outcome[1], outcome[2])
    if kind == "memory":
        raise ResultFileError(name, [f"(whole file): reading it needed more than {memory_limit_bytes / 1024**3:.0f} "
                                     "GB of memory, so it was refused; nothing was imported"])
    raise BoundedError(outcome[1], outcome[2])


def check_time() -> None:
    """In the child: raise the time limit's ResultFileError once its deadline has passed (work that can stop
    cleanly calls this between steps; an import calls it between files and before its commit)."""
    if _deadline is not None and time.monotonic() > _deadline:
        name, limit_s = _limit
        raise ResultFileError(name, [f"(whole file): reading it took longer than {limit_s:.0f} s, so it was stopped "
                                     f"before its import was committed; nothing was imported. {ARCHIVE_FIX}"])


def _serve() -> None:
    global _deadline, _limit
    module, qualname, args, kwargs, memory_limit, name, time_limit_s, deadline = pickle.loads(sys.stdin.buffer.read())
    _deadline, _limit = deadline, (name, time_limit_s)
    resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    try:
        import importlib

        fn: Any = importlib.import_module(module)
        for part in qualname.split("."):
            fn = getattr(fn, part)
        outcome: tuple[Any, ...] = ("ok", fn(*args, **kwargs))
    except ResultFileError as e:
        outcome = ("file", e.file_name, e.problems)
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


__all__ = ["GRACE_S", "MEMORY_LIMIT_BYTES", "TIME_LIMIT_S", "BoundedError", "call", "check_time", "request"]
