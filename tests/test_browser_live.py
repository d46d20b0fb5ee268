"""The app in a real browser while other processes write (issue 9, cases 9 and 10): a CLI import
shows on the next rerun, the inbox is drained while the app is open, a foreign Host is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from db import Store
from ingest.inbox import pending
from tests.helpers import free_port
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, FIXTURES, page, server  # noqa: F401 - fixtures

pytestmark = pytest.mark.browser
JOULEBENCH = str(Path(sys.executable).with_name("joulebench"))


def _runs_shown(view: Any) -> int:
    metric = view.locator('[data-testid="stMetric"]').filter(has_text="Runs").first
    metric.wait_for(timeout=60_000)
    return int(metric.locator('[data-testid="stMetricValue"]').inner_text().replace(",", ""))


def _go(view: Any, link: str, heading: str) -> None:
    """Through the navigation to a page, until its heading shows. A click the browser sends while the
    websocket reconnects (a loaded machine: the run beside it loads torch) is lost, so a page that has not
    come in 120 s is asked for once more; the app itself still has 60 s."""
    view.get_by_role("link", name=link, exact=True).first.click()
    try:
        view.get_by_role("heading", name=heading, exact=True).wait_for(timeout=120_000)
    except Exception:
        view.get_by_role("link", name=link, exact=True).first.click()
        view.get_by_role("heading", name=heading, exact=True).wait_for(timeout=60_000)


def _rerun(view: Any, url: str) -> None:
    """A rerun in the same browser session: to another page and back through the navigation."""
    _go(view, "Devices", "Devices")
    _go(view, "Overview", "JouleBench")


def _import(path: Path, db: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([JOULEBENCH, "import", str(path), "--db", str(db)], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, HF_HUB_OFFLINE="1"))


def test_a_cli_import_shows_on_the_next_rerun(server: str, page: Any, seeded_db: Path) -> None:  # noqa: F811
    page.goto(server)
    before = _runs_shown(page)
    done = _import(FIXTURES / "result_v1_cpu_runs.json", seeded_db)
    assert done.returncode == 0, done.stderr
    _rerun(page, server)
    deadline = time.monotonic() + 30
    while _runs_shown(page) != before + 2 and time.monotonic() < deadline:
        _rerun(page, server)
    assert _runs_shown(page) == before + 2


def _variant(i: int, tmp_path: Path) -> Path:
    """The fixture with fresh run ids: a distinct file with two runs."""
    doc = json.loads((FIXTURES / "result_v1_cpu_runs.json").read_text())
    for j, run in enumerate(doc["runs"]):
        run["run_id"] = f"soak-{i:03d}-{j}"
    path = tmp_path / f"soak-{i:03d}.json"
    path.write_text(json.dumps(doc))
    return path


def test_imports_and_a_run_while_the_app_is_open_all_show_and_the_inbox_ends_empty(
        server: str, page: Any, seeded_db: Path, tmp_path: Path) -> None:  # noqa: F811
    """A small soak (benchmarks/soak_app.py runs 100 imports and 5 runs): the page reruns the whole
    time, so imports meet an app reading the database and some are queued; every one ends in."""
    page.goto(server)
    before = _runs_shown(page)
    files = [_variant(i, tmp_path) for i in range(12)]
    run = subprocess.Popen([JOULEBENCH, "run", "--workload", "bert-tiny", "--batch-size", "1", "--seq-len", "16",
                            "--steps", "2", "--warmup", "1", "--no-idle", "--db", str(seeded_db)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=dict(os.environ, HF_HUB_OFFLINE="1"))
    statuses = []
    for path in files:
        done = _import(path, seeded_db)
        assert done.returncode == 0, done.stderr
        statuses.append("queued" if "queued" in done.stdout else "imported")
        _rerun(page, server)
    assert run.wait(timeout=300) == 0, run.communicate()[1]
    expected = before + 2 * len(files) + 1
    deadline = time.monotonic() + 60
    while _runs_shown(page) != expected and time.monotonic() < deadline:
        _rerun(page, server)
    assert _runs_shown(page) == expected, statuses
    assert pending(seeded_db) == []
    with Store.open(seeded_db) as store:
        assert store.query("SELECT count(*) AS n FROM runs WHERE run_id LIKE 'soak-%'")["n"][0] == 2 * len(files)


@pytest.fixture
def rebinding_page(output_dir: Path) -> Iterator[Any]:  # noqa: ARG001
    """A browser that resolves evil.example to this machine, as a DNS-rebinding attack would."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=[*CHROMIUM_ARGS, "--host-resolver-rules=MAP evil.example 127.0.0.1"])
        try:
            yield browser.new_page(viewport={"width": 1400, "height": 1000})
        finally:
            browser.close()


def test_a_page_reached_through_another_host_name_shows_nothing(server: str, rebinding_page: Any) -> None:  # noqa: F811
    port = server.rsplit(":", 1)[1]
    rebinding_page.goto(f"http://evil.example:{port}")
    rebinding_page.get_by_text("does not answer to this host name").wait_for(timeout=60_000)
    body = rebinding_page.inner_text("body")
    assert "Runs" not in body and "New run" not in body


def test_a_non_local_address_needs_a_password(tmp_path: Path) -> None:
    done = subprocess.run([JOULEBENCH, "app", "--address", "0.0.0.0", "--port", str(free_port()),
                           "--db", str(tmp_path / "x.duckdb")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "set a password first: --password-file FILE" in done.stderr
