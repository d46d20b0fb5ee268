"""Time limits for the benchmarks' waits: a benchmark that cannot fail is a defect (issue 31).

Every wait in benchmarks/ goes through here. A wait that runs out raises `WaitExceeded` ("<what it waited
for> after N s"); `main` prints it as `FAILED: ...` on stderr and returns exit code 1, after the `finally`
blocks on the way out have stopped what the benchmark started (`stop`: by PID, SIGTERM, then SIGKILL).
A figure that misses its target is a result, not a failure: the benchmarks print it beside the target.

`main` also bounds the whole benchmark (`--limit-s`): work that runs in this process (a DuckDB query, a
model, a push) cannot be interrupted from Python, so a watchdog thread prints the reason, stops every
process started through `popen` and exits 1.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
P = TypeVar("P", bound=BaseProcess)
STOP_GRACE_S = 10.0  # SIGTERM, then this long before SIGKILL
_started: list[subprocess.Popen[Any] | BaseProcess] = []


class BenchmarkFailed(Exception):
    """The benchmark cannot go on; the message says why."""


class WaitExceeded(BenchmarkFailed):
    def __init__(self, what: str, limit_s: float) -> None:
        super().__init__(f"{what} after {limit_s:g} s")


def add_limits(parser: argparse.ArgumentParser, *, limit_s: float, wait_s: float | None = None) -> None:
    """--limit-s (the whole benchmark) and, for a benchmark with waits of its own, --wait-limit-s (each wait)."""
    parser.add_argument("--limit-s", type=float, default=limit_s,
                        help=f"the whole benchmark's time limit; past it: exit code 1 (default {limit_s:g})")
    if wait_s is not None:
        parser.add_argument("--wait-limit-s", type=float, default=wait_s,
                            help=f"each wait's time limit (a server's start, a page, a subprocess; default {wait_s:g})")


def pages_option(known: list[tuple[str, str]]) -> Callable[[str], list[tuple[str, str]]]:
    """The argparse type of a --pages option: titles, comma-separated, each one of `known` (title, address)."""
    titles = dict(known)

    def chosen(text: str) -> list[tuple[str, str]]:
        names = [name.strip() for name in text.split(",") if name.strip()]
        unknown = [name for name in names if name not in titles]
        if unknown or not names:
            raise argparse.ArgumentTypeError(f"not a page: {', '.join(unknown) or '(none given)'}; give one or more "
                                             f"of {', '.join(titles)}")
        return [(name, titles[name]) for name in names]
    return chosen


def main(run: Callable[[], int | None], limit_s: float) -> int:
    """run() under a watchdog of limit_s; a failure or a wait that ran out: `FAILED: <reason>`, exit code 1."""
    timer = threading.Timer(limit_s, _give_up, args=(limit_s,))
    timer.daemon = True
    timer.start()
    try:
        return run() or 0
    except BenchmarkFailed as e:
        print(f"FAILED: {e}", file=sys.stderr, flush=True)
        return 1
    finally:
        timer.cancel()


def _give_up(limit_s: float) -> None:
    print(f"FAILED: the benchmark to finish (--limit-s) after {limit_s:g} s", file=sys.stderr, flush=True)
    for proc in list(_started):
        stop(proc)
    sys.stdout.flush()
    os._exit(1)


def popen(cmd: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """A process in its own session (so `stop` ends its children too), stopped by the watchdog if it fires."""
    proc = subprocess.Popen(cmd, start_new_session=True, **kwargs)
    _started.append(proc)
    return proc


def started(proc: P) -> P:
    """Registers a multiprocessing child for the watchdog."""
    _started.append(proc)
    return proc


def stop(proc: subprocess.Popen[Any] | BaseProcess, grace_s: float = STOP_GRACE_S) -> None:
    """Stops a process by its PID: SIGTERM (its whole session for `popen`'s), SIGKILL if it has not ended
    within grace_s."""
    if not isinstance(proc, subprocess.Popen):  # a multiprocessing child (any start method)
        if proc.pid is not None and proc.is_alive():
            proc.terminate()
            proc.join(grace_s)
            if proc.is_alive():
                proc.kill()
                proc.join(grace_s)
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)  # popen's processes lead their own group: the server's children end too
        except (ProcessLookupError, PermissionError):
            if proc.poll() is None:
                proc.send_signal(sig)
        try:
            proc.wait(grace_s)
            return
        except subprocess.TimeoutExpired:
            continue


def wait_process(proc: subprocess.Popen[Any], limit_s: float, what: str) -> int:
    try:
        return proc.wait(limit_s)
    except subprocess.TimeoutExpired:
        raise WaitExceeded(what, limit_s) from None


def run(cmd: list[str], limit_s: float, what: str, **kwargs: Any) -> subprocess.CompletedProcess[Any]:
    """subprocess.run with a time limit (the process is killed when it runs out)."""
    try:
        return subprocess.run(cmd, timeout=limit_s, check=False, **kwargs)
    except subprocess.TimeoutExpired:
        raise WaitExceeded(what, limit_s) from None


def wait_until(check: Callable[[], T], limit_s: float, what: str, *, interval_s: float = 0.1,
               proc: subprocess.Popen[Any] | None = None) -> T:
    """Polls check() until it returns something true; a process that ends meanwhile ends the wait too."""
    deadline = time.monotonic() + limit_s
    while True:
        value = check()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise BenchmarkFailed(f"{what}: the process ended with exit code {proc.returncode}")
        if time.monotonic() >= deadline:
            raise WaitExceeded(what, limit_s)
        time.sleep(min(interval_s, max(0.0, deadline - time.monotonic())))


def answers(url: str, timeout_s: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def wait_http(url: str, limit_s: float, what: str, proc: subprocess.Popen[Any] | None = None) -> None:
    wait_until(lambda: answers(url, min(2.0, max(limit_s, 0.01))), limit_s, what, interval_s=0.1, proc=proc)


def join(threads: Iterable[threading.Thread], limit_s: float, what: str) -> None:
    deadline = time.monotonic() + limit_s
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            raise WaitExceeded(what, limit_s)


@contextmanager
def browser_wait(what: str, limit_s: float) -> Iterator[None]:
    """A Playwright wait (given timeout=limit_s * 1000) whose timeout becomes a WaitExceeded."""
    from playwright.sync_api import TimeoutError as PageTimeout

    try:
        yield
    except PageTimeout:
        raise WaitExceeded(what, limit_s) from None


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


JOULEBENCH = str(Path(sys.executable).with_name("joulebench"))  # the venv's command, beside its python


@contextmanager
def app_server(db: Path, env: dict[str, str], wait_s: float) -> Iterator[str]:
    """`joulebench app` on `db`, on a free port, until it answers (wait_s at most); stopped by its PID, with its
    Streamlit child."""
    port = free_port()
    server = popen([JOULEBENCH, "app", "--port", str(port), "--db", str(db)], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://localhost:{port}"
    try:
        wait_http(f"{url}/_stcore/health", wait_s, "the app's health check (/_stcore/health)", server)
        yield url
    finally:
        stop(server)


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"  # Debian's, as the browser tests use
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
BROWSER_START_S = 60.0
