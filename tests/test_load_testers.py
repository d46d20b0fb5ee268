"""Load testers' reports of an endpoint (importers.locust, importers.vegeta), on real files: one run each, the
requests a second checked against the count over the time, latencies end to end, and nothing named the test does not
name (no model, no device)."""

from __future__ import annotations

from pathlib import Path

import pytest

from joulebench.units import duration_s as go_duration_s
from tests.helpers import load_fixture, readers_of_other_fixtures, refusal

FORMATS = Path(__file__).parent / "fixtures" / "formats"
STATS_HEADER = ("Type,Name,Request Count,Failure Count,Median Response Time,Average Response Time,Min Response Time,"
                "Max Response Time,Average Content Size,Requests/s,Failures/s,50%,66%,75%,80%,90%,95%,98%,99%,99.9%,"
                "99.99%,100%\n")


def test_locust_history_is_one_run_from_its_last_totals() -> None:
    runs, fmt, warnings = load_fixture(FORMATS / "locust" / "ollama-llama3-8b-u500-stats_history.csv")
    assert fmt == "locust" and len(runs) == 1  # 3,580 rows a second were as many runs
    run = runs[0]
    m = run["metrics"]
    assert m["requests_completed"] == 2874 and m["requests_failed"] == 1
    assert m["e2e_latency_avg_ms"] == pytest.approx(263404.49, abs=0.01) and m["e2e_latency_p50_ms"] == 283000
    assert m["duration_s"] == 1796 and m["requests_per_s"] == pytest.approx(2874 / 1796)  # counted, not the window's
    assert run["config"]["max_concurrency"] == 500 and run["device"] is None
    assert "e2e_latency_p99_ms" not in m  # the percentile columns are each second's window
    assert any("names neither the model nor the device" in w for w in warnings)


def test_locust_stats_with_metric_rows_reads_them_as_what_they_name() -> None:
    runs, _, _ = load_fixture(FORMATS / "locust" / "fw-llmbench-rerank-stats.csv")
    m = runs[0]["metrics"]
    assert m["requests_completed"] == 573 and m["requests_per_s"] == pytest.approx(3.8209, abs=1e-4)
    # the METRIC time_to_first_token row
    assert m["ttft_p50_ms"] == 180 and m["ttft_avg_ms"] == pytest.approx(181.664, abs=1e-3)
    assert m["e2e_latency_p99_ms"] == 240  # METRIC total_latency, never the HTTP row's 200 ms (headers only)


def test_locust_stats_aggregated_row_and_bad_cells() -> None:
    text = STATS_HEADER + ("POST,/v1/completions,200,2,950,1000.5,400,3000,512,3.3,0.1,950,1000,1100,1200,1400,1600,"
                           "1900,2100,2900,3000,3000\n,Aggregated,200,2,950,1000.5,400,3000,512,3.3,0.1,950,1000,1100,"
                           "1200,1400,1600,1900,2100,2900,3000,3000\n")
    from importers import load
    imported, fmt = load(text.encode(), "run_stats.csv")
    m = imported.runs[0]["metrics"]
    assert fmt == "locust" and m["requests_completed"] == 198 and m["requests_per_s"] == pytest.approx(3.2)
    assert m["e2e_latency_p95_ms"] == 1600 and m["e2e_latency_avg_ms"] == 1000.5
    assert "line 3: Request Count" in refusal(text.replace(",Aggregated,200,", ",Aggregated,many,").encode(), "b.csv")


def test_vegeta_text_and_json_reports() -> None:
    runs, fmt, _ = load_fixture(FORMATS / "vegeta" / "ollama-chat-20b-rate10-report.txt")
    assert fmt == "vegeta" and len(runs) == 1
    run = runs[0]
    assert run["config"]["request_rate_per_s"] == 10.1 and run["config"]["load_kind"] == "rate"
    m = run["metrics"]
    assert m["requests_per_s"] == 2.21 and m["requests_completed"] == 100 and m["duration_s"] == pytest.approx(45.194)
    assert m["e2e_latency_p50_ms"] == pytest.approx(29448) and m["e2e_latency_p99_ms"] == pytest.approx(35546)
    runs, _, _ = load_fixture(FORMATS / "vegeta" / "ollama-chat-coding30b-rate10-report.json")
    m = runs[0]["metrics"]
    assert m["e2e_latency_avg_ms"] == pytest.approx(16306.517526) and m["requests_per_s"] == pytest.approx(3.0191, 1e-4)
    assert m["duration_s"] == pytest.approx(9.899828449 + 23.222357385)  # the attack and the wait for the last answer


@pytest.mark.parametrize(("text", "seconds"), [("45.194s", 45.194), ("1m5.2s", 65.2), ("350ms", 0.35),
                                               ("2h3m", 7380.0), ("812.5µs", 812.5e-6), ("12", None), ("1x", None)])
def test_go_durations(text: str, seconds: float | None) -> None:
    assert go_duration_s(text) == (pytest.approx(seconds) if seconds is not None else None)


def test_a_bad_go_duration_is_refused_naming_the_line() -> None:
    text = (FORMATS / "vegeta" / "ollama-chat-20b-rate10-report.txt").read_text().replace("26.17s", "26.17 sec")
    message = refusal(text.encode(), "report.txt")
    assert "line 3: Latencies mean" in message and "Go duration" in message


def test_existing_fixtures_are_not_taken_by_the_load_testers() -> None:
    assert readers_of_other_fixtures({"locust", "vegeta", "wrk"}, {"locust", "vegeta", "wrk"}) == []


def test_wrk_test_block_with_its_timeouts() -> None:
    runs, fmt, _ = load_fixture(FORMATS / "wrk" / "fastapi-vllm-tinyllama-wrk-and-summary.md")
    assert fmt == "wrk" and len(runs) == 1  # the raw wrk block; the script's own summary above it is no wrk output
    run = runs[0]
    assert run["config"]["max_concurrency"] == 100 and run["config"]["load_kind"] == "concurrency"
    m = run["metrics"]
    assert m["e2e_latency_avg_ms"] == pytest.approx(2430) and m["duration_s"] == pytest.approx(27.74)
    assert (m["requests_completed"], m["requests_failed"]) == (1111, 71)  # 71 timed out: not among the 1111
    assert m["requests_per_s"] == pytest.approx(1111 / 27.74)


def test_wrk_latency_distribution_and_errors_said() -> None:
    text = ("Running 10s test @ http://localhost:8000/v1/completions\n  2 threads and 8 connections\n"
            "  Thread Stats   Avg      Stdev     Max   +/- Stdev\n    Latency   635.91ms   80.9ms   1.29s   93.69%\n"
            "    Req/Sec     6.20      1.07    9.00     86.54%\n  Latency Distribution\n     50%  600.00ms\n"
            "     75%  691.00ms\n     90%  700.00ms\n     99%    1.20s\n  126 requests in 10.10s, 2.58MB read\n"
            "  Non-2xx or 3xx responses: 6\nRequests/sec:     12.47\nTransfer/sec:    261.90KB\n")
    from importers import load
    imported, _ = load(text.encode(), "wrk.txt")
    m = imported.runs[0]["metrics"]
    assert (m["e2e_latency_p50_ms"], m["e2e_latency_p90_ms"], m["e2e_latency_p99_ms"]) == (600, 700, 1200)
    assert (m["requests_completed"], m["requests_failed"]) == (120, 6)
    message = refusal(text.replace("635.91ms", "635.91xs").encode(), "wrk.txt")
    assert "line 4" in message and "'635.91xs'" in message
