"""A serving sweep compared as serving runs, in a real browser (issue 37): a serve-bench rate sweep (1, 2 and
5,000 requests/s, the last overloaded) and a concurrency sweep (1 and 4) against a real `transformers serve`, and an
uploaded LLMPerf summary of two concurrencies. Compare draws each load as its own point (never a bar pooling loads),
the overloaded point apart, and its figures are what arrived in its steady state; Decide, given a TTFT limit the
sweep never saw, states each point's goodput as a count of its stored requests (issue 38)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from importers import Hints
from ingest.service import import_file
from tests.helpers import read_while_served
from tests.serve_engine import Server, model_dir, server  # noqa: F401 - the session's engine, shared
from tests.test_browser import _settled, _shot, app_server, page  # noqa: F401 - the real browser's fixture

LLMPERF = (Path(__file__).parent / "fixtures" / "formats" / "llmperf"
           / "philschmid-llmperf-bench-llama3-8b-tp1-results-keyed-summaries-trimmed.json")


def _bench(*args: str, db: Path) -> None:
    """serve-bench in its own process (the browser's fixture holds this thread's event loop)."""
    done = subprocess.run([sys.executable, "-m", "cli", "serve-bench", *args, "--db", str(db)], capture_output=True,
                          text=True, timeout=600, cwd=Path(__file__).parent.parent,
                          env=dict(os.environ, HF_HUB_OFFLINE="1"))
    assert done.returncode == 0, done.stderr[-3000:]


def _ticks(browser_page, wanted: tuple[str, ...]) -> list[str]:  # type: ignore[no-untyped-def]
    """The charts' x tick labels, once every `wanted` label is drawn (polled: the charts draw after the text)."""
    deadline = time.monotonic() + 90
    while True:
        ticks = browser_page.locator(".xtick text").all_text_contents()
        if all(any(w in t for t in ticks) for w in wanted) or time.monotonic() > deadline:
            return ticks
        browser_page.wait_for_timeout(500)


@pytest.mark.browser
def test_compare_draws_each_load_as_its_own_point(server: Server, model_dir: Path, seeded_db: Path,  # noqa: F811
                                                  tmp_path: Path, page, output_dir: Path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    lengths = ("--prompt-tokens", "16", "--output-tokens", "8", "--tokenizer", str(model_dir), "--warmup-requests", "1")
    _bench("--target", server.url, "--rate", "1,2,5000", "--requests", "8", *lengths, db=seeded_db)
    _bench("--target", server.url, "--concurrency", "1,4", "--requests", "8", *lengths, db=seeded_db)
    import_file(LLMPERF, db=seeded_db, hints=Hints(device="H100 80GB"))
    con = duckdb.connect(str(seeded_db), read_only=True)
    try:
        points = con.execute("SELECT request_rate_per_s, max_concurrency, load_kind, tokens_per_s, output_tokens, "
                             "duration_s, energy_j, j_per_token, flags FROM runs "
                             "WHERE workload = 'serve-bench'").fetchall()
    finally:
        con.close()
    assert len(points) == 5
    overloaded = [p for p in points if "overloaded" in p[8]]
    assert 5000.0 in [p[0] for p in overloaded]  # 8 requests sent within 2 ms (a busy machine may overload 2/s too)
    for _, _, _, tokens_per_s, output_tokens, duration_s, energy_j, j_per_token, _ in overloaded:
        # what was served in the steady state: the tokens that arrived in it over its length, never the offered load
        assert tokens_per_s == pytest.approx(output_tokens / duration_s, rel=1e-6)
        assert output_tokens <= 8 * 8
        if energy_j is not None:
            assert j_per_token == pytest.approx(energy_j / output_tokens, rel=1e-6)

    env = dict(os.environ, JOULEBENCH_DB=str(seeded_db), HF_HUB_OFFLINE="1")
    with app_server([], env, tmp_path) as url:
        page.goto(f"{url}/compare?workload=serve-bench&metric=tokens")
        _settled(page)
        loads = ("rate 1/s", "rate 2/s", "rate 5000/s", "concurrency 1", "concurrency 4")
        ticks = _ticks(page, loads)
        for load in loads:
            assert sum(load in t for t in ticks) == 1, (load, "|".join(ticks))  # one point per load, never pooled
        assert page.get_by_text("overloaded: measured what arrived").count() >= 1  # the hatched point's legend
        _shot(page, output_dir / "compare-serving-sweep.png")

        # Decide with a TTFT limit the sweep never saw: each point's goodput is a count of its stored requests
        limit_ms = round(float(read_while_served(
            seeded_db, "SELECT median(ttft_ms) FROM requests WHERE counted AND status = 'ok'")[0][0]), 2)
        device = read_while_served(seeded_db,
                                   "SELECT DISTINCT device_name FROM runs WHERE workload = 'serve-bench'")[0][0]
        counts = read_while_served(
            seeded_db, "SELECT count(*) FILTER (WHERE q.status IN ('ok', 'empty')), count(*) FILTER (WHERE q.status = "
                       "'ok' AND q.ttft_ms <= ?) FROM requests q JOIN runs r USING (run_id) WHERE q.counted AND "
                       "r.workload = 'serve-bench' GROUP BY q.run_id", [limit_ms])
        assert len(counts) == 5 and any(0 < good < done for done, good in counts)  # the limit splits requests
        page.goto(f"{url}/decide?device={device}&device=H100+80GB&mode=infer&gp_ttft={limit_ms}")
        page.get_by_text("requests met every limit").first.wait_for(timeout=90_000)
        _settled(page)
        body = page.inner_text("body")
        for done, good in counts:
            assert f"{good:,} of {done:,} requests met every limit" in body, (good, done)
        _shot(page, output_dir / "decide-goodput-serving-sweep.png")

        workload = read_while_served(seeded_db,
                                     "SELECT DISTINCT workload FROM runs WHERE origin_format = 'llmperf'")[0][0]
        page.goto(f"{url}/compare?workload={workload}&metric=ttft_p90")
        _settled(page)
        ticks = _ticks(page, ("concurrency 1", "concurrency 2"))
        assert sum("concurrency 1" in t for t in ticks) == 1 and sum("concurrency 2" in t for t in ticks) == 1, ticks

