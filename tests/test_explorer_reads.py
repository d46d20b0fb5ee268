"""How the explorer reads a store at scale (issue 31): every run in one order made after the read, and a team
store's reads at one snapshot through one connection (opening a DuckLake attaches its catalog: 0.5-1 s each),
never kept where it would lock pushes out (a DuckDB catalog file)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from db import Store, queries
from db.lake import LakeUrl
from db.push import push
from ingest import import_file

FIXTURES = Path(__file__).parent / "fixtures"
CPU_RUNS = FIXTURES / "result_v1_cpu_runs.json"
LEADERBOARD = FIXTURES / "formats" / "zeus_mlenergy" / "mlenergy-v3-leaderboard-llama31-8b-lm-arena-chat.json"


def test_every_run_is_read_in_the_order_of_its_stated_device_workload_batch_and_id(seeded_db: Path) -> None:
    assert import_file(CPU_RUNS, db=seeded_db).status == "imported"
    assert import_file(LEADERBOARD, db=seeded_db).status == "imported"
    with Store.open_read_only(seeded_db) as store:
        runs = queries.runs_table(store)
        stated = store.query("SELECT run_id, device_name AS stated FROM runs")
    assert runs.height == stated.height > 100
    keyed = runs.join(stated, on="run_id", how="left")
    ordered = keyed.sort(["stated", "workload", "batch_size", "run_id"], nulls_last=True)
    assert keyed["run_id"].to_list() == ordered["run_id"].to_list()
    assert runs.columns[0] == "run_id"  # the key it was sorted by is not among the columns


@pytest.fixture
def team_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int | None]]:
    """The pages' data functions on a team store with Streamlit's caches cleared; yields the snapshot of every
    connection they open (Store.open_reading's as_of), and closes the connections kept."""
    import streamlit as st

    from explorer import data

    opened: list[int | None] = []
    real = Store.open_reading.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Store], store: object = None, *, as_of: int | None = None,
                data_path: str | None = None) -> Store:
        opened.append(as_of)
        return real(cls, store, as_of=as_of, data_path=data_path)

    monkeypatch.setattr(Store, "open_reading", classmethod(counted))
    st.cache_data.clear()
    st.cache_resource.clear()
    yield opened
    for path in list(data._kept):
        data._kept.pop(path).store.close()
    st.cache_data.clear()
    st.cache_resource.clear()


def _team(bare_template: Path, tmp_path: Path, catalog: str) -> tuple[Path, str]:
    local = tmp_path / "box-a.duckdb"
    shutil.copy(bare_template, local)
    assert import_file(CPU_RUNS, db=local).status == "imported"
    url = f"ducklake:{catalog}:{tmp_path / ('team.' + catalog)}"
    push(local, LakeUrl.parse(url), machine="box-a")
    return local, url


def test_a_team_stores_reads_at_one_snapshot_share_one_connection(
        bare_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, team_reads: list[int | None]) -> None:
    from explorer import data

    local, url = _team(bare_template, tmp_path, "sqlite")
    monkeypatch.setenv("JOULEBENCH_STORE", url)
    path = data.db_path()
    assert path == url
    before = data.runs(path).height
    data.findings(path)
    data.devices(path)
    data.exchange_rates(path)
    pinned = [s for s in team_reads if s is not None]
    assert len(pinned) == 1, team_reads  # one connection at the snapshot read (before: one per data function)
    kept = data._kept[path]
    assert kept.version == f"snapshot {pinned[0]}"

    assert import_file(LEADERBOARD, db=local).status == "imported"  # a push makes a newer snapshot
    push(local, LakeUrl.parse(url), machine="box-a")
    data._team_snapshot.clear()  # the newest snapshot looked for now, not TEAM_STORE_REFRESH_S later
    assert data.runs(path).height > before
    assert data._kept[path].version != kept.version  # the newer snapshot's connection replaced it
    with pytest.raises(Exception, match="(?i)closed"):
        kept.store.con.execute("SELECT 1")


def test_a_team_store_whose_catalog_is_a_duckdb_file_is_never_kept_open(
        bare_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, team_reads: list[int | None]) -> None:
    """A connection kept to a DuckDB catalog file would hold its lock, and every push would be refused."""
    from explorer import data

    local, url = _team(bare_template, tmp_path, "duckdb")
    monkeypatch.setenv("JOULEBENCH_STORE", url)
    path = data.db_path()
    before = data.runs(path).height
    data.findings(path)
    assert path not in data._kept
    assert import_file(LEADERBOARD, db=local).status == "imported"
    report = push(local, LakeUrl.parse(url), machine="box-a")  # not refused by the app's reads
    assert report.runs_pushed > 0
    data._team_snapshot.clear()
    assert data.runs(path).height > before
    assert isinstance(data.runs(path), pl.DataFrame)
