"""The report vLLM's benchmark_serving / `vllm bench serve` and SGLang's bench_serving print, pasted into notes
(issue 27, helper L3 of session 35): one run per "Serving Benchmark Result" block, each figure as the block states
it. Every fixture is a real file (tests/fixtures/formats/SOURCES.md); the comment beside a figure names its line.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import importers
from importers.serving_report import ServingReportImporter
from importers.text_figures import TextFiguresImporter
from joulebench.errors import ResultFileError
from tests.helpers import ingest_runs

REPORTS = Path(__file__).parent / "fixtures" / "formats" / "serving_report"
KVCACHED = REPORTS / "kvcached-bench_kvcached_overhead-README.md"
YILIU = REPORTS / "yiliu30-vllm-fork-pp_local_test_res.sh"
DLORA = REPORTS / "SGLang-dLoRA-DynaRank-dlora_results.md"
FORK_LOG = REPORTS / "SGLang-dLoRA-DynaRank-VS.md"
MROPE = REPORTS / "shen-shanshan-cs-self-learning-vLLM-mrope.md"
ASCEND = REPORTS / "vllm-ascend-tutorial-Qwen3-Omni-30B-A3B-Thinking-performance-section.md"
DENNIS = REPORTS / "dennislee22-vLLM-benchmarking-README.md"


def _load(path: Path, data: bytes | None = None, **hints: str) -> importers.ImportedFile:
    loaded, fmt = importers.load(path.read_bytes() if data is None else data, path.name,
                                 hints=importers.Hints(**hints))
    assert fmt == ServingReportImporter.NAME
    return loaded


def test_sglang_blocks_in_a_readme_through_the_store(tmp_path: Path, bare_template: Path) -> None:
    rows = ingest_runs(tmp_path / "k.duckdb", bare_template, KVCACHED, device="A100 80GB")
    assert len(rows) == 6  # six blocks: rates 32, 16, 8, each with and without kvcached
    row = rows[0]  # the block at lines 17-44
    assert row["origin_format"] == "serving-report" and row["engine"] == "sglang"  # line 18 "Backend: sglang-oai"
    assert row["request_rate_per_s"] == 32.0 and row["load_kind"] == "rate"  # line 19
    assert row["max_concurrency"] is None  # line 20 "Max request concurrency: not set"
    assert row["requests_completed"] == 1920 and row["duration_s"] == pytest.approx(213.71)  # lines 21-22
    assert row["requests_per_s"] == pytest.approx(8.98)  # line 26
    assert row["prompt_tokens_per_s"] == pytest.approx(8626.75)  # line 27 "Input token throughput"
    assert row["tokens_per_s"] == pytest.approx(734.77)  # line 28 "Output token throughput", never 9361.52 (total)
    assert row["output_tokens_mean"] == pytest.approx(157031 / 1920)  # line 24 / line 21
    # kvcached on and off state the same model and rate: never pooled as repeats of one configuration
    assert len({r["config_key"] for r in rows}) == 6 and row["tag"] == "rate 32, report line 17"
    assert row["e2e_latency_avg_ms"] == pytest.approx(157842.85)  # line 32
    assert row["e2e_latency_p50_ms"] == pytest.approx(157290.17)  # line 33
    assert row["ttft_avg_ms"] == pytest.approx(112043.40) and row["ttft_p99_ms"] == pytest.approx(145546.45)
    assert row["itl_avg_ms"] == pytest.approx(569.94) and row["itl_p95_ms"] == pytest.approx(561.59)  # 39, 41
    assert row["tpot_avg_ms"] is None and row["latency_avg_ms"] is None  # SGLang's old block has no TPOT
    assert row["energy_j"] is None and "no power or energy" in row["energy_missing_reason"]
    assert "9361.52" in row["notes"] and "Max ITL (ms) 151008.49" in row["notes"]  # total and max: notes only
    assert [r["request_rate_per_s"] for r in rows] == [32.0, 32.0, 16.0, 16.0, 8.0, 8.0]
    assert rows[1]["tokens_per_s"] == pytest.approx(2192.53)  # the block at line 51, line 62


def test_vllm_blocks_in_shell_comments_take_the_load_printed_before_them() -> None:
    runs = _load(YILIU).runs
    assert len(runs) == 2
    config, m = runs[0]["config"], runs[0]["metrics"]
    # lines 1-3: "# Traffic request rate: inf", "# Maximum request concurrency: 32" before the block
    assert config["max_concurrency"] == 32 and config["load_kind"] == "concurrency"
    assert config["request_rate_per_s"] is None  # inf: every request at once, not a rate
    assert m["tokens_per_s"] == pytest.approx(434.40)  # line 11; total 868.80 (line 12) is not output
    assert m["tpot_p99_ms"] == pytest.approx(72.63) and m["itl_p99_ms"] == pytest.approx(72.47)  # lines 20, 24
    assert m["tpot_avg_ms"] == pytest.approx(70.14) and m["itl_p50_ms"] == pytest.approx(68.15)  # lines 18, 23
    assert runs[1]["metrics"]["duration_s"] == pytest.approx(198.68)  # second block, line 33


def test_zero_and_negative_latencies_are_missing_not_stored() -> None:
    runs = _load(DLORA).runs
    assert [r["config"]["request_rate_per_s"] for r in runs] == [2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
    first = runs[0]
    assert first["metrics"]["tpot_avg_ms"] == pytest.approx(1.76)  # line 21
    assert first["metrics"]["tpot_p50_ms"] is None  # line 22 "Median TPOT (ms): -0.00"
    assert first["metrics"]["itl_avg_ms"] is None  # line 25 "Mean ITL (ms): 0.00"
    assert {"tpot_nonpositive", "itl_nonpositive"} <= set(first["flags"])
    assert first["metrics"]["tokens_per_s"] == pytest.approx(825.94)  # line 14; "Total throughput" 2121.89 is not


def test_a_forks_extra_sections_inside_the_block_are_skipped() -> None:
    run = _load(FORK_LOG).runs[0]  # block at line 22, closed at line 50
    m = run["metrics"]
    assert m["requests_completed"] == 996 and m["duration_s"] == pytest.approx(234.31)  # lines 26-27
    assert m["requests_per_s"] == pytest.approx(4.25) and m["tokens_per_s"] == pytest.approx(931.50)  # 44-45
    assert m["e2e_latency_avg_ms"] == pytest.approx(55549.90) and m["ttft_p50_ms"] == pytest.approx(55513.45)


def test_current_vllm_block_peaks_are_not_the_runs_figures() -> None:
    runs = _load(MROPE).runs
    m = runs[0]["metrics"]
    assert m["tokens_per_s"] == pytest.approx(352.14)  # line 39; "Peak output token throughput" 700.00 is not
    assert m["requests_failed"] == 0 and m["requests_completed"] == 100  # lines 33-34
    assert m["itl_p99_ms"] == pytest.approx(997.51)  # line 53
    assert "Peak output token throughput (tok/s) 700.00" in runs[0]["notes"]
    # the model of the `vllm bench serve --model ...` command before the block (line 19)
    assert runs[0]["config"]["model"] == "/root/.cache/modelscope/hub/models/Qwen/Qwen3-Omni-30B-A3B-Thinking"
    assert runs[1]["metrics"]["tokens_per_s"] == pytest.approx(355.74)  # second block


def test_configured_rate_inside_the_block() -> None:
    (run,) = _load(ASCEND).runs
    assert run["config"]["request_rate_per_s"] == 1.0 and run["config"]["arrival"] == "poisson"  # line 32
    assert run["config"]["model"] is None  # `--model $MODEL`: not stated
    assert run["metrics"]["tokens_per_s"] == pytest.approx(122.15)  # line 38


def test_many_blocks_each_with_the_model_of_its_command() -> None:
    runs = _load(DENNIS, device="A100 80GB").runs
    assert len(runs) == 81
    models = [r["config"]["model"] for r in runs]
    assert models.count("Qwen2-7B-Instruct") == 55 and models.count("gpt-oss-120b") == 10
    first = runs[0]["metrics"]  # the block at line 107, after `--model Qwen2-7B-Instruct` (line 101)
    assert first["tokens_per_s"] == pytest.approx(218.04) and first["ttft_p99_ms"] == pytest.approx(3346.14)
    assert all(r["device"]["name"] == "A100 80GB" for r in runs)  # from --device only


def test_device_not_stated_is_asked_for() -> None:
    loaded = _load(YILIU)
    assert all(r["device"] is None for r in loaded.runs)
    assert any("--device" in w for w in loaded.warnings)


def test_a_block_without_figures_is_refused_with_its_line_and_the_fix() -> None:
    text = YILIU.read_text()
    lines = text.splitlines()
    cut = "\n".join(lines[:5] + lines[7:9]) + "\n"  # the header (line 5) with only the token totals under it
    with pytest.raises(ResultFileError) as err:
        importers.load(cut.encode(), "cut.sh")
    assert "cut.sh" in str(err.value) and "line 5" in str(err.value) and "paste the whole block" in str(err.value)
    # one good block and one cut: the good one imports, the cut one is named in a warning
    both = text + "\n\n" + cut  # 51 lines without a final newline, a blank line, the cut block: header at 57
    loaded, _ = importers.load(both.encode(), "both.sh")
    assert len(loaded.runs) == 2
    assert any("both.sh, line 57" in w and "not imported" in w for w in loaded.warnings)


def test_before_this_reader_the_files_were_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    without = tuple(i for i in importers.IMPORTERS  # the figures-in-text reader, added since, reads them roughly
                    if not isinstance(i, (ServingReportImporter, TextFiguresImporter)))
    monkeypatch.setattr(importers, "IMPORTERS", without)
    for path in (KVCACHED, MROPE, DENNIS):
        with pytest.raises(ResultFileError, match="not a format JouleBench knows"):
            importers.load(path.read_bytes(), path.name)
    # a log with tqdm bars was read as a progress bar: iterations/s of the bar, no serving figure at all
    loaded, fmt = importers.load(YILIU.read_bytes(), YILIU.name)
    assert fmt == "tqdm" and not any("tokens_per_s" in r["metrics"] for r in loaded.runs)


@pytest.mark.parametrize("hostile", [
    "=" * 60_000 + " Serving Benchmark\n",  # a run of '=' that never reaches the header's words
    "-" * 60_000 + "x\n",  # a rule that does not end as one
    "Mean TTFT (ms): 1" + " " * 60_000 + "x\n",  # a label whose value is a long gap of spaces
])
def test_a_hostile_line_is_read_in_linear_time(hostile: str) -> None:
    """A hang guard (the fuzz suite found it: a mutated report took 12 s). A label's value matched up to its
    trailing spaces was quadratic in a gap of spaces (11.5 s for the third line here); now milliseconds. Read or
    refused, never a hang."""
    started = time.perf_counter()
    try:
        importers.load(("============ Serving Benchmark Result ============\n" + hostile).encode(), "hostile.md")
    except ResultFileError:
        pass
    assert time.perf_counter() - started < 5.0
