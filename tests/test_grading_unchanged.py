"""A regrade of every run writes only what changed (issue 31: grading 100,000 runs within its target): a regrade
that changes nothing leaves the runs table and the configuration tables as they were, and one that changes a
few grades updates those runs in place, with the same grades as grading from scratch."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from db import Store
from db.grading import REWRITE_AT
from db.synthetic import fill


def table_oid(store: Store, table: str) -> int:
    """Changes when the table is made anew (db.grading._rewrite)."""
    return int(store.query(f"SELECT table_oid FROM duckdb_tables() WHERE table_name = '{table}'").item())


@pytest.fixture
def graded(seeded_template: Path, tmp_path: Path) -> Path:
    path = tmp_path / "store.duckdb"
    shutil.copy(seeded_template, path)
    with Store.open(path) as store:
        fill(store, REWRITE_AT + 200, 6)  # more than REWRITE_AT: a regrade of all would write the table anew
        store.grade_all()
    return path


def test_a_regrade_that_changes_nothing_writes_nothing(graded: Path) -> None:
    with Store.open(graded) as store:
        before = {t: table_oid(store, t) for t in ("runs", "configurations", "config_stats")}
        stamps = store.query("SELECT config_key, graded_at FROM configurations ORDER BY config_key")
        assert store.grade_all() > REWRITE_AT
        assert {t: table_oid(store, t) for t in before} == before
        assert store.query("SELECT config_key, graded_at FROM configurations ORDER BY config_key").equals(stamps)


def test_a_regrade_that_changes_a_few_grades_updates_them_as_a_fresh_grading_would(graded: Path,
                                                                                   tmp_path: Path) -> None:
    with Store.open(graded) as store:
        run, grade, reasons = store.query("SELECT run_id, trust_grade, trust_reasons FROM runs "
                                          "WHERE run_id LIKE 'syn-%' ORDER BY run_id LIMIT 1").row(0)
        store.con.execute("UPDATE runs SET trust_grade = ?, trust_reasons = ['stale'] WHERE run_id = ?",
                          ["D" if grade != "D" else "A", run])
        oid = table_oid(store, "runs")
        store.grade_all()
        assert table_oid(store, "runs") == oid  # one run changed: updated in place, the table not written anew
        assert store.query("SELECT trust_grade, trust_reasons FROM runs WHERE run_id = ?", [run]).row(0) == (
            grade, reasons)
        ours = store.query("SELECT run_id, trust_grade, trust_reasons, config_key FROM runs ORDER BY run_id")
        derived = store.query("SELECT * EXCLUDE (graded_at) FROM configurations ORDER BY config_key")
    fresh = tmp_path / "fresh.duckdb"
    shutil.copy(graded, fresh)
    with Store.open(fresh) as store:
        store.con.execute("UPDATE runs SET trust_grade = NULL, trust_reasons = NULL, config_key = NULL")
        store.con.execute("DELETE FROM configurations")
        store.con.execute("DELETE FROM config_stats")
        store.grade_all()
        assert store.query("SELECT run_id, trust_grade, trust_reasons, config_key FROM runs ORDER BY run_id").equals(
            ours)
        assert store.query("SELECT * EXCLUDE (graded_at) FROM configurations ORDER BY config_key").equals(derived)
