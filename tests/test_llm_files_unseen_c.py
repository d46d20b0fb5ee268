"""Issue 27, LLM result files not seen before (helper L4, session 35): `vllm bench serve` reports pasted
into a blog post of Jetson Thor runs, and two READMEs whose figures sit in hand-made tables (no tool's own
output), which are refused with the file named.

Every expected figure was read off the fixture by hand (the comment names the line). Attribution in
tests/fixtures/formats/SOURCES.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import load
from joulebench.errors import ResultFileError
from tests.helpers import ingest_runs

FIXTURES = Path(__file__).parent / "fixtures"
THOR = FIXTURES / "formats" / "serving_report" / "wang-junjian-jetson-thor-qwen3-8b-vllm-bench-serve-excerpt.md"
REFUSED = FIXTURES / "llama_bench_refused"


def test_jetson_thor_vllm_bench_serve_blocks_keep_output_apart_from_total(tmp_path: Path,
                                                                         seeded_template: Path) -> None:
    high, low = ingest_runs(tmp_path / "thor.duckdb", seeded_template, THOR)
    assert high["origin_format"] == "serving-report"
    assert high["tokens_per_s"] == pytest.approx(82.47)  # "Output token throughput (tok/s): 82.47"
    assert "1438.24" in high["notes"]  # "Total Token throughput (tok/s): 1438.24" only noted, never stored
    assert high["requests_per_s"] == pytest.approx(0.66)  # "Request throughput (req/s): 0.66"
    assert high["requests_completed"] == 100  # "Successful requests: 100"
    assert high["max_concurrency"] == 8 and high["load_kind"] == "concurrency"  # "Maximum request concurrency: 8"
    assert high["duration_s"] == pytest.approx(150.59)  # "Benchmark duration (s): 150.59"
    assert high["ttft_avg_ms"] == pytest.approx(974.57)  # "Mean TTFT (ms)"
    assert high["ttft_p50_ms"] == pytest.approx(959.99)  # "Median TTFT (ms)"
    assert high["ttft_p99_ms"] == pytest.approx(2200.61)  # "P99 TTFT (ms)"
    assert high["tpot_avg_ms"] == pytest.approx(85.33)  # "Mean TPOT (ms)"
    assert high["tpot_p99_ms"] == pytest.approx(90.57)  # "P99 TPOT (ms)"
    assert high["itl_p50_ms"] == pytest.approx(72.52)  # "Median ITL (ms)": ITL kept apart from TPOT
    assert high["itl_p99_ms"] == pytest.approx(361.74)  # "P99 ITL (ms)"
    assert high["prompt_tokens_mean"] == pytest.approx(204169 / 100)  # "Total input tokens: 204169"
    assert high["output_tokens_mean"] == pytest.approx(12419 / 100)  # "Total generated tokens: 12419"
    assert high["energy_j"] is None and high["energy_missing_reason"]  # the report holds no power
    assert high["device_name"] is None  # the post names the board only in prose: nothing invented
    assert low["tokens_per_s"] == pytest.approx(111.15)  # FP8 block: "Output token throughput (tok/s): 111.15"
    assert low["max_concurrency"] == 1 and low["requests_completed"] == 10
    assert low["tpot_avg_ms"] == pytest.approx(8.88) and low["itl_p50_ms"] == pytest.approx(8.68)
    # the "### Qwen3-8B-FP8" heading is not read: precision stays "not stated", never fp16
    assert low["precision"] in (None, "", "not stated")


@pytest.mark.parametrize("name", [
    "tonycasanova-odroid-hc1-README-hand-table-of-llama-bench-figures.md",
])
def test_hand_made_tables_of_llm_figures_are_refused_with_the_file_named(name: str) -> None:
    with pytest.raises(ResultFileError) as err:
        load((REFUSED / name).read_bytes(), name)
    # its cells carry Markdown emphasis and notes ('**2.49 ± 0.00 t/s** *(Optimal)*'): refused naming the cell
    assert name in str(err.value) and "line 24: Text Generation (tg128):" in str(err.value)
    assert "is not a number" in str(err.value)
