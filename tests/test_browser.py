"""End to end in a real browser: Debian's Chromium driven by Playwright against `joulebench app`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import free_port

pytestmark = pytest.mark.browser
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


@pytest.fixture
def server(seeded_db: Path, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    env = dict(os.environ, JOULEBENCH_DB=str(seeded_db), HF_HUB_OFFLINE="1")
    log = open(tmp_path / "server.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "joulebench", "app", "--port", str(port)],
                            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://localhost:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"app did not start: {(tmp_path / 'server.log').read_text()}")
            time.sleep(0.3)
        yield url
    finally:
        os.killpg(proc.pid, 15)  # the CLI and the Streamlit server it started
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
        log.close()


@pytest.fixture
def page(output_dir: Path):  # type: ignore[no-untyped-def]
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is missing: `make test` installs it (apt-get install chromium)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            yield page
        finally:
            browser.close()


def test_overview_renders_reference_data_in_a_real_browser(server: str, page, output_dir: Path) -> None:  # type: ignore[no-untyped-def]
    page.goto(server)
    page.get_by_role("heading", name="JouleBench").wait_for(timeout=60_000)
    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
    page.wait_for_timeout(1500)
    body = page.inner_text("body")
    assert "BERT-Large question answering" in body
    assert "A100 40GB" in page.locator(".js-plotly-plot").first.inner_text() or "A100 40GB" in body
    page.screenshot(path=str(output_dir / "overview.png"), full_page=True)
    assert (output_dir / "overview.png").stat().st_size > 10_000
