"""Every page with hostile labels in the database (issue 17, F10): a device, workload and file name
holding Markdown, a link, HTML and a spreadsheet formula show as literal text on every page, never
as bold, a live link or markup; no page raises. (A device label rendered as bold and a live link on
Power settings, whose heading was not escaped.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from ingest.service import import_bytes
from tests.helpers import open_page, page_texts

FIXTURE = Path(__file__).parent / "fixtures" / "result_v1_cpu_runs.json"
ZEUS_V100_BERT = Path(__file__).parent / "fixtures" / "formats" / "zeus_mlenergy" / "zeus-plo-profile-v100-bert.csv"
SHOWN_IN_TEXT = ("power_settings", "decide")  # pages whose text (not only tables) names the device
DEVICE = "**pwned** [click](http://evil.example) <script>alert(1)</script>"
WORKLOAD = "=cmd|' /C calc'!A0 __under__"
FILE = "**file** [x](http://evil.example).json"
RAW = ("**pwned**", "[click](http://evil.example)", "<script>", "__under__", "**file**")


@pytest.fixture(scope="module")
def hostile(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    db = tmp_path_factory.mktemp("hostile") / "hostile.duckdb"
    shutil.copy(seeded_template, db)
    doc = json.loads(FIXTURE.read_text())
    for run in doc["runs"]:
        run["device"]["name"] = DEVICE
        run["config"]["workload"] = WORKLOAD
        run["notes"] = "notes with **markdown** and [a link](http://evil.example)"
    report = import_bytes(json.dumps(doc).encode(), FILE, db=db)
    assert report.runs_added == len(doc["runs"])
    # a real power-limit profile under the hostile name, so Power settings shows it in its heading
    assert main(["import", str(ZEUS_V100_BERT), "--device", DEVICE, "--workload", WORKLOAD, "--db", str(db)]) == 0
    return db, report.run_ids[0]


PAGES: dict[str, dict[str, Any]] = {
    "overview": {}, "compare": {}, "run_detail": {"run_id": None}, "new_run": {}, "upload": {},
    "cost": {}, "power_settings": {"device": DEVICE}, "devices": {},
    "decide": {"device": [DEVICE, "GeForce RTX 3060"], "mode": "infer"},
}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_hostile_labels_show_as_literal_text_on_every_page(hostile: tuple[Path, str], page: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    db, run_id = hostile
    monkeypatch.setenv("JOULEBENCH_DB", str(db))
    texts = page_texts(open_page(page, {k: (run_id if v is None else v) for k, v in PAGES[page].items()}))
    leaks = [t for t in texts for raw in RAW if raw in t]
    assert not leaks, f"{page}: unescaped hostile text: {leaks[:3]}"
    if page in SHOWN_IN_TEXT:  # the test is not vacuous: the name is there, escaped
        assert any("\\*\\*pwned\\*\\*" in t for t in texts), f"{page}: the hostile device is not shown"
