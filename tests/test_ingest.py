from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from db import Store
from db.export import build_document, write_result_file, write_tables
from db.migrate import latest_version
from ingest import import_bytes, import_file, open_store
from joulebench.errors import DatabaseBusyError, ResultFileError
from joulebench.paths import inbox_dir, resolve_db_path
from joulebench.resultfile import load_result_bytes
from tests.helpers import database_held_by_another_process, release


def _counts(path: Path) -> dict[str, int]:
    with Store.open(path) as store:
        return {t: store.query(f"SELECT count(*) AS n FROM {t}")["n"][0]
                for t in ("sources", "runs", "devices", "environments", "power_samples", "step_times", "findings")}


def test_import_adds_runs_samples_and_steps(seeded_db: Path, fixture_file: Path) -> None:
    before = _counts(seeded_db)
    report = import_file(fixture_file, db=seeded_db)
    assert report.status == "imported" and report.runs_added == 2
    after = _counts(seeded_db)
    assert after["runs"] == before["runs"] + 2
    assert after["power_samples"] == before["power_samples"] + 4
    assert after["step_times"] == before["step_times"] + 5
    with Store.open(seeded_db) as store:
        run = store.query("SELECT * FROM runs WHERE run_id = ?", [report.run_ids[0]]).row(0, named=True)
        assert run["throughput_sps"] == 615.38 and run["energy_boundary"] == "estimated"
        assert run["origin_kind"] == "upload" and run["origin_file_name"] == fixture_file.name
        oom = store.query("SELECT status, energy_j, energy_missing_reason FROM runs WHERE run_id = ?",
                          [report.run_ids[1]]).row(0, named=True)
        assert oom["status"] == "oom" and oom["energy_j"] is None and "out of memory" in oom["energy_missing_reason"]


def test_same_file_twice_adds_nothing(seeded_db: Path, fixture_file: Path) -> None:
    import_file(fixture_file, db=seeded_db)
    before = _counts(seeded_db)
    again = import_file(fixture_file, db=seeded_db)
    assert again.status == "already_imported" and again.runs_added == 0
    assert _counts(seeded_db) == before


def test_corrupt_file_changes_nothing(seeded_db: Path, fixture_file: Path) -> None:
    before = _counts(seeded_db)
    with pytest.raises(ResultFileError, match="broken.json"):
        import_bytes(fixture_file.read_bytes()[:-40], "broken.json", db=seeded_db)
    assert _counts(seeded_db) == before
    assert not inbox_dir(seeded_db).exists()


def test_failure_mid_ingest_rolls_back_everything(seeded_db: Path, fixture_file: Path) -> None:
    doc = json.loads(fixture_file.read_text())
    trace = doc["runs"][0]["power_traces"][0]
    doc["runs"][0]["power_traces"].append(dict(trace))  # same domain twice: fails after runs are written
    before = _counts(seeded_db)
    with pytest.raises(ResultFileError, match="same domain twice"):
        import_bytes(json.dumps(doc).encode(), "twice.json", db=seeded_db)
    assert _counts(seeded_db) == before


def _content(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k != "created_at"}


def test_export_import_export_gives_the_same_content(full_seeded_db: Path, fixture_file: Path, tmp_path: Path) -> None:
    import_file(fixture_file, db=full_seeded_db)  # a fresh install's database: the same references as `other`
    first = tmp_path / "first.json.gz"
    with Store.open(full_seeded_db) as store:
        n = write_result_file(store, first)
        doc1 = build_document(store)
    assert n == len(doc1["runs"]) and n > 150
    for seed in (False, True):  # into an empty database, and into one that already holds the references
        other = tmp_path / f"other_{seed}.duckdb"
        with Store.open(other, seed_reference=seed) as store:
            report = store.ingest(load_result_bytes(first.read_bytes(), first.name), "upload")
            assert report.runs_added + report.runs_duplicate == n
            doc2 = build_document(store)
        assert _content(doc2) == _content(doc1)


def test_selection_and_flat_tables(seeded_db: Path, fixture_file: Path, tmp_path: Path) -> None:
    import polars as pl

    from db.export import Selection

    report = import_file(fixture_file, db=seeded_db)
    with Store.open(seeded_db) as store:
        doc = build_document(store, Selection(run_ids=(report.run_ids[0],)))
        assert [r["run_id"] for r in doc["runs"]] == [report.run_ids[0]]
        assert doc["runs"][0]["power_traces"][0]["power_w"] == [27.5, 28.1, 28.3, 28.0]
        for suffix in (".csv", ".parquet"):
            written = write_tables(store, tmp_path / f"sel{suffix}", Selection(device_names=("Intel Xeon (2 vCPU)",)))
            assert [p.name for p in written] == [f"sel_runs{suffix}", f"sel_configurations{suffix}",
                                                 f"sel_power_samples{suffix}", f"sel_step_times{suffix}",
                                                 f"sel_requests{suffix}"]  # empty here: no serving run
            runs = pl.read_csv(written[0]) if suffix == ".csv" else pl.read_parquet(written[0])
            assert runs["throughput_sps"].to_list() == [615.38]
            steps = pl.read_csv(written[3]) if suffix == ".csv" else pl.read_parquet(written[3])
            assert steps["duration_ms"].to_list() == [6.2, 6.4, 6.5, 6.9, 7.1]


def test_file_waits_in_inbox_while_another_process_holds_the_database(seeded_db: Path, fixture_file: Path) -> None:
    with database_held_by_another_process(seeded_db) as holder:
        with pytest.raises(DatabaseBusyError, match="held by another process"):
            Store.open(seeded_db)
        report = import_file(fixture_file, db=seeded_db)
        assert report.status == "queued"
        assert len(list(inbox_dir(seeded_db).iterdir())) == 1
        release(holder)
    with open_store(seeded_db) as store:
        assert store.query("SELECT action FROM intake_log")["action"].to_list() == ["drained"]
        assert store.query("SELECT count(*) AS n FROM runs WHERE origin_file_name = ?",
                           [fixture_file.name])["n"][0] == 2
    assert list(inbox_dir(seeded_db).iterdir()) == []


def test_invalid_file_in_inbox_is_kept_aside_with_its_reason(seeded_db: Path) -> None:
    from ingest import inbox

    inbox.queue(seeded_db, b'{"format": "joulebench-result", "schema_version": 1, "runs": [{}]}', "odd.json", "upload")
    with open_store(seeded_db) as store:
        assert store.query("SELECT action FROM intake_log")["action"].to_list() == ["rejected"]
    rejected = inbox_dir(seeded_db) / "rejected"
    reasons = [json.loads(p.read_text()) for p in rejected.glob("*.error.json")]
    assert reasons[0]["file"] == "odd.json" and "runs[0]" in reasons[0]["reason"]
    assert len([p for p in rejected.iterdir() if not p.name.endswith(".error.json")]) == 1


def test_database_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert resolve_db_path(None) == tmp_path / "data" / "joulebench" / "joulebench.duckdb"
    monkeypatch.setenv("JOULEBENCH_DB", str(tmp_path / "env.duckdb"))
    assert resolve_db_path(None) == tmp_path / "env.duckdb"
    assert resolve_db_path(tmp_path / "flag.duckdb") == tmp_path / "flag.duckdb"


def test_first_open_creates_migrates_and_seeds_the_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    with Store.open() as store:
        info = store.info()
    assert info.path == tmp_path / "data" / "joulebench" / "joulebench.duckdb" and info.path.exists()
    assert info.schema_version == latest_version()
    assert info.runs > 150
    assert set(info.runs_by_source_kind["source_kind"]) == {"reference"}


def test_every_run_has_energy_or_a_reason_it_is_missing(seeded_db: Path, fixture_file: Path) -> None:
    import_file(fixture_file, db=seeded_db)
    with Store.open(seeded_db) as store:
        silent = store.query(
            "SELECT run_id FROM runs WHERE energy_j IS NULL AND j_per_sample IS NULL AND j_per_iteration IS NULL "
            "AND avg_power_w IS NULL AND energy_missing_reason IS NULL")
        nvidia = store.query("SELECT energy_missing_reason FROM runs WHERE run_id = ?",
                             ["ref:runs_nvidia_bert_inference:dgx1-v100-16gb-infer-base-s128-b1-fp16"])
    assert silent.is_empty()
    reason = "no energy figure in the joulebench-reference-csv file this run came from"
    assert nvidia["energy_missing_reason"][0] == reason
