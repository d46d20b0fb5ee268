"""Soak: many sessions on one app server, or imports and runs while the app is open.

    .venv/bin/python benchmarks/soak_app.py --sessions 4 --minutes 1
    .venv/bin/python benchmarks/soak_app.py [--imports 100] [--runs 5]
    .venv/bin/python benchmarks/soak_app.py --sessions 1 --minutes 0.05; ... --imports 1 --runs 0  # smallest

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

Both modes exit with code 1 when the target is not met (their convention: the target is that nothing fails).
Every wait is time-limited: the app's start, each import and run, each browser wait (--wait-limit-s), each page
of the sessions soak (--page-timeout), the whole run (--limit-s); one that runs out prints `FAILED: <what> after
N s` on stderr, and the app, the runs and the browser are stopped by their PIDs.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import waits  # noqa: E402

from db import Store  # noqa: E402
from ingest import open_store  # noqa: E402
from ingest.inbox import pending  # noqa: E402
from joulebench.paths import inbox_dir  # noqa: E402
from tests.helpers import app_pages, app_session  # noqa: E402

JOULEBENCH = waits.JOULEBENCH
FIXTURE = REPO / "tests" / "fixtures" / "result_v1_cpu_runs.json"


def runs_shown(page, wait_s: float) -> int:  # type: ignore[no-untyped-def]
    metric = page.locator('[data-testid="stMetric"]').filter(has_text="Runs").first
    with waits.browser_wait("the Overview's Runs figure", wait_s):
        metric.wait_for(timeout=wait_s * 1000)
        return int(metric.locator('[data-testid="stMetricValue"]').inner_text(timeout=wait_s * 1000).replace(",", ""))


def rerun(page, wait_s: float) -> None:  # type: ignore[no-untyped-def]
    with waits.browser_wait("the Devices page, then the Overview, in the browser", wait_s):
        page.get_by_role("link", name="Devices").first.click(timeout=wait_s * 1000)
        page.get_by_role("heading", name="Devices").wait_for(timeout=wait_s * 1000)
        page.get_by_role("link", name="Overview").first.click(timeout=wait_s * 1000)
        page.get_by_role("heading", name="JouleBench").wait_for(timeout=wait_s * 1000)


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
                    problems.append(f"session {session}: {title} to finish after {page_timeout_s:g} s")
                    return
                times.append((title, run.seconds))
                if run.exceptions or run.errors or run.not_found or not run.titles:
                    problems.append(f"session {session} on {title}: exceptions {run.exceptions}, errors "
                                    f"{run.errors}, page not found {run.not_found}")
    except (OSError, TimeoutError) as e:  # the websocket could not open, or closed under the session
        problems.append(f"session {session}: connection failed ({type(e).__name__}: {e})")


def soak_sessions(sessions: int, minutes: float, page_timeout_s: float, wait_s: float) -> int:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    times: list[tuple[str, float]] = []
    problems: list[str] = []
    with (tempfile.TemporaryDirectory() as tmp_name,
          waits.app_server(Path(tmp_name) / "soak.duckdb", env, wait_s) as url):
        started = time.monotonic()
        until = started + minutes * 60
        walkers = [threading.Thread(target=walk, args=(url, i, until, page_timeout_s, times, problems), daemon=True)
                   for i in range(sessions)]
        for w in walkers:
            w.start()
        try:
            waits.join(walkers, max(0.0, until - time.monotonic()) + page_timeout_s + 15, "every session to end")
        except waits.WaitExceeded as e:
            problems.append(f"{e} ({sum(w.is_alive() for w in walkers)} still waiting)")
        elapsed = time.monotonic() - started
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
        print(f"FAILED: {problem}", file=sys.stderr, flush=True)
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
    waits.add_limits(parser, limit_s=3600, wait_s=120)
    args = parser.parse_args()
    if args.sessions > 0:
        return waits.main(lambda: soak_sessions(args.sessions, args.minutes, args.page_timeout, args.wait_limit_s),
                          args.limit_s)
    return waits.main(lambda: soak_imports(args.imports, args.runs, args.wait_limit_s), args.limit_s)


def soak_imports(imports: int, runs: int, wait_s: float) -> int:
    from playwright.sync_api import sync_playwright

    env = dict(os.environ, HF_HUB_OFFLINE="1")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        db = tmp / "soak.duckdb"
        open_store(db).close()
        with Store.open(db) as store:
            before = int(store.query("SELECT count(*) AS n FROM runs")["n"][0])
        runners: list[subprocess.Popen[bytes]] = []
        with waits.app_server(db, env, wait_s) as url, sync_playwright() as pw:
            with waits.browser_wait("Chromium to start", waits.BROWSER_START_S):
                browser = pw.chromium.launch(executable_path=waits.CHROMIUM, headless=True, args=waits.CHROMIUM_ARGS,
                                             timeout=waits.BROWSER_START_S * 1000)
            try:
                page = browser.new_page()
                with waits.browser_wait("the Overview to load", wait_s):
                    page.goto(url, timeout=wait_s * 1000)
                runs_shown(page, wait_s)
                started = time.monotonic()
                runners = [waits.popen([JOULEBENCH, "run", "--workload", "bert-tiny", "--batch-size", "1",
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
                    done = waits.run([JOULEBENCH, "import", str(path), "--db", str(db)], wait_s,
                                     f"`joulebench import` of file {i}", capture_output=True, text=True, env=env)
                    if done.returncode != 0:
                        raise waits.BenchmarkFailed(f"`joulebench import` of file {i} exited with code "
                                                    f"{done.returncode}: {done.stderr}")
                    queued += "queued" in done.stdout
                    if i % 5 == 0:
                        rerun(page, wait_s)
                codes = [waits.wait_process(r, wait_s, f"`joulebench run` {k}") for k, r in enumerate(runners)]
                expected = before + 2 * imports + runs
                deadline = time.monotonic() + wait_s  # a result, not a failure: the page shows what it shows then
                shown = runs_shown(page, wait_s)
                while shown != expected and time.monotonic() < deadline:
                    rerun(page, wait_s)
                    shown = runs_shown(page, wait_s)
                elapsed = time.monotonic() - started
            finally:
                for r in runners:
                    waits.stop(r)
                browser.close()
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
