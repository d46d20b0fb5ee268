"""Run work on an uploaded file in a child process bounded in time and memory.

The app server must keep answering whatever a file does: an importer that meets a pathological
file (quadratic parsing, a bomb that slips past a cap) must not freeze every page. So the Upload
page previews and imports each file in a child Python process (`python -m explorer.bounded`) with
an address-space limit, killed when it runs past its time; the answer comes back pickled.

    report = bounded.call(upload.import_upload, name, data, db, name=name)
"""

from __future__ import annotations

import pickle
import resource
import subprocess
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from joulebench.errors import JouleBenchError, ResultFileError

TIME_LIMIT_S = 60.0  # a file of the largest size accepted (64 MiB) imports in well under this
MEMORY_LIMIT_BYTES = 3 * 1024**3  # address space: DuckDB and the import of a 64 MiB file fit

T = TypeVar("T")


class BoundedError(JouleBenchError):
    """A child's error that is not a ResultFileError, carried back by its class name and message."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind, self.message = kind, message
        super().__init__(message)

    def format_message(self) -> str:
        return self.message


def call(fn: Callable[..., T], *args: Any, name: str, time_limit_s: float = TIME_LIMIT_S,
         memory_limit_bytes: int = MEMORY_LIMIT_BYTES, **kwargs: Any) -> T:
    """fn(*args, **kwargs) in a child process; ResultFileError naming `name` when it runs past
    `time_limit_s` or out of memory; the child's JouleBenchError raised again here."""
    request = pickle.dumps((fn.__module__, fn.__qualname__, args, kwargs, memory_limit_bytes))
    try:
        done = subprocess.run([sys.executable, "-m", "explorer.bounded"], input=request, capture_output=True,
                              timeout=time_limit_s, check=False)
    except subprocess.TimeoutExpired as e:  # subprocess.run has killed the child
        why = (f"(whole file): reading it took longer than {time_limit_s:.0f} s, so it was stopped; a benchmark "
               "result file reads in seconds: check that this is one")
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


def _serve() -> None:
    module, qualname, args, kwargs, memory_limit = pickle.loads(sys.stdin.buffer.read())
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
    _serve()


__all__ = ["MEMORY_LIMIT_BYTES", "TIME_LIMIT_S", "BoundedError", "call"]
