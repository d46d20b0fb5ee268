"""Labels a file does not state: imported as 'not stated', filled later for a whole source, recorded
as user-supplied; a value the file states is never overwritten; a refusal says what the file is."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from cli.main import main
from db import Store, labels, queries
from importers.device_text import device_from_path
from ingest import import_file, open_store
from ingest.labels import label_source, label_values
from joulebench.labels import current_user

FORMATS = Path(__file__).parent / "fixtures" / "formats"
JETSON_CC = FORMATS / "codecarbon" / "jetson-nano-edgeai_emissions.csv"  # no gpu_model, no mode
GTX_LOG = FORMATS / "nvidia_smi" / "fletcher-io-gtx1650_gpu_power.csv"  # names its GPU, not what ran


def _source_id(db: Path, file_name: str) -> int:
    with Store.open(db) as store:
        return labels.resolve_source(store.con, file_name).source_id


def _run(db: Path, source_id: int) -> dict[str, Any]:
    with Store.open(db) as store:
        return store.query("SELECT * FROM runs WHERE source_id = ?", [source_id]).row(0, named=True)


def _supplied(db: Path) -> list[tuple[Any, ...]]:
    with Store.open(db) as store:
        return store.query("SELECT label, value, origin, supplied_by, via FROM run_labels ORDER BY label").rows()


def test_a_file_without_device_and_mode_is_stored_not_stated_and_shown_so(seeded_db: Path) -> None:
    report = import_file(JETSON_CC, db=seeded_db)
    assert report.status == "imported" and report.runs_added == 1
    run = _run(seeded_db, report.source_id)  # type: ignore[arg-type]
    assert run["device_name"] is None and run["mode"] is None  # not guessed
    assert run["energy_j"] == pytest.approx(8.857767133)  # the figures are in all the same
    with Store.open(seeded_db) as store:
        assert labels.gaps(store.con, report.source_id) == {  # type: ignore[arg-type]
            "device": 1, "mode": 1, "precision": 1, "batch_size": 1}
        info = store.info()
        shown = queries.runs_table(store).filter(pl.col("source_id") == report.source_id).row(0, named=True)
    listed = info.sources.filter(info.sources["source_id"] == report.source_id).row(0, named=True)
    assert listed["not_stated"] == "device 1, mode 1, precision 1, batch size 1"
    assert "not stated" in info.runs_by_device["device_name"].to_list()
    assert shown["device_name"] == f"not stated ({JETSON_CC.name})" and shown["mode"] == "not stated"
    assert shown["precision"] == "not stated" and shown["labels_not_stated"] == ["device", "mode", "precision",
                                                                                  "batch_size"]


def test_label_fills_a_whole_source_and_records_who(seeded_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import_file(JETSON_CC, db=seeded_db)
    before = _run(seeded_db, _source_id(seeded_db, JETSON_CC.name))
    code = main(["label", JETSON_CC.name, "--device", "Jetson Nano 4GB", "--mode", "infer", "--db", str(seeded_db)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert re.search(r"\ndevice +Jetson Nano 4GB +1 +0\n", out) and re.search(r"\nmode +infer +1 +0\n", out)
    assert "device 'Jetson Nano 4GB' added to the catalog as a jetson" in out  # kind from the name
    assert "still not stated: precision 1, batch size 1" in out
    sid = _source_id(seeded_db, JETSON_CC.name)
    run = _run(seeded_db, sid)
    assert (run["device_name"], run["mode"]) == ("Jetson Nano 4GB", "infer")
    # regraded: the device and mode are part of the configuration its repeats are grouped by
    assert run["config_key"] != before["config_key"]
    assert _supplied(seeded_db) == [("device", "Jetson Nano 4GB", "user", current_user(), "cli"),
                                    ("mode", "infer", "user", current_user(), "cli")]
    with Store.open(seeded_db) as store:
        assert store.query("SELECT kind FROM devices WHERE device_name = 'Jetson Nano 4GB'")["kind"][0] == "jetson"


def test_a_supplied_label_can_be_changed_but_a_stated_one_never(seeded_db: Path) -> None:
    report = import_file(GTX_LOG, db=seeded_db, hints=None)
    sid = report.source_id
    assert sid is not None
    values, kind = label_values(device="Some Other GPU", mode="train")
    first = label_source(sid, values, kind, db=seeded_db, via="cli")
    assert first.filled == {"device": 0, "mode": 1} and first.replaced == {"device": 0, "mode": 0}
    run = _run(seeded_db, sid)
    assert run["device_name"] == "GeForce GTX 1650"  # the log names it (catalog spelling): kept
    assert not first.device_added  # nothing took the device, so it was not catalogued
    values, kind = label_values(mode="infer")
    second = label_source(sid, values, kind, db=seeded_db, via="run_detail_page")
    assert second.filled == {"mode": 0} and second.replaced == {"mode": 1}  # a supplied label is replaced
    assert _run(seeded_db, sid)["mode"] == "infer"
    assert _supplied(seeded_db) == [("mode", "infer", "user", current_user(), "run_detail_page")]


def test_labels_given_at_import_are_recorded_and_replaceable(seeded_db: Path, tmp_path: Path) -> None:
    folder = tmp_path / "results" / "A100-80GB"  # a folder named after the device
    folder.mkdir(parents=True)
    shutil.copy(FORMATS / "nvidia_dle" / "lambda-A100SXM4-resnet50_AMP_dllogger-stdout.txt", folder / "run.txt")
    shutil.copy(GTX_LOG, folder / "gtx.csv")
    assert main(["import", str(folder), "--mode", "idle", "--db", str(seeded_db)]) == 0
    rows = _supplied(seeded_db)
    assert ("device", "A100-80GB", "folder_name", current_user(), "import") in rows  # dllogger: from the folder
    assert ("mode", "idle", "user", current_user(), "import") in rows  # the log: from --mode
    assert not any(r[0] == "mode" and r[1] == "train" for r in rows)  # dllogger states train: not recorded
    sid = _source_id(seeded_db, "gtx.csv")
    with Store.open(seeded_db) as store:
        assert labels.gaps(store.con, sid) == {}  # an idle run takes no precision or batch size
    values, kind = label_values(device="A100 SXM4 80GB")
    again = label_source(_source_id(seeded_db, "run.txt"), values, kind, db=seeded_db)
    assert again.replaced == {"device": 1}  # a folder name is not the file: it may be corrected


def test_a_version_folder_is_never_taken_for_a_device(seeded_db: Path, tmp_path: Path) -> None:
    """Folders named v1, l1 or p2 are versions or steps, not the V100, L4 or P4 they look like: the device
    stays not stated (the import asks for it) instead of an invented 'v1'."""
    for name in ("v1", "l1", "p2"):
        folder = tmp_path / name
        folder.mkdir()
        shutil.copy(FORMATS / "nvidia_dle" / "lambda-A100SXM4-resnet50_AMP_dllogger-stdout.txt", folder / "run.txt")
        main(["import", str(folder), "--mode", "train", "--db", str(seeded_db)])
    assert not any(r[0] == "device" and r[2] == "folder_name" for r in _supplied(seeded_db))
    for name in ("T4", "l40s", "a10g", "v100-sxm2-16gb"):  # real card names in a folder still count
        assert device_from_path(("results", name)) == name


def test_energy_boundary_is_filled_on_runs_with_energy_and_their_traces(seeded_db: Path, tmp_path: Path) -> None:
    doc = json.loads((Path(__file__).parent / "fixtures" / "result_v1_cpu_runs.json").read_text())
    run = doc["runs"][0]
    del run["metrics"]["energy_boundary"]
    run["power_traces"][0]["boundary"] = None
    path = tmp_path / "no_boundary.json"
    path.write_text(json.dumps(doc))
    report = import_file(path, db=seeded_db)
    sid = report.source_id
    assert sid is not None
    with Store.open(seeded_db) as store:
        assert labels.gaps(store.con, sid) == {"energy_boundary": 1}  # the oom run has no energy: nothing to say
    values, kind = label_values(boundary="cpu_package")
    done = label_source(sid, values, kind, db=seeded_db)
    assert done.filled == {"energy_boundary": 1} and done.still_not_stated == {}
    with Store.open(seeded_db) as store:
        got = store.query("SELECT r.energy_boundary, t.boundary FROM runs r JOIN power_traces t USING (run_id)").row(0)
    assert got == ("cpu_package", "cpu_package")


def test_label_errors_name_the_problem_and_change_nothing(seeded_db: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        data = JETSON_CC.read_text() + ("\n" if sub == "b" else "")
        (tmp_path / sub / "emissions.csv").write_text(data)
        import_file(tmp_path / sub / "emissions.csv", db=seeded_db)
    with Store.open(seeded_db) as store:
        before = store.query("SELECT * FROM runs ORDER BY run_id")
    cases = [
        (["label", "emissions.csv", "--mode", "infer"], "names 2 sources"),
        (["label", "nothing-like-it.csv", "--mode", "infer"], "no source 'nothing-like-it.csv'"),
        (["label", "999999", "--mode", "infer"], "no source '999999'"),
        (["label", "emissions.csv", "--batch-size", "0"], "--batch-size: 0 is outside its range; enter a whole number "
                                                          "from 1 to 1,000,000,000"),
        (["label", "emissions.csv", "--batch-size", "1000000000000"], "--batch-size: 1,000,000,000,000 is outside"),
        (["label", "emissions.csv", "--device-kind", "gpu"], "--device-kind goes with --device"),
        (["label", "emissions.csv"], "give at least one label"),
    ]
    for argv, message in cases:
        assert main([*argv, "--db", str(seeded_db)]) == 2, argv
        assert message in capsys.readouterr().err, argv
    with Store.open(seeded_db) as store:
        assert store.query("SELECT * FROM runs ORDER BY run_id").equals(before)
        assert store.query("SELECT count(*) AS n FROM run_labels")["n"][0] == 0


def test_a_label_that_fails_midway_changes_nothing(seeded_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = import_file(JETSON_CC, db=seeded_db)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("disk gone while recording")

    monkeypatch.setattr(labels, "record", broken)
    values, kind = label_values(device="Jetson Nano 4GB", mode="infer")
    with pytest.raises(RuntimeError):
        label_source(report.source_id, values, kind, db=seeded_db)  # type: ignore[arg-type]
    run = _run(seeded_db, report.source_id)  # type: ignore[arg-type]
    assert run["device_name"] is None and run["mode"] is None
    with Store.open(seeded_db) as store:
        assert store.query("SELECT count(*) AS n FROM devices WHERE device_name = 'Jetson Nano 4GB'")["n"][0] == 0


def test_not_stated_runs_export_as_null_and_import_back(seeded_db: Path, tmp_path: Path) -> None:
    import_file(JETSON_CC, db=seeded_db)
    out = tmp_path / "mine.json"
    assert main(["export", str(out), "--db", str(seeded_db), "--source-kind", "upload"]) == 0
    run = json.loads(out.read_text())["runs"][0]
    assert run["device"] is None and run["config"]["mode"] is None
    other = tmp_path / "other.duckdb"
    report = import_file(out, db=other)
    assert report.runs_added == 1
    with open_store(other) as store:
        assert labels.gaps(store.con, report.source_id) == {  # type: ignore[arg-type]
            "device": 1, "mode": 1, "precision": 1, "batch_size": 1}


@pytest.mark.parametrize(("name", "content", "why"), [
    ("temps.csv", "timestamp, name, temperature.gpu, utilization.gpu [%]\n2024/01/01 10:00:00.000, A100, 45, 90 %\n",
     "a temperature log without power"),
    ("tegrastats.txt", "RAM 1700/3964MB (lfb 1x4MB) CPU [10%@1479,off,off,8%@1479] EMC_FREQ 0% GR3D_FREQ 0% "
                       "PLL@40C CPU@42.5C GPU@40C AO@48C thermal@41C\n" * 3,
     "a temperature log without power (tegrastats without power rails"),
    ("benchmark_config.json", json.dumps({"name": "x", "backend": {"name": "pytorch"}, "scenario": {"name": "inf"},
                                          "launcher": {"name": "process"}}),
     "an optimum-benchmark config without results"),
    ("config.json", json.dumps({"architectures": ["BertModel"], "model_type": "bert", "hidden_size": 768}),
     "a model config (config.json) without results"),
    ("util.csv", "time,gpu_util,mem_util\n1,50,20\n", "a utilisation log without power"),
    ("empty.json", "", "an empty file"),
])
def test_a_file_without_any_figure_is_refused_saying_what_it_is(seeded_db: Path, tmp_path: Path, name: str,
                                                                 content: str, why: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / name
    path.write_text(content)
    assert main(["import", str(path), "--db", str(seeded_db)]) == 2
    err = capsys.readouterr().err
    assert f"{name}: refused" in err and f"{name}: (whole file): {why}" in err
    assert main(["import", str(tmp_path), "--db", str(seeded_db)]) == 2  # in a folder: skipped, and nothing else
    out = capsys.readouterr().out
    assert f"{name}: skipped: {why}" in out
