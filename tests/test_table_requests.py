"""Tables whose rows are one run's requests or items (importers.table_requests, table_steps' items): a load test's
request records are one run with its requests, its figures theirs; a run's per-sample records are that run."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

import joulebench.requests as jr
from importers import load
from tests.helpers import load_fixture

HELD = Path(__file__).parent / "fixtures" / "formats" / "request_tables"
BURN = HELD / "sustained-burn-results-uncapped.json"
SAMPLES = HELD / "awq_wikitext2_1778763649.jsonl"

# a serving benchmark's per-request rows: sent times, TTFT and end-to-end latency, one failed request
PER_REQUEST = """request_id,start_time,ttft_ms,e2e_latency_ms,prompt_tokens,completion_tokens,status
0,0.00,101.2,2210.5,512,128,ok
1,0.25,98.7,2190.1,498,128,ok
2,0.50,120.3,2301.9,530,128,ok
3,0.75,,,,0,error
4,1.00,99.1,2250.0,505,127,ok
5,1.25,103.5,2260.4,520,128,ok
"""


def _load(text: str, name: str) -> tuple[list[dict], tuple[str, ...]]:
    imported, _ = load(text.encode(), name)
    return imported.runs, imported.warnings


def test_a_load_tests_request_records_are_one_run_with_every_request() -> None:
    runs, fmt, warnings = load_fixture(BURN)
    assert fmt == "general-table" and len(runs) == 1  # was 1108 runs, one per request, each tagged by its worker
    run, summary = runs[0], json.loads(BURN.read_text())["summary"]
    m = run["metrics"]
    assert len(run["requests"]) == summary["total_requests"] == m["requests_completed"] == 1108
    assert m["requests_failed"] == 0 and "tag" not in run["config"]  # a worker is no setup
    latencies = [r["latency_ms"] for r in json.loads(BURN.read_text())["results"]]
    assert m["e2e_latency_avg_ms"] == pytest.approx(statistics.fmean(latencies))
    assert m["e2e_latency_avg_ms"] == pytest.approx(summary["avg_latency_ms"], abs=0.05)  # the writer's own mean
    assert m["e2e_latency_p50_ms"] == pytest.approx(statistics.median(latencies))
    # 'elapsed' does not say sent or finished: the window lies within one latency of the rows' span
    assert 602.3 < m["duration_s"] < 604.7 and m["duration_s"] == pytest.approx(summary["total_duration_s"], rel=2e-3)
    assert m["requests_per_s"] == pytest.approx(1108 / m["duration_s"])
    # the answers were not streamed: no TTFT or TPOT; each request's own tok_s is not the run's rate
    assert not {"ttft_avg_ms", "tpot_avg_ms", "tokens_per_s"} & set(m)
    assert all(r["status"] == "ok" and "ttft_ms" not in r for r in run["requests"])
    assert any("each request's own figure" in w and "tokens_per_s" in w for w in warnings)
    assert "between 602.3 and 604.6 s" in run["notes"]


def test_per_request_rows_with_sent_times_and_a_failed_request() -> None:
    runs, warnings = _load(PER_REQUEST, "requests.csv")
    assert len(runs) == 1
    run = runs[0]
    m = run["metrics"]
    assert (m["requests_completed"], m["requests_failed"]) == (5, 1)
    assert [r["status"] for r in run["requests"]] == ["ok", "ok", "ok", "failed", "ok", "ok"]
    assert m["duration_s"] == pytest.approx(1.25 + 2.2604)  # first sent to last finished
    assert m["tokens_per_s"] == pytest.approx((128 * 4 + 127) / 3.5104)
    assert m["requests_per_s"] == pytest.approx(5 / 3.5104)
    assert m["ttft_p50_ms"] == pytest.approx(101.2) and m["e2e_latency_p50_ms"] == pytest.approx(2250.0)
    assert m["tpot_avg_ms"] == pytest.approx(statistics.fmean(
        [(2210.5 - 101.2) / 127, (2190.1 - 98.7) / 127, (2301.9 - 120.3) / 127, (2250.0 - 99.1) / 126,
         (2260.4 - 103.5) / 127]))
    assert "prompt_tokens_requested" not in run["config"]  # each request's own length
    assert m["prompt_tokens_mean"] == pytest.approx(statistics.fmean([512, 498, 530, 505, 520]))
    assert any("rows read as requests (request_id names each request)" in w for w in warnings)
    assert not any("request_id (no unit" in w for w in warnings)


def test_a_setting_column_splits_requests_into_runs_and_an_unsure_window_gives_no_rate() -> None:
    rows = ["request_id,concurrency,timestamp,ttft_ms,latency_ms"]
    for c in (1, 8):
        rows += [f"{i},{c},{100 + i * 0.5},{40 + c + i},{900 + 10 * c + i}" for i in range(6)]
    runs, _ = _load("\n".join(rows), "requests.csv")
    assert sorted(r["config"]["max_concurrency"] for r in runs) == [1, 8]
    assert all(len(r["requests"]) == 6 for r in runs)
    one = next(r for r in runs if r["config"]["max_concurrency"] == 1)
    assert one["metrics"]["ttft_avg_ms"] == pytest.approx(statistics.fmean(41 + i for i in range(6)))
    # a 0.9 s latency over a 2.5 s span: sent or finished is not said, so the window (and every rate) is unknown
    assert not {"duration_s", "requests_per_s", "tokens_per_s"} & set(one["metrics"])
    assert "no request rate or token rate" in one["notes"]


def test_statistics_per_row_and_repeated_ids_are_not_requests() -> None:
    summary = PER_REQUEST.replace("ttft_ms", "ttft_mean_ms")  # a mean per row: each row a run's summary
    runs, _ = _load(summary, "summary.csv")
    assert len(runs) == 5 and not any("requests" in r for r in runs)
    repeated = "\n".join(["prompt_id,ttft_ms,latency_ms"] + [f"{i % 2},{50 + i},{500 + i}" for i in range(6)])
    runs, _ = _load(repeated, "repeats.csv")
    assert not any("requests" in r for r in runs)  # an id written twice in one setup names no request


def test_per_sample_records_are_one_run_and_their_lengths_not_settings() -> None:
    runs, fmt, warnings = load_fixture(SAMPLES)
    assert fmt == "general-table" and len(runs) == 1  # was 8 runs, one per sample, each with its prompt length
    records = [json.loads(line) for line in SAMPLES.read_text().splitlines()]
    m, config = runs[0]["metrics"], runs[0]["config"]
    assert m["decode_tokens_per_s"] == pytest.approx(statistics.median(r["decode_tokens_per_second"]
                                                                       for r in records))
    assert m["duration_s"] == pytest.approx(sum(r["decode_seconds"] for r in records))
    assert "prompt_tokens_requested" not in config
    assert any("each a different sample_id" in w and "input_tokens each item's own" in w for w in warnings)


def test_an_answer_not_streamed_needs_its_latency() -> None:
    assert not jr.problems([{"index": 0, "status": "ok", "e2e_ms": 900.0}], "runs[0]")
    problems = jr.problems([{"index": 0, "status": "ok"}], "runs[0]")
    assert problems and "runs[0].requests[0].ttft_ms" in problems[0] and "e2e_ms" in problems[0]
