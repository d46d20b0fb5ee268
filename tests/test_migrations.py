from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from db import columns, migrate
from db.connection import connect
from joulebench.errors import DatabaseError


def _tables(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns ORDER BY ALL").fetchall()


def test_migrations_apply_once_and_twice_changes_nothing(tmp_path: Path) -> None:
    con = connect(tmp_path / "m.duckdb")
    assert migrate.apply_migrations(con) == [m.version for m in migrate.available_migrations()]
    before = _tables(con)
    versions = con.execute("SELECT version, name FROM schema_migrations").fetchall()
    assert migrate.apply_migrations(con) == []
    assert _tables(con) == before
    assert con.execute("SELECT version, name FROM schema_migrations").fetchall() == versions
    assert sorted(versions)[0] == (1, "initial")


def test_failing_migration_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "migrations"
    folder.mkdir()
    (folder / "0001_first.sql").write_text("CREATE TABLE a (x INTEGER);")
    (folder / "0002_broken.sql").write_text("CREATE TABLE b (x INTEGER); CREATE TABLE c (x NOSUCHTYPE);")
    monkeypatch.setattr(migrate, "MIGRATIONS_DIR", folder)
    con = connect(tmp_path / "m.duckdb")
    with pytest.raises(duckdb.Error):
        migrate.apply_migrations(con)
    names = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert "a" in names and "b" not in names
    assert con.execute("SELECT version FROM schema_migrations").fetchall() == [(1,)]


def test_database_from_a_newer_joulebench_is_refused(tmp_path: Path) -> None:
    con = connect(tmp_path / "m.duckdb")
    migrate.apply_migrations(con)
    con.execute("INSERT INTO schema_migrations VALUES (999, 'future', now())")
    with pytest.raises(DatabaseError, match="schema version 999"):
        migrate.apply_migrations(con)


def test_every_result_file_field_has_a_column(tmp_path: Path) -> None:
    con = connect(tmp_path / "m.duckdb")
    migrate.apply_migrations(con)

    def cols(table: str) -> set[str]:
        return {r[0] for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table]).fetchall()}

    assert set(columns.run_arrow_schema().names) == cols("runs")
    assert set(columns.environment_fields()) | {"env_id"} == cols("environments")
    assert {("device_name" if k == "name" else k) for k in columns.catalog_device_fields()} == cols("devices")
    assert set(columns.finding_fields()) | {"source_id"} == cols("findings")


def test_a_database_seeded_before_the_reference_fixes_gets_them(seeded_db: Path) -> None:
    """0006 corrects the reference rows of a database seeded by an older JouleBench (a new one is
    seeded from the corrected CSVs after its migrations). Simulated: the old values put back,
    then the migration's data part run again, gives the new database's rows exactly."""
    from db import Store

    cols = ("SELECT run_id, throughput_sps, latency_avg_ms, weak_scaling, weak_scaling_as_printed, "
            "mem_used_device_mb, notes, e.ram_gb FROM runs r LEFT JOIN environments e USING (env_id) "
            "WHERE run_id LIKE 'ref:%' ORDER BY run_id")
    sql = (migrate.MIGRATIONS_DIR / "0006_labels_not_stated.sql").read_text()
    data_part = sql[sql.index("-- Reference data corrected"):]
    with Store.open(seeded_db) as store:
        fixed = store.query(cols)
        con = store.con
        con.execute("UPDATE runs SET throughput_sps = 650.73, latency_avg_ms = 6.3 "
                    "WHERE run_id = 'ref:runs_nvidia_bert_inference:dgx2-v100-32gb-infer-base-s128-b4-fp16'")
        con.execute("UPDATE runs SET weak_scaling = weak_scaling_as_printed, weak_scaling_as_printed = NULL "
                    "WHERE weak_scaling_as_printed IS NOT NULL")
        con.execute("UPDATE runs SET mem_used_device_mb = 21000 "
                    "WHERE run_id = 'ref:runs_rtx3060_vs_agx_xavier:agx-train-fp16-3x8-mem'")
        con.execute("UPDATE environments SET ram_gb = 128 WHERE ram_gb = 137.438953472")
        assert store.query("SELECT count(*) AS n FROM runs WHERE weak_scaling_as_printed IS NOT NULL")["n"][0] == 0
        con.execute(data_part)
        assert store.query(cols).equals(fixed)


def test_grading_killed_after_its_migration_is_resumed_on_the_next_open(seeded_db: Path) -> None:
    """Issue 17, F6: a migration killed by SIGKILL after committing its schema left every old run
    ungraded (trust_grade NULL, no configurations) through later opens."""
    import duckdb

    from db.store import Store

    with duckdb.connect(str(seeded_db)) as con:  # the state a kill between the two leaves
        con.execute("UPDATE runs SET trust_grade = NULL, trust_reasons = NULL, config_key = NULL")
        con.execute("DELETE FROM config_stats")
        con.execute("DELETE FROM configurations")
    with Store.open(seeded_db) as store:
        assert store.ungraded_runs() == 0
        assert store.query("SELECT count(*) AS n FROM configurations")["n"][0] > 0


def test_config_stats_loses_its_index_and_keeps_its_rows(seeded_db: Path) -> None:
    """Migration 0026: config_stats without a primary key (db.grading writes a row per configuration and figure by
    construction); a store made before it keeps every row, and a regrade writes the same rows. configurations keeps
    its key, which makes two transactions that add the same configuration conflict."""
    from db.store import Store

    rows = {"configurations": "SELECT * EXCLUDE (graded_at) FROM configurations ORDER BY config_key",
            "config_stats": "SELECT * FROM config_stats ORDER BY config_key, metric"}
    keys = "SELECT table_name FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY' ORDER BY 1"
    with duckdb.connect(str(seeded_db)) as con:  # the table as schema 25 had it, with its primary key
        before = {table: con.execute(sql).fetchall() for table, sql in rows.items()}
        con.execute("CREATE TABLE _old AS SELECT * FROM config_stats")
        con.execute("DROP TABLE config_stats")
        con.execute("CREATE TABLE config_stats AS SELECT * FROM _old WITH NO DATA")
        con.execute("ALTER TABLE config_stats ADD PRIMARY KEY (config_key, metric)")
        con.execute("INSERT INTO config_stats SELECT * FROM _old")
        con.execute("DROP TABLE _old")
        con.execute("DELETE FROM schema_migrations WHERE version = 26")
        assert "config_stats" in {r[0] for r in con.execute(keys).fetchall()}
    with Store.open(seeded_db) as store:
        indexed = {r[0] for r in store.con.execute(keys).fetchall()}
        assert "config_stats" not in indexed and {"configurations", "runs"} <= indexed
        assert {table: store.con.execute(sql).fetchall() for table, sql in rows.items()} == before
        store.grade_all()
        assert {table: store.con.execute(sql).fetchall() for table, sql in rows.items()} == before
        nullable = store.con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = 'config_stats' "
                                     "AND column_name IN ('config_key', 'metric') AND is_nullable").fetchall()
        assert nullable == []


def test_two_writers_adding_the_same_configuration_at_once_conflict(seeded_db: Path) -> None:
    """Two transactions of one process (two imports of the app) that write the same new configuration: the second
    commit fails on configurations' key, so neither derived table ever holds a configuration twice."""
    from db.grading import refresh_configurations
    from db.store import Store

    with Store.open(seeded_db) as store:
        [(key,)] = store.con.execute("SELECT config_key FROM runs WHERE status = 'ok' AND isfinite(throughput_sps) "
                                     "ORDER BY config_key LIMIT 1").fetchall()
        store.con.execute("DELETE FROM configurations WHERE config_key = ?", [key])
        store.con.execute("DELETE FROM config_stats WHERE config_key = ?", [key])
        first, second = store.con.cursor(), store.con.cursor()
        first.execute("BEGIN TRANSACTION")
        second.execute("BEGIN TRANSACTION")
        refresh_configurations(first, [key])
        refresh_configurations(second, [key])
        first.execute("COMMIT")
        with pytest.raises(duckdb.TransactionException, match="PRIMARY KEY or UNIQUE constraint"):
            second.execute("COMMIT")
        counts = store.con.execute("SELECT (SELECT count(*) FROM configurations WHERE config_key = $1), "
                                   "(SELECT count(*) FROM config_stats WHERE config_key = $1), "
                                   "(SELECT count(DISTINCT metric) FROM config_stats WHERE config_key = $1)",
                                   [key]).fetchone()
    assert counts is not None and counts[0] == 1 and counts[1] == counts[2] > 0, counts
