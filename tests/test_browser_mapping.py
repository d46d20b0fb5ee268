"""Map it in the browser (issue 39), against `joulebench app` in a real Chromium: a CSV whose headers no reader knows
is refused with the mapping form; one choice (the latency is a median, not a mean) and Import store its runs and the
recipe; a second file of the same shape is then read by the saved recipe without a question (said on the page), and
both files' runs show on Compare with their values."""

from __future__ import annotations

import time
import urllib.parse
from pathlib import Path

import pytest

from tests.helpers import read_while_served
from tests.test_browser import _body, _settled, _wait_text, page, server  # noqa: F401 - the fixtures

pytestmark = pytest.mark.browser
HEADER = "gpu_label,tok_rate,joules_per_tok,lat_first\n"
FIRST = HEADER + "Jetson AGX Orin 64GB,21.5,0.42,180\nJetson AGX Orin 64GB,23.25,0.4,175\n"
SECOND = HEADER + "Jetson AGX Orin 64GB,31.75,0.35,140\n"
NAME = "orin bench logger"


def _choose(tab, label: str, option: str) -> None:  # type: ignore[no-untyped-def]
    """A selectbox's option, as a user picks it: open, type, click the option."""
    _settled(tab)
    for attempt in range(3):
        box = tab.get_by_label(label, exact=True).filter(visible=True).first  # not the folded hints' "Mode"
        box.click()
        tab.keyboard.type(option[:12])
        try:
            tab.get_by_role("option", name=option, exact=True).first.click(timeout=15_000)
            break
        except Exception:
            if attempt == 2:
                raise
    _settled(tab)


def _cells(tab) -> str:  # type: ignore[no-untyped-def]
    """The text of every table cell drawn on the page (a data frame's cells are not in the body's text)."""
    return " | ".join(tab.locator('[data-testid="stDataFrame"] [role="gridcell"]').all_inner_texts())


def _wait_state(tab, line: str, limit_s: float = 120) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + limit_s
    while line not in _body(tab):
        assert time.monotonic() < deadline, f"no {line!r} in: {_body(tab)[-2000:]}"
        tab.wait_for_timeout(500)


def test_map_an_unknown_table_then_the_same_shape_is_read_by_the_recipe(  # type: ignore[no-untyped-def]
        server: str, page, seeded_db: Path, tmp_path: Path) -> None:  # noqa: F811 - the fixtures
    first, second = tmp_path / "orin_runs_a.csv", tmp_path / "orin_runs_b.csv"
    first.write_text(FIRST)
    second.write_text(SECOND)
    page.goto(f"{server}/upload")
    _wait_text(page, "Drop one or several result files")
    page.set_input_files("input[type=file] >> nth=0", [str(first)])
    _wait_text(page, "Map the columns of orin_runs_a.csv", 90_000)
    _settled(page)
    body = _body(page)
    assert "no reader knows this table" in body and "Refused" not in body.split("Map the columns")[1][:200]
    # pre-filled from the headers: the device, the token rate, the energy per token and a latency: one choice left
    _choose(page, "Field of lat_first", "Time to first token p50 (ms) · ttft_p50_ms")
    name_box = page.get_by_label("Save the mapping as")
    name_box.fill(NAME)
    name_box.press("Enter")
    _settled(page)
    _wait_text(page, "The runs it makes", 90_000)
    cells = _cells(page)
    assert "23.25" in cells and "0.42" in cells and "Jetson AGX Orin 64GB" in cells, cells
    page.get_by_role("button", name="Import with this mapping").click()
    _wait_state(page, "orin_runs_a.csv: 2 runs added")

    page.set_input_files("input[type=file] >> nth=0", [str(second)])
    _wait_text(page, f"read by the saved mapping '{NAME}'", 90_000)
    _settled(page)
    assert "Map the columns of orin_runs_b.csv" not in _body(page)
    page.get_by_role("button", name="Import 1 file").click()
    _wait_state(page, "orin_runs_b.csv: 1 run added")

    rows = read_while_served(seeded_db, "SELECT r.device_name, r.tokens_per_s, r.j_per_token, r.ttft_p50_ms, "
                             "r.ttft_avg_ms FROM runs r JOIN sources s USING (source_id) WHERE s.file_name LIKE "
                             "'orin_runs_%' ORDER BY r.tokens_per_s")
    assert [(round(t, 3), round(j, 3), round(p50, 3), avg) for _, t, j, p50, avg in rows] == [
        (21.5, 0.42, 180.0, None), (23.25, 0.4, 175.0, None), (31.75, 0.35, 140.0, None)], rows
    recipes = read_while_served(seeded_db, "SELECT name FROM mapping_recipes")
    assert recipes == [(NAME,)]

    device = rows[0][0]
    page.goto(f"{server}/compare?device={urllib.parse.quote_plus(device)}&metric=tokens")
    _wait_text(page, "All devices, several metrics", 90_000)
    _settled(page)
    assert device in _body(page)
    # under load the table is drawn before its figure columns arrive: poll for them under a generous ceiling
    deadline, cells = time.monotonic() + 90, ""
    while time.monotonic() < deadline and not all(v in cells for v in ("21.5", "23.25", "31.75")):
        _settled(page)
        cells = _cells(page)
    for value in ("21.5", "23.25", "31.75"):
        assert value in cells, (value, cells)


def _upload_to_map(tab, url: str, fixture: str) -> Path:  # type: ignore[no-untyped-def]
    """A real file no reader knows, uploaded on the Upload page, up to its mapping form."""
    path = Path(__file__).parent / "fixtures" / "formats" / fixture
    tab.goto(f"{url}/upload")
    _wait_text(tab, "Drop one or several result files")
    tab.set_input_files("input[type=file] >> nth=0", [str(path)])
    _wait_text(tab, f"Map the columns of {path.name}", 90_000)
    return path


def test_a_real_long_table_without_units_is_mapped_in_three_choices(  # type: ignore[no-untyped-def]
        server: str, page, seeded_db: Path) -> None:  # noqa: F811 - the fixtures
    """CarbonTracker figures in a long table with no unit anywhere (tests/test_mapping.py checks the same guesses and
    runs without a browser): the energy column, its unit and the mode are the three choices a person makes."""
    path = _upload_to_map(page, server, "general_table/carbontracker-llama31-8b-h100-h200-long-metrics-no-units.csv")
    _choose(page, "Field of Energy", "Energy (J) · energy_j")  # 1
    _choose(page, "Unit of Energy", "kWh")  # 2
    _choose(page, "Mode", "infer")  # 3
    _wait_text(page, "The runs it makes", 90_000)
    assert "The first 5 of 30 runs" in _body(page) or "30 runs" in _body(page), _body(page)[-1500:]
    page.get_by_role("button", name="Import with this mapping").click()
    _wait_state(page, f"{path.name}: 30 runs added")
    rows = read_while_served(seeded_db, "SELECT r.device_name, r.mode, r.energy_j FROM runs r JOIN sources s "
                             "USING (source_id) WHERE s.file_name = ? ORDER BY r.energy_j", [path.name])
    assert len(rows) == 30 and {r[1] for r in rows} == {"infer"}
    assert {r[0] for r in rows} == {"H100", "H100-PCI", "H200"}
    assert any(r[0] == "H100" and abs(r[2] - 0.453637 * 3.6e6) < 1 for r in rows), rows  # run 1: 0.453637 kWh


def test_a_meter_log_is_mapped_as_a_power_log_in_three_choices(  # type: ignore[no-untyped-def]
        server: str, page, seeded_db: Path) -> None:  # noqa: F811 - the fixtures
    """A meter's channels in mW with no unit written (tests/test_mapping.py checks the same energy without a
    browser): the time column, the power column and its unit; the preview shows the log's energy before Import."""
    path = _upload_to_map(page, server, "power_logs_meter/tfg-a30-resnet50-offline-meter-semicolon-mw-unnamed.csv")
    _choose(page, "Field of Time", "Time of a power sample (a power log) · log_time")  # 1 (its unit: s)
    _choose(page, "Field of Sum", "Power sample (a power log) · log_power")  # 2
    _choose(page, "Unit of Sum", "mW")  # 3
    _wait_text(page, "The runs it makes", 90_000)
    assert "Still needed" not in _body(page)
    page.get_by_role("button", name="Import with this mapping").click()
    _wait_state(page, f"{path.name}: 1 run added")
    rows = read_while_served(seeded_db, "SELECT r.energy_j, r.duration_s, r.avg_power_w FROM runs r JOIN sources s "
                             "USING (source_id) WHERE s.file_name = ?", [path.name])
    assert len(rows) == 1 and abs(rows[0][2] - 160.65) < 0.01 and abs(rows[0][1] - 70.026) < 0.001, rows
