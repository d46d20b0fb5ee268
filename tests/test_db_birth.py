"""A database is born whole (issue 30, defect 4): killing the first command that creates it, at any
moment and by any signal, leaves no database or a complete one, and the next command works.

Real `joulebench db info` processes are killed (SIGKILL, SIGTERM, SIGINT) at seeded random moments
spread over the creation time measured first; after each kill the file either does not exist or
opens read-only with the full reference data.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from db.connection import connect
from db.migrate import apply_migrations
from db.store import Store

REPO = Path(__file__).resolve().parent.parent
COUNTED = ("sources", "runs", "devices", "findings", "power_modes", "configurations", "config_stats")
KILLS = (signal.SIGKILL, signal.SIGTERM, signal.SIGINT) * 2


def _command(db: Path) -> list[str]:
    return [sys.executable, "-m", "cli", "db", "info", "--db", str(db)]


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO))


def _counts(db: Path) -> dict[str, int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t: int(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in COUNTED}  # type: ignore[index]
    finally:
        con.close()


def _started(folder: Path, proc: subprocess.Popen[bytes], timeout_s: float = 60.0) -> float:
    """Wait until the process has made its first file in the (empty) folder: creation has begun."""
    deadline = time.monotonic() + timeout_s
    while not any(folder.iterdir()):
        assert proc.poll() is None, "the command ended before creating anything"
        assert time.monotonic() < deadline, "no database file appeared"
        time.sleep(0.005)
    return time.monotonic()


@dataclass(frozen=True)
class Reference:
    counts: dict[str, int]
    creation_s: float  # from the first file until the command ended


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    """A database created without interruption, by the same command, and how long creating it takes."""
    folder = tmp_path_factory.mktemp("whole")
    db = folder / "whole.duckdb"
    proc = subprocess.Popen(_command(db), env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        began = _started(folder, proc)
        out, err = proc.communicate(timeout=120)
        ended = time.monotonic()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err.decode()
    counts = _counts(db)
    assert counts["runs"] > 100 and counts["devices"] > 5 and counts["power_modes"] > 0
    return Reference(counts, ended - began)


def _kill_at(db: Path, sig: signal.Signals, delay_s: float) -> tuple[int, str]:
    proc = subprocess.Popen(_command(db), env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _started(db.parent, proc)
        time.sleep(delay_s)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err.decode()


def test_a_killed_creation_leaves_no_database_or_a_complete_one(reference: Reference, tmp_path: Path) -> None:
    rng = random.Random(30)
    for i, sig in enumerate(KILLS):
        folder = tmp_path / f"k{i}"
        folder.mkdir()
        db = folder / "x.duckdb"
        delay = rng.uniform(0.0, reference.creation_s)  # spread over the whole creation
        code, err = _kill_at(db, sig, delay)
        where = f"{sig.name} {delay:.2f} s into creation (exit {code}): {err[-600:]}"
        if db.exists():
            try:
                counts = _counts(db)
            except Exception as e:  # noqa: BLE001 (DuckDB's InternalException for a log it cannot replay)
                pytest.fail(f"{where}: the database left behind does not open: {str(e)[:200]}")
            assert counts == reference.counts, f"{where}: a database without its full reference data"
        if sig == signal.SIGINT and code not in (0, -signal.SIGINT):  # Ctrl-C while it was made: one line, 130
            assert code == 130, where
            assert "Traceback" not in err and "Query interrupted" not in err, where
            assert len(err.strip().splitlines()) == 1, where
        again = subprocess.run(_command(db), env=_env(), capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, f"{where}: the next db info failed: {again.stderr}"
        assert _counts(db) == reference.counts, where
        assert sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) == [], \
            f"{where}: what the killed creation left was not removed"


def test_two_processes_creating_one_database_at_once_both_succeed(reference: Reference, tmp_path: Path) -> None:
    db = tmp_path / "shared.duckdb"
    procs = [subprocess.Popen(_command(db), env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(2)]
    try:
        results = [(p.wait(timeout=120), p.stderr.read().decode() if p.stderr else "") for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert [code for code, _ in results] == [0, 0], results
    assert _counts(db) == reference.counts
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared.duckdb"]


def test_a_database_whose_seeding_never_finished_is_seeded(reference: Reference, tmp_path: Path) -> None:
    """The state an interrupted creation left before databases were born whole: the schema, no reference data."""
    db = tmp_path / "unseeded.duckdb"
    con = connect(db)
    apply_migrations(con)
    con.close()
    assert _counts(db)["runs"] == 0
    Store.open(db).close()
    assert _counts(db) == reference.counts
    Store.open(db).close()  # seeded once: opening again adds nothing
    assert _counts(db) == reference.counts


def test_a_database_made_without_reference_data_stays_so(tmp_path: Path) -> None:
    db = tmp_path / "bare.duckdb"
    Store.open(db, seed_reference=False).close()
    Store.open(db).close()
    assert _counts(db)["runs"] == 0


def test_a_log_left_without_its_database_is_not_replayed_onto_a_new_one(reference: Reference, tmp_path: Path) -> None:
    """A killed writer leaves x.duckdb and x.duckdb.wal; the user moves the damaged x.duckdb away (as the
    damage message says) and the log stays: DuckDB would replay it onto the next new x.duckdb."""
    db = tmp_path / "x.duckdb"
    writer = ("import duckdb, os, sys\ncon = duckdb.connect(sys.argv[1])\n"
              "con.execute('CREATE TABLE stray (x INTEGER)')\ncon.execute('INSERT INTO stray VALUES (1)')\n"
              "os._exit(0)\n")
    subprocess.run([sys.executable, "-c", writer, str(db)], check=True, timeout=60)
    assert db.with_name("x.duckdb.wal").exists()
    shutil.move(db, tmp_path / "damaged.duckdb")
    Store.open(db).close()
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    finally:
        con.close()
    assert "stray" not in tables
    assert _counts(db) == reference.counts
