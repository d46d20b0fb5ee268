"""Issue 27, LLM result files not seen before (helper L2, session 35): an MLPerf Inference LLM result with
power on a system of eight accelerators, a GenAI-Perf CSV as its documentation prints it, and `ollama run
--verbose` statistics inside a README.

Every expected figure was read off the fixture by hand (the comment names the line or row); the MLPerf power
is checked against MLCommons' own published figure. Attribution in tests/fixtures/formats/SOURCES.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import load
from tests.helpers import ingest_runs

FORMATS = Path(__file__).parent / "fixtures" / "formats"
LENOVO = FORMATS / "mlperf_inference" / "v5.1_closed_Lenovo"
GENAI_CSV = FORMATS / "genai_perf" / "cloudai-doc-ai_dynamo-llama3.1-405b-fp8_profile_genai_perf.csv"
OLLAMA_MD = FORMATS / "ollama" / "ragpipe-README-askRem-verbose.md"


def test_mlperf_llm_power_of_an_8_accelerator_system_is_the_whole_systems(tmp_path: Path,
                                                                         seeded_template: Path) -> None:
    (run,) = ingest_runs(tmp_path / "lenovo.duckdb", seeded_template, LENOVO)  # the catalog holds B200
    assert run["origin_format"] == "mlperf-inference" and run["workload"] == "llama3.1-8b"
    assert run["tag"] == "MLPerf Server" and run["gpu_count"] == 8  # systems JSON: accelerators_per_node 8
    assert run["device_name"] == "B200"  # "NVIDIA B200-SXM-180GB", as the catalog names it
    # the power analyser measures the system at the wall: MLCommons' summary_results.json of v5.1 gives
    # Power_Result 9011.0666666667 W for closed/Lenovo/results/SR780a_V3_B200SXMx8_TRT/llama3.1-8b/Server
    assert run["avg_power_w"] == pytest.approx(9011.0666666667, rel=1e-9)
    assert run["energy_boundary"] == "wall"
    assert run["tokens_per_s"] == pytest.approx(128689.32)  # "Completed tokens per second: 128689.32"
    assert run["throughput_sps"] == pytest.approx(997.59)  # "Completed samples per second : 997.59"
    # per token and per sample: the system's power over the system's throughput, never per accelerator
    assert run["j_per_token"] == pytest.approx(9011.0666666667 / 128689.32, rel=1e-9)
    assert run["examples"] == 601560  # "result_query_count", detail log (one sample a query)
    assert run["j_per_sample"] == pytest.approx(run["energy_j"] / 601560, rel=1e-9)  # the window's samples
    assert run["j_per_sample"] == pytest.approx(9011.0666666667 / 997.59, rel=1e-3)  # ~ power / samples/s
    assert run["duration_s"] == pytest.approx(603.201)  # power_begin 08-01-2025 ... to power_end, detail log
    assert run["energy_j"] == pytest.approx(9011.0666666667 * 603.201, rel=1e-9)
    assert run["ttft_p99_ms"] == pytest.approx(1026.07823)  # "99.00 percentile first token latency (ns)"
    assert run["tpot_p99_ms"] == pytest.approx(27.141001)  # "99.00 percentile time to output token (ns)"
    assert run["itl_p99_ms"] is None  # LoadGen states TPOT per request, never ITL


def test_genai_perf_csv_with_per_sec_units_as_its_docs_print_it() -> None:
    # GenAI-Perf wrote "Output Token Throughput (per sec)"; it was refused as a unit it did not know
    f, fmt = load(GENAI_CSV.read_bytes(), GENAI_CSV.name)
    assert fmt == "genai-perf"
    (run,) = f.runs
    m = run["metrics"]
    assert m["tokens_per_s"] == pytest.approx(261.25)  # "Output Token Throughput (per sec),261.25": the system's
    assert m["requests_per_s"] == pytest.approx(1.50)  # "Request Throughput (per sec),1.50"
    assert m["requests_completed"] == 40  # "Request Count (count),40.00"
    assert m["ttft_avg_ms"] == pytest.approx(1146.31)  # "Time To First Token (ms),"1,146.31""
    assert m["ttft_p99_ms"] == pytest.approx(3457.97)  # its p99 column
    assert m["e2e_latency_p50_ms"] == pytest.approx(5690.23)  # "Request Latency (ms)", p50 column
    assert m["tpot_avg_ms"] == pytest.approx(30.35)  # "Inter Token Latency (ms)": per request, so TPOT
    assert "itl_avg_ms" not in m
    assert m["prompt_tokens_mean"] == pytest.approx(3000.05) and m["output_tokens_mean"] == pytest.approx(174.45)
    assert "energy_j" not in m and m["energy_missing_reason"]


def test_ollama_verbose_statistics_inside_a_readme() -> None:
    f, fmt = load(OLLAMA_MD.read_bytes(), OLLAMA_MD.name)
    assert fmt == "ollama"
    (run,) = f.runs
    m = run["metrics"]
    assert m["decode_tokens_per_s"] == pytest.approx(11.54)  # "eval rate: 11.54 tokens/s": decoding only
    assert "tokens_per_s" not in m
    assert m["prompt_tokens_per_s"] == pytest.approx(109.02)  # "prompt eval rate: 109.02 tokens/s"
    assert m["output_tokens_mean"] == 41 and m["prompt_tokens_mean"] == 1933  # eval count, prompt eval count
    assert m["duration_s"] == pytest.approx(26.622822625)  # "total duration: 26.622822625s"
    assert "energy_j" not in m and m["energy_missing_reason"]
