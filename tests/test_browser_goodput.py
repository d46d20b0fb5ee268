"""Goodput under an SLO the file never saw, in a real browser (issue 38): the real vLLM `--save-detailed` file
(tests/fixtures/formats/vllm, SOURCES.md there; its folder names the 1xH100-80GB-SXM it ran on) imported, Decide
opened for inference and a TTFT limit typed; the good requests, their share and goodput per second on the page
are checked against a count done here from the requests the store holds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import db.requests as db_requests
from db import Store
from importers.base import Hints
from ingest import import_file
from tests.test_browser import _body, _set_number, _settled, _wait_text, page, server  # noqa: F401
from tests.test_requests_store import VLLM

pytestmark = pytest.mark.browser
LIMIT = "TTFT limit (ms; 0: none)"


@pytest.fixture
def with_vllm(seeded_db: Path) -> Path:
    assert import_file(VLLM, db=seeded_db, hints=Hints(device="H100 SXM")).status == "imported"
    return seeded_db


def _counted(db: Path, ttft_ms: float) -> tuple[int, int, float]:
    """(good, completed, window s) of the file's point, counted here request by request."""
    with Store.open_read_only(db) as store:
        run = store.query("SELECT run_id, duration_s, goodput_slo FROM runs WHERE run_id LIKE 'vllm-bench:%'").row(
            0, named=True)
        rows = db_requests.read(store, [run["run_id"]]).to_dicts()
    assert run["goodput_slo"] is None  # the file never saw an SLO
    done = [r for r in rows if r["counted"] and r["status"] in ("ok", "empty")]
    good = sum(1 for r in done if r["status"] == "ok" and r["ttft_ms"] <= ttft_ms)
    return good, len(done), run["duration_s"]


def _shown(body: str) -> tuple[int, int, float, float]:
    found = re.search(r"H100 SXM, [^\n]*?: (\d+) of (\d+) requests met every limit \(([\d.]+) %\): ([\d.]+) "
                      r"requests/s", body)
    assert found, body[-4000:]
    return int(found.group(1)), int(found.group(2)), float(found.group(3)), float(found.group(4))


def test_decide_counts_the_good_requests_of_an_imported_vllm_file(with_vllm: Path, server: str, page) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    page.goto(f"{server}/decide?device=H100+SXM&device=Tesla+T4&mode=infer")
    _wait_text(page, "Goodput under your limits")
    for limit in ("59.5", "900"):
        _set_number(page, LIMIT, limit)
        _wait_text(page, f"TTFT ≤ {limit} ms")
        _settled(page)
        good, completed, window_s = _counted(with_vllm, float(limit))
        shown_good, shown_completed, share, per_s = _shown(_body(page))
        assert (shown_good, shown_completed) == (good, completed)
        assert share == pytest.approx(100.0 * good / completed, rel=5e-3)  # 3 significant figures
        assert per_s == pytest.approx(good / window_s, rel=5e-3)
        assert f"gp_ttft={limit}" in page.url  # the link reproduces the question
    assert (_counted(with_vllm, 59.5)[0], _counted(with_vllm, 900.0)[0]) == (3, 7)  # the limit separates requests
