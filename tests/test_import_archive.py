"""Folders, .zip archives (with bomb and traversal protection), the CLI table, the inbox."""

from __future__ import annotations

import io
import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from cli.main import main
from db import Store
from importers import Hints
from importers.archive import MAX_MEMBERS, read_zip, sources_from_bytes, sources_from_path
from ingest import import_source, open_store
from joulebench.errors import ResultFileError
from joulebench.paths import inbox_dir
from tests.helpers import database_held_by_another_process, release

FORMATS = Path(__file__).parent / "fixtures" / "formats"


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_zip_of_an_mlperf_folder_hashes_like_the_folder() -> None:
    root = FORMATS / "mlperf_inference" / "v3.0_NVIDIA_Orin_TRT_MaxQ_resnet50_SingleStream"
    members = {p.relative_to(root.parent).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    from_zip = sources_from_bytes(_zip(members), "orin.zip")
    from_folder = sources_from_path(root)
    assert len(from_zip) == 1 and from_zip[0].is_folder
    assert from_zip[0].content_sha256 == from_folder[0].content_sha256


@pytest.mark.parametrize("name", ["../evil.csv", "/etc/passwd", "a/../../b.json", "C:\\x.json"])
def test_zip_paths_outside_the_archive_are_refused(name: str) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(zipfile.ZipInfo(name), b"x")
    with pytest.raises(ResultFileError, match="refused"):
        read_zip(buf.getvalue(), "bad.zip")


def test_zip_bomb_is_refused() -> None:
    bomb = _zip({"big.csv": b"0" * (64 * 1024 * 1024)})  # 64 MiB of zeros compress ~1000x
    assert len(bomb) < 1024 * 1024
    with pytest.raises(ResultFileError, match="archive bomb"):
        read_zip(bomb, "bomb.zip")


def test_zip_with_too_many_members_is_refused() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i in range(MAX_MEMBERS + 1):
            zf.writestr(f"f{i}", b"")
    with pytest.raises(ResultFileError, match="members"):
        read_zip(buf.getvalue(), "many.zip")


def test_not_a_zip_is_an_import_error() -> None:
    with pytest.raises(ResultFileError, match="zip"):
        sources_from_bytes(b"PK\x03\x04garbage", "x.zip")


def test_cli_imports_folders_and_zips_and_prints_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "cli.duckdb"
    archive = tmp_path / "logs.zip"
    archive.write_bytes(
        _zip(
            {
                "zeus/summary_power_v100.csv": (
                    FORMATS / "zeus_mlenergy/zeus-nsdi23-v100_summary_power.csv"
                ).read_bytes(),
                "README.txt": b"just words",
            }
        )
    )
    mlperf = tmp_path / "mlperf_inference"  # the two v3.0 result folders
    for name in ("v3.0_NVIDIA_Orin_TRT_MaxQ_resnet50_SingleStream",
                 "v3.0_NVIDIA_DGX-H100_H100-SXM-80GBx8_TRT_bert-99_Server"):
        shutil.copytree(FORMATS / "mlperf_inference" / name, mlperf / name)
    code = main(["import", str(mlperf), str(archive), "--db", str(db)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "format detected  mlperf-inference" in out and "format detected  zeus" in out
    assert "runs imported    476 of 476" in out  # the device came from the file name summary_power_v100.csv
    assert "README.txt: skipped: this file holds no benchmark figures JouleBench can read (it looks like text" in out
    assert "figures missing" in out and "warnings" in out
    assert "not stated       precision (all 476 runs)" in out  # Zeus' summary does not say
    summary = out[out.index("4 files: "):]  # then one line per file: what came in, what is not stated, why not
    assert summary.startswith("4 files: 3 imported, 1 skipped; 478 runs added")
    assert re.search(r"logs/zeus/summary_power_v100.csv +imported +476 +precision", summary)
    assert re.search(r"logs/README.txt +skipped +0 +this file holds no benchmark figures", summary)


def test_cli_hints_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "cli.duckdb"
    log = FORMATS / "jetson" / "csc2231-jetson-nano_tegrastats.txt"
    assert main(["import", str(log), "--db", str(db), "--device", "Jetson Nano 4GB", "--mode", "idle"]) == 0
    with Store.open(db, seed_reference=False) as store:
        row = store.query(
            "SELECT device_name, mode, origin_format FROM runs WHERE origin_format = ?", ["tegrastats"]
        ).row(0, named=True)
    # the name given lands on the catalog's entry for that module (ingest.device_names: the catalog's Jetson Nano
    # is the 4 GB one)
    assert row == {"device_name": "Jetson Nano", "mode": "idle", "origin_format": "tegrastats"}


def test_queued_file_keeps_its_hints(seeded_db: Path) -> None:
    log = FORMATS / "nvidia_smi" / "fletcher-io-gtx1650_gpu_power.csv"
    source = sources_from_path(log)[0]
    with database_held_by_another_process(seeded_db) as holder:
        report, _ = import_source(source, db=seeded_db, hints=Hints(mode="infer", workload="fletcher-io"))
        assert report.status == "queued"
        sidecars = list(inbox_dir(seeded_db).glob(".*.hints.json"))
        assert json.loads(sidecars[0].read_text())["hints"] == {"mode": "infer", "workload": "fletcher-io"}
        release(holder)
    with open_store(seeded_db) as store:
        assert store.query("SELECT action FROM intake_log")["action"].to_list() == ["drained"]
        row = store.query("SELECT mode, workload, origin_format FROM runs WHERE origin_format = 'nvidia-smi'")
        assert row.row(0, named=True) == {"mode": "infer", "workload": "fletcher-io", "origin_format": "nvidia-smi"}
    assert list(inbox_dir(seeded_db).iterdir()) == []


def test_queued_mlperf_folder_is_converted_when_drained(seeded_db: Path) -> None:
    source = sources_from_path(FORMATS / "mlperf_inference" / "v3.0_NVIDIA_Orin_TRT_MaxQ_resnet50_SingleStream")[0]
    with database_held_by_another_process(seeded_db) as holder:
        report, imported = import_source(source, db=seeded_db)
        assert report.status == "queued"
        release(holder)
    with open_store(seeded_db) as store:
        assert store.query("SELECT action FROM intake_log")["action"].to_list() == ["drained"]
        sha = store.query("SELECT content_sha256 FROM sources WHERE format = 'mlperf-inference'")["content_sha256"][0]
    assert sha == imported.content_sha256
