"""Triton's perf_analyzer (importers.perf_analyzer and the console in importers.text_scan), on real `-f` CSVs and
saved consoles: latencies are microseconds (its report writer prints ns / 1000), each concurrency a setup of its
own, and Triton's per-GPU power gives J per inference from the GPUs that served only."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import load_fixture, refusal

PA = Path(__file__).parent / "fixtures" / "formats" / "perf_analyzer"
HEADER = ("Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,"
          "Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency")


def test_csv_with_gpu_metrics_each_concurrency_a_setup_and_only_the_serving_gpu_powered() -> None:
    runs, fmt, _ = load_fixture(PA / "acts-aas_1insts_1gpus_sync.csv")
    assert fmt == "perf-analyzer" and len(runs) == 10
    by_level = {r["config"]["max_concurrency"]: r for r in runs}
    assert sorted(by_level) == [float(n) for n in range(1, 11)]  # rows come in throughput order, not by level
    top = by_level[10.0]["metrics"]
    assert top["latency_p50_ms"] == pytest.approx(9053.782) and top["latency_p99_ms"] == pytest.approx(10087.697)
    assert top["throughput_sps"] == pytest.approx(1.09719)
    # four GPUs listed, three at 0 % utilization: the power is the serving GPU's 221.026 W, not the sum (472.6 W)
    assert top["avg_power_w"] == pytest.approx(221.026)
    assert top["j_per_sample"] == pytest.approx(221.026 / 1.09719)
    assert top["energy_boundary"] == "gpu_board"
    assert "3 GPU(s) at 0 % utilization left out" in runs[0]["notes"]
    assert {r["config"]["load_kind"] for r in runs} == {"concurrency"}


def test_csv_without_metrics_has_no_energy_and_says_how_to_get_it() -> None:
    runs, fmt, warnings = load_fixture(PA / "ccvnn_benchmark_batch_1.csv")
    assert fmt == "perf-analyzer" and len(runs) == 8
    first = next(r for r in runs if r["config"]["max_concurrency"] == 1.0)["metrics"]
    assert first["latency_p50_ms"] == pytest.approx(3.183) and first["throughput_sps"] == pytest.approx(293.159)
    assert "avg_power_w" not in first and "--collect-metrics" in first["energy_missing_reason"]
    assert any("device" in w for w in warnings)  # the CSV names no device: asked for, never guessed


def test_console_blocks_are_setups_by_their_request_concurrency() -> None:
    runs, _, _ = load_fixture(PA / "triton-sandbox_01_naive.log")
    assert len(runs) == 8
    assert sorted(r["config"]["max_concurrency"] for r in runs) == [2, 4, 6, 8, 10, 12, 14, 16]
    assert {r["config"]["batch_size"] for r in runs} == {2}
    two = next(r for r in runs if r["config"]["max_concurrency"] == 2)["metrics"]
    assert two["throughput_sps"] == pytest.approx(7.10843) and two["latency_p95_ms"] == pytest.approx(586.378)


def test_console_of_a_failed_sweep_keeps_the_levels_that_finished() -> None:
    runs, _, _ = load_fixture(PA / "triton-sandbox_03_multi_instance.log")
    assert sorted(r["config"]["max_concurrency"] for r in runs) == [2, 4]


def test_request_rate_sweep_and_bad_cells() -> None:
    rate = (HEADER.replace("Concurrency,", "Request Rate,")
            + "\n2.5,2.48,101,0,0,0,0,0,0,424363,1247050,1337742,1519219\n")
    runs, _, _ = load_fixture_text(rate, "rate.csv")
    assert runs[0]["config"]["request_rate_per_s"] == 2.5 and runs[0]["config"]["load_kind"] == "rate"
    assert runs[0]["metrics"]["latency_p99_ms"] == pytest.approx(1519.219)
    zero = HEADER + "\n1,0,225,2148,64,206,11781,19,0,13891,18795,19753,21018\n"
    assert "Inferences/Second" in refusal(zero.encode(), "zero.csv")
    bad_gpu = (HEADER + ",Avg GPU Power Usage\n1,69.2,225,2148,64,206,11781,19,0,13891,18795,19753,21018,"
               "GPU-0 300 W\n")
    message = refusal(bad_gpu.encode(), "bad.csv")
    assert "Avg GPU Power Usage" in message and "line 2" in message


def load_fixture_text(text: str, name: str) -> tuple[list[dict], str, tuple[str, ...]]:
    from importers import load

    imported, fmt = load(text.encode(), name)
    return imported.runs, fmt, imported.warnings
