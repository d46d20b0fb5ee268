"""Is a process that wrote a file (a sweep, a power-setting owner, an app run) still alive?

A PID alone can be reused after a reboot or a long time; the process's start time (from
/proc/<pid>/stat, in clock ticks since boot) tells a reused PID from the original. Where /proc
is not available the PID alone decides.
"""

from __future__ import annotations

import os
from pathlib import Path


def start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot, or None when unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:
        return int(stat.rsplit(")", 1)[1].split()[19])  # field 22 of /proc/<pid>/stat
    except (IndexError, ValueError):
        return None


def identity(pid: int | None = None) -> dict[str, int | None]:
    """{pid, start_ticks} of this process (or `pid`), to store beside what it owns."""
    pid = os.getpid() if pid is None else pid
    return {"pid": pid, "start_ticks": start_ticks(pid)}


def alive(owner: dict[str, object] | None) -> bool:
    """Whether the process recorded by `identity()` is still running (not a reused PID)."""
    if not owner:
        return False
    try:
        pid = int(owner.get("pid"))  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return False
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: it exists
    recorded = owner.get("start_ticks")
    now = start_ticks(pid)
    return recorded is None or now is None or recorded == now
