"""`joulebench db upkeep` (issue 30, defect 10; issue 29, item 1): a real pusher killed mid-push leaves Parquet files
no snapshot references, and upkeep removes them, on a PostgreSQL catalog (tests/pg.py, one server per test session)
and on a SQLite one, while the store reads the same runs; upkeep running in the middle of a push's transaction makes
that push retry and lose nothing (the push lock); snapshots older than the team's retention are expired, and
`--as-of` one of them says which snapshots the store still holds."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import db.push as push_module
from cli.main import main
from db import Store
from db.lake import LakeUrl
from db.push import push
from db.upkeep import upkeep
from tests.pg import Postgres, postgres  # noqa: F401
from tests.test_push import UPLOADS, _local, _run_ids

_names = itertools.count()
JOULEBENCH = str(Path(sys.executable).with_name("joulebench"))


class Lake:
    """A team store under test and an independent look at its catalog (psql or sqlite3, not DuckLake)."""

    def __init__(self, url: str, data: Path, postgres: Postgres | None = None) -> None:  # noqa: F811
        self.url, self.data, self.pg = url, data, postgres
        self.lake = LakeUrl.parse(url, str(data))

    def catalog(self, sql: str, timeout: float = 30) -> list[tuple]:
        if self.pg is not None:
            dbname = self.url.split("dbname=")[1].split()[0]
            out = self.pg.psql(sql, dbname=dbname)
            return [tuple(line.split("|")) for line in out.splitlines() if line]
        con = sqlite3.connect(self.url.removeprefix("ducklake:sqlite:"), timeout=timeout)
        try:
            return con.execute(sql).fetchall()
        finally:
            con.close()

    def on_disk(self) -> set[str]:
        return {p.name for p in self.data.rglob("*.parquet")}

    def referenced(self, timeout: float = 30) -> set[str]:
        rows = self.catalog("SELECT path FROM ducklake_data_file UNION ALL SELECT path FROM ducklake_delete_file "
                            "UNION ALL SELECT path FROM ducklake_files_scheduled_for_deletion", timeout)
        return {Path(r[0]).name for r in rows}

    def runs(self) -> list[tuple]:
        with Store.open_team_store(self.url, data_path=str(self.data)) as store:
            return store.query("SELECT run_id, source_id, trust_grade, energy_j, config_key FROM runs "
                               "ORDER BY run_id").rows()


@pytest.fixture(params=["postgres", "sqlite"])
def lake(request: pytest.FixtureRequest, tmp_path: Path) -> Lake:
    data = tmp_path / "parquet"
    if request.param == "sqlite":
        return Lake(f"ducklake:sqlite:{tmp_path / 'team.sqlite'}", data)
    server: Postgres = request.getfixturevalue("postgres")
    name = f"upkeep{next(_names)}"
    server.psql(f"CREATE DATABASE {name}", dbname="postgres")
    return Lake(server.url(name), data, server)


def _kill_with_files_in_flight(lake: Lake, local: Path, log: Path) -> None:
    """Start a real `joulebench push`; once its first source committed, freeze it (SIGSTOP) whenever new Parquet
    files appear, and SIGKILL it the first time some of them are in no snapshot: files written by a transaction
    that never commits."""
    with open(log, "w") as out:
        proc = subprocess.Popen([JOULEBENCH, "push", "--store", lake.url, "--data-path", str(lake.data), "--db",
                                 str(local), "--machine", "box-a"], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        seen: set[str] = set()
        while proc.poll() is None:
            if not re.search(r"  pushed \w+: [1-9]", log.read_text()):  # first, runs in the store to read
                time.sleep(0.02)
                continue
            files = lake.on_disk()
            if files - seen:
                os.killpg(proc.pid, signal.SIGSTOP)
                try:
                    if files - lake.referenced(timeout=0.2):
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait(timeout=60)
                        return
                except sqlite3.OperationalError:
                    pass  # frozen inside its commit, holding the SQLite lock: look again in a moment
                finally:
                    if proc.poll() is None:
                        os.killpg(proc.pid, signal.SIGCONT)
                seen = files
            time.sleep(0.02)
        pytest.fail(f"the push finished before it could be killed with files in flight: {log.read_text()[-2000:]}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)


def test_upkeep_removes_the_files_a_killed_push_left_and_the_store_reads_the_same(
        lake: Lake, seeded_template: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    local = _local(seeded_template, tmp_path, "box-a", None)
    _kill_with_files_in_flight(lake, local, tmp_path / "push.log")
    on_disk, referenced = lake.on_disk(), lake.referenced()
    orphans = on_disk - referenced
    assert orphans, (len(on_disk), len(referenced))  # the "24 on disk, 18 referenced"
    runs = lake.runs()
    assert 0 < len(runs) < len(_run_ids(local))  # killed mid-way

    assert main(["db", "upkeep", "--store", lake.url, "--data-path", str(lake.data), "--grace-minutes", "0"]) == 0
    out = capsys.readouterr().out
    assert f"orphaned files removed: {len(orphans)} " in out and "bytes freed:" in out
    assert lake.on_disk() == lake.referenced() - {Path(p).name for p, in lake.catalog(
        "SELECT path FROM ducklake_files_scheduled_for_deletion")}  # every file on disk is in a snapshot
    assert not orphans & lake.on_disk()
    assert lake.catalog("SELECT count(*) FROM ducklake_files_scheduled_for_deletion") in ([(0,)], [("0",)])
    assert lake.runs() == runs  # the same runs, read from the merged files

    push(local, lake.lake, machine="box-a")  # the killed push resumes
    assert len(lake.runs()) == len(_run_ids(local))
    assert lake.referenced() >= lake.on_disk()


def test_upkeep_in_the_middle_of_a_push_makes_it_retry_and_lose_nothing(
        postgres: Postgres, bare_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """The push lock: upkeep (with no grace at all) runs while a push's transaction has written its Parquet files
    and not committed. It removes those files, as no snapshot references them; its committed lock makes the push's
    commit lose DuckLake's conflict check, so the push retries with new files and no snapshot names a lost file.
    (With a SQLite catalog this moment cannot happen: a push's open transaction holds the catalog file's lock, and
    upkeep waits for it.)"""
    name = f"upkeep{next(_names)}"
    postgres.psql(f"CREATE DATABASE {name}", dbname="postgres")
    lake = Lake(postgres.url(name), tmp_path / "parquet", postgres)
    push(_local(bare_template, tmp_path, "box-a", UPLOADS[0]), lake.lake, machine="box-a")
    local = _local(bare_template, tmp_path, "box-b", UPLOADS[1])
    real, reports = push_module._copy, []

    def copy_then_upkeep(*args: object) -> tuple[int, int, int]:
        done = real(*args)  # type: ignore[arg-type]
        if not reports:
            reports.append(upkeep(lake.lake, grace_minutes=0))  # another process's upkeep, at the worst moment
        return done

    monkeypatch.setattr(push_module, "_copy", copy_then_upkeep)
    report = push(local, lake.lake, machine="box-b")
    assert reports[0].orphans_removed  # the push's files in flight, removed
    assert report.retries >= 1 and report.runs_pushed == len(_run_ids(local))
    assert lake.referenced() >= lake.on_disk()
    missing = {Path(p).name for p, in lake.catalog("SELECT path FROM ducklake_data_file")} - lake.on_disk()
    assert not missing  # no snapshot names a file upkeep removed
    assert len(lake.runs()) == len(set(_run_ids(local)) | set(_run_ids(tmp_path / "box-a.duckdb")))


def _snapshot_times(lake: Lake, ages: dict[int, timedelta]) -> None:
    """Make snapshots older (the catalog's own column), as if they were pushed days ago."""
    now = datetime.now(UTC)
    for snapshot, age in ages.items():
        when = (now - age).strftime("%Y-%m-%d %H:%M:%S.%f+00")
        if lake.pg is not None:
            lake.catalog(f"UPDATE ducklake_snapshot SET snapshot_time = '{when}' WHERE snapshot_id = {snapshot}")
        else:
            con = sqlite3.connect(lake.url.removeprefix("ducklake:sqlite:"))
            with con:
                con.execute("UPDATE ducklake_snapshot SET snapshot_time = ? WHERE snapshot_id = ?", [when, snapshot])
            con.close()


def test_snapshots_older_than_the_retention_are_expired_and_as_of_one_says_what_is_left(
        lake: Lake, bare_template: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for i, upload in enumerate(UPLOADS[2:]):
        push(_local(bare_template, tmp_path, f"box-{i}", upload), lake.lake, machine=f"box-{i}")
    ids = [int(r[0]) for r in lake.catalog("SELECT snapshot_id FROM ducklake_snapshot ORDER BY snapshot_id")]
    old, kept = ids[:3], ids[3:]
    # three snapshots pushed 10 days ago; the next one 7 days less an hour ago: inside a 7-day retention, and on
    # the same date as the cutoff most of the day (DuckLake's own older_than compares a SQLite catalog's times
    # as text, and would expire it)
    _snapshot_times(lake, {**{s: timedelta(days=10) for s in old}, kept[0]: timedelta(days=7) - timedelta(hours=1)})
    runs = lake.runs()
    args = ["db", "upkeep", "--store", lake.url, "--data-path", str(lake.data), "--keep-snapshots-days", "7"]

    assert main([*args, "--dry-run"]) == 0
    assert "snapshots expired:      would be 3 (0, 1, 2)" in capsys.readouterr().out
    assert [int(r[0]) for r in lake.catalog("SELECT snapshot_id FROM ducklake_snapshot ORDER BY 1")] == ids

    assert main(args) == 0
    out = capsys.readouterr().out
    assert "snapshots expired:      3 (0, 1, 2)" in out
    left = [int(r[0]) for r in lake.catalog("SELECT snapshot_id FROM ducklake_snapshot ORDER BY 1")]
    assert left[: len(kept)] == kept  # and the merge's and upkeep's own
    assert lake.runs() == runs

    assert main(["db", "info", "--store", lake.url, "--data-path", str(lake.data), "--as-of", str(old[1])]) == 4
    err = capsys.readouterr().err
    assert f"it has no snapshot {old[1]}: it holds snapshots {kept[0]} to {left[-1]} (older ones were expired by " \
           "`joulebench db upkeep`)" in err
    assert main(["db", "info", "--store", lake.url, "--data-path", str(lake.data), "--as-of", str(kept[0])]) == 0


def test_upkeep_leaves_young_files_to_the_grace_and_a_dry_run_changes_nothing(
        bare_template: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lake = Lake(f"ducklake:sqlite:{tmp_path / 'team.sqlite'}", tmp_path / "parquet")
    push(_local(bare_template, tmp_path, "box-a", UPLOADS[0]), lake.lake, machine="box-a")
    table = next(p for p in lake.data.rglob("*.parquet")).parent
    stray = table / "ducklake-00000000-0000-7000-8000-000000000000.parquet"  # a push in flight wrote it just now
    shutil.copy(next(table.glob("*.parquet")), stray)
    before = lake.on_disk()

    report = upkeep(lake.lake, dry_run=True, grace_minutes=0)
    assert [Path(p).name for p in report.orphans_removed] == [stray.name] and lake.on_disk() == before
    assert report.files_merged == 0 and report.bytes_freed == stray.stat().st_size

    assert not upkeep(lake.lake).orphans_removed  # default grace: a file written minutes ago stays
    assert stray.exists()
    hours_ago = time.time() - 2 * 3600
    os.utime(stray, (hours_ago, hours_ago))  # the next nightly upkeep
    assert [Path(p).name for p in upkeep(lake.lake).orphans_removed] == [stray.name]
    assert not stray.exists() and lake.on_disk() <= lake.referenced()

    assert main(["db", "upkeep", "--store", str(tmp_path / "file.duckdb")]) == 2
    assert "upkeep is a team store's" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["db", "upkeep", "--store", lake.url, "--keep-snapshots-days", "-1"])
    assert "'-1': give a number of days, 0 or more" in capsys.readouterr().err
