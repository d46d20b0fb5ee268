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


FIXTURES = Path(__file__).parent / "fixtures"


class _NoStatus:
    log_tail: list[str] = []


@pytest.fixture
def server(seeded_db: Path, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    env = dict(os.environ, JOULEBENCH_DB=str(seeded_db), HF_HUB_OFFLINE="1")
    log = open(tmp_path / "server.log", "w")
    proc = subprocess.Popen([str(Path(sys.executable).with_name("joulebench")), "app", "--port", str(port)],
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
    _shot(page, output_dir / "overview.png")
    assert (output_dir / "overview.png").stat().st_size > 10_000


def _wait_text(page, text: str, timeout_ms: int = 60_000) -> None:  # type: ignore[no-untyped-def]
    page.get_by_text(text, exact=False).first.wait_for(timeout=timeout_ms)


def _shot(page, path: Path) -> None:  # type: ignore[no-untyped-def]
    """Screenshot once the navigation is drawn."""
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Cost & buying guide").wait_for()
    page.screenshot(path=str(path), full_page=True)


def test_compare_two_reference_devices(server: str, page, output_dir: Path) -> None:  # type: ignore[no-untyped-def]
    query = ("workload=bert-large-squad&mode=infer&precision=fp16&seq=384"
             "&device=A100+40GB&device=Tesla+T4&metric=throughput")
    page.goto(f"{server}/compare?{query}")
    _wait_text(page, "faster than Tesla T4")
    page.locator(".js-plotly-plot").first.wait_for()
    assert "A100 40GB" in page.inner_text("body")
    assert "device=A100+40GB" in page.url or "device=A100%2040GB" in page.url  # shareable by link
    _shot(page, output_dir / "compare-a100-vs-t4.png")


def test_upload_an_exported_result_file(server: str, page, output_dir: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from db import Store
    from db.export import Selection, write_result_file
    from ingest import import_file

    other = tmp_path / "colleague.duckdb"
    import_file(FIXTURES / "result_v1_cpu_runs.json", db=other)
    exported = tmp_path / "colleague-export.json.gz"
    with Store.open(other) as store:
        assert write_result_file(store, exported, Selection(source_kinds=("upload",))) == 2
    page.goto(f"{server}/upload")
    _wait_text(page, "Drop one or several result files")
    page.set_input_files("input[type=file]", str(exported))
    _wait_text(page, "colleague-export.json.gz")
    page.get_by_role("button", name="Import 1 file(s)").click()
    _wait_text(page, "2 run(s) added")
    _shot(page, output_dir / "upload.png")


def test_cost_ranking_moves_with_electricity_price(seeded_db: Path, page, output_dir: Path,  # type: ignore[no-untyped-def]
                                                   request: pytest.FixtureRequest) -> None:
    from ingest import import_file

    import_file(FIXTURES / "result_v1_cost_tradeoff.json", db=seeded_db)
    server = request.getfixturevalue("server")
    page.goto(f"{server}/cost")
    _wait_text(page, "Device prices")
    page.get_by_label("Workload").first.click()
    page.keyboard.type("bert-base-squad")
    page.keyboard.press("Enter")
    kwh = page.get_by_label("Electricity price per kWh")
    kwh.fill("0.10")
    kwh.press("Enter")
    _wait_text(page, "Cheapest: Test GPU Frugal")
    _shot(page, output_dir / "cost-cheap-power.png")
    kwh.fill("1.50")
    kwh.press("Enter")
    _wait_text(page, "Cheapest: Test GPU Efficient")
    _shot(page, output_dir / "cost-dear-power.png")
    assert "Cheapest: Test GPU Frugal" not in page.inner_text("body")


def test_start_a_run_see_it_in_compare_then_cancel_one(server: str, page, output_dir: Path,  # type: ignore[no-untyped-def]
                                                       seeded_db: Path) -> None:
    page.goto(f"{server}/new_run")
    _wait_text(page, "Runs on this machine")
    page.get_by_label("Batch size(s)").fill("2")
    page.get_by_label("Measured steps").fill("5")
    page.get_by_role("spinbutton", name="Idle baseline (s), 0 = off").fill("0")
    page.get_by_role("button", name="Start").click()
    _wait_text(page, "run(s) done")  # live progress
    _shot(page, output_dir / "new-run-progress.png")
    _wait_text(page, "Done: 1 run(s) recorded.", timeout_ms=120_000)
    _shot(page, output_dir / "new-run-done.png")
    page.get_by_text("See these runs in Compare").click()
    _wait_text(page, "Showing")
    page.locator(".js-plotly-plot").first.wait_for()
    assert "bert-tiny" in page.url
    _shot(page, output_dir / "new-run-in-compare.png")

    page.goto(f"{server}/new_run")
    _wait_text(page, "Done: 1 run(s) recorded.")
    page.get_by_label("Measured steps").fill("100000")
    page.get_by_role("spinbutton", name="Idle baseline (s), 0 = off").fill("0")
    page.get_by_role("button", name="Start").click()
    _wait_text(page, "0 of 1 run(s) done")
    # let the runner reach its measured loop: on a loaded machine importing torch alone takes longer
    # than a fixed wait, and a Ctrl-C before the run starts leaves nothing to record
    from explorer import jobs

    deadline = time.monotonic() + 120
    while not any("run 1/1" in line for line in (jobs.status(seeded_db) or _NoStatus).log_tail):
        assert time.monotonic() < deadline, "the runner did not start its run"
        time.sleep(0.3)
    page.get_by_role("button", name="Cancel run").click()
    _wait_text(page, "Cancelled: 1 run(s) recorded", timeout_ms=60_000)
    _shot(page, output_dir / "new-run-cancelled.png")


def test_run_detail_shows_the_trust_grade_and_its_reasons(seeded_db: Path, page, output_dir: Path,  # type: ignore[no-untyped-def]
                                                          request: pytest.FixtureRequest) -> None:
    from db import Store
    from ingest import import_file

    import_file(FIXTURES / "h100" / "repeats-short-windows.json", db=seeded_db)
    with Store.open_read_only(seeded_db) as store:
        run_id = store.query("SELECT run_id FROM runs WHERE origin_file_name = 'repeats-short-windows.json' "
                             "AND workload != 'idle' ORDER BY started_at LIMIT 1").item()
    server = request.getfixturevalue("server")
    page.goto(f"{server}/run_detail?run_id={run_id}")
    _wait_text(page, "Trust grade D")
    _wait_text(page, "Why this grade")
    _wait_text(page, "This configuration: 5 of 5 run(s) ok")
    _wait_text(page, "Provenance")  # the last section: the page is drawn
    body = page.inner_text("body")
    assert "Aggregate trust grade D" in body and "This configuration: 5 of 5 run(s) ok" in body
    assert "configuration: 0.5789 ± 0.076 (n 5)" in body  # the repeats' mean with its 95 % interval
    _shot(page, output_dir / "run-detail-grade.png")
