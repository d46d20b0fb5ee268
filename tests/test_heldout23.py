"""Issue 39, set 23 (files and attribution in tests/fixtures/formats/SOURCES.md), counted unaided at 419184f:
CodeCarbon's task mode, a component's energy named with its unit in brackets, a figure net of idle, and a result
JSON whose config has an 'energy' section. Each rule on the file's own numbers, with its negative case."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers.table_fields import measure_field
from importers.table_units import target
from tests.helpers import load_fixture

FORMATS = Path(__file__).parent / "fixtures" / "formats"


def test_codecarbon_task_mode_keeps_each_task() -> None:
    path = FORMATS / "codecarbon" / "tuning-green-ai-codecarbon3-task-mode-emissions-base.csv"
    runs, fmt, warnings = load_fixture(path)
    assert fmt == "codecarbon" and len(runs) == 6  # one per task, never 'superseded' as running totals
    train = next(r for r in runs if r["config"]["tag"].endswith("task train_model"))
    assert train["metrics"]["duration_s"] == pytest.approx(7385.685681)
    assert train["metrics"]["energy_j"] == pytest.approx(0.46719 * 3.6e6, rel=1e-4)
    assert not any("superseded" in w for w in warnings)


def test_a_cpu_energy_in_brackets_is_a_part_and_the_parts_add_up() -> None:
    runs, _, _ = load_fixture(FORMATS / "experiment_csv" / "energy-inference-pyjoules-cpu-and-gpu-energy-j.csv")
    load = next(r for r in runs if r["config"]["tag"] == "Phase model load")
    assert load["metrics"]["energy_j"] == pytest.approx(946.49 + 596.465, abs=0.01)  # never the CPU's alone
    assert target("CPU Energy (J)") == ("cpu_energy_j", 1.0) and target("GPU Energy (J)") == ("gpu_energy_j", 1.0)
    assert target("Energy (J)") == ("energy_total_j", 1.0)


def test_a_figure_net_of_idle_is_left_out() -> None:
    for name in ("Net_Energy_J", "energy_adjusted_j", "net_j_per_token"):
        field, _, why = measure_field(name)
        assert field is None and "net of idle" in why
    assert measure_field("Gross_Energy_J")[0].key == "energy_j"  # type: ignore[union-attr]


def test_a_result_with_a_config_energy_section_is_no_optimum_report() -> None:
    runs, fmt, _ = load_fixture(FORMATS / "general_table" / "llenergymeasure-v2-result-config-energy-section.json")
    assert fmt == "general-table" and len(runs) == 1
    m = runs[0]["metrics"]
    assert m["energy_j"] == pytest.approx(228.038825) and m["duration_s"] == pytest.approx(4.294966)
    assert runs[0]["device"]["name"] == "NVIDIA A100-PCIE-40GB"


def test_statistics_of_a_resource_are_no_second_record() -> None:
    """Set 24: {cpu_percent: {mean, max, min, samples}, cpu_temp_celsius: {mean, start, end}} are statistics of one
    figure each, not records: the object is one run; a dotted path's last part states the unit ('throughput.fps')."""
    runs, _, _ = load_fixture(FORMATS / "general_table" / "edge-bench-rpi4-coral-usb-nested-statistics.json")
    assert len(runs) == 1
    m = runs[0]["metrics"]
    assert m["latency_avg_ms"] == 5.076 and m["throughput_sps"] == 197.01 and m["latency_p99_ms"] == 5.148
    assert m.get("duration_s") != 2.66099  # cold_start.total_cold_start_ms is a start-up time, not the run's
    assert measure_field("cold_start.total_cold_start_ms")[0] is None


def test_a_speedup_column_is_no_setup() -> None:
    runs, _, warnings = load_fixture(FORMATS / "general_table" / "cifar10-torch-compile-comparison-speedup-column.md")
    assert len(runs) == 4
    eager, compiled = runs[0], runs[1]
    assert eager["metrics"]["latency_avg_ms"] == 4.1922 and compiled["metrics"]["latency_avg_ms"] == 0.9109
    assert "Speedup" not in str([r["config"]["tag"] for r in runs])


def test_a_second_estimate_of_one_rate_is_no_setup() -> None:
    runs, _, warnings = load_fixture(FORMATS / "general_table" / "dl-benchmark-riscv-tflite-fps-and-batch-fps.csv")
    assert len(runs) == 6  # never an 'FPS' and a 'batch' run of each row
    dense8 = next(r for r in runs if r["config"]["model"] == "densenet-121-tf" and r["config"]["batch_size"] == 8)
    assert dense8["metrics"]["throughput_sps"] == 1.925
    assert dense8["metrics"]["latency_avg_ms"] == pytest.approx(4156.78)  # seconds a batch of 8
    assert any("BATCH FPS left out" in w for w in warnings)


def test_a_long_table_appended_again_reads_each_row_once() -> None:
    runs, _, warnings = load_fixture(FORMATS / "general_table" / "green-llama-long-format-appended-twice.csv")
    assert len(runs) == 10 and runs[0]["metrics"]["energy_j"] == pytest.approx(313.943095)
    assert any("100 row(s) repeat an earlier row's metric, run and value exactly" in w for w in warnings)


def test_per_inside_a_word_is_no_per_and_a_config_name_tags_the_run() -> None:
    runs, _, _ = load_fixture(FORMATS / "general_table" / "llenergymeasure-flattened-wide-config-name.csv")
    assert len(runs) == 90 and len({r["config"]["tag"] for r in runs}) == 90
    first = runs[0]
    assert first["config"]["tag"] == "variables_config_name num_processes_1"
    assert first["metrics"]["energy_j"] == pytest.approx(16195.77922)  # 'experiment' is no 'energy per iment'
    assert measure_field("experiment_tokens_per_s")[0].key == "tokens_per_s"  # type: ignore[union-attr]


def test_key_value_lines_and_a_lower_case_label_that_is_no_gpu() -> None:
    """Set 24: 'RESULT threads=3 ... fps=142.67' lines are runs, the thread count their setup; '(t4)' is a round's
    label beside '(t1)', never a Tesla T4."""
    from importers.device_text import device_named

    runs, _, _ = load_fixture(FORMATS / "text_figures" / "rk3588-npu-bench-result-key-value-lines.log")
    assert len(runs) == 25 and {r["config"]["tag"] for r in runs} == {f"threads {n}" for n in (3, 6, 8, 9, 12)}
    assert runs[0]["metrics"]["throughput_sps"] == 142.67  # '(t4)' in the text is no device: the file's name is
    assert {r["device"]["name"] for r in runs} == {"rk3588"}
    assert device_named("round 1  threads=12 (t4)  09:14:53") is None
    assert device_named("benchmarked on a T4") == "T4"
