"""SIGINT / SIGTERM during a sweep: finish cleanly instead of dying mid-write.

While a run is in progress (the guard is *armed*) a signal raises `SweepInterrupted` inside it,
so that run is recorded as `interrupted`. A signal handler's exception can land where Python drops
it (a `__del__` run by the garbage collector prints "Exception ignored" and goes on), so the guard
stays armed after raising and the run's step loop asks it again (`check`): a signal is never lost.
Between runs, and while results are being saved, a signal is only noted (`pending`): the sweep
stops before the next run and still writes and ingests its result file. Handlers are installed
only in the main thread and restored on exit.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)

# what signal.signal returns and accepts: a handler, SIG_DFL / SIG_IGN, or None (not installed from Python)
Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


class SweepInterrupted(BaseException):
    """Raised inside a run when SIGINT or SIGTERM arrives (a BaseException, like KeyboardInterrupt,
    so `except Exception` in a workload cannot swallow it)."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"interrupted by {signal_name(signum)}")


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def exit_code(signum: int) -> int:
    """The shell convention: 128 + signal number (130 for SIGINT, 143 for SIGTERM)."""
    return 128 + signum


class InterruptGuard:
    def __init__(self) -> None:
        self.pending: int | None = None
        self._armed = False
        self._previous: dict[int, Handler] = {}

    def __enter__(self) -> InterruptGuard:
        if threading.current_thread() is threading.main_thread():
            for sig in SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.pending is None:
            self.pending = signum
        if self._armed:
            raise SweepInterrupted(signum)

    def check(self) -> None:
        """Raise the noted signal inside an armed region (where its handler's exception may have been dropped)."""
        if self._armed and self.pending is not None:
            self._armed = False
            raise SweepInterrupted(self.pending)

    @contextlib.contextmanager
    def armed(self) -> Iterator[None]:
        """A region in which a signal interrupts the work at once."""
        if self.pending is not None:
            raise SweepInterrupted(self.pending)
        self._armed = True
        try:
            yield
        finally:
            self._armed = False
