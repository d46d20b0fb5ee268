"""Issue 28 item 2: a figure the tool that wrote it partly modelled is said to be partly estimated on every page.

A real CodeCarbon file (tests/fixtures/formats/codecarbon/crystalgazers-emissions-2.x-apple-m1pro.csv, CodeCarbon
2.x on an Apple M1 Pro, where RAPL cannot be read: `cpu_power` 5.0 W and `ram_power` 12.0 W are CodeCarbon's fixed
figures) is imported into a real DuckDB store; Run detail, Compare's chart table, its all-devices table, its runs
table and Decide's figure basis must all say "partly estimated", and the grade is capped at C.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from db import Store, queries
from decision.figures import figure_basis
from decision.text import ESTIMATED_BASIS_NAMES, basis_of, energy_estimate
from explorer import compare
from tests.helpers import ingest_runs, open_page, table_texts

CODECARBON = (Path(__file__).parent / "fixtures" / "formats" / "codecarbon"
              / "crystalgazers-emissions-2.x-apple-m1pro.csv")
PARTLY = "imported, energy partly estimated"


@pytest.fixture
def store_db(seeded_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    db = tmp_path / "jb.duckdb"
    runs = ingest_runs(db, seeded_template, CODECARBON, mode="train")
    assert len(runs) == 2  # the file's two jobs
    monkeypatch.setenv("JOULEBENCH_DB", str(db))
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    return db


def _codecarbon_runs(db: Path) -> pl.DataFrame:
    with Store.open_reading(db) as store:
        runs = queries.runs_table(store)
    return runs.filter(pl.col("device_name") == "Apple M1 Pro")


def test_the_one_rule_reads_the_runs_own_fields() -> None:
    assert energy_estimate("reported", "system", ["energy_partly_estimated"]) == "partly estimated"
    assert energy_estimate("estimated", "cpu_package", []) == "estimated"
    assert energy_estimate("sampled", "estimated", None) == "estimated"
    assert energy_estimate("counter", "gpu_board", ["window_short_for_sensor"]) is None
    assert basis_of("local", "partly estimated") == "run here, energy partly estimated"
    assert basis_of("local", True) == ESTIMATED_BASIS_NAMES["local"]
    assert basis_of("local") == "measured here"


def test_every_table_says_partly_estimated_and_the_grade_is_c(store_db: Path) -> None:
    runs = _codecarbon_runs(store_db)
    assert runs.height == 2
    row = runs.row(0, named=True)
    # the file's figures, by hand: 0.0062087013193633 kWh over 1314.803290128708 s
    first = runs.filter(pl.col("duration_s").round(3) == 1314.803).row(0, named=True)
    assert first["energy_j"] == pytest.approx(0.0062087013193633 * 3.6e6)
    assert row["energy_boundary"] == "system" and "energy_partly_estimated" in row["flags"]
    assert set(runs["trust_grade"].to_list()) == {"C"}
    with Store.open_reading(store_db) as store:
        detail = queries.run_detail(store, row["run_id"])
    assert detail is not None and any(r.startswith("[C] boundary: partly estimated") for r in detail["trust_reasons"])

    labelled, _ = compare.with_labels(runs)
    metric = compare.METRICS["power"]
    assert set(compare.runs_table(labelled, metric, "/run")["Basis"].to_list()) == {PARTLY}
    assert set(compare.bars(labelled, metric)["basis"].to_list()) == {PARTLY}
    costed = runs.with_columns(pl.lit(None, pl.Float64).alias("cost_per_1m_samples"),  # the page adds them first
                            pl.lit(None, pl.Float64).alias("electricity_cost_per_1m"))
    table = compare.config_table(costed, None, metric, "USD")
    assert set(table["Basis"].to_list()) == {PARTLY}
    # a throughput is measured either way; an energy figure is not
    assert set(compare.bars(labelled, compare.METRICS["throughput"])["basis"].to_list()) <= {"imported"}
    assert figure_basis(row, energy=True) == PARTLY and figure_basis(row) == "imported"


def test_the_compare_page_says_it(store_db: Path) -> None:
    at = open_page("compare", {"device": ["Apple M1 Pro"], "metric": ["power"]})
    frames = [getattr(f.value, "data", f.value) for f in at.dataframe]
    with_basis = [f for f in frames if "Basis" in f.columns]
    assert len(with_basis) == 2  # the all-devices table and the runs behind the chart
    for frame in with_basis:
        assert set(frame["Basis"]) == {PARTLY}, frame["Basis"]
    devices = next(f for f in with_basis if "Trust grade" in f.columns and "Runs" in f.columns)
    assert set(devices["Trust grade"]) == {"C"}
    assert not any("measured here" in line for line in table_texts(at))
