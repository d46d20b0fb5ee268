"""Issue 39, seventh held-out set (files and attribution in tests/fixtures/formats/SOURCES.md): a long table of
generation phases, quantization methods in a model column, an unnamed index column of row names, per-inference times,
a duration in minutes, a rate written `_samples_sec`. Each rule on the file's own numbers, with its negative case."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from importers import load
from importers.table_fields import measure_field
from joulebench import units
from tests.helpers import load_fixture as _load

GENERAL = Path(__file__).parent / "fixtures" / "formats" / "general_table"
PHASES = GENERAL / "llm-quantization-study-llama3-8b-phases-latency_results.csv"
QUANT = GENERAL / "llm-quantization-study-llama3-8b-throughput_results.csv"
INDEX = GENERAL / "pytorch-tensorrt-quantization-unnamed-index-benchmark_results.csv"
PI5 = GENERAL / "pi5-thermal-inference-yolo-summary_table.csv"
DENSENET = GENERAL / "densenet-optimization-cuda-benchmark_results.csv"


def test_a_phase_column_routes_each_rows_rate_and_time_and_keeps_phases_apart() -> None:
    runs, fmt, _ = _load(PHASES)
    rows = list(csv.DictReader(PHASES.read_text().splitlines()))
    assert fmt == "general-table" and len(runs) == len(rows)
    for run, row in zip(runs, rows, strict=True):
        m, tag = run["metrics"], run["config"]["tag"]
        assert tag == f"phase {row['phase']}" and run["config"]["mode"] == "infer"
        assert "tokens_per_s" not in m and "duration_s" not in m  # never an output rate, never a window
        if row["phase"] == "prefill":
            assert m["prompt_tokens_per_s"] == pytest.approx(float(row["tokens_per_sec"]))
        elif row["phase"] == "decode":
            assert m["decode_tokens_per_s"] == pytest.approx(float(row["tokens_per_sec"]))
        else:
            assert m["ttft_avg_ms"] == pytest.approx(float(row["time_sec"]) * 1000)
    assert {r["config"].get("quantization") for r in runs} >= {"gptq", "awq", "int8"}


def test_a_mode_column_of_modes_is_still_the_mode() -> None:
    table = "mode,tokens_per_sec,time_sec\ninfer,10,2\ntrain,5,3\n"
    runs = load(table.encode(), "t.csv")[0].runs
    assert [r["config"]["mode"] for r in runs] == ["infer", "train"]
    assert runs[0]["metrics"]["tokens_per_s"] == 10 and runs[0]["metrics"]["duration_s"] == 2


def test_quantization_methods_in_a_model_column_are_the_quantization() -> None:
    runs, _, warnings = _load(QUANT)
    assert {(r["config"]["precision"], r["config"].get("quantization")) for r in runs} == {
        ("fp16", None), (None, "int8"), (None, "gptq"), (None, "awq")}
    assert all(r["config"]["model"] is None for r in runs)  # gptq is no model
    assert any("precisions or quantizations, not models" in w for w in warnings)


def test_an_unnamed_index_column_tells_the_rows_apart() -> None:
    runs, _, warnings = _load(INDEX)
    assert [r["config"]["tag"] for r in runs] == ["PyTorch Native", "TensorRT FP32", "TensorRT FP16", "TensorRT INT8"]
    assert [r["metrics"]["latency_avg_ms"] for r in runs] == [63.49, 1.37, 0.43, 0.57]
    assert any("the unnamed first column tells the rows apart" in w for w in warnings)


def test_per_inference_times_and_a_duration_in_minutes() -> None:
    runs, _, _ = _load(PI5)
    first = runs[0]["metrics"]
    assert first["duration_s"] == 3600.0 and first["latency_avg_ms"] == 257.4  # duration_min 60.0, inference_ms_mean
    assert first["energy_j"] == pytest.approx(7.61 * 3600)  # watts_avg over the 60 minutes
    assert measure_field("latency_min")[0] is None  # a minimum latency, never minutes
    assert measure_field("total_inference_time_s")[0].key == "duration_s"  # a whole run's time, not one inference


def test_a_rate_of_samples_written_samples_sec() -> None:
    runs, _, _ = _load(DENSENET)
    assert runs[1]["metrics"]["throughput_sps"] == pytest.approx(27.4470648362097)  # batch 4
    assert units.header_unit("throughput_samples_sec")[1] == units.UNITS["items/s"]
    assert units.header_unit("time_sec")[1] == units.UNITS["s"]
