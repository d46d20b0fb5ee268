"""Each run's drift stored once (issue 31, migration 0023): a run's samples never change, so the drift of its power
trace and step times is computed when it is first graded and kept in `run_drift`; a regrade of every run reads it
instead of scanning every sample again (100,000 runs / 10 M samples: about half of a regrade)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import db.grading as grading
from db import Store
from ingest import import_file

H100 = Path(__file__).parent / "fixtures" / "h100"
FILES = ("repeats-short-windows.json", "repeats-10s-windows.json")


def _grades(store: Store) -> pl.DataFrame:
    return store.query("SELECT run_id, trust_grade, trust_reasons, config_key FROM runs ORDER BY run_id")


def _stored(store: Store) -> pl.DataFrame:
    return store.query("SELECT run_id, power_drift_pct, step_time_drift_pct FROM run_drift ORDER BY run_id")


@pytest.fixture
def graded(seeded_db: Path) -> Path:
    for name in FILES:
        assert import_file(H100 / name, db=seeded_db).status == "imported"
    return seeded_db


def test_an_import_stores_each_runs_drift_as_computed_from_its_samples(graded: Path) -> None:
    with Store.open(graded) as store:
        stored = _stored(store)
        computed = grading.drift_frame(store.con, None)
        runs = int(store.query("SELECT count(*) FROM runs").item())
    assert stored.height == runs  # a row for every run, also those with too few samples for a drift
    assert stored["run_id"].n_unique() == runs
    both = computed.join(stored, on="run_id", how="left", suffix="_stored")
    assert both.height > 0 and both["power_drift_pct"].is_not_null().any()
    for column in ("power_drift_pct", "step_time_drift_pct"):
        for fresh, kept in zip(both[column], both[f"{column}_stored"], strict=True):
            assert kept == (pytest.approx(fresh, abs=1e-9) if fresh is not None else None)


def test_a_regrade_of_every_run_reads_the_stored_drifts_and_grades_the_same(
        graded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Store.open(graded) as store:
        before = _grades(store)

        def scanned(*_: object) -> pl.DataFrame:
            raise AssertionError("a regrade scanned the power samples again")

        monkeypatch.setattr(grading, "drift_frame", scanned)
        store.grade_all()
        assert _grades(store).equals(before)


def test_a_run_without_a_stored_drift_gets_it_at_its_next_grading(graded: Path) -> None:
    with Store.open(graded) as store:
        before, kept = _grades(store), _stored(store)
        store.con.execute("DELETE FROM run_drift WHERE run_id IN (SELECT run_id FROM run_drift ORDER BY run_id "
                          "LIMIT 3)")
        store.grade_all()
        assert _grades(store).equals(before)
        again = _stored(store)
    assert again["run_id"].to_list() == kept["run_id"].to_list()  # the three computed again, none twice
    for column in ("power_drift_pct", "step_time_drift_pct"):
        for fresh, old in zip(again[column], kept[column], strict=True):
            assert fresh == (pytest.approx(old, abs=1e-9) if old is not None else None)


def test_a_store_where_most_runs_lack_a_drift_gets_them_from_one_scan_of_the_samples(graded: Path) -> None:
    """A store from before schema 23 that has graded a few new runs since: most drifts are computed from every
    sample at once (not filtered by 100,000 ids); those already stored are neither written twice nor changed."""
    with Store.open(graded) as store:
        before, kept = _grades(store), _stored(store)
        store.con.execute("DELETE FROM run_drift WHERE run_id NOT IN (SELECT min(run_id) FROM run_drift)")
        assert _stored(store).height == 1 < kept.height - 1
        store.grade_all()
        assert _grades(store).equals(before)
        again = _stored(store)
    assert again["run_id"].to_list() == kept["run_id"].to_list()
    for column in ("power_drift_pct", "step_time_drift_pct"):
        for fresh, old in zip(again[column], kept[column], strict=True):
            assert fresh == (pytest.approx(old, abs=1e-9) if old is not None else None)
