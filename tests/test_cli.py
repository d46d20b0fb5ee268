from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import main
from db.migrate import latest_version


def test_db_info_on_a_fresh_default_database(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "info"]) == 0
    out = capsys.readouterr().out
    assert f"schema version:  {latest_version()}" in out
    runs = int(next(line.split()[-1] for line in out.splitlines() if line.startswith("runs:")))
    assert runs > 150
    assert "reference" in out and "A100 40GB" in out and "Tesla T4" in out


def test_import_then_export_json_and_csv(seeded_db: Path, fixture_file: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", str(fixture_file), "--db", str(seeded_db)]) == 0
    assert "imported" in capsys.readouterr().out
    assert main(["import", str(fixture_file), "--db", str(seeded_db)]) == 0
    assert "already imported" in capsys.readouterr().out
    out = tmp_path / "mine.json"
    assert main(["export", str(out), "--db", str(seeded_db), "--source-kind", "upload"]) == 0
    doc = json.loads(out.read_text())
    assert len(doc["runs"]) == 2
    assert main(["export", str(tmp_path / "mine.csv"), "--db", str(seeded_db), "--device", "Tesla T4"]) == 0
    assert (tmp_path / "mine_runs.csv").read_text().count("\n") == 33  # header + the T4 table's 32 rows


def test_bad_file_exits_nonzero_naming_file_and_field(seeded_db: Path, fixture_file: Path, tmp_path: Path) -> None:
    doc = json.loads(fixture_file.read_text())
    doc["runs"][0]["status"] = "great"
    bad = tmp_path / "bad_status.json"
    bad.write_text(json.dumps(doc))
    joulebench = str(Path(sys.executable).with_name("joulebench"))
    proc = subprocess.run([joulebench, "import", str(bad), "--db", str(seeded_db)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "bad_status.json: runs[0].status: 'great' is not one of" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_every_command_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--help"], ["import", "--help"], ["export", "--help"], ["db", "info", "--help"], ["app", "--help"]):
        with pytest.raises(SystemExit) as done:
            main(argv)
        assert done.value.code == 0
        assert "usage: joulebench" in capsys.readouterr().out


def test_a_reader_that_closes_the_pipe_early_gets_no_traceback(seeded_db: Path) -> None:
    """Issue 17: `joulebench db info | head -1` ended in a BrokenPipeError traceback."""
    proc = subprocess.Popen([str(Path(sys.executable).with_name("joulebench")), "db", "info", "--db", str(seeded_db)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before anything is written: every write meets a closed pipe
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert "Traceback" not in err and "BrokenPipe" not in err
