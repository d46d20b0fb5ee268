"""The team store on a real PostgreSQL catalog (issue 20): four machines pushing at once, a pusher killed
mid-way, and the explorer's read-only role reading what they pushed but unable to write. The server is Debian's
PostgreSQL, started per test session in a temp folder (tests/pg.py)."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest

from db import Store
from db.lake import LakeUrl
from db.push import push
from joulebench.errors import DatabaseError
from tests.pg import Postgres, postgres  # noqa: F401
from tests.test_browser import page  # noqa: F401
from tests.test_push import UPLOADS, _local, _run_ids, _shas

_names = itertools.count()


@pytest.fixture
def lake_url(postgres: Postgres) -> str:  # noqa: F811
    name = f"lake{next(_names)}"
    postgres.psql(f"CREATE DATABASE {name}", dbname="postgres")
    return postgres.url(name)


def test_four_machines_push_at_once_to_postgres(seeded_template: Path, bare_template: Path, tmp_path: Path,
                                               lake_url: str) -> None:
    """Two of the four hold the reference data too, so they race to push the same sources."""
    locals_ = [_local(seeded_template if i < 2 else bare_template, tmp_path, f"box-{i}", upload)
               for i, upload in enumerate(UPLOADS)]
    data = tmp_path / "parquet"
    exe = str(Path(sys.executable).with_name("joulebench"))
    procs = [subprocess.Popen([exe, "push", "--store", lake_url, "--data-path", str(data), "--db", str(p),
                               "--machine", p.stem], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for p in locals_]
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    with Store.open_team_store(lake_url, data_path=str(data)) as store:
        sources = store.query("SELECT count(*), count(DISTINCT content_sha256) FROM sources").row(0)
        runs = store.query("SELECT count(*), count(DISTINCT run_id), count(trust_grade) FROM runs").row(0)
        machines = {r[0] for r in store.query("SELECT machine FROM pushes").rows()}
    expected_sources = len({sha for p in locals_ for sha in _shas(p)})
    expected_runs = len({r for p in locals_ for r in _run_ids(p)})
    assert sources == (expected_sources, expected_sources)
    assert runs == (expected_runs, expected_runs, expected_runs)
    assert machines <= {p.stem for p in locals_} and len(machines) >= 1
    assert any(f"box-{i}" in machines for i in range(4))
    assert list(data.rglob("*.parquet"))  # the runs are Parquet files in the data path


def _explorer_role(postgres: Postgres, lake_url: str) -> str:  # noqa: F811
    """The README's explorer role on this lake's database; its URL."""
    dbname = lake_url.split("dbname=")[1].split()[0]
    role = f"explorer_{dbname}"
    postgres.psql(f"CREATE ROLE {role} LOGIN; GRANT USAGE ON SCHEMA public TO {role}; ALTER DEFAULT PRIVILEGES "
                  f"FOR ROLE postgres IN SCHEMA public GRANT SELECT ON TABLES TO {role}", dbname=dbname)
    return lake_url.replace("user=postgres", f"user={role}")


def test_the_explorer_role_reads_and_cannot_write(seeded_template: Path, tmp_path: Path, lake_url: str,
                                                  postgres: Postgres) -> None:  # noqa: F811
    """The README's setup: the explorer role gets SELECT on the tables the runners' role will create
    (default privileges), before the first push creates the lake's catalog."""
    reader = _explorer_role(postgres, lake_url)
    local = _local(seeded_template, tmp_path, "box-a", UPLOADS[0])
    data = str(tmp_path / "parquet")
    report = push(local, LakeUrl.parse(lake_url, data), machine="box-a")
    with Store.open_team_store(reader, data_path=data) as store:
        assert store.query("SELECT count(*) FROM runs").item() == report.runs_pushed
    with pytest.raises(DatabaseError) as refused:
        push(_local(seeded_template, tmp_path, "box-b", UPLOADS[1]), LakeUrl.parse(reader, data), machine="box-b")
    assert "permission denied for its catalog; this role may only read it" in str(refused.value)


def test_a_pusher_killed_mid_push_leaves_whole_sources_and_the_next_push_finishes(
        seeded_template: Path, tmp_path: Path, lake_url: str) -> None:
    """A real `joulebench push` process killed (SIGKILL, no cleanup) after its first source committed: every
    source in the store has all its runs and its `pushes` row, none half; the next push sends the rest."""
    import os
    import signal

    local = _local(seeded_template, tmp_path, "box-a", UPLOADS[3])
    data = str(tmp_path / "parquet")
    exe = str(Path(sys.executable).with_name("joulebench"))
    proc = subprocess.Popen([exe, "push", "--store", lake_url, "--data-path", data, "--db", str(local),
                             "--machine", "box-a"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("  pushed "):
            break  # one source committed; the next is in flight
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    proc.stdout.close()

    def state() -> tuple[int, list[tuple]]:
        with Store.open_team_store(lake_url, data_path=data) as store:
            whole = store.query(
                "SELECT s.content_sha256, s.run_count, (SELECT count(*) FROM runs r WHERE r.source_id = s.source_id), "
                "(SELECT count(*) FROM pushes p WHERE p.content_sha256 = s.content_sha256) FROM sources s").rows()
            return store.query("SELECT count(*) FROM runs").item(), whole

    _, after_kill = state()
    assert 1 <= len(after_kill) < len(_shas(local))  # killed mid-way
    assert all(rows == stored and pushes == 1 for _, rows, stored, pushes in after_kill)
    report = push(local, LakeUrl.parse(lake_url, data), machine="box-a")
    assert report.sources_already_there == len(after_kill)
    runs, finished = state()
    assert len(finished) == len(_shas(local)) and runs == len(_run_ids(local))
    assert all(rows == stored and pushes == 1 for _, rows, stored, pushes in finished)


@pytest.mark.browser
def test_a_team_decides_in_a_real_browser_from_what_two_runners_pushed(
        bare_template: Path, tmp_path: Path, lake_url: str, postgres: Postgres, page) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """The team's question in the browser, on `joulebench app --store` as the read-only explorer role: box-a pushed
    the ML.ENERGY v3 file and box-b a Jetson log; Decide answers the token question from box-a's upload, the
    Overview says which snapshot it reads, Run detail names the machine that pushed the run."""
    import os
    import re

    from tests.test_browser import _body, _wait_text, app_server

    data = str(tmp_path / "parquet")
    reader = _explorer_role(postgres, lake_url)
    for machine, upload in (("box-a", UPLOADS[0]), ("box-b", UPLOADS[2])):
        push(_local(bare_template, tmp_path, machine, upload), LakeUrl.parse(lake_url, data), machine=machine)
    with Store.open_team_store(reader, data_path=data) as store:
        snapshot = store.snapshot_id
        h100_run = store.query("SELECT run_id FROM runs WHERE device_name = 'H100 SXM' ORDER BY run_id LIMIT 1").item()
    env = dict(os.environ, HF_HUB_OFFLINE="1", JOULEBENCH_DB=str(tmp_path / "never-created.duckdb"))
    with app_server(["--store", reader, "--data-path", data], env, tmp_path) as url:
        page.goto(f"{url}/decide?device=B200&device=H100+SXM&mode=infer&itl=20")
        _wait_text(page, "Fewest joules per output token with ITL p90 ≤ 20 ms")
        assert re.search(r"Fewest joules per output token with ITL p90 ≤ 20 ms \(.+?\): H100 SXM at .+?: 0\.103 "
                         r"J/token", _body(page))
        page.goto(url)
        _wait_text(page, f"as of snapshot {snapshot}")
        assert "Team store ducklake:postgres:dbname=" in _body(page) and "the newest" in _body(page)
        page.goto(f"{url}/run_detail?run_id={h100_run}")
        _wait_text(page, "Pushed to the team store by box-a on ")
    assert not (tmp_path / "never-created.duckdb").exists()
