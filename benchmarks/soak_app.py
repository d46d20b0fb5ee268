"""Soak: many sessions on one app server, or imports and runs while the app is open.

    .venv/bin/python benchmarks/soak_app.py --sessions 4 --minutes 1
    .venv/bin/python benchmarks/soak_app.py [--imports 100] [--runs 5]

With --sessions: starts `joulebench app` on a fresh database (the app creates it at the first visit) and
drives that many sessions at once, each over its own websocket as a browser's (tests.helpers.AppSession),
through every page in turn for --minutes. Prints pages/s, each page's median and slowest time, and the
slowest page; every wait is time-limited (--page-timeout), and a page that does not finish in time, an
exception or error box on a page, or a server that stops answering its health check ends it with exit
code 1 and the reason. Target: no page over the time limit, no error, the server healthy at the end.

Otherwise: keeps a headless Chromium rerunning the Overview (every import meets an app that reads the
database), imports N distinct result files with `joulebench import` (each its own process) and starts M
bert-tiny runs with `joulebench run`, then waits for the page to show every run. Prints how many files were
imported at once and how many waited in the inbox, and the target: every run visible, an empty inbox,
nothing rejected.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from db import Store  # noqa: E402
from ingest import open_store  # noqa: E402
from ingest.inbox import pending  # noqa: E402
from joulebench.paths import inbox_dir  # noqa: E402
from tests.helpers import app_pages, app_session  # noqa: E402

JOULEBENCH = str(Path(sys.executable).with_name("joulebench"))
FIXTURE = REPO / "tests" / "fixtures" / "result_v1_cpu_runs.json"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def runs_shown(page) -> int:  # type: ignore[no-untyped-def]
    metric = page.locator('[data-testid="stMetric"]').filter(has_text="Runs").first
    metric.wait_for(timeout=60_000)
    return int(metric.locator('[data-testid="stMetricValue"]').inner_text().replace(",", ""))


def rerun(page) -> None:  # type: ignore[no-untyped-def]
    page.get_by_role("link", name="Devices").first.click()
    page.get_by_role("heading", name="Devices").wait_for(timeout=60_000)
    page.get_by_role("link", name="Overview").first.click()
    page.get_by_role("heading", name="JouleBench").wait_for(timeout=60_000)


@contextmanager
def app_server(db: Path, env: dict[str, str]) -> Iterator[str]:
    """`joulebench app` on a free port until it answers (60 s at most); stopped by its PID, with its Streamlit child."""
    port = free_port()
    server = subprocess.Popen([JOULEBENCH, "app", "--port", str(port), "--db", str(db)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://localhost:{port}"
    try:
        deadline = time.monotonic() + 60
        while health(url) != "HTTP 200":
            if server.poll() is not None or time.monotonic() > deadline:
                raise TimeoutError(f"the app did not answer within 60 s (exit code {server.poll()})")
            time.sleep(0.3)
        yield url
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)  # a server that hangs does not stop on SIGTERM
            server.wait(timeout=20)


def health(url: str) -> str:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as answer:
            return f"HTTP {answer.status}"
    except OSError as e:
        return f"no answer ({e})"


def walk(url: str, session: int, until: float, page_timeout_s: float, times: list[tuple[str, float]],
         problems: list[str]) -> None:
    """One session through every page in turn (starting at page session // 2, so pairs of sessions open the
    same page at once) until `until`; each page's time into `times`, what went wrong into `problems`."""
    pages = app_pages()
    try:
        with app_session(url, page_timeout_s) as app:
            k = session // 2
            while time.monotonic() < until:
                title, path = pages[k % len(pages)]
                k += 1
                try:
                    run = app.open(path, page_timeout_s)
                except TimeoutError:
                    problems.append(f"session {session}: {title} did not finish within {page_timeout_s:.0f} s")
                    return
                times.append((title, run.seconds))
                if run.exceptions or run.errors or run.not_found or not run.titles:
                    problems.append(f"session {session} on {title}: exceptions {run.exceptions}, errors "
                                    f"{run.errors}, page not found {run.not_found}")
    except (OSError, TimeoutError) as e:  # the websocket could not open, or closed under the session
        problems.append(f"session {session}: connection failed ({type(e).__name__}: {e})")


def soak_sessions(sessions: int, minutes: float, page_timeout_s: float) -> int:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    times: list[tuple[str, float]] = []
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as tmp_name, app_server(Path(tmp_name) / "soak.duckdb", env) as url:
        started = time.monotonic()
        until = started + minutes * 60
        walkers = [threading.Thread(target=walk, args=(url, i, until, page_timeout_s, times, problems), daemon=True)
                   for i in range(sessions)]
        for w in walkers:
            w.start()
        for w in walkers:
            w.join(timeout=max(0.0, until - time.monotonic()) + page_timeout_s + 15)
        elapsed = time.monotonic() - started
        stuck = sum(w.is_alive() for w in walkers)
        if stuck:
            problems.append(f"{stuck} sessions still waiting {page_timeout_s + 15:.0f} s after the end")
        answer = health(url)
    if answer != "HTTP 200":
        problems.append(f"health check afterwards: {answer}")
    by_page: dict[str, list[float]] = {}
    for title, seconds in times:
        by_page.setdefault(title, []).append(seconds)
    print(f"{sessions} sessions x {minutes:g} min: {len(times)} pages in {elapsed:.0f} s = "
          f"{len(times) / elapsed:.2f} pages/s")
    for title, secs in sorted(by_page.items(), key=lambda item: -max(item[1])):
        print(f"  {title:<22} {len(secs):>4} views, median {statistics.median(secs):6.2f} s, "
              f"slowest {max(secs):6.2f} s")
    if times:
        title, seconds = max(times, key=lambda t: t[1])
        print(f"slowest page: {title}, {seconds:.2f} s")
    print(f"health check afterwards: {answer}")
    for problem in problems[:20]:
        print(f"FAILED: {problem}")
    ok = not problems and bool(times)
    print(f"target: every page within {page_timeout_s:g} s, no error, the server healthy -> "
          f"{'met' if ok else 'NOT met'}")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--imports", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=0, help="sessions at once on every page (the sessions soak)")
    parser.add_argument("--minutes", type=float, default=1.0, help="how long the sessions soak lasts")
    parser.add_argument("--page-timeout", type=float, default=60.0, help="seconds a page may take (sessions soak)")
    args = parser.parse_args()
    from playwright.sync_api import TimeoutError as PageTimeout

    try:
        if args.sessions > 0:
            return soak_sessions(args.sessions, args.minutes, args.page_timeout)
        return soak_imports(args.imports, args.runs)
    except (TimeoutError, subprocess.TimeoutExpired, PageTimeout) as e:  # every wait is bounded: say which ran out
        print(f"FAILED: a wait ran out: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
        return 1


def soak_imports(imports: int, runs: int) -> int:
    from playwright.sync_api import sync_playwright

    env = dict(os.environ, HF_HUB_OFFLINE="1")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        db = tmp / "soak.duckdb"
        open_store(db).close()
        with Store.open(db) as store:
            before = int(store.query("SELECT count(*) AS n FROM runs")["n"][0])
        port = free_port()
        server = subprocess.Popen([JOULEBENCH, "app", "--port", str(port), "--db", str(db)], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"http://localhost:{port}/_stcore/health", timeout=2):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.3)
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
                page = browser.new_page()
                page.goto(f"http://localhost:{port}")
                runs_shown(page)
                started = time.monotonic()
                runners = [subprocess.Popen([JOULEBENCH, "run", "--workload", "bert-tiny", "--batch-size", "1",
                                             "--seq-len", "16", "--steps", "2", "--warmup", "1", "--no-idle",
                                             "--db", str(db)], env=env, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL) for _ in range(runs)]
                queued = 0
                for i in range(imports):
                    doc = json.loads(FIXTURE.read_text())
                    for j, run in enumerate(doc["runs"]):
                        run["run_id"] = f"soak-{i:04d}-{j}"
                    path = tmp / f"soak-{i:04d}.json"
                    path.write_text(json.dumps(doc))
                    done = subprocess.run([JOULEBENCH, "import", str(path), "--db", str(db)], capture_output=True,
                                          text=True, env=env, timeout=120)
                    if done.returncode != 0:
                        print(f"import {i} failed: {done.stderr}")
                        return 1
                    queued += "queued" in done.stdout
                    if i % 5 == 0:
                        rerun(page)
                codes = [r.wait(timeout=600) for r in runners]
                expected = before + 2 * imports + runs
                deadline = time.monotonic() + 120
                shown = runs_shown(page)
                while shown != expected and time.monotonic() < deadline:
                    rerun(page)
                    shown = runs_shown(page)
                elapsed = time.monotonic() - started
                browser.close()
        finally:
            os.killpg(server.pid, 15)
            server.wait(timeout=30)
        rejected = list((inbox_dir(db) / "rejected").glob("*")) if (inbox_dir(db) / "rejected").exists() else []
        print(f"imports: {imports} ({queued} waited in the inbox while the app read), runs: {runs} "
              f"(exit codes {codes}), {elapsed:.0f} s")
        print(f"runs shown by the app: {shown} of {expected} expected; inbox: {len(pending(db))} waiting, "
              f"{len(rejected)} rejected")
        ok = shown == expected and not pending(db) and not rejected and all(c == 0 for c in codes)
        print(f"target: every run visible, an empty inbox, nothing rejected -> {'met' if ok else 'NOT met'}")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
