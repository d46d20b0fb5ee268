"""LLM serving-benchmark readers of issue 27: NVIDIA GenAI-Perf / AIPerf exports and GuideLLM benchmarks.json.

Each fixture goes through the real importer into a real DuckDB; every expected figure was read off the
file by hand (the comment names the key or row). The fixtures were built from the writers' code (no
public repository commits these tools' outputs that we could find): tests/fixtures/formats/SOURCES.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from importers import load
from joulebench.errors import ResultFileError
from tests.helpers import ingest_runs, mutated, readers_of_other_fixtures, runs_or_refusal

FORMATS = Path(__file__).parent / "fixtures" / "formats"
GENAI_JSON = FORMATS / "genai_perf" / "profile_export_genai_perf.json"
AIPERF_CSV = FORMATS / "genai_perf" / "profile_export_aiperf.csv"
GUIDELLM = FORMATS / "guidellm" / "benchmarks.json"


def test_genai_perf_json_into_duckdb(tmp_path: Path, bare_template: Path) -> None:
    (row,) = ingest_runs(tmp_path / "llm.duckdb", bare_template, GENAI_JSON, device="NVIDIA H100 80GB HBM3")
    assert row["origin_format"] == "genai-perf"
    assert row["ttft_avg_ms"] == pytest.approx(41.52)  # time_to_first_token.avg, unit "ms"
    assert row["ttft_p90_ms"] == pytest.approx(51.3)  # time_to_first_token.p90
    assert row["e2e_latency_p99_ms"] == pytest.approx(3560.2)  # request_latency.p99
    # inter_token_latency is per request (e2e - TTFT) / (out - 1): TPOT, never ITL
    assert row["tpot_avg_ms"] == pytest.approx(12.31) and row["tpot_p95_ms"] == pytest.approx(13.7)
    assert row["itl_avg_ms"] is None and row["itl_p50_ms"] is None
    assert row["tokens_per_s"] == pytest.approx(320.75)  # output_token_throughput.avg (system), not per user (81.4)
    assert row["requests_per_s"] == pytest.approx(1.27)  # request_throughput.avg
    assert row["requests_completed"] == 100  # request_count.avg
    assert row["output_tokens_mean"] == pytest.approx(252.4)  # output_sequence_length.avg
    assert row["max_concurrency"] == 4 and row["load_kind"] == "concurrency"  # input_config.concurrency
    assert row["model"] == "meta-llama/Meta-Llama-3-8B-Instruct"  # input_config.model[0]
    assert row["energy_j"] is None and "no energy" in row["energy_missing_reason"]
    assert "per-user output 81.4 tokens/s" in row["notes"]
    assert row["precision"] is None


def test_aiperf_csv_into_duckdb(tmp_path: Path, bare_template: Path) -> None:
    (row,) = ingest_runs(tmp_path / "llm.duckdb", bare_template, AIPERF_CSV)
    assert row["ttft_p99_ms"] == pytest.approx(117.5)  # "Time to First Token (ms)" row, p99 column
    assert row["e2e_latency_avg_ms"] == pytest.approx(1742.31)  # "Request Latency (ms)", avg
    assert row["tpot_p50_ms"] == pytest.approx(8.39) and row["itl_p50_ms"] is None  # "Inter Token Latency (ms)", p50
    assert row["tokens_per_s"] == pytest.approx(1823.97)  # second section "Output Token Throughput (tokens/sec)"
    assert row["tokens_per_s"] != pytest.approx(118.90)  # never the per-user row
    assert row["requests_per_s"] == pytest.approx(9.14)  # "Request Throughput (requests/sec)"
    assert row["requests_completed"] == 400  # "Request Count"
    assert row["prompt_tokens_mean"] == pytest.approx(1000.0)  # "Input Sequence Length (tokens)"
    assert row["device_name"] is None  # not stated


def test_genai_perf_units_in_the_file_decide() -> None:
    doc = json.loads(GENAI_JSON.read_bytes())
    doc["time_to_first_token"] = {"unit": "ns", "avg": 41_520_000.0, "p50": 40_250_000.0}
    f, fmt = load(json.dumps(doc).encode(), "profile_export_genai_perf.json")
    assert fmt == "genai-perf"
    assert f.runs[0]["metrics"]["ttft_avg_ms"] == pytest.approx(41.52)  # 41,520,000 ns


def test_guidellm_one_run_per_benchmark_into_duckdb(tmp_path: Path, bare_template: Path) -> None:
    sync, rate = ingest_runs(tmp_path / "llm.duckdb", bare_template, GUIDELLM)
    assert sync["origin_format"] == "guidellm"
    assert sync["load_kind"] == "concurrency" and sync["max_concurrency"] == 1  # strategy type_ "synchronous"
    assert rate["load_kind"] == "rate" and rate["request_rate_per_s"] == pytest.approx(4.0)  # "constant", rate 4.0
    assert rate["arrival"] == "constant"
    assert sync["e2e_latency_avg_ms"] == pytest.approx(1611.0)  # request_latency.successful.mean 1.611 s
    assert rate["e2e_latency_p99_ms"] == pytest.approx(2149.0)  # request_latency ... percentiles.p99 2.149 s
    assert rate["ttft_p90_ms"] == pytest.approx(49.5)  # time_to_first_token_ms ... p90
    assert rate["itl_avg_ms"] == pytest.approx(14.67)  # inter_token_latency_ms mean (token-weighted = pooled)
    assert rate["itl_p90_ms"] is None and rate["tpot_avg_ms"] is None  # percentiles and TPOT not stored
    assert rate["tokens_per_s"] == pytest.approx(508.2)  # output_tokens_per_second mean, not tokens_per_second 1524.5
    assert rate["requests_per_s"] == pytest.approx(3.97) and rate["requests_completed"] == 200
    assert sync["model"] == "Qwen/Qwen2.5-7B-Instruct"  # config.backend.model
    assert "includes the first token's wait" in rate["notes"]
    assert rate["energy_j"] is None and "does not measure energy" in rate["energy_missing_reason"]
    assert sync["sweep_id"] is not None and sync["sweep_id"] == rate["sweep_id"]  # one sweep: one curve


def test_existing_fixtures_are_not_taken_by_the_new_readers() -> None:
    assert readers_of_other_fixtures({"genai-perf", "guidellm"}, {"genai_perf", "guidellm"}) == []


def test_refusal_names_the_file_the_field_and_the_fix() -> None:
    doc = json.loads(GENAI_JSON.read_bytes())
    doc["request_latency"]["unit"] = "tokens"
    with pytest.raises(ResultFileError, match=r"profile_export_genai_perf\.json: request_latency: unit 'tokens' is "
                                              r"not a time unit \(ms, us, ns, s\): fix the unit"):
        load(json.dumps(doc).encode(), "profile_export_genai_perf.json")
    bad = GUIDELLM.read_text().replace('"mean": 0.62,', '"mean": "fast",', 1)
    with pytest.raises(ResultFileError, match=r"benchmarks\.json: benchmarks\[0\]\.metrics\.requests_per_second"
                                              r"\.successful\.avg: 'fast' is not a number"):
        load(bad.encode(), "benchmarks.json")


SEEDS = [(p.name, p.read_bytes()) for p in (GENAI_JSON, AIPERF_CSV, GUIDELLM)]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from(SEEDS), cut=st.floats(0, 1), at=st.floats(0, 1),
       junk=st.sampled_from([b"NaN", b"-5", b"1e400", b'"x"', b"\n", b",", b"null", b"{}", b"[]", b'"unit": "h",',
                             b"N/A", b'"type_": "poisson",']))
def test_mutated_inputs_import_or_refuse_naming_the_file(seed: tuple[str, bytes], cut: float, at: float,
                                                         junk: bytes) -> None:
    name, data = seed
    # whatever imported passed validation: no non-finite figure
    for run in runs_or_refusal(mutated(data, cut, at, junk), name):
        assert all(not isinstance(v, float) or v == v for v in run["metrics"].values())
