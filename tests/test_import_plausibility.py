"""Issue 40, "implausible imports stored": every ingest path checks a file's figures against each other and against
what one system can give (`ingest.plausibility`); a run that fails is flagged and graded D with both numbers named,
and a file whose stated rate is more than 100x from its own counts is refused whole."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import ingest.plausibility as plausibility
from db import Store
from energy.grades import FLAG_IMPLAUSIBLE, FLAG_INCONSISTENT, RunFacts, grade_run
from importers import Source
from ingest import drain_inbox, import_bytes
from ingest.service import import_sources
from joulebench.errors import ResultFileError
from joulebench.resultfile import LoadedResultFile
from tests.helpers import RESULT_FIXTURE, database_held_by_another_process, release

PREFIXES = (FLAG_INCONSISTENT, FLAG_IMPLAUSIBLE)


def _document(**metrics: Any) -> dict[str, Any]:
    """The CPU fixture's first run as a serving-like inference run with these metrics (others removed)."""
    doc = json.loads(RESULT_FIXTURE.read_text())
    run = doc["runs"][0]
    run["metrics"] = {"energy_missing_reason": "not measured", **metrics}
    doc["runs"] = [run]
    return doc


def _bytes(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc).encode()


def _stored(db: Path) -> list[dict[str, Any]]:
    with Store.open_reading(db) as store:
        return store.query("SELECT run_id, trust_grade, trust_reasons, flags FROM runs "
                           "WHERE origin_kind <> 'reference'").to_dicts()


def _ours(flags: list[str] | None) -> list[str]:
    return [f for f in flags or [] if f.startswith(PREFIXES)]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "store.duckdb"
    Store.open(path, seed_reference=False).close()
    return path


# --- through the store: the two cases and a consistent file -------------------------------------------

def test_a_csv_row_claiming_1e9_tokens_per_s_is_graded_d_with_its_reason(db: Path) -> None:
    report = import_bytes(b"device,model,tokens_per_s\nA100,llama-3-8b,1000000000\n", "bench.csv", db=db)
    assert report.status == "imported" and report.runs_added == 1
    (run,) = _stored(db)
    assert run["trust_grade"] == "D"
    flag = "implausible: tokens_per_s 1e+09 output tokens/s is above the 1e+07 that one system can plausibly give"
    assert _ours(run["flags"]) and _ours(run["flags"])[0].startswith(flag)
    assert any(r.startswith(f"[D] plausibility: {flag}") for r in run["trust_reasons"]), run["trust_reasons"]


def test_a_result_file_claiming_1e9_tokens_per_s_over_88_counted_is_refused_naming_both(db: Path) -> None:
    doc = _document(output_tokens=8800, duration_s=100.0, tokens_per_s=1e9)
    with pytest.raises(ResultFileError) as refused:
        import_bytes(_bytes(doc), "claims.json", db=db)
    message = refused.value.format_message()
    assert message.startswith("claims.json: runs[0]")  # the file and the run
    assert "metrics.tokens_per_s: states 1e+09 tokens/s" in message  # the field and its number
    assert "output_tokens/duration_s gives 88 tokens/s" in message  # the other number
    assert "1.14e+07x apart" in message and "correct tokens_per_s, output_tokens or duration_s" in message  # the fix
    assert _stored(db) == []  # nothing written


def test_a_modest_disagreement_is_stored_flagged_and_graded_d_naming_both_numbers(db: Path) -> None:
    doc = _document(output_tokens=8800, duration_s=100.0, tokens_per_s=120.0)
    assert import_bytes(_bytes(doc), "slightly-off.json", db=db).runs_added == 1
    (run,) = _stored(db)
    (flag,) = _ours(run["flags"])
    assert flag.startswith("inconsistent: tokens_per_s 120 vs output_tokens/duration_s 88 (8.8e+03 / 100): 36.4 % "
                           "apart"), flag
    assert run["trust_grade"] == "D" and f"[D] plausibility: {flag}" in run["trust_reasons"]
    assert len(flag) <= 200  # the schema's limit for a flag


def test_a_consistent_file_passes_unflagged(db: Path) -> None:
    consistent = _document(output_tokens=8800, duration_s=100.0, tokens_per_s=88.0, requests_completed=64,
                           requests_per_s=0.64, examples=64, throughput_sps=0.64)
    consistent["runs"][0]["run_id"] = "llm-consistent-0"
    import_bytes(_bytes(consistent), "llm.json", db=db)
    import_bytes(RESULT_FIXTURE.read_bytes(), RESULT_FIXTURE.name, db=db)  # the runner's shape, energy included
    runs = _stored(db)
    assert len(runs) == 3
    for run in runs:
        assert _ours(run["flags"]) == [] and not any("plausibility" in r for r in run["trust_reasons"]), run


def test_a_queued_file_is_checked_when_the_inbox_drains(db: Path) -> None:
    doc = _document(output_tokens=8800, duration_s=100.0, tokens_per_s=1e9)
    with database_held_by_another_process(db) as holder:
        queued = import_bytes(_bytes(doc), "queued.json", db=db)
        assert queued.status == "queued"
        release(holder)
    with Store.open(db, seed_reference=False) as store:
        (report,) = drain_inbox(store)
    assert report.status == "rejected" and "queued.json: runs[0]" in report.message
    assert "states 1e+09 tokens/s" in report.message and "gives 88 tokens/s" in report.message
    assert _stored(db) == []


def test_in_an_archive_the_refused_file_is_named_and_the_others_are_imported(db: Path) -> None:
    bad = Source.single(_bytes(_document(output_tokens=8800, duration_s=100.0, tokens_per_s=1e9)), "bad.json")
    good = Source.single(RESULT_FIXTURE.read_bytes(), "good.json")
    refused, imported = import_sources([(bad, None), (good, None)], db=db)
    assert refused.error is not None and "bad.json: runs[0]" in refused.error.format_message()
    assert imported.report is not None and imported.report.runs_added == 2


# --- the rules ---------------------------------------------------------------------------------------------------

def _loaded(doc: dict[str, Any]) -> LoadedResultFile:
    return LoadedResultFile("f.json", "0" * 64, doc)


@pytest.mark.parametrize(("metrics", "field"), [
    ({"examples": 100, "duration_s": 10.0, "throughput_sps": 20.0}, "throughput_sps"),
    ({"requests_completed": 100, "duration_s": 10.0, "requests_per_s": 5.0}, "requests_per_s"),
    ({"energy_j": 1000.0, "output_tokens": 1000, "j_per_token": 2.0}, "j_per_token"),
    ({"energy_j": 1000.0, "examples": 100, "j_per_sample": 5.0}, "j_per_sample"),
    ({"energy_j": 1000.0, "duration_s": 10.0, "avg_power_w": 50.0, "energy_boundary": "gpu_board"}, "avg_power_w"),
])
def test_each_relation_is_checked(metrics: dict[str, Any], field: str) -> None:
    (found,) = plausibility.findings(_document(**metrics))
    assert found.field == field and not found.gross and found.flag.startswith(f"{FLAG_INCONSISTENT}{field} ")
    bad = plausibility.check(_loaded(_document(**metrics)))
    assert found.flag in bad.document["runs"][0]["flags"]
    assert "window_short_for_sensor" in bad.document["runs"][0]["flags"]  # the file's own flags stay


def test_the_tolerance_is_5_percent_plus_the_rounding_of_the_digits_written() -> None:
    assert plausibility.rounding(88) == pytest.approx(0.5 / 88)
    assert plausibility.rounding(0.15) == pytest.approx(0.005 / 0.15)
    assert plausibility.rounding(1200) == pytest.approx(0.5 / 1200)
    assert plausibility.rounding(2.5e-05) == pytest.approx(0.5e-06 / 2.5e-05)
    assert plausibility.rounding(1 / 3) < 1e-15  # a program's float: no rounding to speak of
    # a reference table's 1.2 s may be 1.15-1.25 s: 100 samples over it give 83.3/s, 78 written is within
    assert plausibility.findings(_document(examples=100, duration_s=1.2, throughput_sps=78.0)) == []
    assert plausibility.findings(_document(examples=100, duration_s=1.2, throughput_sps=74.0)) != []
    # exact figures: 5 % passes, 6 % does not
    assert plausibility.findings(_document(examples=1000, duration_s=1.0 / 3, throughput_sps=3000.0 * 1.0499)) == []
    assert plausibility.findings(_document(examples=1000, duration_s=1.0 / 3, throughput_sps=3000.0 * 1.06)) != []


def test_only_figures_of_one_window_are_compared() -> None:
    training = _document(output_tokens=100, duration_s=10.0, tokens_per_s=5000.0)
    training["runs"][0]["config"]["mode"] = "train"  # tokens processed, not output tokens generated
    assert plausibility.findings(training) == []
    corrected = _document(output_tokens=100, duration_s=10.0, tokens_per_s=5000.0)
    corrected["runs"][0]["flags"].append("throughput_window_corrected")  # ML.ENERGY: the steady state's tokens/s
    assert plausibility.findings(corrected) == []
    # MLPerf Inference: the duration is the power analyzer's window, the throughput LoadGen's
    mlperf = _document(examples=253440, duration_s=3116.735, throughput_sps=86.7369)
    assert plausibility.findings(mlperf, "mlperf-inference") == []
    assert [f.field for f in plausibility.findings(mlperf)] == ["throughput_sps"]
    assert plausibility.findings(_document(examples=0, duration_s=10.0, throughput_sps=50.0)) == []  # 0: not counted


def test_the_ceilings_scale_with_the_accelerators_and_skip_training_tokens() -> None:
    doc = _document(tokens_per_s=5e7)
    (found,) = plausibility.findings(doc)
    assert found.flag.startswith(f"{FLAG_IMPLAUSIBLE}tokens_per_s 5e+07") and found.limit == 1e7
    big = copy.deepcopy(doc)
    big["runs"][0]["config"]["gpu_count"] = 72  # an NVL72 rack: nine systems of eight
    assert plausibility.findings(big) == []
    doc["runs"][0]["config"]["mode"] = "train"
    assert plausibility.findings(doc) == []
    assert plausibility.findings(_document(throughput_sps=2e10)) == []  # Lambda's NCF rows: samples are pairs
    assert [f.field for f in plausibility.findings(_document(requests_per_s=5e6))] == ["requests_per_s"]


def test_a_file_without_findings_is_returned_as_it_was() -> None:
    loaded = _loaded(json.loads(RESULT_FIXTURE.read_text()))
    assert plausibility.check(loaded) is loaded


def test_the_grade_reads_the_flags_own_text() -> None:
    flag = "inconsistent: tokens_per_s 120 vs output_tokens/duration_s 88 (8.8e+03 / 100): 36.4 % apart"
    graded = grade_run(RunFacts(origin_kind="local", duration_s=20.0, flags=(flag, "warmup_not_steady")))
    assert graded.grade == "D" and f"[D] plausibility: {flag}" in graded.texts
    assert not any("plausibility" in t for t in grade_run(RunFacts(origin_kind="local", duration_s=20.0)).texts)
