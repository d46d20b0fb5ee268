"""Damage in a derived table and a full disk (issue 30, 10). The configuration aggregates (configurations,
config_stats) are computed from the runs, so damage there is rebuilt from the runs and never blocks an
export of readable runs. On a full disk every message says what happened, checked: no file is said to
wait in the inbox unless it is there, no sweep that exited is said to have been killed."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import duckdb
import polars as pl
import pytest

from db.export import write_tables
from db.store import Store

REPO = Path(__file__).resolve().parent.parent
HEADER_BYTES = 3 * 4096  # DuckDB's file header and its two database headers precede the blocks


def _export(db: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli", "export", str(out), "--db", str(db)], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(REPO)))


def _configurations(csv: Path) -> pl.DataFrame:
    return pl.read_csv(csv, infer_schema_length=None).sort("config_key")


def corrupt_config_stats(db: Path) -> None:
    """Overwrite part of the block that holds config_stats's rows (and no other table's) in the file."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        block_size = int(con.execute("SELECT block_size FROM pragma_database_size()").fetchone()[0])  # type: ignore[index]
        owners: dict[int, set[str]] = {}
        for (table,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall():
            for (block,) in con.execute(f"SELECT DISTINCT block_id FROM pragma_storage_info('{table}') "
                                        "WHERE block_id >= 0").fetchall():
                owners.setdefault(int(block), set()).add(table)
    finally:
        con.close()
    blocks = [b for b, tables in owners.items() if tables == {"config_stats"}]
    assert blocks, f"config_stats shares its blocks: {owners}"
    with open(db, "r+b") as f:
        for block in blocks:
            f.seek(HEADER_BYTES + block * block_size + 64)
            f.write(b"\xa5" * 4096)
    with duckdb.connect(str(db), read_only=True) as con, pytest.raises(duckdb.Error, match="(?i)checksum|corrupt"):
        con.execute("SELECT sum(mean) FROM config_stats").fetchall()  # the damage is real


def _sql(statement: str) -> Callable[[Path], None]:
    def damage(db: Path) -> None:
        with duckdb.connect(str(db)) as con:
            con.execute(statement)
    return damage


@pytest.fixture(scope="module")
def whole(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    """The configurations table an export of the undamaged database writes."""
    folder = tmp_path_factory.mktemp("whole")
    db = folder / "whole.duckdb"
    shutil.copy(seeded_template, db)
    done = _export(db, folder / "whole.csv")
    assert done.returncode == 0, done.stderr
    return _configurations(folder / "whole_configurations.csv")


@pytest.mark.parametrize("damage", [corrupt_config_stats, _sql("DROP TABLE config_stats"),
                                    _sql("DELETE FROM config_stats"),
                                    _sql("DELETE FROM configurations WHERE trust_grade = 'C'")],
                         ids=["blocks-corrupted", "table-dropped", "rows-deleted", "configurations-deleted"])
def test_export_works_and_the_derived_tables_are_rebuilt(damage: Callable[[Path], None], whole: pl.DataFrame,
                                                         seeded_db: Path, tmp_path: Path) -> None:
    with duckdb.connect(str(seeded_db), read_only=True) as con:
        runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]  # type: ignore[index]
    damage(seeded_db)
    done = _export(seeded_db, tmp_path / "after.csv")
    assert done.returncode == 0, done.stderr
    assert pl.read_csv(tmp_path / "after_runs.csv", infer_schema_length=None).height == runs
    after = _configurations(tmp_path / "after_configurations.csv")
    assert after.height == whole.height > 100
    assert after.equals(whole)  # the same aggregates, recomputed from the runs
    with duckdb.connect(str(seeded_db), read_only=True) as con:  # and stored again, readable
        assert con.execute("SELECT count(*), sum(n) FROM config_stats").fetchone()[0] > 0  # type: ignore[index]
        con.execute("SELECT sum(mean) FROM config_stats").fetchall()


def test_a_read_only_store_with_damaged_aggregates_still_exports(whole: pl.DataFrame, seeded_db: Path,
                                                                  tmp_path: Path) -> None:
    corrupt_config_stats(seeded_db)
    with Store.open_read_only(seeded_db) as store:
        written = write_tables(store, tmp_path / "ro.csv")
    assert _configurations(written[1]).equals(whole)


# --- a full disk: each message says what happened, checked ------------------------------------------------

@contextlib.contextmanager
def full_disk(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on a disk that is full: a 4 MB tmpfs filled to the last block where this machine lets us
    mount one; else ENOSPC raised where the store writes (DuckDB's own error text, as the real disk gives)."""
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)],
                             capture_output=True).returncode == 0
    try:
        Store.open(folder / "x.duckdb", seed_reference=False).close()
        if mounted:
            fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
            try:
                with contextlib.suppress(OSError):  # ENOSPC: full to the last block
                    while True:
                        os.write(fd, b"\0" * 4096)
            finally:
                os.close(fd)
        else:
            import db.store

            def no_space(*args: object, **kwargs: object) -> None:
                raise duckdb.TransactionException(f'Failed to commit: Could not write file "{folder}/x.duckdb.wal": '
                                                  "No space left on device")
            monkeypatch.setattr(db.store, "ingest_loaded", no_space)
        yield folder
    finally:
        if mounted:
            subprocess.run(["umount", str(folder)], check=True)


def test_a_full_disk_never_says_a_file_waits_in_the_inbox(tmp_path: Path, fixture_file: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main
    from joulebench.paths import inbox_dir

    with full_disk(tmp_path / "full", monkeypatch) as folder:
        db = folder / "x.duckdb"
        code = main(["import", str(fixture_file), "--db", str(db)])
        err = capsys.readouterr().err
        inbox = inbox_dir(db)
        waiting = sorted(inbox.iterdir()) if inbox.is_dir() else []
    assert code == 4 and "the disk is full" in err, err
    assert not waiting
    assert "inbox" not in err, err  # it is not there, so it is not said to be
    assert "nothing of this was stored" in err


def _exited_sweep(db: Path, result_file: Path, *, killed_in_a_run: bool) -> None:
    """A real process that registers a sweep, writes its result file and then exits without importing it
    (its import failed), or is SIGKILLed with a run in progress."""
    code = ("import json, os, signal, sys; from pathlib import Path; from ingest import recover\n"
            "marker = recover.register(Path(sys.argv[1]), Path(sys.argv[2]))\n"
            "Path(sys.argv[2]).write_bytes(Path(sys.argv[3]).read_bytes())\n"
            "if sys.argv[4] == 'kill':\n"
            "    run = json.loads(Path(sys.argv[3]).read_bytes())['runs'][0]\n"
            "    recover.set_current(marker, {**run, 'run_id': 'in-progress'})\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n"
            "sys.exit(7)\n")
    subprocess.run([sys.executable, "-c", code, str(db), str(result_file), str(FIXTURE),
                    "kill" if killed_in_a_run else "exit"], env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=60)


FIXTURE = REPO / "tests" / "fixtures" / "result_v1_cpu_runs.json"


@pytest.mark.parametrize("killed_in_a_run", [False, True], ids=["exited", "killed-during-a-run"])
def test_a_sweep_that_exited_is_not_said_to_be_killed(killed_in_a_run: bool, tmp_path: Path) -> None:
    from ingest import open_store

    db = tmp_path / "x.duckdb"
    Store.open(db, seed_reference=False).close()
    _exited_sweep(db, tmp_path / "sweep.json", killed_in_a_run=killed_in_a_run)
    with open_store(db) as store:
        said = store.query("SELECT action, message FROM intake_log").rows()
    assert [action for action, _ in said] == ["recovered"]
    message = said[0][1]
    if killed_in_a_run:
        assert "during a run" in message and "interrupted" in message, message
    else:
        assert "killed" not in message and "no run in progress" in message, message


def test_a_sweep_whose_import_failed_says_where_its_runs_are(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from joulebench.errors import DatabaseError
    from runner.output import ResultSink
    from runner.sweep import SweepResult, finish

    sink = ResultSink(tmp_path / "results" / "sweep.json", tmp_path / "x.duckdb")
    sink.start(recover=True)
    sink.runs.extend(json.loads(FIXTURE.read_bytes())["runs"])

    def no_space() -> None:
        raise DatabaseError(f"{tmp_path / 'x.duckdb'}: the disk is full (No space left on device)")
    monkeypatch.setattr(sink, "ingest", no_space)
    stream = io.StringIO()
    finish(SweepResult(runs=sink.runs), sink, SimpleNamespace(pending=None), ingest=True,  # type: ignore[arg-type]
           stream=stream)
    said = stream.getvalue()
    assert f"the runs were not imported: {sink.out_path} holds them; the next open of the database imports it" in said
    assert sink.out_path.exists()
