"""whisper.cpp's whisper-bench (issue 39, held-out sets 55 and 61): its log's whisper_print_timings and the table
bench-all.sh prints from them, read as decode and prompt rates a model; the files and their sources are in
tests/fixtures/formats/SOURCES.md (section whisper_bench)."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import load
from joulebench.errors import ResultFileError
from tests.helpers import load_fixture, readers_of_other_fixtures

HERE = Path(__file__).parent / "fixtures" / "formats" / "whisper_bench"


def test_the_log_gives_rates_from_its_totals_and_the_device_metal_found() -> None:
    runs, fmt, _ = load_fixture(HERE / "ci-mac-m4-whisper-bench-large-v3-turbo.log")
    assert fmt == "whisper-bench" and len(runs) == 1
    run = runs[0]
    assert run["device"]["name"] == "Apple M4" and run["config"]["model"] == "whisper large-v3-turbo"
    m = run["metrics"]
    assert m["decode_tokens_per_s"] == pytest.approx(256 / 1155.00 * 1000)  # 256 runs of one token, not 1000/4.51
    assert m["prompt_tokens_per_s"] == pytest.approx(4096 / 598.39 * 1000)
    assert "encoder 1157.86 ms" in run["notes"] and "energy_j" not in m


def test_the_table_is_a_run_per_model_in_ms_per_run() -> None:
    runs, fmt, _ = load_fixture(HERE / "ci-mac-m4-bench-models-table.log")
    assert fmt == "whisper-bench" and len(runs) == 12
    turbo = runs[-1]
    assert turbo["config"]["model"] == "whisper large-v3-turbo" and turbo["config"]["tag"] == (
        "NEON, 4 threads, flash attention 0")
    assert turbo["metrics"]["decode_tokens_per_s"] == pytest.approx(1000 / 4.51)  # Dec. 4.51 ms a token


def test_bench_all_pages_keep_each_tables_rows_and_skip_the_micro_benchmarks() -> None:
    runs, _, _ = load_fixture(HERE / "bench-all-gg-m1-m2-m4-v100.txt")
    assert len(runs) == 102  # the model rows; memcpy GB/s and mul_mat GFLOPS lines are no runs
    assert all(r["metrics"]["decode_tokens_per_s"] > 0 for r in runs)
    assert any(r["config"].get("quantization") == "Q5_0" for r in runs)


def test_a_table_of_encoder_times_alone_is_refused_saying_why() -> None:
    text = ("| Config | Model | Th | Enc. | Commit |\n| --- | --- | --- | --- | --- |\n"
            "| NEON | tiny | 4 | 33.9 | abc |\n")
    with pytest.raises(ResultFileError, match="encoder times alone"):
        load(text.encode(), "bench.md")


def test_no_other_formats_fixture_is_taken() -> None:
    assert readers_of_other_fixtures({"whisper-bench"}, {"whisper_bench"}) == []
