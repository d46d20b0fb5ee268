"""Grading many runs at once (db.grading, vectorised) gives exactly the grades and reasons of grading each run
alone (energy.grades.grade_run / grade_aggregate): one definition of the rules, two ways to evaluate it."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from db import Store
from db.grading import STAT_METRICS, config_aggregates, duckdb_numbers, grade_runs
from energy.grades import (
    AGGREGATE_SCHEMA,
    FACT_SCHEMA,
    GRADES,
    RunFacts,
    grade_aggregate,
    grade_aggregate_frame,
    grade_frame,
    grade_run,
)
from energy.stats import aggregate

NUMBER = st.one_of(st.none(), st.floats(-5, 1e5, allow_nan=False),
                   st.sampled_from([0.0, 0.1, 0.125, 0.3, 0.5, 1.0, 2.675, 3.0, 5.0, 10.0, 20.0, 1234.5]))


def _text(*values: str) -> st.SearchStrategy[str | None]:
    return st.one_of(st.none(), st.sampled_from(values))


FACTS = st.fixed_dictionaries({
    "status": st.sampled_from(["ok", "ok", "ok", "oom", "failed"]), "mode": _text("infer", "train", "idle"),
    "origin_kind": _text("local", "upload", "reference"), "origin_format": _text("joulebench-result", "codecarbon", ""),
    "origin_tool": _text("joulebench", "zeus"), "duration_s": NUMBER, "energy_j": NUMBER,
    "energy_boundary": _text("gpu_board", "wall", "system", "estimated", ""),
    "energy_method": _text("counter", "estimated", "sampled"), "sample_period_s": NUMBER,
    "sensor_update_period_s": NUMBER, "energy_disagreement_pct": NUMBER,
    "throttle_reasons": _text("", "sw_power_cap", "sw_power_cap,hw_thermal", "gpu_idle", ",hw_slowdown,"),
    "gpu_clock_avg_mhz": NUMBER, "warmup_steady": st.one_of(st.none(), st.booleans()),
    "flags": st.lists(st.sampled_from(["net_energy_nonpositive", "power_setting_not_applied", "other"]), max_size=2),
    "power_drift_pct": NUMBER, "step_time_drift_pct": NUMBER})


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(FACTS, min_size=1, max_size=40))
def test_runs_graded_at_once_in_duckdb_match_each_run_graded_alone(runs: list[dict]) -> None:
    con = duckdb.connect()
    try:
        together = grade_frame(pl.DataFrame(runs, schema=FACT_SCHEMA), duckdb_numbers(con))
    finally:
        con.close()
    for run, grade, reasons in zip(runs, together["trust_grade"], together["trust_reasons"], strict=True):
        alone = grade_run(RunFacts.from_fields(run))
        assert (grade, reasons.to_list()) == (alone.grade, alone.texts)


VALUES = st.lists(st.one_of(st.floats(0.01, 1000), st.sampled_from([0.5, 1.0, 2.0])), max_size=6)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.lists(st.sampled_from(GRADES), max_size=5),
                          st.lists(st.sampled_from(["ok", "ok", "oom", "failed"]), min_size=1, max_size=6),
                          VALUES, VALUES, st.sampled_from(["J/sample", "J/token", "average power"])),
                min_size=1, max_size=20))
def test_configurations_graded_at_once_match_each_graded_alone(configs: list[tuple]) -> None:
    rows = []
    for grades, statuses, energy, throughput, label in configs:
        e, t = aggregate(energy), aggregate(throughput)
        rows.append({"run_count": len(statuses), "ok_run_count": statuses.count("ok"),
                     "failed_kinds": sorted({s for s in statuses if s != "ok"}),
                     **{f"graded_{g}": grades.count(g) for g in GRADES}, "energy_n": e.n if e else None,
                     "energy_cov_pct": e.cov_pct if e else None, "energy_label": label,
                     "throughput_n": t.n if t else None, "throughput_cov_pct": t.cov_pct if t else None})
    con = duckdb.connect()
    try:
        together = grade_aggregate_frame(pl.DataFrame(rows, schema=AGGREGATE_SCHEMA), duckdb_numbers(con))
    finally:
        con.close()
    for (grades, statuses, energy, throughput, label), grade, reasons in zip(
            configs, together["trust_grade"], together["trust_reasons"], strict=True):
        alone = grade_aggregate(grades, statuses, throughput=aggregate(throughput), energy=aggregate(energy),
                                energy_label=label)
        assert (grade, reasons.to_list()) == (alone.grade, alone.texts)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.lists(st.one_of(st.none(), st.floats(0.01, 1e4), st.just(float("nan"))), min_size=1,
                         max_size=6), min_size=1, max_size=10))
@example([[7777.77] * 5])  # equal values: the frame's std is 0.0, the scalar one's 1.0e-12 (found by hypothesis in CI)
def test_configuration_aggregates_at_once_match_energy_stats(groups: list[list[float | None]]) -> None:
    members = pl.DataFrame([{"config_key": f"k{i}", "status": "ok", "j_per_sample": v}
                            for i, values in enumerate(groups) for v in values])
    members = members.with_columns(pl.lit(None, pl.Float64).alias(m) for m in STAT_METRICS if m != "j_per_sample")
    got = {r["config_key"]: r for r in config_aggregates(members).to_dicts()}
    for i, values in enumerate(groups):
        want = aggregate(values)
        if want is None:
            assert f"k{i}" not in got
            continue
        row = got[f"k{i}"]
        assert row["n"] == want.n
        for field in ("mean", "std", "cov_pct", "ci95_low", "ci95_high"):
            expected = getattr(want, field)
            assert (row[field] is None) == (expected is None), field
            if expected is not None:  # equal values: one path's std is 0.0, the other's a rounding error (1e-12)
                assert row[field] == pytest.approx(expected, rel=1e-12, abs=1e-9 * max(1.0, abs(want.mean))), field


def test_a_database_of_ten_thousand_ungraded_runs_is_graded_as_each_run_alone(tmp_path: Path,
                                                                               seeded_template: Path) -> None:
    """The store's path end to end (the runs table rewritten whole above REWRITE_AT runs): every stored grade
    and reason is the one grade_run gives that run."""
    from db.synthetic import fill

    path = tmp_path / "many.duckdb"
    shutil.copy(seeded_template, path)
    with Store.open(path) as store:
        seeded = store.query("SELECT count(*) FROM runs").item()
        fill(store, 10_000, 4)
        assert store.ungraded_runs() == 10_000
        assert grade_runs(store.con, None) == 10_000 + seeded
        stored = store.query("SELECT * FROM runs ORDER BY run_id").to_dicts()
        configs = store.query("SELECT count(*) FROM configurations").item()
    assert configs > 0 and all(r["trust_grade"] in GRADES for r in stored)
    for row in stored[::97]:  # every 97th run: grading each alone takes a few ms
        alone = grade_run(RunFacts.from_fields(row, power_drift_pct=_drift(path, row["run_id"])))
        assert (row["trust_grade"], row["trust_reasons"]) == (alone.grade, alone.texts)


def _drift(path: Path, run_id: str) -> float | None:
    from energy.steady import drift_pct

    con = duckdb.connect(str(path), read_only=True)
    try:
        samples = con.execute("SELECT t_s, power_w FROM power_samples WHERE run_id = ?", [run_id]).fetchall()
    finally:
        con.close()
    return drift_pct([t for t, _ in samples], [w for _, w in samples]) if samples else None


TEXT = st.one_of(st.none(), st.sampled_from(["A100 80GB", "bert-base", "", "fp16"]),
                 st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12))
BY_TYPE = {"VARCHAR": TEXT, "BOOLEAN": st.one_of(st.none(), st.booleans()),
           "DOUBLE": st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True),
                               st.sampled_from([250.0, 0.1, -0.0])),
           "BIGINT": st.one_of(st.none(), st.integers(-2**63, 2**63 - 1), st.integers(0, 512)),
           "INTEGER": st.one_of(st.none(), st.integers(-2**31, 2**31 - 1))}


def _key_types() -> dict[str, str]:
    """The store's type of every field a configuration key reads (from a migrated database)."""
    from db.migrate import apply_migrations
    from joulebench.configuration import KEY_ALWAYS, KEY_WHERE_STATED

    con = duckdb.connect()
    try:
        apply_migrations(con)
        types = dict(con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = 'runs'"
                                 ).fetchall())
    finally:
        con.close()
    return {c: types[c] for c in (*KEY_ALWAYS, *KEY_WHERE_STATED, "origin_sha256")}


KEY_TYPES = _key_types()
KEY_ROW = st.fixed_dictionaries({c: (st.one_of(st.none(), st.sampled_from(["local", "upload", "reference"]))
                                     if c == "origin_kind" else BY_TYPE[t]) for c, t in KEY_TYPES.items()})


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(KEY_ROW, min_size=1, max_size=30))
def test_config_keys_computed_in_duckdb_are_the_bytes_config_key_writes(rows: list[dict]) -> None:
    """The configuration key is computed in SQL for 100,000 runs at once (db.grading.config_key_sql), Python only
    writing those whose text needs json.dumps' escapes: on random rows (any text, NaN, infinities, -0.0, nulls,
    the largest integers) every key is config_key's."""
    from db.grading import _fill_config_keys, config_key, config_key_sql

    con = duckdb.connect()
    try:
        con.execute("CREATE TABLE runs (run_id VARCHAR, " + ", ".join(f"{c} {t}" for c, t in KEY_TYPES.items())
                    + ")")
        con.executemany(f"INSERT INTO runs VALUES ({', '.join('?' * (len(KEY_TYPES) + 1))})",
                        [[f"r{i}", *(row[c] for c in KEY_TYPES)] for i, row in enumerate(rows)])
        got = _fill_config_keys(con.sql(f"SELECT *, {config_key_sql(con)} AS config_key FROM runs").pl())
    finally:
        con.close()
    want = {f"r{i}": config_key(row) for i, row in enumerate(rows)}
    assert dict(zip(got["run_id"], got["config_key"], strict=True)) == want
