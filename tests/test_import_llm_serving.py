"""LLM benchmark readers of issue 27: LLMPerf, vLLM's offline throughput / latency, SGLang and llama.cpp llama-bench.

Each real fixture (tests/fixtures/formats/SOURCES.md) goes through the real importer into a real DuckDB; every
expected figure was read off the file by hand (the comment names the key, line or cell).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from db.grading import config_key
from importers import load
from importers.llama_bench import quantisation_of
from joulebench.errors import ResultFileError
from tests.helpers import ingest_runs, mutated, runs_or_refusal

FIXTURES = Path(__file__).parent / "fixtures"
FORMATS = FIXTURES / "formats"
FIREWORKS = FORMATS / "llmperf" / "llmperf-leaderboard-fireworks-llama2-70b_summary.json"
LEPTON_429 = FORMATS / "llmperf" / "llmperf-leaderboard-lepton-llama2-70b-429-errors_summary.json"
LEPTON_RESPONSES = FORMATS / "llmperf" / "llmperf-leaderboard-lepton-llama2-70b_individual_responses.json"
VLLM_THROUGHPUT = FORMATS / "vllm" / "vllm-ascend-fork-2025-02-throughput_llama8B_tp1.json"
VLLM_LATENCY = FORMATS / "vllm" / "vllm-ascend-fork-2025-02-latency_llama8B_tp1.json"
SGLANG_OFFLINE = FORMATS / "sglang" / "datacrunch-h200-llama-3.3-70b-bench_serving-offline-inf.jsonl"
SGLANG_ONE_BATCH = FORMATS / "sglang" / "sglang-profiles-Qwen3-30B-A3B-GB200-bench_one_batch-inductor-None.jsonl"
LLAMA = FORMATS / "llama_bench"
LLAMA_JSON = LLAMA / "llama.cpp-README-rtx4080-qwen2.5-7b-q4_K_M.json"
LLAMA_JSONL = LLAMA / "llama.cpp-README-rtx4080-qwen2.5-7b-q4_K_M.jsonl"
LLAMA_MD = LLAMA / "llama.cpp-README-depth-qwen2-7b-q4_K_M.md"
LLAMA_LOG = LLAMA / "rx7900xtx-vulkan_benchmark_20251211_143639.txt"
LLAMA_CSV_BAD = FIXTURES / "llama_bench_refused" / "llama.cpp-README-csv-41-cells-under-42-columns.csv"


# --- LLMPerf -------------------------------------------------------------------------------------------------
def test_llmperf_summary_into_duckdb(tmp_path: Path, bare_template: Path) -> None:
    (row,) = ingest_runs(tmp_path / "llm.duckdb", bare_template, FIREWORKS)
    assert row["origin_format"] == "llmperf" and row["device_name"] is None  # an endpoint: no GPU named
    # results_mean_output_throughput_token_per_s: all output tokens / the test's wall time (the system's rate)
    assert row["tokens_per_s"] == pytest.approx(162.86950633872)
    assert row["ttft_p50_ms"] == pytest.approx(516.5989695000235)  # results_ttft_s_quantiles_p50 0.5166 s
    assert row["ttft_p90_ms"] == pytest.approx(636.1946695999222)  # results_ttft_s_quantiles_p90
    assert row["e2e_latency_avg_ms"] == pytest.approx(3772.853504139998)  # results_end_to_end_latency_s_mean
    assert row["requests_per_s"] == pytest.approx(64.92561266104798 / 60)  # results_num_completed_requests_per_min
    assert row["requests_completed"] == 150 and row["requests_failed"] == 0
    assert row["max_concurrency"] == 5 and row["load_kind"] == "concurrency"  # num_concurrent_requests
    assert row["prompt_tokens_requested"] == 550 and row["output_tokens_requested"] == 150  # mean_*_tokens
    # LLMPerf's inter_token_latency_s is end-to-end / output tokens: neither ITL nor TPOT
    assert row["itl_p50_ms"] is None and row["tpot_avg_ms"] is None and "inter_token_latency_s" in row["notes"]
    assert row["energy_j"] is None and row["energy_missing_reason"] == "LLMPerf does not measure energy"


def test_llmperf_summary_with_refused_requests(tmp_path: Path, bare_template: Path) -> None:
    (row,) = ingest_runs(tmp_path / "llm.duckdb", bare_template, LEPTON_429)
    # results_num_completed_requests 20, results_number_errors 130 (error_code_frequency {429.0: 130})
    assert row["requests_completed"] == 20 and row["requests_failed"] == 130 and row["status"] == "ok"
    assert row["tokens_per_s"] == pytest.approx(53.02189174249291)  # results_mean_output_throughput_token_per_s
    assert "429" in row["notes"]


def test_llmperf_individual_responses(tmp_path: Path, bare_template: Path) -> None:
    (row,) = ingest_runs(tmp_path / "llm.duckdb", bare_template, LEPTON_RESPONSES)
    responses = json.loads(LEPTON_RESPONSES.read_text())
    ok = sorted(r["ttft_s"] for r in responses if r["error_code"] is None)
    assert len(responses) == 150 and len(ok) == 20
    assert row["requests_failed"] == 130 and row["requests_completed"] == 20  # error_code 429 on 130 responses
    # the median of the 20 successful ttft_s (the mean of the 10th and 11th): the summary's p50 0.9253247535 s
    assert row["ttft_p50_ms"] == pytest.approx((ok[9] + ok[10]) / 2 * 1e3) == pytest.approx(925.3247535)
    assert row["tokens_per_s"] is None and row["requests_per_s"] is None  # no test duration in the file


# --- vLLM offline ----------------------------------------------------------------------------------------------
def test_vllm_throughput_keeps_total_tokens_apart(tmp_path: Path, bare_template: Path) -> None:
    (row,) = ingest_runs(tmp_path / "llm.duckdb", bare_template, VLLM_THROUGHPUT, workload="llama-3-8b")
    assert row["requests_per_s"] == pytest.approx(2.781764499305893)  # requests_per_second
    assert row["duration_s"] == pytest.approx(71.89681227505207)  # elapsed_time
    assert row["requests_completed"] == 200  # num_requests
    # tokens_per_second 1198.99 counts prompt + output tokens (total_num_tokens 86204): never output tokens/s
    assert row["tokens_per_s"] is None and row["prompt_tokens_per_s"] is None and "1199" in row["notes"]
    assert row["origin_tool"] == "vLLM benchmark_throughput / benchmark_latency"


def test_vllm_latency_is_per_batch(tmp_path: Path, bare_template: Path) -> None:
    (row,) = ingest_runs(tmp_path / "llm.duckdb", bare_template, VLLM_LATENCY, workload="llama-3-8b")
    doc = json.loads(VLLM_LATENCY.read_text())
    # percentiles["50"] 7.112779660150409 s: the 8th of the 15 sorted latencies, also NumPy's linear p50
    assert row["latency_p50_ms"] == pytest.approx(doc["percentiles"]["50"] * 1e3) == pytest.approx(7112.779660150409)
    assert row["latency_avg_ms"] == pytest.approx(doc["avg_latency"] * 1e3)  # avg_latency 7.109 s
    assert row["latency_p99_ms"] == pytest.approx(doc["percentiles"]["99"] * 1e3, rel=1e-9)
    assert row["e2e_latency_p50_ms"] is None and row["ttft_p50_ms"] is None  # a whole batch, not a request


# --- SGLang --------------------------------------------------------------------------------------------------
def test_sglang_bench_serving_bare_infinity(tmp_path: Path, bare_template: Path) -> None:
    rows = ingest_runs(tmp_path / "llm.duckdb", bare_template, SGLANG_OFFLINE)
    assert len(rows) == 7  # seven lines
    first = next(r for r in rows if r["run_id"].endswith(":0"))
    # line 1: "request_rate": Infinity (bare), output_throughput 4520.70, duration 341.72 s, completed 3000
    assert first["request_rate_per_s"] is None and "inf" in first["tag"]
    assert first["tokens_per_s"] == pytest.approx(4520.698730654741)
    assert first["duration_s"] == pytest.approx(341.72106836596504) and first["requests_completed"] == 3000
    assert first["ttft_p50_ms"] == pytest.approx(91282.20983641222)  # median_ttft_ms
    assert first["itl_p50_ms"] == pytest.approx(159.01175909675658)  # median_itl_ms
    assert first["output_tokens_mean"] == pytest.approx(1544818 / 3000)  # total_output_tokens / completed
    # random_range_ratio 0.0: lengths drawn up to 1024, not 1024 each (the actual mean output is 515)
    assert first["output_tokens_requested"] is None and first["prompt_tokens_requested"] is None
    assert first["length_distribution"].startswith("uniform")


def test_sglang_one_batch_derivation_is_named(tmp_path: Path, bare_template: Path) -> None:
    rows = ingest_runs(tmp_path / "llm.duckdb", bare_template, SGLANG_ONE_BATCH)
    first = next(r for r in rows if r["run_id"].endswith(":0"))
    # line 1: batch_size 1, output_len 8192, total_latency 27.813683197950013 s -> 8192 / 27.81 = 294.53 tokens/s
    assert first["tokens_per_s"] == pytest.approx(1 * 8192 / 27.813683197950013) == pytest.approx(294.53, abs=0.01)
    assert first["throughput_derivation"].startswith("batch_size x output_len / total_latency")
    assert first["prompt_tokens_per_s"] == pytest.approx(18290.040528891393)  # prefill_throughput
    assert first["itl_p50_ms"] == pytest.approx(3.365284006576985)  # median_decode_latency 0.003365 s
    # overall_throughput 331.35 is prompt + output tokens/s: in the notes only
    assert "331.3" in first["notes"] and first["tokens_per_s"] != pytest.approx(331.3477015758653)


# --- llama.cpp llama-bench -----------------------------------------------------------------------------------
@pytest.mark.parametrize("path", [LLAMA_JSON, LLAMA_JSONL])
def test_llama_bench_json_and_jsonl(tmp_path: Path, bare_template: Path, path: Path) -> None:
    rows = sorted(ingest_runs(tmp_path / "llm.duckdb", bare_template, path), key=lambda r: r["run_id"])
    pp, tg = rows
    assert pp["origin_format"] == "llama-bench" and pp["device_name"] == "GeForce RTX 4080"  # gpu_info
    # [0] n_prompt 512, n_gen 0, avg_ts 7100.002165: prompt tokens/s, never output tokens/s
    assert pp["prompt_tokens_per_s"] == pytest.approx(7100.002165) and pp["tokens_per_s"] is None
    # [1] n_prompt 0, n_gen 128, avg_ts 118.881588: generated tokens/s of one sequence
    assert tg["tokens_per_s"] == pytest.approx(118.881588) and tg["prompt_tokens_per_s"] is None
    # model_type "qwen2 7B Q4_K - Medium" is a quantisation, not a precision
    assert pp["quantization"] == "q4_K_M" and pp["precision"] is None
    assert pp["engine"] == "llama.cpp" and pp["engine_version"] == "8cf427ff (5163)"  # build_commit, build_number
    assert tg["max_new_tokens"] == 128 and pp["prompt_tokens_requested"] == 512
    assert "kv f16/f16" in pp["tag"] and "threads 8" in pp["tag"]  # type_k/type_v, n_threads
    assert pp["energy_j"] is None and pp["energy_missing_reason"] == "llama-bench does not measure energy"
    assert pp["config_key"] != tg["config_key"]


def test_llama_bench_markdown_in_a_log_with_two_gpus(tmp_path: Path, bare_template: Path) -> None:
    rows = sorted(ingest_runs(tmp_path / "llm.duckdb", bare_template, LLAMA_LOG),
                  key=lambda r: int(r["run_id"].rsplit(":", 1)[1]))
    assert len(rows) == 6  # three tables of pp512 and tg128
    # 'ggml_vulkan: 0 = AMD Radeon RX 7900 XTX (RADV NAVI31) (radv) | ...': the device, its driver names dropped
    assert {r["device_name"] for r in rows} == {"AMD Radeon RX 7900 XTX"}
    # table 1: pp512 3229.07 ± 53.81, tg128 150.97 ± 0.05; table 3 (two devices found): tg128 129.80
    assert rows[0]["prompt_tokens_per_s"] == pytest.approx(3229.07) and rows[1]["tokens_per_s"] == pytest.approx(150.97)
    assert rows[5]["tokens_per_s"] == pytest.approx(129.80) and rows[5]["gpu_count"] == 2
    assert rows[0]["gpu_count"] == 1
    assert rows[0]["quantization"] == "q4_0" and rows[0]["engine_version"] == "a81a56957 (7361)"  # build: footer
    assert "Vulkan" in rows[0]["tag"] and "ngl 100" in rows[0]["tag"]


def test_llama_bench_markdown_depth(tmp_path: Path, bare_template: Path) -> None:
    rows = sorted(ingest_runs(tmp_path / "llm.duckdb", bare_template, LLAMA_MD, device="NVIDIA GeForce RTX 4090"),
                  key=lambda r: r["run_id"])
    by_tag = {r["tag"].split(",")[0]: r for r in rows}
    assert by_tag["pp512 @ d512"]["prompt_tokens_per_s"] == pytest.approx(6425.91)  # 'pp512 @ d512 | 6425.91 ± 18.88'
    assert by_tag["tg128 @ d512"]["tokens_per_s"] == pytest.approx(116.71)
    assert by_tag["tg128"]["tokens_per_s"] == pytest.approx(120.60)
    assert by_tag["tg128"]["config_key"] != by_tag["tg128 @ d512"]["config_key"]  # context depth separates them


def test_llama_bench_pp_tg_is_neither_figure() -> None:
    doc = json.loads(LLAMA_JSON.read_text())
    doc[0].update(n_prompt=512, n_gen=128)  # a -pg test: avg_ts counts prompt and generated tokens together
    f, _ = load(json.dumps(doc).encode(), "pg.json")
    metrics = f.runs[0]["metrics"]
    assert "tokens_per_s" not in metrics and "prompt_tokens_per_s" not in metrics
    assert "neither prompt nor output tokens/s" in f.runs[0]["notes"]


def test_llama_bench_csv_row_short_of_the_header_is_refused() -> None:
    with pytest.raises(ResultFileError, match=r"llama\.cpp-README-csv-41-cells-under-42-columns\.csv: line 2: 41 cells "
                                              r"under a header of 42 columns.*export the file again"):
        load(LLAMA_CSV_BAD.read_bytes(), LLAMA_CSV_BAD.name)


def test_llama_bench_csv_reads_the_writer_layout() -> None:
    # the same README row with the lost cell put back (repack, between no_host and fit_target)
    lines = LLAMA_CSV_BAD.read_text().splitlines()
    fixed = [lines[0], *(line.replace('"none","1","0","0","0","0",', '"none","1","0","0","0","0","1",', 1)
                         for line in lines[1:])]
    f, fmt = load(("\n".join(fixed) + "\n").encode(), "bench.csv")
    assert fmt == "llama-bench" and len(f.runs) == 2
    assert f.runs[0]["metrics"]["prompt_tokens_per_s"] == pytest.approx(7285.676949)  # avg_ts of n_prompt 512
    assert f.runs[1]["metrics"]["tokens_per_s"] == pytest.approx(119.915244)  # avg_ts of n_gen 128


@pytest.mark.parametrize(("model_type", "filename", "expected"), [
    ("qwen2 7B Q4_K - Medium", None, ("q4_K_M", None)),
    ("llama 7B mostly Q4_0", None, ("q4_0", None)),
    ("granite 3B IQ4_XS - 4.25 bpw", None, ("iq4_XS", None)),
    ("llama 8B F16", None, (None, "fp16")),
    ("gpt-oss 20B MXFP4 MoE", None, ("mxfp4", None)),
    (None, "models/Qwen2.5-7B-Instruct-Q5_K_M.gguf", ("q5_K_M", None)),
    ("llama 7B", None, (None, None)),
])
def test_quantisation_is_not_precision(model_type: str | None, filename: str | None,
                                       expected: tuple[str | None, str | None]) -> None:
    assert quantisation_of(model_type, filename) == expected


def test_quantization_separates_configurations() -> None:
    row = {"device_name": "RTX 4080", "workload": "qwen2-7b", "mode": "infer", "origin_kind": "file"}
    assert config_key({**row, "quantization": "q4_K_M"}) != config_key({**row, "quantization": "q8_0"})
    assert config_key(row) == config_key({**row, "quantization": None})  # older keys unchanged


# --- refusals and mutated input ------------------------------------------------------------------------------
def test_refusals_name_the_file_the_field_and_the_fix() -> None:
    doc = json.loads(LLAMA_JSON.read_text())
    doc[1]["avg_ts"] = "fast"
    with pytest.raises(ResultFileError, match=r"bench\.json: \[1\]\.avg_ts: 'fast' is not a number"):
        load(json.dumps(doc).encode(), "bench.json")
    doc[1].update(avg_ts=1.0, n_prompt=0, n_gen=0)
    with pytest.raises(ResultFileError, match=r"bench\.json: \[1\]: n_prompt 0 and n_gen 0: one of them must be"):
        load(json.dumps(doc).encode(), "bench.json")
    bad = LLAMA_LOG.read_text().replace("3229.07 ± 53.81", "fast", 1)
    with pytest.raises(ResultFileError, match=r"log\.txt: line 40: t/s: 'fast' is not 'tokens/s ± sd'"):
        load(bad.encode(), "log.txt")
    latency = json.loads(VLLM_LATENCY.read_text())
    latency.update(latencies=[], avg_latency=0, percentiles={})
    with pytest.raises(ResultFileError, match=r"lat\.json: avg_latency: no positive latency"):
        load(json.dumps(latency).encode(), "lat.json")


SEEDS = [(p.name, p.read_bytes()) for p in (FIREWORKS, LEPTON_RESPONSES, VLLM_THROUGHPUT, VLLM_LATENCY,
                                               SGLANG_OFFLINE, SGLANG_ONE_BATCH, LLAMA_JSON, LLAMA_JSONL, LLAMA_MD,
                                               LLAMA_LOG, LLAMA_CSV_BAD)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from(SEEDS), cut=st.floats(0, 1), at=st.floats(0, 1),
       junk=st.sampled_from([b"NaN", b"-5", b"0", b"1e400", b'"x"', b"\n", b",", b"|", b" \xc2\xb1 ", b"null", b"{}",
                             b"[]", b"Infinity", b'"n_gen": -1,', b"pp0", b"tg", b"\x00"]))
def test_mutated_inputs_import_or_refuse_naming_the_file(seed: tuple[str, bytes], cut: float, at: float,
                                                         junk: bytes) -> None:
    name, data = seed
    # whatever imported passed validation: no non-finite or negative rate
    for run in runs_or_refusal(mutated(data, cut, at, junk), name):
        for key, value in run["metrics"].items():
            assert not isinstance(value, float) or (value == value and abs(value) != float("inf")), key
        assert all(run["metrics"].get(k, 1) > 0 for k in ("tokens_per_s", "prompt_tokens_per_s", "requests_per_s"))
