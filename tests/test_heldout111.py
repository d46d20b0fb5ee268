"""Issue 39, held-out sets 111 to 114: files read wrong or refused unaided (counted at eef1f69), each a fixture after
it was counted (tests/fixtures/formats/heldout111_114, SOURCES.md), with what it had been read as.
"""

from __future__ import annotations

import csv
from functools import partial
from pathlib import Path

from tests.helpers import unaided

HELD = Path(__file__).parent / "fixtures" / "formats" / "heldout111_114"

imp = partial(unaided, HELD)


def test_perf_analyzers_csv_behind_a_scripts_label_columns() -> None:
    f = imp("neoptimizirano_triton.csv")  # had been refused: perf_analyzer's columns did not come first
    rows = list(csv.DictReader((HELD / "neoptimizirano_triton.csv").open()))
    assert f.format == "perf-analyzer" and len(f.runs) == len(rows) == 12
    for run, row in zip(f.runs, rows, strict=True):
        assert run["config"]["model"] == row["model"] and run["config"]["max_concurrency"] == int(row["Concurrency"])
        assert run["config"]["batch_size"] == 1 and run["config"]["precision"] == "fp16"  # 'floating_point': fp16
        assert run["metrics"]["throughput_sps"] == float(row["Inferences/Second"])
        assert run["metrics"]["latency_p50_ms"] == int(row["p50 latency"]) / 1000  # µs, as perf_analyzer writes
        assert "concurrency 1:64:16" in run["config"]["tag"]  # the range asked for, not the level measured
    assert any("columns put before perf_analyzer's own" in w for w in f.warnings)


def test_counts_and_times_written_with_chinese_units() -> None:
    f = imp("2026-08-19-all-local-models-comparison.md")  # had been refused: '188 tokens' in a count column
    first = f.runs[0]
    assert first["config"]["model"] == "Qwen3 8B"
    assert first["metrics"]["output_tokens_mean"] == 188.0  # '平均输出': '188 tokens'
    assert first["metrics"]["latency_avg_ms"] == 16400.0  # '平均耗时': '16.4秒', seconds


def test_a_table_on_its_side_by_gpu_count() -> None:
    text = ("# NVIDIA B200 results\n\n| Metric | 2 GPU | 8 GPU | Ratio |\n|---|---|---|---|\n"
            "| Tokens/sec | 106,979 | 106,809 | 1.00x |\n| Time per iteration | 1.84s | 29.45s | 16.0x |\n")
    f = imp("scaling.md", text.encode())  # '2 GPU' had named a device column of '2' and '8'
    assert [(r["config"]["gpu_count"], r["metrics"]["tokens_per_s"]) for r in f.runs] == [(2, 106979.0),
                                                                                          (8, 106809.0)]
    assert {r["device"]["name"] for r in f.runs} == {"NVIDIA B200"}
