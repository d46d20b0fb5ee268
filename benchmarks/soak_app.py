"""Soak: imports and runs from the command line while the app is open and rerunning.

    .venv/bin/python benchmarks/soak_app.py [--imports 100] [--runs 5]

Starts `joulebench app` on a fresh seeded database, keeps a headless Chromium rerunning the
Overview (every import meets an app that reads the database), imports N distinct result files
with `joulebench import` (each its own process) and starts M bert-tiny runs with `joulebench run`,
then waits for the page to show every run. Prints how many files were imported at once and how
many waited in the inbox, and the target: every run visible, an empty inbox, nothing rejected.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from db import Store  # noqa: E402
from ingest import open_store  # noqa: E402
from ingest.inbox import pending  # noqa: E402
from joulebench.paths import inbox_dir  # noqa: E402

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--imports", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
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
                                            stderr=subprocess.DEVNULL) for _ in range(args.runs)]
                queued = 0
                for i in range(args.imports):
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
                expected = before + 2 * args.imports + args.runs
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
        print(f"imports: {args.imports} ({queued} waited in the inbox while the app read), runs: {args.runs} "
              f"(exit codes {codes}), {elapsed:.0f} s")
        print(f"runs shown by the app: {shown} of {expected} expected; inbox: {len(pending(db))} waiting, "
              f"{len(rejected)} rejected")
        ok = shown == expected and not pending(db) and not rejected and all(c == 0 for c in codes)
        print(f"target: every run visible, an empty inbox, nothing rejected -> {'met' if ok else 'NOT met'}")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
