"""Goodput under an SLO the runs never saw (issue 38), recomputed from the stored requests and checked against a
count done here, request by request, from the same stored rows; points without requests answer only what their
stored figures say exactly."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

import db.requests as db_requests
from db import Store
from decision.goodput import SloError, goodput, parse_slo
from ingest import import_file
from tests.helpers import count_good
from tests.test_requests_store import LLMPERF, VLLM, _write, serve_bench_document


@pytest.fixture
def store_db(bare_template: Path, tmp_path: Path) -> Path:
    db = tmp_path / "goodput.duckdb"
    shutil.copy(bare_template, db)
    for f in (_write(tmp_path, serve_bench_document(points=3, per_point=60)), VLLM, LLMPERF):
        assert import_file(f, db=db).status == "imported"
    return db


def test_goodput_for_a_new_slo_matches_a_count_of_the_stored_requests(store_db: Path) -> None:
    limits = {"ttft": 45.0, "itl": 6.5, "tpot": 6.0, "e2e": 80.0}
    slo = parse_slo("ttft_p90<=45ms,itl<=6.5ms,tpot<=0.006s,e2e<=80ms")
    with Store.open_read_only(store_db) as store:
        runs = store.query("SELECT run_id, duration_s, energy_j, goodput_slo, goodput_requests_per_s, "
                           "goodput_requests_per_j, ttft_p90_ms FROM runs WHERE run_id LIKE 'serve-point-%'")
        answer = goodput(db_requests.slo_frame(store), runs, slo)
        stored = db_requests.read(store, runs["run_id"].to_list())
    assert answer.height == 3 and answer["known"].all()
    for row in answer.iter_rows(named=True):
        mine = stored.filter(pl.col("run_id") == row["run_id"]).to_dicts()
        completed, good = count_good(mine, limits)
        assert 0 < good < completed  # the SLO separates requests: the check can fail
        assert (row["requests_completed"], row["requests_good"]) == (completed, good)
        run = runs.filter(pl.col("run_id") == row["run_id"]).row(0, named=True)
        assert row["good_requests_per_s"] == pytest.approx(good / run["duration_s"])
        assert row["good_requests_per_j"] == pytest.approx(good / run["energy_j"])
        assert row["share_good"] == pytest.approx(good / completed)
        ttfts = [r["ttft_ms"] for r in mine if r["counted"] and r["status"] == "ok"]
        within = sum(t <= 45.0 for t in ttfts) / (len(ttfts) + sum(1 for r in mine if r["counted"]
                                                                   and r["status"] == "empty"))
        assert row["attained_ttft_p90"] == (within >= 0.9)
        assert row["slo"] == "ttft_p90<=45ms,itl<=6.5ms,tpot<=6ms,e2e<=80ms"


def test_imported_files_answer_the_same_slo_question(store_db: Path) -> None:
    slo = parse_slo("ttft<=1000ms")
    with Store.open_read_only(store_db) as store:
        runs = store.query("SELECT r.run_id, s.format, duration_s, energy_j, goodput_slo, goodput_requests_per_s, "
                           "goodput_requests_per_j FROM runs r JOIN sources s USING (source_id) "
                           "WHERE s.format IN ('vllm-bench', 'llmperf')")
        answer = goodput(db_requests.slo_frame(store), runs.drop("format"), slo).join(runs.select("run_id", "format"),
                                                                                      on="run_id")
    vllm = answer.filter(pl.col("format") == "vllm-bench").row(0, named=True)
    llmperf = answer.filter(pl.col("format") == "llmperf").row(0, named=True)
    assert (vllm["requests_completed"], vllm["requests_good"]) == (10, 7)  # 3 answered with no token: not good
    assert vllm["good_requests_per_s"] == pytest.approx(7 / 1.082567339995876)  # over vLLM's duration
    assert vllm["good_requests_per_j"] is None and "good requests/J: the point has no energy" in vllm["reason"]
    assert llmperf["requests_completed"] == 20 and llmperf["known"]
    # an end-to-end limit on the vLLM file (no end-to-end time per request) is not known, and says why
    e2e = goodput(db_requests.slo_frame(Store.open_read_only(store_db)), runs.drop("format"), parse_slo("e2e<=5s"))
    vllm_e2e = e2e.join(runs.select("run_id", "format"), on="run_id").filter(pl.col("format") == "vllm-bench")
    assert not vllm_e2e["known"][0] and "7 of 10 completed requests lack" in vllm_e2e["reason"][0]


def test_points_without_requests_use_only_what_their_figures_say() -> None:
    runs = pl.DataFrame({"run_id": ["a", "b"], "duration_s": [10.0, 10.0], "energy_j": [100.0, 100.0],
                         "goodput_slo": ["ttft_p90<=500ms,e2e_latency<=2000ms", None],
                         "goodput_requests_per_s": [3.0, None], "goodput_requests_per_j": [0.3, None],
                         "ttft_p90_ms": [420.0, 650.0]})
    empty = pl.DataFrame(schema={"run_id": pl.String, "status": pl.String, "ttft_ms": pl.Float64,
                                 "itl_max_ms": pl.Float64, "itl_kept": pl.String, "e2e_ms": pl.Float64,
                                 "output_tokens": pl.Int64})
    same = goodput(empty, runs, parse_slo("e2e<=2s,ttft_p90<=500ms")).sort("run_id")
    assert same["good_requests_per_s"].to_list() == [3.0, None]  # the same SLO: its stored goodput
    assert same["attained_ttft_p90"].to_list() == [True, False]  # stored p90 against the limit
    assert "keeps no requests" in same["reason"][1]
    other = goodput(empty, runs, parse_slo("ttft<=300ms"))
    assert not other["known"].any() and other["reason"].str.contains("not known").all()


def test_slo_parsing_names_the_bad_term() -> None:
    assert parse_slo("TTFT <= 0.5s, itl_p99<=40ms").text() == "ttft<=500ms,itl_p99<=40ms"
    with pytest.raises(SloError, match="'ttft<=fast' does not parse"):
        parse_slo("ttft<=fast")
    with pytest.raises(SloError, match="ttft is limited twice"):
        parse_slo("ttft<=1s,ttft_p90<=2s")
