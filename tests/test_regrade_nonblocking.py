"""A regrade never blocks the app (issue 31): an open that must grade many runs records why and returns, a child
process grades them while the pages read on, showing a note and the grades stored before ('not graded' where
there are none), and the grades after it is done, identical to grading at the open."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import db.regrade as regrade
from db import Store
from db.synthetic import fill
from explorer import nav
from joulebench.errors import DatabaseBusyError
from tests.helpers import shown

# the server's script (as tests/test_busy_pages.py: with app.py, AppTest runs a switched page without app.py)
MAIN = nav.REPO_ROOT / "explorer" / "streamlit_main.py"
RUNS = regrade.REGRADE_LATER_AT + 500
RUN = "syn-0-0000007"

# a second process reading the database: the grader can compute beside it, and writes only once it has gone
# With a second argument, a file, it first waits for that file (the grader's owner file: the app's open has
# started the grader), then (polling every 10 ms, up to 60 s) for the open to end: it gets in then, before the
# grader, which computes first, can ask to write.
READER = """
import os, sys, time, duckdb
deadline = time.monotonic() + 60
while len(sys.argv) > 2 and not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
    time.sleep(0.01)
while True:
    try:
        con = duckdb.connect(sys.argv[1], read_only=True)
        break
    except duckdb.IOException:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.01)
print("reading", flush=True)
sys.stdin.readline()
con.close()
"""


@pytest.fixture(scope="module")
def ungraded_template(tmp_path_factory: pytest.TempPathFactory, seeded_template: Path) -> Path:
    """The reference data and RUNS runs stored without a grade (as after a grading killed before its commit)."""
    path = tmp_path_factory.mktemp("ungraded") / "template.duckdb"
    shutil.copy(seeded_template, path)
    with Store.open(path) as store:
        fill(store, RUNS, 8)
    return path


@pytest.fixture
def ungraded(ungraded_template: Path, tmp_path: Path) -> Path:
    path = tmp_path / "store.duckdb"
    shutil.copy(ungraded_template, path)
    return path


@contextmanager
def another_reader(path: Path, then: Callable[[], object] | None = None) -> Iterator[subprocess.Popen[str]]:
    """A second process reading `path` until told to stop (a line on its stdin). With `then` (the app's first
    run, whose open holds the file to migrate it and starts the grader), it gets in once the grader is started
    and that open has ended, while `then` runs."""
    wait_for = [str(regrade.owner_file(path))] if then is not None else []
    reader = subprocess.Popen([sys.executable, "-c", READER, str(path), *wait_for], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        if then is not None:
            then()
        assert reader.stdout is not None and reader.stdout.readline().strip() == "reading"
        yield reader
    finally:
        if reader.poll() is None:
            reader.kill()
        reader.wait(timeout=120)


def _grades(path: Path) -> tuple[list, list, list]:
    with Store.open_read_only(path) as store:
        return (store.query("SELECT run_id, config_key, trust_grade, trust_reasons FROM runs ORDER BY run_id").rows(),
                store.query("SELECT * EXCLUDE (graded_at) FROM configurations ORDER BY config_key").rows(),
                store.query("SELECT * FROM config_stats ORDER BY config_key, metric").rows())


def _wait_for_grader(path: Path, limit_s: float = 120.0) -> None:
    deadline = time.monotonic() + limit_s
    while regrade.running(path):
        assert time.monotonic() < deadline, f"the grader did not finish within {limit_s:g} s"
        time.sleep(0.1)


def test_an_open_told_to_defer_records_the_regrade_and_the_grader_writes_what_an_open_would(
        ungraded: Path, tmp_path: Path) -> None:
    inline = tmp_path / "inline.duckdb"
    shutil.copy(ungraded, inline)
    with Store.open(ungraded, regrade_later=True) as store:
        assert store.regrade_pending and store.ungraded_runs() == RUNS
        found = regrade.pending(store.con, ungraded)
    assert found is not None and found.reason == f"{RUNS:,} runs were stored without a grade" and not found.running
    with another_reader(ungraded):  # the pages read while it computes
        with pytest.raises(DatabaseBusyError):  # and writes only once they are done
            regrade.regrade(ungraded, busy_wait_s=1.0)
    assert regrade.regrade(ungraded) > RUNS  # every run: the reference runs too
    with Store.open(inline) as store:  # not deferred: graded at the open
        assert not store.regrade_pending and store.ungraded_runs() == 0
    assert _grades(ungraded) == _grades(inline)
    with Store.open(ungraded, regrade_later=True) as store:  # done: nothing waits any more
        assert not store.regrade_pending and regrade.marked(store.con) is None


def test_the_app_starts_on_a_store_that_must_regrade_shows_a_note_and_then_the_grades(
        ungraded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JOULEBENCH_DB", str(ungraded))
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(MAIN), default_timeout=60)
    at.query_params["run_id"] = RUN
    try:
        # the first rerun (migrated, the regrade handed to the grader, the page drawn at once) beside a reader
        # that gets in as soon as the open ends: the grader cannot write while it reads
        with another_reader(ungraded, then=at.run) as reader:
            assert not at.exception, at.exception
            assert regrade.owner_file(ungraded).exists()  # the grader was started, the open did not grade
            notes = [shown(i.value) for i in at.info]
            assert any("Trust grades are being recomputed" in n and "runs were stored without a grade" in n
                       for n in notes), notes
            at.switch_page("../pages/run_detail.py").run()
            assert not at.exception, at.exception
            assert "grade not graded" in at.selectbox(key="run").format_func(RUN)
            assert any("Trust grades are being recomputed" in shown(i.value) for i in at.info)
            assert regrade.running(ungraded)
            assert reader.stdin is not None
            reader.stdin.write("\n")
            reader.stdin.flush()
            reader.wait(timeout=120)
        _wait_for_grader(ungraded)
        at.run()
        assert not at.exception, at.exception
        assert not any("Trust grades" in shown(i.value) for i in at.info), [i.value for i in at.info]
        label = at.selectbox(key="run").format_func(RUN)
        assert "not graded" not in label and any(f"grade {g} ·" in label for g in "ABCD"), label
    finally:
        _wait_for_grader(ungraded)  # never leave the child behind (it ends when its write is done)
    with Store.open_read_only(ungraded) as store:
        assert store.query("SELECT count(*) AS n FROM runs WHERE trust_grade IS NULL")["n"][0] == 0


def test_a_table_of_many_rows_sends_the_rows_a_page_shows_and_says_where_the_rest_are() -> None:
    """Send the browser only what a page shows (issue 31): 100,000 short rows fit the byte budget, yet a table
    sends MAX_TABLE_ROWS of them, with a caption that counts the rest and points to the downloads."""
    from explorer.tables import MAX_TABLE_ROWS

    script = ("import polars as pl\nimport streamlit as st\nfrom explorer.tables import styled\n"
              "st.dataframe(styled(pl.DataFrame({'Run': [f'r{i}' for i in range(100_000)], "
              "'J/sample': [i / 7 for i in range(100_000)]})), hide_index=True)\n")
    at = AppTest.from_string(script, default_timeout=120).run()
    assert not at.exception, at.exception
    sent = at.dataframe[0].value
    assert len(sent) == MAX_TABLE_ROWS and list(sent["Run"][:2]) == ["r0", "r1"]
    message = at.dataframe[0].proto.SerializeToString()  # what goes over the websocket; the caption in it
    assert b"Showing the first 1,000 of 100,000 rows" in message and b"download the selection" in message
    assert len(message) < 200_000  # 100,000 rows would be several MB
