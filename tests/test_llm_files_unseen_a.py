"""LLM result files not seen before (issue 27, helper L1 of session 35): trtllm-bench reports of 0.12 and 0.16,
a `vllm bench serve` multi-turn result, a CPU llama-bench JSON and LLMPerf summaries keyed by concurrency.

Each real fixture (tests/fixtures/formats/SOURCES.md) goes through the real import service into a real DuckDB;
every expected figure was read off the file by hand (the comment names the line or key).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import ingest_runs

FORMATS = Path(__file__).parent / "fixtures" / "formats"
TRT = FORMATS / "trtllm_bench"
TRT_012 = TRT / "trtllm-bench-0.12-throughput-statistics-llama2-7b-fp8.txt"
TRT_016 = TRT / "trtllm-bench-0.16-throughput-llama3.3-70b-tp4.txt"
TRT_016_LATENCY = TRT / "trtllm-bench-0.16-latency-llama3.3-70b-tp4.txt"
VLLM_MULTI_TURN = FORMATS / "vllm" / "big-yellow-duck-vllm-bench-serve-multiturn-qwen3.8-27b-fp8-concurrency1.json"
LLAMA_CPU = FORMATS / "llama_bench" / "HamzahTariq11-llama-bench-cpu-i5-1135G7-qwen2.5-1.5b-f16.json"
LLMPERF_KEYED = FORMATS / "llmperf" / "philschmid-llmperf-bench-llama3-8b-tp1-results-keyed-summaries-trimmed.json"


def test_trtllm_012_statistics_section(tmp_path: Path, bare_template: Path) -> None:
    (row,) = ingest_runs(tmp_path / "t.duckdb", bare_template, TRT_012)
    assert row["origin_format"] == "trtllm-bench" and row["engine_version"] == "0.12.0"
    # "Token Throughput (tokens/sec): 23405.927228471104" = 3000 requests x 128 output tokens / 16.406 s: output
    assert row["tokens_per_s"] == pytest.approx(23405.927228471104) == pytest.approx(3000 * 128 / 16.406100739)
    assert row["prompt_tokens_per_s"] is None
    assert row["requests_per_s"] == pytest.approx(182.8588064724305)
    assert row["duration_s"] == pytest.approx(16.406100739)  # "Total Latency (seconds)": the run's window
    assert row["e2e_latency_avg_ms"] is None and row["latency_avg_ms"] is None  # never a request's latency
    assert row["gpu_count"] == 1 and row["requests_completed"] == 3000  # TP 1 x PP 1; Number of requests
    assert row["prompt_tokens_mean"] == 128 and row["output_tokens_mean"] == 128
    assert row["precision"] is None  # Dtype float16 but Quantization FP8: not fp16
    assert row["device_name"] is None and row["energy_j"] is None


def test_trtllm_016_throughput_tab_separated(tmp_path: Path, bare_template: Path) -> None:
    (row,) = ingest_runs(tmp_path / "t.duckdb", bare_template, TRT_016)
    assert row["tokens_per_s"] == pytest.approx(1585.7480)  # 1000 x 2048 / 1291.5 s: output tokens
    assert row["requests_per_s"] == pytest.approx(0.7743)
    assert row["duration_s"] == pytest.approx(1291.5041051)  # Total Latency (ms) 1291504.1051
    assert row["gpu_count"] == 4 and row["precision"] == "bf16" and row["engine_version"] == "0.16.0"


def test_trtllm_016_latency_report(tmp_path: Path, bare_template: Path) -> None:
    (row,) = ingest_runs(tmp_path / "t.duckdb", bare_template, TRT_016_LATENCY)
    # "Total Token Throughput (tokens/sec): 32.2742" counts output tokens only here: 100 x 2048 / 6345.6 s
    assert row["tokens_per_s"] == pytest.approx(32.2742) == pytest.approx(100 * 2048 / 6345.6240554, rel=1e-3)
    assert row["prompt_tokens_per_s"] is None  # not (total - output): no prompt tokens in it
    assert row["requests_per_s"] == pytest.approx(0.0158)
    assert row["duration_s"] == pytest.approx(6345.6240554)  # Total Latency (ms) 6345624.0554
    assert row["ttft_avg_ms"] == pytest.approx(147.7502)  # Average time-to-first-token (ms)
    # "Average inter-token latency (ms) 30.9274" = (63456.0704 - 147.7502) / 2047: per request, i.e. TPOT
    assert row["tpot_avg_ms"] == pytest.approx(30.9274) == pytest.approx((63456.0704 - 147.7502) / 2047, rel=1e-4)
    assert row["itl_avg_ms"] is None
    assert row["e2e_latency_avg_ms"] == pytest.approx(63456.0704)  # Average request latency (ms)
    # GENERATION LATENCY BREAKDOWN (latency less TTFT) is not end-to-end: never stored as a percentile of it
    assert row["e2e_latency_p99_ms"] is None and row["e2e_latency_p90_ms"] is None
    assert "Generation Token Throughput 32.3338" in row["notes"]  # one request's decode rate: notes only
    assert row["gpu_count"] == 4 and row["precision"] == "bf16"


def test_vllm_bench_serve_multi_turn(tmp_path: Path, bare_template: Path) -> None:
    (row,) = ingest_runs(tmp_path / "t.duckdb", bare_template, VLLM_MULTI_TURN)
    assert row["origin_format"] == "vllm-bench" and row["model"] == "Qwen/Qwen3.8-27B-FP8"
    assert row["tokens_per_s"] == pytest.approx(72.78380802185274)  # output_throughput
    assert row["prompt_tokens_per_s"] == pytest.approx(340.2678563990376)  # input_throughput
    assert row["requests_per_s"] == pytest.approx(0.14215587504268112) and row["requests_completed"] == 8
    assert row["ttft_p90_ms"] == pytest.approx(1079.5512251999999) and row["ttft_p95_ms"] == pytest.approx(
        1160.7945845999998)
    assert row["tpot_avg_ms"] == pytest.approx(12.205657581213309)
    assert row["itl_avg_ms"] == pytest.approx(66.08813162251654)  # per streamed chunk (speculative decoding)
    assert row["e2e_latency_p50_ms"] == pytest.approx(6441.078977)
    assert row["duration_s"] == pytest.approx(56.276253075)
    assert row["output_tokens_mean"] == pytest.approx(4096 / 8) and row["prompt_tokens_mean"] == pytest.approx(
        19149 / 8)
    # no request_rate key: the tag does not say "rate None"; multi_turn_concurrency 1 is the load
    assert row["max_concurrency"] == 1 and row["load_kind"] == "concurrency" and row["request_rate_per_s"] is None
    assert "None" not in (row["tag"] or "") and "multi_turn" in row["tag"]
    assert row["device_name"] is None and row["precision"] is None  # "FP8" in the model name only


def test_llama_bench_cpu_json(tmp_path: Path, bare_template: Path) -> None:
    pp, tg = ingest_runs(tmp_path / "t.duckdb", bare_template, LLAMA_CPU)
    assert pp["prompt_tokens_per_s"] == pytest.approx(74.996092) and pp["tokens_per_s"] is None  # pp64
    assert tg["tokens_per_s"] == pytest.approx(3.087313) and tg["prompt_tokens_per_s"] is None  # tg16
    assert tg["device_kind"] == "cpu" and "i5-1135G7" in tg["device_name"]  # cpu_info, backends CPU
    assert tg["engine"] == "llama.cpp" and tg["engine_version"] == "8019dc563 (11254)"
    assert tg["precision"] == "fp16"  # model_type 'qwen2 1.5B F16': unquantised F16 weights


def test_llmperf_summaries_keyed_by_concurrency(tmp_path: Path, bare_template: Path) -> None:
    one, two = ingest_runs(tmp_path / "t.duckdb", bare_template, LLMPERF_KEYED)
    assert one["origin_format"] == "llmperf" and one["model"] == "meta-llama/Meta-Llama-3-8B-Instruct"
    assert one["max_concurrency"] == 1 and two["max_concurrency"] == 2  # num_concurrent_requests
    # results_mean_output_throughput_token_per_s: the system's output tokens/s at each concurrency
    assert one["tokens_per_s"] == pytest.approx(30.43364978698486)
    assert two["tokens_per_s"] == pytest.approx(56.3778944687436)
    assert two["ttft_p50_ms"] == pytest.approx(167.62943899993843)  # results_ttft_s_quantiles_p50 x 1000
    assert two["e2e_latency_avg_ms"] == pytest.approx(5639.592450470154)
    assert two["requests_per_s"] == pytest.approx(19.430602953211647 / 60) and two["requests_completed"] == 100
    assert one["itl_avg_ms"] is None and one["tpot_avg_ms"] is None  # LLMPerf's inter_token_latency_s: notes only
    assert one["run_id"] != two["run_id"]
