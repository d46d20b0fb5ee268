"""A buyer's generation question in a real browser (issue 19): "which GPU generates Llama-3.1-8B with the
fewest joules per token while ITL p90 stays under 20 ms, and under 50 ms?", on a fresh database holding the
real ML.ENERGY v3 leaderboard file (tests/fixtures/formats, attribution in SOURCES.md). The figures it must
name are in tests/test_token_target.py's docstring, read from the file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ingest import import_file
from tests.test_browser import _body, _set_number, _settled, _wait_text, page, server  # noqa: F401
from tests.test_token_target import LEADERBOARD

pytestmark = pytest.mark.browser
LIMIT = "ITL p90 limit (ms, your value; 0: none)"


@pytest.fixture
def with_leaderboard(seeded_db: Path) -> Path:
    assert import_file(LEADERBOARD, db=seeded_db).status == "imported"
    return seeded_db


def _winner(body: str) -> tuple[str, str, float]:
    found = re.search(r"Fewest joules per output token with (ITL p90 ≤ [\d.]+ ms) \(.+?\): (.+?) at .+?: "
                      r"([\d.]+) J/token", body)
    assert found, body[:4000]
    return found.group(1), found.group(2), float(found.group(3))


def test_the_fewest_joules_per_token_under_a_latency_limit(with_leaderboard: Path, server: str, page) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    page.goto(f"{server}/decide?device=B200&device=H100+SXM&mode=infer")  # ML.ENERGY's H100: the SXM part
    _wait_text(page, "Energy per token at your latency target")
    _set_number(page, LIMIT, "20")
    _wait_text(page, "Fewest joules per output token with ITL p90 ≤ 20 ms")
    body = _body(page)
    assert _winner(body) == ("ITL p90 ≤ 20 ms", "H100 SXM", 0.103)
    assert "B200 also meets it, at 1.47× the energy per token" in body  # 0.1511 / 0.1029
    assert "itl=20" in page.url  # the link reproduces the question
    _set_number(page, LIMIT, "50")
    _wait_text(page, "Fewest joules per output token with ITL p90 ≤ 50 ms")
    _settled(page)
    body = _body(page)
    assert _winner(body) == ("ITL p90 ≤ 50 ms", "B200", 0.0705)
    assert "H100 SXM also meets it, at 1.05× the energy per token" in body  # 0.0742 / 0.0705
