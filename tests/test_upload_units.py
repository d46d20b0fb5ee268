"""An MLPerf submission uploaded zipped or as its separate files imports as one unit, as the CLI
imports its folder (issue 17); the preview shows the runs' values, not only counts."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from cli.main import main
from explorer import upload

SUBMISSION = (Path(__file__).parent / "fixtures" / "formats" / "mlperf_inference"
              / "v3.0_NVIDIA_DGX-H100_H100-SXM-80GBx8_TRT_bert-99_Server")


def _files() -> list[tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in sorted(SUBMISSION.rglob("*")) if p.is_file()]


def _zipped() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for p in sorted(SUBMISSION.rglob("*")):
            if p.is_file():
                zf.write(p, f"{SUBMISSION.name}/{p.relative_to(SUBMISSION)}")
    return buf.getvalue()


@pytest.fixture(scope="module")
def from_the_cli(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str]:
    import shutil

    from db import Store

    db = tmp_path_factory.mktemp("cli") / "cli.duckdb"
    shutil.copy(seeded_template, db)
    assert main(["import", str(SUBMISSION), "--db", str(db)]) == 0
    with Store.open(db) as store:
        row = store.query("SELECT count(*) AS n, any_value(device_name) AS device FROM runs r "
                          "JOIN sources s USING (source_id) WHERE s.kind = 'upload'").row(0)
    return int(row[0]), str(row[1])


def test_separate_files_of_a_submission_become_one_unit():
    files = _files()
    assert len(files) >= 2
    (unit,) = upload.units(files)
    assert unit[0] == "mlperf-submission.zip"
    assert upload.units([("results.json", b"{}")]) == [("results.json", b"{}")]  # other files stay as they are


@pytest.mark.parametrize("how", ["separate files", "zipped"])
def test_a_submission_uploads_as_the_cli_imports_its_folder(how: str, from_the_cli: tuple[int, str],
                                                            seeded_db: Path) -> None:
    runs, device = from_the_cli
    (name, data), = upload.units(_files()) if how == "separate files" else [("submission.zip", _zipped())]
    preview = upload.read_preview(name, data)
    assert not preview.error, preview.error
    # the preview shows the device as the file states it; the store keeps it under its catalog name
    stated = "NVIDIA H100-SXM-80GB"
    assert device == "H100 SXM" and preview.format == "mlperf-inference" and preview.runs == runs
    assert stated in preview.devices
    first = preview.figures[0]
    assert first["Device"] == stated and first["Throughput (samples/s)"] > 0  # values, not only counts
    reports = upload.import_here(name, data, str(seeded_db))
    assert sum(r.runs_added for r in reports) == runs
