"""Issue 30 (9): stopping `joulebench app` stops its server. `kill` of the command used to leave its Streamlit
child running and answering on the port; now the server takes the command's process (no child at all)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.helpers import free_port

JOULEBENCH = str(Path(sys.executable).with_name("joulebench"))
START_CEILING_S = 180.0  # generous ceilings, polled: a loaded machine is slow, never a reason to fail
STOP_CEILING_S = 90.0


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
            return bool(r.status == 200)
    except OSError:
        return False


def _descendants(pid: int) -> set[int]:
    """Every living process below `pid`, from /proc (parent ids in each process's stat)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue  # it ended meanwhile
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        for child, its_parent in parents.items():
            if its_parent == parent and child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has stopped; only its parent's wait is missing


def _as_from_a_terminal() -> None:
    """The dispositions a command started from a terminal has: a test run started under `nohup` (or with SIGINT
    ignored, as a background job) would pass its ignored SIGHUP on, and the app then rightly keeps running."""
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=["SIGTERM", "SIGINT", "SIGHUP"])
def test_stopping_the_app_command_stops_its_server(signum: int, tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "app.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([JOULEBENCH, "app", "--port", str(port), "--db", str(tmp_path / "x.duckdb")],
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                env=dict(os.environ, HF_HUB_OFFLINE="1"),
                                preexec_fn=_as_from_a_terminal)
    below: set[int] = set()
    try:
        deadline = time.monotonic() + START_CEILING_S
        while not _answers(port):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        below = _descendants(proc.pid)  # the processes the command started, before it is stopped
        stopped_at = time.monotonic()
        os.kill(proc.pid, signum)  # the command's own PID, as `kill PID` or Ctrl-C does
        # poll for the stopped state under a generous ceiling: at load 5-18 a 15 s wait failed a server that stops
        while (proc.poll() is None or _answers(port) or any(_alive(p) for p in below)) \
                and time.monotonic() - stopped_at < STOP_CEILING_S:
            time.sleep(0.2)
        assert proc.poll() is not None, f"`joulebench app` still runs {STOP_CEILING_S:g} s after {signum!r}"
        assert not _answers(port), f"the server still answers on port {port} after {signum!r}"
        left = [p for p in below if _alive(p)]
        assert not left, f"processes left running after {signum!r}: {left}"
    finally:
        for pid in (proc.pid, *below):  # only what this test started, by its PID
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait(timeout=STOP_CEILING_S)
