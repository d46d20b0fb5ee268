"""What a person reads on every page carries no developer leftovers (issue 17): no 'run(s)', no
'None', no '(w)', no PIDs, no microsecond times, no server paths, no '1.0x faster', no document
file names or repository paths as citations, no command-line hints."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from cli.main import main
from ingest.service import import_file
from tests.helpers import open_page, page_texts, table_texts

FIXTURES = Path(__file__).parent / "fixtures"
LEFTOVERS = {
    "a '(s)' plural": r"\w\(s\)",
    "None": r"\bNone\b",
    "a unit in the wrong case": r"\((w|j|kwh|gb|mhz)\)",
    "a PID": r"\bPID\b",
    "a microsecond time": r"\d{2}:\d{2}:\d{2}\.\d{3,}",
    "a server path": r"(/tmp/|/home/|/work/|/root/)",
    "'1.0x faster'": r"1\.0x (faster|cheaper|fewer)",
    "a repository file": r"\b[\w-]+\.md\b",
    "a seed file name": r"\b\d{3}_[0-9a-f]{16}\.txt\b",
    "a command-line flag": r"(?<![\w-])--[a-z][a-z-]+",
}


@pytest.fixture(scope="module")
def text_db(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("text") / "text.duckdb"
    shutil.copy(seeded_template, path)
    report = import_file(FIXTURES / "result_v1_cpu_runs.json", db=path)
    assert main(["import", str(FIXTURES / "formats" / "zeus_mlenergy" / "zeus-plo-profile-v100-bert.csv"),
                 "--device", "Tesla V100", "--workload", "bert-base-uncased", "--db", str(path)]) == 0
    return path, report.run_ids[0]


@pytest.mark.parametrize("page", ["overview", "compare", "run_detail", "new_run", "upload", "cost",
                                  "power_settings", "devices", "decide"])
def test_no_developer_leftovers_on_any_page(text_db: tuple[Path, str], page: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path, run_id = text_db
    monkeypatch.setenv("JOULEBENCH_DB", str(path))
    at = open_page(page, {"run_detail": {"run_id": run_id},
                          "decide": {"device": ["GeForce RTX 3060", "Jetson AGX Xavier"], "mode": "train"}
                          }.get(page, {}))
    shown = [t.replace("\\", "") for t in page_texts(at)] + table_texts(at)
    found = [f"{what}: ...{t[max(0, m.start() - 60):m.end() + 30]}..." for t in shown
             for what, pattern in LEFTOVERS.items() for m in re.finditer(pattern, t)]
    assert not found, "\n".join(found[:10])
