"""End to end in a real browser: Debian's Chromium driven by Playwright against `joulebench app`.

Each test is a user's task with the answer checked on the page. `test_screenshots_of_every_page`
takes every page at desktop and phone width (with JOULEBENCH_UPDATE_SCREENSHOTS=1 into
docs/screenshots/<page>-1400.png and -390.png).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import free_port, read_while_served

pytestmark = pytest.mark.browser
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
FIXTURES = Path(__file__).parent / "fixtures"
DOCS_SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
STUDENT = "device=GeForce+RTX+3060&device=Jetson+AGX+Xavier"
MAX_SHOT_HEIGHT = 5000
UPDATE_DOCS = os.environ.get("JOULEBENCH_UPDATE_SCREENSHOTS") == "1"


@pytest.fixture
def server(seeded_db: Path, tmp_path: Path) -> Iterator[str]:
    with app_server([], dict(os.environ, JOULEBENCH_DB=str(seeded_db), HF_HUB_OFFLINE="1"), tmp_path) as url:
        yield url


@pytest.fixture(scope="module")
def _shared_servers(tmp_path_factory: pytest.TempPathFactory, seeded_template: Path) -> Iterator[SharedServers]:
    with contextlib.ExitStack() as stack:
        yield SharedServers(stack, tmp_path_factory, seeded_template)


class SharedServers:
    """The apps this file's tests that only read share, each started once, the first time a test asks for it
    (a test that writes to the store starts its own `server`): starting the app is most of such a test's time,
    and each test still meets the pages in a browser session of its own. Every one is stopped by its PID at the
    end of the file."""

    # a shared app's database: the seeded one plus these files of tests/fixtures/h100
    IMPORTS = {"seeded": (), "h100": ("repeats-short-windows.json", "repeats-10s-windows.json")}

    def __init__(self, stack: contextlib.ExitStack, factory: pytest.TempPathFactory, template: Path) -> None:
        self.stack, self.factory, self.template = stack, factory, template
        self.urls: dict[str, str] = {}
        self.logs: dict[str, Path] = {}
        self.dbs: dict[str, Path] = {}

    def url(self, name: str) -> Iterator[str]:
        from ingest import import_file

        if name not in self.urls:
            folder = self.factory.mktemp(f"server-{name}")
            db = folder / "seeded.duckdb"
            shutil.copy(self.template, db)
            for file in self.IMPORTS[name]:
                import_file(FIXTURES / "h100" / file, db=db)
            env = dict(os.environ, JOULEBENCH_DB=str(db), HF_HUB_OFFLINE="1", XDG_DATA_HOME=str(folder / "xdg"))
            self.urls[name] = self.stack.enter_context(app_server([], env, folder))
            self.logs[name], self.dbs[name] = folder / "server.log", db
        yield self.urls[name]
        # a test that fails shows the shared server's account, as a test with a server of its own does
        print("server log (last 60 lines):", *self.logs[name].read_text().splitlines()[-60:], sep="\n")


@pytest.fixture
def read_only_server(_shared_servers: SharedServers) -> Iterator[str]:
    """This file's shared app on a seeded database, for a test that only reads."""
    yield from _shared_servers.url("seeded")


@pytest.fixture
def h100_server(_shared_servers: SharedServers) -> Iterator[str]:
    """This file's shared app on a seeded database holding the H100 repeats (short and 10 s windows), for a test
    that only reads."""
    yield from _shared_servers.url("h100")


@pytest.fixture
def h100_db(h100_server: str, _shared_servers: SharedServers) -> Path:
    """The database `h100_server` serves (read it with tests.helpers.read_while_served)."""
    return _shared_servers.dbs["h100"]


@contextlib.contextmanager
def app_server(args: list[str], env: dict[str, str], log_dir: Path) -> Iterator[str]:
    """`joulebench app ARGS` on a free localhost port, until it answers; stopped by its PID (with the Streamlit
    server it started)."""
    port = free_port()
    log = open(log_dir / "server.log", "w")
    proc = subprocess.Popen([str(Path(sys.executable).with_name("joulebench")), "app", "--port", str(port), *args],
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
                raise RuntimeError(f"app did not start: {(log_dir / 'server.log').read_text()}")
            time.sleep(0.3)
        yield url
    finally:
        os.killpg(proc.pid, 15)  # the CLI and the Streamlit server it started
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
        log.close()
        # pytest shows a test's captured output only when it fails: then the server's own account is there
        print("server log (last 60 lines):", *(log_dir / "server.log").read_text().splitlines()[-60:], sep="\n")


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


def _wait_text(page, text: str, timeout_ms: int = 60_000) -> None:  # type: ignore[no-untyped-def]
    page.get_by_text(text, exact=False).first.wait_for(timeout=timeout_ms)


def _settled(page) -> None:  # type: ignore[no-untyped-def]
    """The page's script finished its rerun (no 'running' indicator) and the charts are drawn."""
    page.wait_for_timeout(300)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=60_000)
    page.wait_for_timeout(700)


def _body(page) -> str:  # type: ignore[no-untyped-def]
    return str(page.inner_text("body"))


def _shot(page, path: Path) -> None:  # type: ignore[no-untyped-def]
    """Screenshot the whole page once it is drawn (the viewport stretched to the content, which
    Streamlit scrolls inside its own container)."""
    page.locator('[data-testid="stSidebarNav"], [data-testid="stSidebarCollapsedControl"], '
                 '[data-testid="stExpandSidebarButton"]').first.wait_for(state="attached")
    _settled(page)
    width = page.viewport_size["width"]
    height = page.evaluate("() => Math.max(...[...document.querySelectorAll("
                           "'[data-testid=stMain], [data-testid=stAppViewContainer]')].map(e => e.scrollHeight), 600)")
    page.set_viewport_size({"width": width, "height": min(int(height) + 40, MAX_SHOT_HEIGHT)})
    page.wait_for_timeout(800 if UPDATE_DOCS else 200)  # the docs' shots get the relayout's full time
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size({"width": width, "height": 1000})


def _set_number(page, label: str, value: str) -> None:  # type: ignore[no-untyped-def]
    box = page.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Enter")
    _settled(page)


def _pick(page, label: str, option: str) -> None:  # type: ignore[no-untyped-def]
    """Choose an option of a multiselect the way a user does: open it, type, press Enter. The page's rerun is
    let finish first: a rerun that lands after the click redraws the widget and closes its list."""
    _settled(page)
    for attempt in range(3):  # a rerun still landing on a loaded machine can close the list: open it again
        box = page.get_by_label(label, exact=True).first  # never a heading whose text holds the label ("All devices")
        box.click()
        box.fill("")  # what an earlier attempt typed, cleared (Backspace would remove a chosen option)
        page.keyboard.type(option)
        try:
            page.get_by_role("option", name=option, exact=True).first.click(timeout=15_000)
            break
        except Exception:
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
            _settled(page)
    page.keyboard.press("Escape")
    _settled(page)


def test_overview_renders_reference_data_in_a_real_browser(read_only_server: str, page, output_dir: Path) -> None:  # type: ignore[no-untyped-def]
    page.goto(read_only_server)
    page.get_by_role("heading", name="JouleBench").wait_for(timeout=60_000)
    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
    page.wait_for_timeout(1500)
    body = _body(page)
    assert "BERT-Large question answering" in body and "Decide what to buy" in body
    _shot(page, output_dir / "overview.png")
    assert (output_dir / "overview.png").stat().st_size > 10_000


def test_student_decides_between_rtx3060_and_jetson_agx_xavier(read_only_server: str, page, output_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """On a fresh database: RTX 3060 vs Jetson AGX Xavier, training, 0.30 per kWh, 3 years."""
    page.goto(f"{read_only_server}/decide")
    _wait_text(page, "Pick at least two devices")
    _pick(page, "Candidate devices (2 to 6)", "GeForce RTX 3060")
    _pick(page, "Candidate devices (2 to 6)", "Jetson AGX Xavier")
    page.get_by_text("Training", exact=True).click()
    _set_number(page, "Electricity price (USD per kWh)", "0.30")
    _set_number(page, "Lifetime (years)", "3")
    _set_number(page, "Utilisation (% of the time busy)", "10")
    _wait_text(page, "at 10% utilisation over 3 years")
    low = _body(page)
    # which is faster, by how much, on what basis
    assert re.search(r"Faster: GeForce RTX 3060 is faster at training than Jetson AGX Xavier: 3\.0x "
                     r"\(stated ratio", low)
    # which uses fewer joules, on what basis
    assert re.search(r"Fewer joules: Jetson AGX Xavier uses fewer joules than GeForce RTX 3060: 1\.5x "
                     r"\(reference table, grade C on both sides: 283 vs 420 J per iteration, at the wall", low)
    # the cost per 1M samples of each, in one currency, with its basis
    costs = re.search(r"Cost per 1M samples at 10% utilisation over 3 years, 0\.3 USD per kWh: "
                      r"GeForce RTX 3060 ([\d.,]+) USD \(estimate\); Jetson AGX Xavier ([\d.,]+) USD \([^)]*\)", low)
    assert costs, low[:3000]
    assert "CAD" not in low.split("Every figure")[0]  # one currency in the answer
    # the duty cycle at 10%: idle most of the time
    assert "each device idles 90% of the time" in low and "(26 W idle)" in low and "(6 W idle)" in low
    assert "Every figure, with its basis" in low
    _shot(page, output_dir / "decide-student-10pct.png")

    _set_number(page, "Utilisation (% of the time busy)", "90")
    _wait_text(page, "at 90% utilisation over 3 years")
    high = _body(page)
    assert "each device idles 10% of the time" in high and "hardware dominates" in high  # the Jetson's price
    costs_high = re.search(r"GeForce RTX 3060 ([\d.,]+) USD \(estimate\); Jetson AGX Xavier ([\d.,]+) USD", high)
    assert costs_high and float(costs_high.group(1)) < float(costs.group(1))  # busier: cheaper per sample
    assert "util=0.9" in page.url and "kwh=0.3" in page.url  # the decision is a link
    _shot(page, output_dir / "decide-student-90pct.png")


def test_compare_with_only_the_two_devices_shows_data(read_only_server: str, page, output_dir: Path) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{read_only_server}/compare")
    _wait_text(page, "What the data holds")
    _pick(page, "Device", "GeForce RTX 3060")
    _pick(page, "Device", "Jetson AGX Xavier")
    _wait_text(page, "What the sources state")
    page.locator(".js-plotly-plot").first.wait_for()
    body = _body(page)
    assert "No run in this selection" not in body
    assert "has 3x the throughput of Jetson AGX Xavier" in body and "Performance Analysis" in body
    assert "device=GeForce+RTX+3060" in page.url
    _shot(page, output_dir / "compare-rtx3060-vs-agx.png")


def test_compare_a100_and_t4_by_link_shows_a_multi_metric_table(read_only_server: str, page, output_dir: Path) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{read_only_server}/compare?device=A100+40GB&device=Tesla+T4")
    _wait_text(page, "All devices, several metrics")
    _wait_text(page, "faster than Tesla T4")
    page.locator(".js-plotly-plot").first.wait_for()
    header = page.locator('[data-testid="stDataFrame"] [role="columnheader"]')
    for name in ("Throughput (samples/s)", "Device", "Runs", "Precision", "Batch"):  # each, as the grid draws it:
        header.filter(has_text=name).first.wait_for(state="attached", timeout=60_000)  # on a busy machine, late
    headers = header.all_inner_texts()
    assert {"Device", "Throughput (samples/s)", "Runs", "Precision", "Batch"} <= set(headers)
    assert "No run in this selection" not in _body(page)
    _shot(page, output_dir / "compare-a100-vs-t4.png")


def test_a_device_named_with_markdown_shows_as_text(seeded_db: Path, page, request: pytest.FixtureRequest) -> None:  # type: ignore[no-untyped-def]
    from ingest import import_file

    evil = "![x](http://example.invalid/a.png)"
    doc = json.loads((FIXTURES / "result_v1_cost_tradeoff.json").read_text())
    doc["devices"][0]["name"] = evil
    for run in doc["runs"]:
        if run["device"]["name"] == "Test GPU Frugal":
            run["device"]["name"] = evil
    path = seeded_db.parent / "evil.json"
    path.write_text(json.dumps(doc))
    import_file(path, db=seeded_db)
    server = request.getfixturevalue("server")
    page.goto(f"{server}/decide?device=%21%5Bx%5D%28http%3A%2F%2Fexample.invalid%2Fa.png%29"
              "&device=Test+GPU+Efficient&mode=infer&job=workload%3Abert-base-squad")
    _wait_text(page, "The answer for")
    assert evil in _body(page).replace("\u2060", "")  # shown as written (an invisible joiner keeps URLs text)
    assert page.locator('img[src*="example.invalid"]').count() == 0
    assert page.locator('a[href^="http://example.invalid"]').count() == 0  # no link made of it


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
    page.get_by_role("button", name="Import 1 file").click()
    _wait_text(page, "2 runs added")
    _shot(page, output_dir / "upload.png")


def test_cost_ranking_moves_with_electricity_price(seeded_db: Path, page, output_dir: Path,  # type: ignore[no-untyped-def]
                                                   request: pytest.FixtureRequest) -> None:
    from ingest import import_file

    import_file(FIXTURES / "result_v1_cost_tradeoff.json", db=seeded_db)
    server = request.getfixturevalue("server")
    page.goto(f"{server}/cost?workload=bert-base-squad&mode=infer")
    _wait_text(page, "Ranking for bert-base-squad")
    _set_number(page, "Electricity price (USD per kWh)", "0.10")
    _wait_text(page, "Cheapest: Test GPU Frugal")
    assert re.search(r"Cheapest: Test GPU Frugal at [\d.]+ USD per 1M samples", _body(page))
    _shot(page, output_dir / "cost-cheap-power.png")
    _set_number(page, "Electricity price (USD per kWh)", "1.50")
    _wait_text(page, "Cheapest: Test GPU Efficient")
    _shot(page, output_dir / "cost-dear-power.png")
    assert "Cheapest: Test GPU Frugal" not in _body(page)
    assert "kwh=1.5" in page.url


def test_start_a_run_see_it_in_compare_then_cancel_one(server: str, page, output_dir: Path,  # type: ignore[no-untyped-def]
                                                       seeded_db: Path) -> None:
    page.goto(f"{server}/new_run")
    _wait_text(page, "Runs on this machine")
    page.get_by_label("Batch size(s)").fill("2")
    page.get_by_label("Measured steps").fill("5")
    page.get_by_role("spinbutton", name="Idle baseline (s), 0 = off").fill("0")
    page.get_by_role("button", name="Start", exact=True).click()
    _wait_text(page, "0 of 1 run done")  # live progress, the idle baseline not counted
    _shot(page, output_dir / "new-run-progress.png")
    _wait_text(page, "Done: 1 run recorded (1 measured).", timeout_ms=120_000)
    _shot(page, output_dir / "new-run-done.png")
    page.get_by_text("See this run in Compare").click()
    _wait_text(page, "1 of ")
    page.locator(".js-plotly-plot").first.wait_for()
    assert "run=" in page.url and "No run in this selection" not in _body(page)
    assert "bert-tiny" in _body(page)
    _shot(page, output_dir / "new-run-in-compare.png")

    page.goto(f"{server}/new_run")
    _wait_text(page, "Done: 1 run recorded (1 measured).")
    page.get_by_label("Measured steps").fill("100000")
    page.get_by_role("spinbutton", name="Idle baseline (s), 0 = off").fill("0")
    page.get_by_role("button", name="Start", exact=True).click()
    _wait_text(page, "0 of 1 run done")
    _wait_text(page, "measured step", timeout_ms=60_000)  # the runner's own step progress
    page.get_by_text(re.compile(r"about [\d.]+ (s|min|h) left")).first.wait_for(timeout=90_000)  # its time left
    page.get_by_role("button", name="Cancel run").click()
    _wait_text(page, "Cancelled: 1 run recorded (1 measured); the measured run was interrupted", timeout_ms=60_000)
    _shot(page, output_dir / "new-run-cancelled.png")


# Every page, as a user reaches it, for docs/screenshots at desktop and phone width.
PAGES = [
    ("overview", ""),
    ("decide", f"decide?{STUDENT}&mode=train&kwh=0.3&years=3&util=0.5&currency=USD"),
    ("compare", f"compare?{STUDENT}"),
    ("run-detail", "run_detail?run_id=ref%3Aruns_rtx3060_vs_agx_xavier%3Artx3060-pl100-infer-fp16-energy"),
    ("new-run", "new_run"),
    ("upload", "upload"),
    ("cost", "cost?workload=bert-large-squad&mode=infer&tdp=1"),
    ("devices", "devices"),
]


def test_screenshots_of_every_page(read_only_server: str, page, output_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """Every page at desktop and phone width, none with an error. The shots go to test-output/;
    with JOULEBENCH_UPDATE_SCREENSHOTS=1 they refresh docs/screenshots (a test run leaves the
    checkout as it was)."""
    folder = DOCS_SHOTS if UPDATE_DOCS else output_dir / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    for width in (1400, 390):
        page.set_viewport_size({"width": width, "height": 1000})
        for name, path in PAGES:
            page.goto(f"{read_only_server}/{path}")
            page.locator("h1").first.wait_for(timeout=60_000)
            if name in ("overview", "decide", "compare"):
                page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
            body = _body(page)
            assert "Traceback" not in body and "Error" not in body.split("\n")[0], name
            shot = folder / f"{name}-{width}.png"
            _shot(page, shot)
            assert shot.stat().st_size > 5_000, shot
    if UPDATE_DOCS:
        shutil.copy(DOCS_SHOTS / "overview-1400.png", DOCS_SHOTS.parent / "screenshot-overview.png")


def test_run_detail_shows_the_trust_grade_and_its_reasons(h100_server: str, h100_db: Path, page,  # type: ignore[no-untyped-def]
                                                          output_dir: Path) -> None:
    [(run_id,)] = read_while_served(h100_db, "SELECT run_id FROM runs WHERE origin_file_name = "
                                    "'repeats-short-windows.json' AND workload != 'idle' ORDER BY started_at LIMIT 1")
    page.goto(f"{h100_server}/run_detail?run_id={run_id}")
    _wait_text(page, "Trust grade D")
    _wait_text(page, "Why this grade")
    _wait_text(page, "This configuration: 5 of 5 runs ok")
    _wait_text(page, "Provenance")  # the last section: the page is drawn
    body = page.inner_text("body")
    assert "Aggregate trust grade D" in body and "This configuration: 5 of 5 runs ok" in body
    assert "configuration: 0.5789 ± 0.076 (n 5)" in body  # the repeats' mean with its 95 % interval
    _shot(page, output_dir / "run-detail-grade.png")


def test_compare_shows_the_spread_of_repeats_and_whether_a_difference_is_noise(  # type: ignore[no-untyped-def]
        h100_server: str, page, output_dir: Path) -> None:
    """An engineer asks: do the short default windows read less energy than 10 s windows, or is
    that noise? Compare answers with error bars, grades and a ratio with its interval."""
    page.goto(f"{h100_server}/compare?device=NVIDIA+H100+80GB+HBM3&workload=bert-large-squad&precision=fp16&batch=8"
              "&metric=j_per_sample")
    _wait_text(page, "within the noise")
    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
    # plotly draws the bars' error bars after the plot's frame: wait for the second, not only the first plot
    page.locator(".js-plotly-plot .errorbar").nth(1).wait_for(state="attached", timeout=60_000)
    assert page.locator(".js-plotly-plot .errorbar").count() >= 2  # one interval per configuration's bar
    body = _body(page)
    assert re.search(r"are level on energy per example: .* = 0\.90x \(0\.\d\d-1\.\d\d\), within the noise", body)
    assert "A ratio here rests on figures graded D" in body and "What the grades mean" in body
    _shot(page, output_dir / "compare-error-bars.png")
