"""LLM benchmark readers of issue 27 (second part): trtllm-bench, TokenPowerBench, Ollama.

Each real file goes through the real importer into a real DuckDB; every expected figure was read off
the file by hand (the comment names the line or key). Attribution: tests/fixtures/formats/SOURCES.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from importers import Hints, load
from joulebench.errors import ResultFileError
from joulebench.units import duration_s as go_duration_s
from tests.helpers import ingest_runs, mutated, readers_of_other_fixtures, runs_or_refusal

FORMATS = Path(__file__).parent / "fixtures" / "formats"
TRT = FORMATS / "trtllm_bench" / "perf-overview-llama-report.txt"
TPB_DS = FORMATS / "tokenpowerbench" / "deepspeed_models--models--meta-llama--Llama-3.1-8B_256_500_20250418_232621.json"
TPB_VLLM = FORMATS / "tokenpowerbench" / "vllm_models--Llama-3.1-8B_128_128_20250610_094733.json"
# Ollama's own Summary() lines (api/types.go) as `ollama run --verbose` prints them, two answers in one log
OLLAMA_LOG = b"""$ ollama run --verbose llama3.2:1b "hi"
Hello!
total duration:       1m2.5s
load duration:        97.885315ms
prompt eval count:    26 token(s)
prompt eval duration: 123.4ms
prompt eval rate:     210.70 tokens/s
eval count:           298 token(s)
eval duration:        6.5s
eval rate:            45.85 tokens/s
total duration:       950ms
prompt eval count:    10 token(s)
prompt eval duration: 450\xc2\xb5s
prompt eval rate:     22222.22 tokens/s
eval count:           41 token(s)
eval duration:        800ms
eval rate:            51.25 tokens/s
"""


def _ingest(tmp_path: Path, bare_template: Path, path: Path, **hints: object) -> tuple[list[dict], Path]:
    db = tmp_path / "llm.duckdb"
    return ingest_runs(db, bare_template, path, **hints), db


def test_trtllm_bench_printed_report_into_duckdb(tmp_path: Path, bare_template: Path) -> None:
    (row,), _ = _ingest(tmp_path, bare_template, TRT, device="NVIDIA H100 80GB HBM3")
    assert row["origin_format"] == "trtllm-bench"
    assert row["tokens_per_s"] == pytest.approx(5530.7382)  # "Total Output Throughput (tokens/sec)", line 5
    assert row["prompt_tokens_per_s"] == pytest.approx(94022.5497 - 5530.7382)  # line 8 (total) - line 5 (output)
    assert row["requests_per_s"] == pytest.approx(43.2089)  # line 4
    assert row["duration_s"] == pytest.approx(115.7169214)  # "Total Latency (ms)" 115716.9214, line 9: the run's window
    assert row["e2e_latency_avg_ms"] == pytest.approx(75903.4456)  # "Average request latency (ms)", line 10
    assert row["ttft_avg_ms"] == pytest.approx(52667.0339) and row["ttft_p90_ms"] == pytest.approx(96583.7187)  # 12, 31
    assert row["tpot_avg_ms"] == pytest.approx(182.9639) and row["tpot_p99_ms"] == pytest.approx(206.5821)  # 13, 24
    assert row["e2e_latency_p50_ms"] == pytest.approx(78509.2102)  # "[Latency] P50", line 37
    assert row["itl_p90_ms"] is None  # trtllm-bench's TPOT is per request, never stored as ITL
    assert row["energy_j"] is None and "does not measure energy" in row["energy_missing_reason"]
    assert "Per User Output Throughput 2.0563" in row["notes"]  # per-user figures only in the notes
    assert row["precision"] is None  # the printed overview states no dtype


def test_trtllm_bench_json_report_states_gpu_quantisation_and_world() -> None:
    """The --report_json shape of reporting.py's get_statistics_dict (hand-made: no public report found)."""
    doc = (b'{"engine": {"model": "meta-llama/Llama-3.1-8B", "version": "1.0.0", "backend": "Pytorch", '
           b'"dtype": "bfloat16", "kv_cache_dtype": "FP8", "quantization": "FP8"}, '
           b'"machine": {"name": "NVIDIA H100 80GB HBM3", "memory.total": 79.1}, '
           b'"world_info": {"tp_size": 2, "pp_size": 1, "ep_size": 1, "world_size": 2, "max_batch_size": 512}, '
           b'"request_info": {"num_requests": 1000, "avg_num_concurrent_requests": 200.5, "avg_input_length": 128, '
           b'"avg_output_length": 128}, "performance": {"total_latency_ms": 20000.0, "avg_request_latency_ms": 4000.0, '
           b'"request_throughput_req_s": 50.0, "system_output_throughput_tok_s": 6400.0, '
           b'"system_total_throughput_tok_s": 12800.0, "output_throughput_per_user_tok_s": 32.0, '
           b'"request_latency_percentiles_ms": {"p50": 3900.0, "p99": 7000.0, "average": 4000.0}}}')
    f, fmt = load(doc, "report.json")
    run = f.runs[0]
    assert fmt == "trtllm-bench" and run["device"]["name"] == "NVIDIA H100 80GB HBM3"
    assert run["config"]["gpu_count"] == 2 and run["config"]["engine_version"] == "1.0.0"
    assert run["config"]["precision"] is None  # FP8 weights are not bf16
    assert any("quantisation 'FP8'" in w for w in f.warnings)
    m = run["metrics"]
    assert m["tokens_per_s"] == 6400.0 and m["prompt_tokens_per_s"] == 6400.0 and m["requests_completed"] == 1000
    assert m["e2e_latency_p99_ms"] == 7000.0 and "32.0" in run["notes"] and "tokens_per_s_per_user" not in m


def test_tokenpowerbench_deepspeed_file_into_duckdb(tmp_path: Path, bare_template: Path) -> None:
    (row,), _ = _ingest(tmp_path, bare_template, TPB_DS)
    assert row["origin_format"] == "tokenpowerbench" and row["device_name"] is None  # the file names no GPU
    assert row["energy_j"] == pytest.approx(6354254.912402131)  # "gpu_energy", line 10
    assert row["energy_boundary"] == "gpu_board" and row["energy_method"] == "sampled"
    assert row["j_per_token"] == pytest.approx(0.24438502028391718)  # "gpu_energy_per_token", line 20 (244.385 mJ)
    assert row["tokens_per_s"] == pytest.approx(26001000 / 11184.960287332535)  # total_output_tokens / duration
    assert row["j_per_request"] == pytest.approx(6354254.912402131 / 52002)  # gpu_energy / responses (line 5)
    assert row["batch_size"] == 256 and row["engine"] == "deepspeed"  # "batch_size", "engine"
    assert "CPU package energy 2.0002e+06 J" in row["notes"]  # cpu_energy 2000204.595 J (RAPL) kept in the notes


def test_tokenpowerbench_vllm_tokens_are_estimates_so_no_token_figures(tmp_path: Path, bare_template: Path) -> None:
    """The vllm engine's estimate_tokens is words x 1.3: its J/token (72.134 mJ) is not a measurement."""
    (row,), _ = _ingest(tmp_path, bare_template, TPB_VLLM)
    assert row["energy_j"] == pytest.approx(500.5396460723877)  # "gpu_energy"
    assert row["j_per_token"] is None and row["tokens_per_s"] is None
    assert "estimate (words x 1.3)" in row["notes"] and "not measured" in row["notes"]  # cpu 0.0 is no reading


def test_tokenpowerbench_mj_and_j_must_agree() -> None:
    data = TPB_DS.read_bytes().replace(b'"gpu_energy_per_token_mj": 244.38502028391719',
                                       b'"gpu_energy_per_token_mj": 24.438502028391719')
    with pytest.raises(ResultFileError, match=r"gpu_energy_per_token_mj: 24\.4385 mJ disagrees"):
        load(data, "damaged.json")


def test_ollama_verbose_log_one_run_per_answer() -> None:
    f, fmt = load(OLLAMA_LOG, "ollama.log", hints=Hints(device="NVIDIA Jetson AGX Orin"))
    assert fmt == "ollama" and len(f.runs) == 2
    first, second = (r["metrics"] for r in f.runs)
    assert f.runs[0]["config"]["model"] == "llama3.2:1b"  # the `ollama run` line
    assert first["decode_tokens_per_s"] == 45.85 and "tokens_per_s" not in first  # eval rate: decoding only
    assert first["prompt_tokens_per_s"] == 210.70 and first["output_tokens"] == 298
    assert first["duration_s"] == pytest.approx(62.5)  # 1m2.5s
    assert second["duration_s"] == pytest.approx(0.95) and second["prompt_tokens_mean"] == 10
    assert "450" not in f.runs[0]["notes"] and "prompt eval duration 0.5 ms" in f.runs[1]["notes"]  # 450µs


def test_ollama_api_table_durations_in_ns() -> None:
    table = b"model,prompt_eval_count,prompt_eval_duration,eval_count,eval_duration,total_duration\n" \
            b"qwen2:0.5b,20,100000000,200,4000000000,4500000000\n"
    f, fmt = load(table, "runs.csv")
    m = f.runs[0]["metrics"]
    assert fmt == "ollama" and m["decode_tokens_per_s"] == pytest.approx(50.0)  # 200 / 4 s
    assert m["prompt_tokens_per_s"] == pytest.approx(200.0) and m["duration_s"] == pytest.approx(4.5)


def test_go_durations() -> None:
    assert go_duration_s("2m43.589481292s") == pytest.approx(163.589481292)
    assert go_duration_s("97.885315ms") == pytest.approx(0.097885315)
    assert go_duration_s("12m") == 720 and go_duration_s("1h2m") == 3720
    assert go_duration_s("soon") is None and go_duration_s("5 s") is None


def test_existing_fixtures_are_not_taken_by_the_new_readers() -> None:
    assert readers_of_other_fixtures({"trtllm-bench", "tokenpowerbench", "ollama"},
                                     {"trtllm_bench", "tokenpowerbench", "ollama"}) == []


SEEDS = [(TRT.name, TRT.read_bytes()), (TPB_DS.name, TPB_DS.read_bytes()), ("ollama.log", OLLAMA_LOG)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from(SEEDS), cut=st.floats(0, 1), at=st.floats(0, 1),
       junk=st.sampled_from([b"NaN", b"-5", b"1e400", b'"x"', b"\n", b":", b"[TPOT] P50    : abc", b"eval rate: -",
                             b"total duration: 5 parsecs", b"null", b"{}"]))
def test_mutated_inputs_import_or_refuse_naming_file_and_field(seed: tuple[str, bytes], cut: float, at: float,
                                                               junk: bytes) -> None:
    name, data = seed
    # whatever imported passed validation: no negative or non-finite figure
    for run in runs_or_refusal(mutated(data, cut, at, junk), name):
        assert all(not isinstance(v, float) or v == v for v in run["metrics"].values())


def test_refusal_names_the_line_and_the_fix() -> None:
    bad = OLLAMA_LOG.replace(b"eval duration:        6.5s", b"eval duration:        6.5 seconds")
    with pytest.raises(ResultFileError, match=r"ollama\.log: line 9 \(eval duration\): '6\.5' is not a duration as "
                                              r"Ollama prints it"):
        load(bad, "ollama.log")
