"""Compare's answers are shared across sessions (explorer.memo) and the server warms itself before the first
browser arrives (explorer.warm), issue 31: a later visit reuses what the first computed, and a run written after
a cached read shows on the next visit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from explorer import memo
from ingest import import_file
from tests.helpers import shown

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
CPU_RUNS = FIXTURES / "result_v1_cpu_runs.json"


def compare_visit() -> AppTest:
    """A new session's visit to Compare (a later visit: a new tab, or the address loaded anew)."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.switch_page("pages/compare.py")
    at.run()
    assert not at.exception, at.exception
    return at


def devices_in_table(at: AppTest) -> set[str]:
    table = at.dataframe[1].value  # the coverage table first, then the all-devices table
    return set(table["Device"])


def total(at: AppTest) -> int:
    """The runs Compare counts ('12 of 360 runs: ...')."""
    text = next(shown(c.value) for c in at.caption if " runs: " in shown(c.value))
    return int(text.split(" runs: ")[0].split(" of ")[1].replace(",", ""))


def test_a_later_visit_reuses_compare_and_a_write_after_it_shows_the_new_run(db: Path) -> None:
    first = compare_visit()
    before = devices_in_table(first)
    misses = memo.MISSES.get("config_table", 0)
    hits = memo.HITS.get("view", 0)
    costed = memo.HITS.get("_costed", 0)
    later = compare_visit()
    assert memo.HITS.get("view", 0) == hits + 1  # the table, bars and ratios came from the first visit's answer
    assert memo.HITS.get("_costed", 0) == costed + 1  # and so did the costed runs
    assert memo.MISSES.get("config_table", 0) == misses
    assert devices_in_table(later) == before
    assert json.loads(later.get("plotly_chart")[0].proto.spec) == json.loads(first.get("plotly_chart")[0].proto.spec)

    import_file(CPU_RUNS, db=db)  # a write after the cached read: a device Compare did not show
    after = compare_visit()
    assert memo.MISSES.get("config_table", 0) == misses + 1  # computed anew: the runs changed
    assert total(after) > total(first)
    new = devices_in_table(after) - before
    assert new, f"the imported runs' device is not in Compare's table: {sorted(devices_in_table(after))}"
    assert any(f"of {after_total}" in shown(c.value) for c in after.caption for after_total in [total(after)])


def test_the_app_warms_compare_before_the_first_browser_arrives(seeded_db: Path, tmp_path: Path) -> None:
    """`joulebench app` reads the store and computes Compare's default view in the background at its start,
    and says so on stderr (the benchmarks print that line)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    import waits

    port = waits.free_port()
    log = tmp_path / "app.log"
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    with open(log, "wb") as out:
        app = subprocess.Popen([sys.executable, "-m", "cli", "app", "--port", str(port), "--db", str(seeded_db)],
                               cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while "warmed in" not in log.read_text() and app.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        text = log.read_text()
        assert "warmed in" in text, text[-2000:]
        line = next(x for x in text.splitlines() if "warmed in" in x)
        assert "modules imported" in line and "the store read" in line, line
        assert "Compare's default view computed" in line and "stopped" not in line, line
    finally:
        waits.stop(app)


def test_a_frame_collected_while_the_cache_lock_is_held_does_not_deadlock() -> None:
    """A digested frame's weakref callback takes the cache's lock; the garbage collector may run it in a thread
    that already holds that lock (any allocation under it can start a collection). With a plain lock that
    thread waited on itself forever: the server's page hung (seen as test_busy_pages never finishing)."""
    import gc
    import threading

    import polars as pl

    from explorer import memo

    def collect_under_the_lock() -> None:
        frame = pl.DataFrame({"x": [1, 2, 3]})
        memo.digest(frame)
        with memo._lock:
            del frame
            gc.collect()  # the callback runs here, in this thread, under the lock

    worker = threading.Thread(target=collect_under_the_lock, daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "the weakref callback waited on a lock its own thread holds"
