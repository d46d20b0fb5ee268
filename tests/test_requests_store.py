"""Every request kept (issue 38): real per-request files (vLLM `--save-detailed`, LLMPerf individual responses) and a
serve-bench-style result file go into a real DuckDB with their requests, in the run's transaction; every stored
aggregate of a run with requests is recomputed from its stored requests; exports and the team store carry them;
bad per-request input is refused or flagged naming the field."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import db.requests as db_requests
import joulebench.requests as jr
from db import Store
from db.export import build_document, write_tables
from importers import load
from ingest import import_file
from joulebench.errors import ResultFileError
from joulebench.resultfile import load_result_bytes, new_document

FORMATS = Path(__file__).parent / "fixtures" / "formats"
VLLM = FORMATS / "vllm" / "LambdaLabsML-vllm-benchmark-2024-09-1xH100-llama3.1-8b-fp8-prompt10-len8192.json"
LLMPERF = FORMATS / "llmperf" / "llmperf-leaderboard-lepton-llama2-70b_individual_responses.json"


def _store(bare_template: Path, tmp_path: Path, *files: Path) -> Path:
    db = tmp_path / "requests.duckdb"
    shutil.copy(bare_template, db)
    for f in files:
        assert import_file(f, db=db).status == "imported"
    return db


def serve_bench_document(points: int = 2, per_point: int = 40) -> dict[str, Any]:
    """Runs as serve-bench would write them through joulebench.requests.from_values: figures from the requests."""
    runs = []
    for p in range(points):
        reqs = []
        for i in range(per_point):
            sent = 100.0 + i * 0.05
            if i % 13 == 5:
                reqs.append(jr.from_values(i, sent_s=sent, scheduled_s=sent - 0.001, token_s=[], error="HTTP 503",
                                           error_kind="refused", start_s=100.0))
                continue
            n = 2 + (i * 7 + p) % 9
            first = sent + 0.02 + 0.003 * ((i * 5) % 11) + 0.01 * p
            tokens = [first]
            for k in range(1, n):
                tokens.append(tokens[-1] + 0.004 + 0.001 * ((i + k) % 4))
            reqs.append(jr.from_values(i, sent_s=sent, scheduled_s=sent - 0.0005, token_s=tokens,
                                       output_tokens_server=n, prompt_tokens_server=30 + i % 5,
                                       counted=i >= 3, start_s=100.0))  # the first 3: before the steady state
        agg = jr.aggregate(jr.frame(reqs))
        runs.append({"run_id": f"serve-point-{p}", "status": "ok", "device": {"name": "Test GPU", "kind": "gpu"},
                     "config": {"mode": "infer", "workload": "llm-serve", "load_kind": "rate",
                                "request_rate_per_s": 20.0 * (p + 1)},
                     "metrics": {**agg.metrics, "duration_s": 2.0, "energy_j": 300.0 + p,
                                 "energy_boundary": "gpu_board", "energy_method": "counter"},
                     "requests": [r.to_json() for r in reqs]})
    return new_document(runs, producer_version="test", created_at="2026-11-27T00:00:00+00:00")


def _write(tmp_path: Path, doc: dict[str, Any], name: str = "serve.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def _recompute_every_aggregate(db: Path) -> int:
    """Each run with requests: every figure the requests give equals the stored one (the source's digits are kept
    only where they agree within joulebench.requests.AGREE_REL). Returns the number of figures checked."""
    checked = 0
    with Store.open_read_only(db) as store:
        sets = db_requests.runs_with_requests(store)
        assert sets.height, "no run kept its requests"
        for run_id, in_source, kept, _ in sets.iter_rows():
            assert in_source == kept  # nothing cut here
            rows = db_requests.read(store, [run_id])
            assert rows.height == kept
            stored = store.query("SELECT * FROM runs WHERE run_id = ?", [run_id]).row(0, named=True)
            for name, value in jr.aggregate(rows).metrics.items():
                assert stored[name] == pytest.approx(value, rel=jr.AGREE_REL), (run_id, name)
                checked += 1
    return checked


def test_vllm_save_detailed_keeps_every_request_and_its_figures_are_theirs(bare_template: Path,
                                                                           tmp_path: Path) -> None:
    db = _store(bare_template, tmp_path, VLLM)
    doc = json.loads(VLLM.read_text())
    with Store.open_read_only(db) as store:
        rows = store.query("SELECT * FROM requests ORDER BY request_index")
        run = store.query("SELECT ttft_avg_ms, itl_avg_ms, tpot_avg_ms, requests_completed, notes FROM runs").row(
            0, named=True)
    assert rows.height == 10 and rows["prompt_tokens_client"].to_list() == doc["input_lens"]
    # vLLM counted 3 answers without a token as successes with TTFT 0.0: stored as empty, no TTFT
    assert rows["status"].to_list().count("empty") == 3 and rows.filter(pl.col("status") == "empty")[
        "ttft_ms"].null_count() == 3
    real = [t * 1e3 for t, n in zip(doc["ttfts"], doc["output_lens"], strict=True) if n > 0]
    assert run["ttft_avg_ms"] == pytest.approx(sum(real) / len(real))  # not vLLM's 41.65 (zeros averaged in)
    assert "ttft_avg_ms: vLLM's summary states 41.6524" in run["notes"]
    assert run["itl_avg_ms"] == doc["mean_itl_ms"]  # the same figure: vLLM's digits kept
    assert run["tpot_avg_ms"] == doc["mean_tpot_ms"]  # no end-to-end time per request: the summary's TPOT stays
    assert rows["itl_ms"].list.len().fill_null(0).to_list() == [len(x) for x in doc["itls"]]  # empty: no list
    assert _recompute_every_aggregate(db) >= 12


def test_llmperf_individual_responses_are_requests(bare_template: Path, tmp_path: Path) -> None:
    db = _store(bare_template, tmp_path, LLMPERF)
    responses = json.loads(LLMPERF.read_text())
    with Store.open_read_only(db) as store:
        rows = store.query("SELECT status, error_class, e2e_ms, itl_kept FROM requests")
    assert rows.height == len(responses) == 150
    assert rows.filter(pl.col("status") == "failed").height == 130
    assert rows.filter(pl.col("status") == "failed")["error_class"].str.starts_with("HTTP 429").all()
    assert set(rows["itl_kept"]) == {"none"}  # LLMPerf keeps no gaps
    assert _recompute_every_aggregate(db) >= 15


def test_serve_bench_points_recompute_and_export_round_trip(bare_template: Path, tmp_path: Path) -> None:
    doc = serve_bench_document()
    db = _store(bare_template, tmp_path, _write(tmp_path, doc))
    assert _recompute_every_aggregate(db) >= 2 * 22
    with Store.open_read_only(db) as store:
        exported = build_document(store)
        tables = write_tables(store, tmp_path / "out.csv")
    by_id = {r["run_id"]: r for r in exported["runs"]}
    for run in doc["runs"]:
        assert by_id[run["run_id"]]["requests"] == run["requests"]  # every field, every gap
    assert any(p.name == "out_requests.csv" for p in tables)
    # an export imports back: its requests validate (ids already stored: nothing added twice)
    load_result_bytes(json.dumps(exported).encode(), "exported.json")
    with Store.open_read_only(db) as store:
        uncounted = store.query("SELECT count(*) FROM requests WHERE NOT counted").item()
    assert uncounted == 2 * 3


def test_team_store_carries_requests(bare_template: Path, tmp_path: Path) -> None:
    from db.lake import LakeUrl, connect
    from db.push import push

    db = _store(bare_template, tmp_path, VLLM)
    lake = LakeUrl.parse(f"ducklake:sqlite:{tmp_path / 'team.sqlite'}")
    push(db, lake, machine="box")
    con = connect(lake, read_only=True)
    try:
        n = con.execute("SELECT count(*), sum(len(itl_ms)) FROM requests").fetchone()
        kept = con.execute("SELECT requests_kept FROM request_sets").fetchall()
    finally:
        con.close()
    doc = json.loads(VLLM.read_text())
    assert n == (10, sum(len(x) for x in doc["itls"])) and kept == [(10,)]


# --- bad input: refused or flagged, naming the field -------------------------------------------------------------

def _vllm_variant(**changes: Any) -> bytes:
    doc = json.loads(VLLM.read_text())
    doc.update(changes)
    return json.dumps(doc).encode()


def test_vllm_detailed_bad_input_is_refused_naming_the_field() -> None:
    doc = json.loads(VLLM.read_text())
    with pytest.raises(ResultFileError, match=r"arrays differ in length \(input_lens 10, output_lens 10, ttfts 9"):
        load(_vllm_variant(ttfts=doc["ttfts"][:9]), VLLM.name)
    with pytest.raises(ResultFileError, match=r"\.completed: 12 completed requests, but its arrays hold 10"):
        load(_vllm_variant(completed=12), VLLM.name)
    bad = list(doc["ttfts"])
    bad[3] = -0.5
    with pytest.raises(ResultFileError, match=r"ttfts\[3\]: -0.5 is not a latency"):
        load(_vllm_variant(ttfts=bad), VLLM.name)
    gaps = [list(g) for g in doc["itls"]]
    gaps[0][2] = -1.0
    with pytest.raises(ResultFileError, match=r"itls\[0\]\[2\]"):
        load(_vllm_variant(itls=gaps), VLLM.name)


def test_tokens_claimed_but_not_streamed_are_flagged() -> None:
    doc = json.loads(VLLM.read_text())
    gaps = [list(g) for g in doc["itls"]]
    gaps[3] = []  # output_lens[3] is 194
    imported, _ = load(_vllm_variant(itls=gaps), VLLM.name)
    run = imported.runs[0]
    assert jr.FLAG_NOT_STREAMED in run["flags"] and "requests 3:" in run["notes"]
    assert "itl_ms" not in run["requests"][3]  # no gap list: its ITL is not known, never 0


def test_result_file_requests_are_checked() -> None:
    doc = serve_bench_document(points=1, per_point=6)
    doc["runs"][0]["requests"][1]["ttft_ms"] = -3.0
    with pytest.raises(ResultFileError, match=r"runs\[0\]\.requests\[1\]\.ttft_ms"):
        load_result_bytes(json.dumps(doc).encode(), "bad.json")
    doc = serve_bench_document(points=1, per_point=6)
    doc["runs"][0]["requests"][2]["e2e_ms"] = 0.001
    with pytest.raises(ResultFileError, match=r"requests\[2\]\.e2e_ms: 0.001 is before ttft_ms"):
        load_result_bytes(json.dumps(doc).encode(), "bad.json")
    doc = serve_bench_document(points=1, per_point=6)
    doc["runs"][0]["requests"][4]["index"] = 0
    with pytest.raises(ResultFileError, match=r"requests\[4\]\.index: 0 appears twice"):
        load_result_bytes(json.dumps(doc).encode(), "bad.json")


def test_retention_is_bounded_and_says_what_it_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jr, "MAX_REQUESTS_PER_RUN", 5)
    monkeypatch.setattr(jr, "MAX_GAPS_PER_RUN", 6)
    reqs = [jr.Request(i, ttft_ms=10.0 + i, itl_ms=(1.0, 2.0, 3.0 + i), output_tokens_server=4) for i in range(8)]
    kept, note = jr.retain(reqs)
    assert [r.index for r in kept] == [0, 1, 2, 3, 4]
    assert [r.itl_kept for r in kept] == ["every gap", "every gap", "summary", "summary", "summary"]
    assert kept[2].gaps == jr.GapSummary(3, 8.0, 1.0, 5.0)
    assert note is not None and "8 requests: the first 5" in note and "3 requests past the 6" in note
    agg = jr.aggregate(jr.frame(kept))
    gaps = [g for r in reqs[:5] for g in (r.itl_ms or ())]
    assert agg.metrics["itl_avg_ms"] == pytest.approx(sum(gaps) / len(gaps))  # the summary keeps the mean exact
    assert "itl_p50_ms" not in agg.metrics and "withheld" in agg.notes[0]


def test_the_percentiles_are_the_metrics_definition() -> None:
    import numpy as np

    from joulebench.metrics import Percentiles

    values = [((i * 7919) % 1000) / 7.0 for i in range(1001)]
    fast, slow = jr.percentiles(np.array(values)), Percentiles.of(values)
    assert fast is not None and slow is not None
    for stat in ("avg", "p50", "p90", "p95", "p99"):
        assert math.isclose(fast.stat(stat), slow.stat(stat), rel_tol=1e-12)
