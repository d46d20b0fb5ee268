"""Goodput under the person's limits on Decide and Compare, the per-request view on Run detail, and
`joulebench decide --json --slo` (issue 38), on a store holding a real vLLM `--save-detailed` file and a real LLMPerf
individual-responses file (tests/fixtures/formats, SOURCES.md there) plus serve-bench-style points with energy.
Every figure shown is checked against a count done here, one request at a time, from the stored requests."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import db.requests as db_requests
from db import Store
from decision.goodput import COMPLETED_COLUMN, GOOD_COLUMN, PER_J_COLUMN, PER_S_COLUMN, SHARE_COLUMN
from importers.base import Hints
from ingest import import_file
from tests.helpers import count_good, open_page, page_texts
from tests.test_requests_store import LLMPERF, VLLM, _write, serve_bench_document

REPO = Path(__file__).resolve().parent.parent
H100, A100 = "H100 SXM", "A100 SXM 80GB"  # vLLM's file: its folder says 1xH100-80GB-SXM; LLMPerf's: given here
CANDIDATES = {"device": [H100, A100], "mode": "infer"}


def _serving_points() -> dict[str, Any]:
    """Three serve-bench points on the H100 with their requests and energy, and one point that keeps none."""
    doc = serve_bench_document(points=3, per_point=60)
    for run in doc["runs"]:
        run["device"] = {"name": H100, "kind": "gpu"}
    bare = copy.deepcopy(doc["runs"][0])
    bare.pop("requests")
    bare.update(run_id="serve-point-bare", config={**bare["config"], "request_rate_per_s": 7.0},
                metrics={**bare["metrics"], "energy_j": 555.0, "duration_s": 3.0})
    doc["runs"].append(bare)
    return doc


@pytest.fixture
def goodput_db(seeded_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    assert import_file(VLLM, db=seeded_db, hints=Hints(device=H100)).status == "imported"
    assert import_file(LLMPERF, db=seeded_db, hints=Hints(device=A100)).status == "imported"
    assert import_file(_write(tmp_path, _serving_points()), db=seeded_db).status == "imported"
    monkeypatch.setenv("JOULEBENCH_DB", str(seeded_db))
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    return seeded_db


def _stored(db: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Every stored request, and the runs that keep some (with their window and energy)."""
    with Store.open_read_only(db) as store:
        runs = store.query("SELECT r.run_id, s.format, duration_s, energy_j FROM runs r JOIN sources s "
                           "USING (source_id) WHERE run_id IN (SELECT run_id FROM request_sets)")
        return db_requests.read(store, runs["run_id"].to_list()), runs


def _plain(markdown: str) -> str:
    """Text as a person reads it (decision.markdown.md's escapes taken out)."""
    return markdown.replace("\\", "")


def _goodput_table(at: Any) -> pl.DataFrame:
    for df in at.dataframe:
        data = getattr(df.value, "data", df.value)
        if PER_S_COLUMN in data.columns and COMPLETED_COLUMN in data.columns:
            return pl.from_pandas(data.reset_index(drop=True))
    raise AssertionError("no goodput table on the page:\n" + "\n".join(page_texts(at))[:3000])


def _row(table: pl.DataFrame, run_id: str) -> dict[str, Any]:
    found = table.filter(pl.col("Run").str.ends_with(f"run_id={run_id}"))
    assert found.height == 1, (run_id, table["Run"].to_list())
    return found.row(0, named=True)


def _check(table: pl.DataFrame, db: Path, limits: dict[str, float],
           formats: tuple[str, ...]) -> list[tuple[int, int]]:
    """Each point's row against the count here; returns (completed, good) per point checked."""
    requests, runs = _stored(db)
    checked = []
    for run in runs.filter(pl.col("format").is_in(formats)).iter_rows(named=True):
        completed, good = count_good(requests.filter(pl.col("run_id") == run["run_id"]).to_dicts(), limits)
        row = _row(table, run["run_id"])
        assert (row[COMPLETED_COLUMN], row[GOOD_COLUMN]) == (completed, good), run
        assert row[SHARE_COLUMN] == pytest.approx(100.0 * good / completed)
        per_s, per_j = row[PER_S_COLUMN], row[PER_J_COLUMN]
        assert (per_s == pytest.approx(good / run["duration_s"])) if run["duration_s"] else per_s is None
        assert (per_j == pytest.approx(good / run["energy_j"])) if run["energy_j"] else per_j is None
        checked.append((completed, good))
    return checked


# the same SLO question asked of both real files: one limit each can answer (the LLMPerf file keeps no gaps, the
# vLLM file no end-to-end time per request); 59.5 ms splits vLLM's requests, 900 ms LLMPerf's
@pytest.mark.parametrize("ttft", [59.5, 900.0])
def test_compare_answers_the_same_slo_for_a_vllm_and_an_llmperf_file(goodput_db: Path, ttft: float) -> None:
    at = open_page("compare", {"gp_ttft": f"{ttft:g}"})
    table = _goodput_table(at)
    assert len(_check(table, goodput_db, {"ttft": ttft}, ("vllm-bench", "llmperf"))) == 2
    assert any(f"TTFT ≤ {ttft:g} ms" in _plain(t) for t in page_texts(at))  # labelled with the limits used
    goods = [_row(table, r)[GOOD_COLUMN] for r in _stored(goodput_db)[1].filter(
        pl.col("format").is_in(["vllm-bench", "llmperf"]))["run_id"]]
    assert goods == ([3, 0] if ttft < 100 else [7, 8]) or goods == ([0, 3] if ttft < 100 else [8, 7])
    assert at.query_params["gp_ttft"] == f"{ttft:g}"  # kept in the link


def test_decide_shows_goodput_per_joule_under_limits_no_run_saw(goodput_db: Path) -> None:
    limits = {"ttft": 50.0, "itl": 6.5}
    at = open_page("decide", {**CANDIDATES, "gp_ttft": "50", "gp_itl": "6.5", "gp_at": "p90"})
    table = _goodput_table(at)
    counts = _check(table, goodput_db, limits, ("joulebench-result",))  # the serve-bench points: per joule too
    assert len(counts) == 3 and any(0 < good < completed for completed, good in counts)  # the limits separate
    assert table[PER_J_COLUMN].drop_nulls().len() == 3
    best = table[PER_J_COLUMN].drop_nulls().to_list()
    assert best == sorted(best, reverse=True)  # the most good requests per joule first
    texts = page_texts(at)
    assert any("Your limits:** TTFT ≤ 50 ms (p90), ITL ≤ 6.5 ms (p90)" in _plain(t) for t in texts), texts
    # the point that keeps no requests says so, in its own table, with nothing counted
    rest = next(pl.from_pandas(getattr(df.value, "data", df.value).reset_index(drop=True)) for df in at.dataframe
                if "Why not known, or the basis" in getattr(df.value, "data", df.value).columns
                and COMPLETED_COLUMN not in getattr(df.value, "data", df.value).columns)
    bare = _row(rest, "serve-point-bare")
    assert bare[PER_S_COLUMN] is None and "keeps no requests" in bare["Why not known, or the basis"]
    assert bare["TTFT p90 ≤ 50 ms held"] == ("yes" if _stored_p90(goodput_db) <= 50 else "no")


def _stored_p90(db: Path) -> float:
    with Store.open_read_only(db) as store:
        return float(store.query("SELECT ttft_p90_ms FROM runs WHERE run_id = 'serve-point-bare'").item())


def test_a_limit_outside_its_range_in_the_link_is_reported_and_not_applied(goodput_db: Path) -> None:
    at = open_page("decide", {**CANDIDATES, "gp_tpot": "1e12"})
    assert any("TPOT limit '1e12' (expected a number from 0 to 8.64e+07)" in _plain(w.value) for w in at.warning), \
        [w.value for w in at.warning]
    assert any("Type a limit above" in c.value for c in at.caption)


def test_run_detail_shows_a_points_requests_or_says_it_keeps_none(goodput_db: Path) -> None:
    requests, runs = _stored(goodput_db)
    llmperf = runs.filter(pl.col("format") == "llmperf")["run_id"].item()
    at = open_page("run_detail", {"run_id": llmperf})
    assert "Requests" in [h.value for h in at.subheader]
    assert any("150 requests stored: 20 completed, 130 failed" in _plain(c.value) for c in at.caption), \
        [c.value for c in at.caption]
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    ecdf = next(c for c in charts if "ECDF" in str(c["layout"].get("title")))
    ttft = [t for t in ecdf["data"] if t.get("name") == "TTFT"][0]
    mine = requests.filter((pl.col("run_id") == llmperf) & (pl.col("status") == "ok"))["ttft_ms"]
    assert (min(ttft["x"]), max(ttft["x"])) == pytest.approx((mine.min(), mine.max()))
    assert ttft["y"][-1] == pytest.approx(100.0)
    timeline = next(c for c in charts if "Requests over time" in str(c["layout"].get("title")))
    assert any("failed (130)" == t.get("name") for t in timeline["data"])
    at = open_page("run_detail", {"run_id": "serve-point-bare"})
    assert any("This serving point keeps no requests" in c.value for c in at.caption)


def test_decide_json_takes_the_same_limits(goodput_db: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "cli", "decide", "--device", H100, "--device", A100, "--mode",
                           "infer", "--slo", "ttft<=900ms", "--json", "--db", str(goodput_db)],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout)["goodput"]
    assert answer["slo"] == "ttft<=900ms" and answer["limits"] == "TTFT ≤ 900 ms"
    requests, runs = _stored(goodput_db)
    points = {p["run_id"]: p for p in answer["points"]}
    for run in runs.iter_rows(named=True):
        completed, good = count_good(requests.filter(pl.col("run_id") == run["run_id"]).to_dicts(), {"ttft": 900.0})
        point = points[run["run_id"]]
        assert (point["basis"], point["requests_completed"], point["requests_good"]) == ("requests", completed, good)
        assert point["good_requests_per_s"] == (pytest.approx(good / run["duration_s"]) if run["duration_s"]
                                                else None)
    assert points["serve-point-bare"]["basis"] == "stored figures" and not points["serve-point-bare"]["known"]
    refused = subprocess.run([sys.executable, "-m", "cli", "decide", "--device", H100, "--device", A100, "--mode",
                              "infer", "--slo", "ttft<=soon", "--json", "--db", str(goodput_db)],
                             capture_output=True, text=True, timeout=120, cwd=REPO)
    assert refused.returncode != 0 and "--slo: SLO: 'ttft<=soon' does not parse" in refused.stderr
