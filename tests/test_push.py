"""The team store (issue 20): local runs pushed to a real DuckLake (SQLite catalog, Parquet data in a folder),
idempotent and resumable after a kill, and read by the explorer, `db info` and `export`. Several machines
pushing at once, and the read-only role, are tested on PostgreSQL (tests/test_push_postgres.py)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.main import main
from db import Store
from db.lake import LakeUrl, connect
from db.push import push
from ingest import import_file
from joulebench.errors import DatabaseError

FORMATS = Path(__file__).parent / "fixtures" / "formats"
LEADERBOARD = FORMATS / "zeus_mlenergy" / "mlenergy-v3-leaderboard-llama31-8b-lm-arena-chat.json"
UPLOADS = [LEADERBOARD, FORMATS / "zeus_mlenergy" / "mlenergy-lb-v1-A100_chat_benchmark.csv",
           FORMATS / "jetson" / "LLM_PIPELINE-agx-orin-tegrastats-records-source.log",
           FORMATS / "codecarbon" / "aira-llamafactory-emissions-2.8.3+3.0.7-8xH800-gpucount2.csv"]


def _lake(tmp_path: Path) -> LakeUrl:
    return LakeUrl.parse(f"ducklake:sqlite:{tmp_path / 'team.sqlite'}")


def _query(lake: LakeUrl, sql: str) -> list[tuple]:
    con = connect(lake, read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _local(seeded_template: Path, tmp_path: Path, name: str, upload: Path | None) -> Path:
    path = tmp_path / f"{name}.duckdb"
    shutil.copy(seeded_template, path)
    if upload is not None:
        assert import_file(upload, db=path).status == "imported"
    return path


def _counts(db: Path) -> tuple[int, int]:
    with Store.open_read_only(db) as store:
        row = store.query("SELECT (SELECT count(*) FROM sources), (SELECT count(*) FROM runs)").row(0)
    return int(row[0]), int(row[1])


def test_a_push_sends_every_source_once_with_its_grades(bare_template: Path, tmp_path: Path) -> None:
    local = _local(bare_template, tmp_path, "box-a", LEADERBOARD)
    assert import_file(UPLOADS[2], db=local).status == "imported"
    sources, runs = _counts(local)
    lake = _lake(tmp_path)
    first = push(local, lake, machine="box-a")
    assert (first.sources_pushed, first.runs_pushed) == (sources, runs)
    again = push(local, lake, machine="box-a")
    assert (again.sources_pushed, again.runs_pushed, again.sources_already_there) == (0, 0, sources)
    assert _query(lake, "SELECT count(*), count(DISTINCT run_id), count(trust_grade), count(config_key) FROM runs") \
        == [(runs, runs, runs, runs)]
    # the grades are the local store's: the same rules on the same runs
    with Store.open_read_only(local) as store:
        local_grades = sorted(store.query("SELECT run_id, trust_grade, config_key FROM runs").rows())
    assert sorted(_query(lake, "SELECT run_id, trust_grade, config_key FROM runs")) == local_grades
    assert _query(lake, "SELECT count(*) FROM configurations")[0][0] > 0
    assert _query(lake, "SELECT DISTINCT machine FROM pushes") == [("box-a",)]
    # the token figures of the imported leaderboard arrive with the runs
    tokens = "SELECT count(*) FROM runs WHERE j_per_token IS NOT NULL AND device_name = 'H100 SXM'"
    assert _query(lake, tokens)[0][0] == 11


def test_two_machines_share_the_reference_data_and_add_their_own(seeded_template: Path, tmp_path: Path) -> None:
    a = _local(seeded_template, tmp_path, "box-a", UPLOADS[0])
    b = _local(seeded_template, tmp_path, "box-b", UPLOADS[1])
    lake = _lake(tmp_path)
    push(a, lake, machine="box-a")
    report = push(b, lake, machine="box-b")
    assert report.sources_pushed == 1  # its upload; the reference sources were pushed by box-a
    by_machine = dict(_query(lake, "SELECT machine, count(*) FROM pushes GROUP BY machine"))
    assert by_machine["box-b"] == 1 and by_machine["box-a"] == _counts(a)[0]
    assert _query(lake, "SELECT count(*) - count(DISTINCT content_sha256) FROM sources") == [(0,)]


def test_a_push_killed_midway_keeps_what_committed_and_resumes(catalog_template: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import db.push as push_module

    local = _local(catalog_template, tmp_path, "box-a", LEADERBOARD)
    for upload in UPLOADS[1:3]:
        assert import_file(upload, db=local).status == "imported"
    sources, runs = _counts(local)
    assert sources == 4  # the catalog and three uploads
    lake = _lake(tmp_path)
    real, calls = push_module._copy, []

    def dies_on_the_third(*args: object) -> tuple[int, int, int]:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt  # Ctrl-C (or a lost connection) inside the third source's transaction
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(push_module, "_copy", dies_on_the_third)
    with pytest.raises(KeyboardInterrupt):
        push(local, lake, machine="box-a")
    assert _query(lake, "SELECT count(*) FROM sources") == [(2,)]  # two committed, the third rolled back whole
    monkeypatch.setattr(push_module, "_copy", real)
    report = push(local, lake, machine="box-a")
    assert report.sources_pushed == sources - 2 and report.sources_already_there == 2
    assert _query(lake, "SELECT count(*), count(DISTINCT run_id) FROM runs") == [(runs, runs)]


def _shas(db: Path) -> list[str]:
    with Store.open_read_only(db) as store:
        return [r[0] for r in store.query("SELECT content_sha256 FROM sources").rows()]


def _run_ids(db: Path) -> list[str]:
    with Store.open_read_only(db) as store:
        return [r[0] for r in store.query("SELECT run_id FROM runs").rows()]


def test_push_needs_a_lake_and_keeps_passwords_out_of_urls(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["push", "--store", str(db), "--db", str(db)]) == 2
    assert "push sends runs to a team store, a DuckLake" in capsys.readouterr().err
    with pytest.raises(DatabaseError, match="holds a password: put it in PGPASSWORD"):
        LakeUrl.parse("ducklake:postgres:dbname=lake host=db password=hunter2", "/data/")
    with pytest.raises(DatabaseError, match="needs a data path"):
        LakeUrl.parse("ducklake:postgres:dbname=lake host=db")


def test_the_cli_reports_what_it_pushed(catalog_template: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    local = _local(catalog_template, tmp_path, "box-a", LEADERBOARD)
    share = tmp_path / "lab's share"  # a quote in the catalog's and the data's paths is just a character
    share.mkdir()
    url = f"ducklake:sqlite:{share / 'team.sqlite'}"
    assert main(["push", "--store", url, "--db", str(local), "--machine", "lab-3090"]) == 0
    out = capsys.readouterr().out
    sources, runs = _counts(local)
    assert f"pushed {sources} source(s), {runs} run(s)" in out and "as lab-3090" in out
    assert main(["push", "--store", url, "--db", str(local)]) == 0
    assert "pushed 0 source(s), 0 run(s)" in capsys.readouterr().out


def test_the_explorer_reads_the_team_store(seeded_template: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """`joulebench app --store URL`: the pages read the lake (read-only); the buyer's token question is answered
    from what box-a pushed; Run detail says who pushed a run and when; New run and Upload say why they are off."""
    import streamlit as st

    from tests.helpers import open_page, shown

    local = _local(seeded_template, tmp_path, "box-a", LEADERBOARD)
    url = f"ducklake:sqlite:{tmp_path / 'team.sqlite'}"
    push(local, LakeUrl.parse(url), machine="box-a")
    monkeypatch.setenv("JOULEBENCH_STORE", url)
    monkeypatch.setenv("JOULEBENCH_DB", str(tmp_path / "never-created.duckdb"))
    st.cache_data.clear()
    st.cache_resource.clear()
    decide = open_page("decide", {"device": ["B200", "H100 SXM"], "mode": "infer", "itl": "20"})
    said = "\n".join(shown(m.value) for m in decide.markdown)
    assert "**H100 SXM** at batch not stated, bf16, max_num_seqs 96: 0.103 J/token" in said
    assert "imported" in said  # the leaderboard was an upload on box-a: still imported, whoever pushed it
    run_id = _query(LakeUrl.parse(url), "SELECT run_id FROM runs WHERE device_name = 'H100 SXM' LIMIT 1")[0][0]
    detail = open_page("run_detail", {"run_id": run_id})
    cells = " ".join(str(v) for df in detail.dataframe for v in df.value.to_numpy().ravel())
    assert "box-a" in cells
    for name in ("new_run", "upload"):
        info = " ".join(i.value for i in open_page(name, {}).info)
        assert "read-only in the explorer" in shown(info)
    assert not (tmp_path / "never-created.duckdb").exists()  # the pages never opened a local file

    # an audit: box-b pushes later; the app started with --as-of still shows the store as box-a left it
    lake = LakeUrl.parse(url)
    before, runs_before = _query(lake, "SELECT (SELECT id FROM current_snapshot()), (SELECT count(*) FROM runs)")[0]
    push(_local(seeded_template, tmp_path, "box-b", UPLOADS[1]), lake, machine="box-b")
    st.cache_data.clear()  # the newest snapshot is looked for every 10 s: now, in this test
    newest = open_page("overview", {})
    assert "the newest" in shown(" ".join(c.value for c in newest.caption))
    assert newest.metric[0].value != str(runs_before)
    monkeypatch.setenv("JOULEBENCH_STORE_AS_OF", str(before))
    audit = open_page("overview", {})
    assert f"as of snapshot {before}, committed " in shown(" ".join(c.value for c in audit.caption))
    assert "pinned for an audit" in shown(" ".join(c.value for c in audit.caption))
    assert audit.metric[0].value == str(runs_before)
    monkeypatch.setenv("JOULEBENCH_STORE_AS_OF", "yesterday")
    assert "not a snapshot number" in open_page("overview", {}).error[0].value


def test_db_info_and_export_read_a_team_store(bare_template: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    local = _local(bare_template, tmp_path, "box-a", LEADERBOARD)
    url = f"ducklake:sqlite:{tmp_path / 'team.sqlite'}"
    report = push(local, LakeUrl.parse(url), machine="box-a")
    assert main(["db", "info", "--store", url]) == 0
    out = capsys.readouterr().out
    assert f"database:        {url}" in out and f"runs:            {report.runs_pushed}" in out
    assert "snapshot:        " in out and "inbox:" not in out
    exported = tmp_path / "team.json"
    assert main(["export", str(exported), "--store", url, "--device", "H100 SXM"]) == 0
    assert "wrote 11 runs" in capsys.readouterr().out
    assert main(["db", "info", "--store", str(local)]) == 0  # a file path is a store too: the same as --db
    assert f"database:        {local}" in capsys.readouterr().out
    assert main(["db", "info", "--store", str(local), "--db", str(tmp_path / "other.duckdb")]) == 4
    assert "name two files; give one" in capsys.readouterr().err


def test_every_command_takes_the_store_adds_locally_then_pushes_and_reads_any_snapshot(
        bare_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """With $JOULEBENCH_STORE set, `import` and `label` write this machine's file, then push; `db info` reads
    the team store, an explicit --db the file; `db snapshots` lists each push by machine, and `--as-of` reads the
    store before the label was pushed. A store that cannot be reached keeps the runs local and says how to send
    them later."""
    local = _local(bare_template, tmp_path, "box-a", None)
    url = f"ducklake:sqlite:{tmp_path / 'team.sqlite'}"
    monkeypatch.setenv("JOULEBENCH_STORE", url)
    tegra = UPLOADS[2]
    assert main(["import", str(tegra), "--db", str(local)]) == 0
    assert "team store " + url + ": pushed " in capsys.readouterr().out
    lake = LakeUrl.parse(url)
    assert _query(lake, "SELECT count(*) FROM runs WHERE mode IS NULL") == [(1,)]
    before_label = _query(lake, "SELECT id FROM current_snapshot()")[0][0]
    assert main(["label", tegra.name, "--mode", "infer", "--db", str(local)]) == 0
    assert "1 run(s) relabelled" in capsys.readouterr().out
    assert _query(lake, "SELECT count(*) FROM runs WHERE mode IS NULL") == [(0,)]

    assert main(["db", "snapshots"]) == 0
    listed = capsys.readouterr().out
    assert "push: labels" in listed and "push: source " in listed
    assert main(["export", str(tmp_path / "then.csv"), "--as-of", str(before_label), "--workload", "idle"]) == 0
    capsys.readouterr()
    with Store.open_team_store(url, as_of=before_label) as then, Store.open_team_store(url) as now:
        assert then.snapshot_id == before_label and now.snapshot_id > before_label
        sql = "SELECT count(*) FROM runs WHERE mode IS NULL"
        assert (then.query(sql).item(), now.query(sql).item()) == (1, 0)
    assert main(["db", "info", "--as-of", "999999"]) == 4
    assert "has no snapshot 999999" in capsys.readouterr().err
    assert main(["db", "info", "--db", str(local)]) == 0  # the machine's own file, over $JOULEBENCH_STORE
    assert f"database:        {local}" in capsys.readouterr().out

    unreachable = f"ducklake:sqlite:{tmp_path / 'no-such-folder' / 'team.sqlite'}"
    code = main(["import", str(UPLOADS[3]), "--db", str(local), "--store", unreachable])
    err = capsys.readouterr().err
    assert code == 4 and "not pushed" in err and f"the runs are kept in {local}" in err
    assert UPLOADS[3].name in {n.split("/")[-1] for n, in _local_names(local)}


def _local_names(db: Path) -> list[tuple[str]]:
    with Store.open_read_only(db) as store:
        return store.query("SELECT file_name FROM sources").rows()


def test_a_runners_own_runs_read_as_a_team_members(bare_template: Path, tmp_path: Path) -> None:
    """In the team store a run measured on box-a is not 'measured here' (the explorer's machine measured
    nothing): its basis reads 'measured by a team runner', and Run detail names box-a."""
    from db import queries
    from decision.text import basis_of

    local = _local(bare_template, tmp_path, "box-a", None)
    assert import_file(FORMATS.parent / "result_v1_cpu_runs.json", db=local, source_kind="local").status == "imported"
    url = f"ducklake:sqlite:{tmp_path / 'team.sqlite'}"
    push(local, LakeUrl.parse(url), machine="box-a")
    with Store.open_team_store(url) as store:
        kinds = set(queries.runs_table(store)["source_kind"].to_list())
        run_id = store.query("SELECT run_id FROM runs r JOIN sources s USING (source_id) WHERE s.kind = 'local' "
                             "LIMIT 1").item()
        detail = queries.run_detail(store, run_id)
    assert "team" in kinds and "local" not in kinds and basis_of("team") == "measured by a team runner"
    assert detail is not None and detail["pushed_by"] == "box-a" and detail["source_kind"] == "team"
    with Store.open_read_only(local) as store:  # the runner's own database still says 'local'
        assert "local" in set(queries.runs_table(store)["source_kind"].to_list())


def test_labels_prices_and_rates_edited_after_a_push_travel_newest_first(catalog_template: Path,
                                                                          tmp_path: Path) -> None:
    """A runner fills a label and edits a price after pushing: the next push carries both, the runs are
    regraded, and the edit is the machine's in the lake. Of two machines' edits of one price the newer wins,
    whichever pushes last; pushing again changes nothing."""
    import polars as pl

    from db import catalog_edits
    from ingest.labels import label_source

    tegra = UPLOADS[2]
    a = _local(catalog_template, tmp_path, "box-a", tegra)
    b = _local(catalog_template, tmp_path, "box-b", None)
    lake = _lake(tmp_path)
    push(a, lake, machine="box-a")
    assert _query(lake, "SELECT count(*) FROM runs WHERE mode IS NULL")[0][0] == 1  # the log does not say

    device = "Jetson AGX Orin"

    def price(db: Path, amount: str) -> None:
        with Store.open(db) as store:
            catalog_edits.update_devices(store, pl.DataFrame({"device_name": [device], "price_amount": [amount],
                                                        "price_currency": ["USD"]}))

    price(b, "1111")  # box-b's edit first, then box-a's: box-a's is the newer
    price(a, "2222")
    label_source(tegra.name, {"mode": "infer"}, None, db=a, who="ana")
    with Store.open(a) as store:
        catalog_edits.replace_exchange_rates(store, pl.DataFrame({"from_currency": ["EUR"], "to_currency": ["USD"],
                                                            "rate": ["1.08"], "rate_date": ["2026-11-20"],
                                                            "source": ["ECB reference rate"]}))
    report = push(a, lake, machine="box-a")
    assert (report.sources_pushed, report.runs_relabelled) == (0, 1)
    with Store.open_read_only(a) as store:
        local_run = store.query("SELECT run_id, mode, trust_grade, config_key FROM runs WHERE mode = 'infer' "
                                "AND source_id = (SELECT max(source_id) FROM sources)").rows()
    assert _query(lake, f"SELECT run_id, mode, trust_grade, config_key FROM runs WHERE run_id = '{local_run[0][0]}'") \
        == local_run  # the label's value, and the grade and configuration it leads to
    assert _query(lake, "SELECT supplied_by, value FROM run_labels WHERE label = 'mode'") == [("ana", "infer")]
    assert _query(lake, "SELECT rate, source FROM exchange_rates WHERE from_currency = 'EUR'") \
        == [(1.08, "ECB reference rate")]

    later = push(b, lake, machine="box-b")  # older edit, pushed last: the lake keeps box-a's newer price
    assert later.catalog_edits_pushed == 0
    assert _query(lake, f"SELECT price_amount FROM devices WHERE device_name = '{device}'") == [(2222.0,)]
    assert _query(lake, f"SELECT entered_by FROM price_entries WHERE device_name = '{device}'") \
        == [("box-a (Devices page)",)]
    history = _query(lake, "SELECT edited_by, new_value FROM device_edits WHERE column_name = 'price_amount' "
                           "ORDER BY edited_at")
    assert history == [("box-b (Devices page)", "1111.0"), ("box-a (Devices page)", "2222.0")]  # both, in time order

    price(b, "3333")  # now box-b's is the newest
    assert push(b, lake, machine="box-b").catalog_edits_pushed >= 1
    assert _query(lake, f"SELECT price_amount FROM devices WHERE device_name = '{device}'") == [(3333.0,)]
    again = push(a, lake, machine="box-a")
    assert (again.catalog_edits_pushed, again.runs_relabelled, again.sources_pushed) == (0, 0, 0)
    assert _query(lake, f"SELECT price_amount FROM devices WHERE device_name = '{device}'") == [(3333.0,)]


@pytest.fixture
def s3_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A local S3-compatible server (moto) on a free localhost port, credentials in the environment as the AWS
    tools read them; stopped by its PID. Yields the endpoint."""
    import signal
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = Path(sys.executable).with_name("moto_server")
    log = open(tmp_path / "moto.log", "w")
    proc = subprocess.Popen([str(server), "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(endpoint, timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((tmp_path / "moto.log").read_text()[-2000:]) from None
                time.sleep(0.2)
        for name, value in {"AWS_ACCESS_KEY_ID": "team-key", "AWS_SECRET_ACCESS_KEY": "team-secret",
                            "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint}.items():
            monkeypatch.setenv(name, value)
        yield endpoint
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=120)
        log.close()


def test_a_team_store_with_its_files_in_s3_compatible_storage(
        bare_template: Path, tmp_path: Path, s3_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--data-path s3://bucket/prefix/`: the Parquet files go to the object store (keys from the AWS variables,
    never the URL), and the explorer's reads come back from it."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=s3_server)
    s3.create_bucket(Bucket="joulebench")
    local = _local(bare_template, tmp_path, "box-a", UPLOADS[2])  # a tegrastats log: 43 times 3 rails
    url = f"ducklake:sqlite:{tmp_path / 'team.sqlite'}"
    lake = LakeUrl.parse(url, "s3://joulebench/lake/")
    report = push(local, lake, machine="box-a")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="joulebench", Prefix="lake/").get("Contents", [])]
    assert any(k.endswith(".parquet") for k in keys), keys
    assert not (tmp_path / "team.files").exists()  # nothing beside the catalog
    with Store.open_team_store(url, data_path="s3://joulebench/lake/") as store:
        assert store.query("SELECT count(*) FROM runs").item() == report.runs_pushed
        assert store.query("SELECT count(*) FROM power_samples").item() == _samples(local) == 129
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(DatabaseError, match="set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"):
        Store.open_team_store(url, data_path="s3://joulebench/lake/")


def _samples(db: Path) -> int:
    with Store.open_read_only(db) as store:
        return int(store.query("SELECT count(*) FROM power_samples").item())
