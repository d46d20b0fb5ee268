"""Every upload accounted for (issue 28 item 7), in a real browser against `joulebench app`: four real files
are imported whether or not the page stays open after "Import 4 files", and a reopened Upload page says
where each one is (read from the server, not from the closed page's session)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.helpers import read_while_served
from tests.test_browser import _body, _wait_text, page, server  # noqa: F401 - the fixtures

pytestmark = pytest.mark.browser
FIXTURES = Path(__file__).parent / "fixtures"
FILES = [FIXTURES / "result_v1_cpu_runs.json", FIXTURES / "result_v1_cost_tradeoff.json",
         FIXTURES / "formats" / "codecarbon" / "lightspec-a100sxm4_emissions.csv",
         FIXTURES / "formats" / "jetson" / "agentmesh-agx-orin_jtop_log.csv"]
ACCOUNTED = ("run added", "runs added", "imported before", "Refused, nothing imported:")


def _states(text: str) -> dict[str, str]:
    """Each file's line in 'Uploads of the last day', by file name."""
    lines = text.split("Uploads of the last day", 1)[-1].splitlines()
    return {f.name: next((line for line in lines if line.startswith(f"{f.name}:") or
                          (f.name in line and line.startswith("Refused"))), "") for f in FILES}


def test_files_are_imported_after_the_page_is_closed_and_a_reload_shows_each(  # type: ignore[no-untyped-def]
        server: str, page, seeded_db: Path) -> None:  # noqa: F811 - the fixtures
    page.goto(f"{server}/upload")
    _wait_text(page, "Drop one or several result files")
    page.set_input_files("input[type=file] >> nth=0", [str(f) for f in FILES])
    for f in FILES:
        _wait_text(page, f.name)
    button = page.get_by_role("button", name="Import 4 files")
    button.wait_for(timeout=60_000)
    button.click()
    page.wait_for_timeout(500)  # the click reaches the server; the user closes the tab at once
    browser = page.context.browser
    page.close()

    again = browser.new_page(viewport={"width": 1400, "height": 1000})
    again.goto(f"{server}/upload")
    _wait_text(again, "Uploads of the last day")
    deadline = time.monotonic() + 90
    while True:  # the page updates itself while files wait: no reload needed
        states = _states(_body(again))
        if all(any(word in line for word in ACCOUNTED) for line in states.values()):
            break
        assert time.monotonic() < deadline, f"not all accounted for: {states}"
        again.wait_for_timeout(500)
    assert all("Refused" not in line for line in states.values()), states
    assert "2 runs added" in states["result_v1_cpu_runs.json"]
    again.reload()  # a reload reads the same states from the server (polled: the table's cells draw after its title)
    _wait_text(again, "Uploads of the last day")
    deadline = time.monotonic() + 60
    while (shown := _states(_body(again))) != states and time.monotonic() < deadline:
        again.wait_for_timeout(500)
    assert shown == states

    names = {row[0] for row in read_while_served(seeded_db, "SELECT file_name FROM sources")}
    assert {f.name for f in FILES} <= names, names
