"""MLPerf Inference LLM latencies (issue 27, helper L3 of session 35): in an LLM's Server or Interactive scenario
LoadGen's "latency" is each request's, sent to its last token, so it is end-to-end latency (e2e_latency_*), and
completed samples per second are requests per second; in Offline the single query's samples are timed from its
issue (a whole-run figure of minutes to an hour), never stored as a latency. Other benchmarks keep latency_*.
Real result folders from MLCommons (tests/fixtures/formats/SOURCES.md); the comment names the summary's line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import ImportedFile, load_source
from importers.archive import sources_from_path

MLPERF = Path(__file__).parent / "fixtures" / "formats" / "mlperf_inference"
LENOVO_SERVER = MLPERF / "v5.1_closed_Lenovo"  # llama3.1-8b Server
H200_OFFLINE = (MLPERF / "v4.1_closed_NVIDIA" / "results" / "H200-SXM-141GBx8_TRT_MaxQ" / "llama2-70b-99" / "Offline"
                / "performance" / "run_1")
ORIN_RESNET = MLPERF / "v3.0_NVIDIA_Orin_TRT_MaxQ_resnet50_SingleStream"


def _runs(path: Path) -> list[dict]:
    imported: ImportedFile = load_source(sources_from_path(path)[0])[0]
    return imported.runs


def test_llm_server_latency_is_end_to_end_per_request() -> None:
    (run,) = _runs(LENOVO_SERVER)
    m = run["metrics"]
    # mlperf_log_summary.txt lines 25-30: Mean / 50.00 / 90.00 / 95.00 / 99.00 percentile latency (ns)
    assert m["e2e_latency_avg_ms"] == pytest.approx(3177.531)
    assert m["e2e_latency_p50_ms"] == pytest.approx(3176.03361)
    assert m["e2e_latency_p90_ms"] == pytest.approx(3393.63682)
    assert m["e2e_latency_p99_ms"] == pytest.approx(3801.491496)
    assert not any(k.startswith("latency_") for k in m)  # not the generic per-query latency
    assert "max request latency 4426.2 ms" in run["notes"]  # line 24 "Max latency (ns)": no max column
    assert m["requests_per_s"] == pytest.approx(997.59)  # line 7 "Completed samples per second": one a prompt


def test_llm_offline_latency_is_never_stored_as_latency() -> None:
    (run,) = _runs(H200_OFFLINE)
    m = run["metrics"]
    # lines 17-20: Max latency 3116.7 s, Mean 1585.3 s since the single query was issued: the whole run
    assert not any(k.startswith(("latency_", "e2e_latency_")) for k in m)
    assert "requests_per_s" not in m
    assert "whole-run figures: not stored as latency" in run["notes"] and "1585266607369" in run["notes"]
    assert m["throughput_sps"] == pytest.approx(86.7369)  # line 7 "Samples per second"


def test_other_benchmarks_keep_their_per_query_latency() -> None:
    runs = _runs(ORIN_RESNET)
    run = next(r for r in runs if r["metrics"].get("latency_avg_ms"))
    # run_1/mlperf_log_summary.txt lines 26-27: "Mean latency (ns): 1478507", "50.00 percentile latency: 1578304"
    assert run["metrics"]["latency_avg_ms"] == pytest.approx(1.478507)
    assert run["metrics"]["latency_p50_ms"] == pytest.approx(1.578304)
    assert "e2e_latency_avg_ms" not in run["metrics"] and "requests_per_s" not in run["metrics"]
