"""Result files of held-out sets 53 to 55 (counted unaided before they were added: tests/fixtures/formats/SOURCES.md,
section heldout53_55): each with what it was read as before and a case that must stay as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import load
from joulebench import units
from tests.helpers import load_fixture

HELD = Path(__file__).parent / "fixtures" / "formats" / "heldout53_55"
HELD56 = HELD.parent / "heldout56_57"


def test_mlperf_tiny_v1_energy_windows_are_checked_against_their_performance_windows() -> None:
    path = HELD / "stm32u575-ic-energy-v1.0-windows-results.txt"
    runs, fmt, _ = load_fixture(path)
    assert fmt == "mlperf-tiny" and len(runs) == 1  # was refused: no 'Energy data for trial' block
    m = runs[0]["metrics"]
    assert m["j_per_sample"] == pytest.approx(3641.998e-6)  # the median energy cost
    assert m["energy_j"] == pytest.approx(327779.840e-6) and m["duration_s"] == 12.5  # window 8, the median's
    assert m["avg_power_w"] == pytest.approx(26220.290e-6)  # uW, not mW
    assert m["throughput_sps"] == 7.2
    # a window whose energy is not its count of inferences x the energy per inference is refused, naming its line
    bad = path.read_text().replace("#" + " Inferences :           90", "#" + " Inferences :           80", 1)
    with pytest.raises(Exception, match="line 1: the trial's Power x Elapsed time"):
        load(bad.encode(), "results.txt")


def test_a_range_cell_leaves_its_row_out_and_a_platform_column_names_the_device() -> None:
    runs, _, warnings = load_fixture(HELD / "fastllm-chatglm6b-rtx4090-platform-column-range-cell-zh.md")
    assert len(runs) == 5  # the whole file was refused for its '4 ~ 5' cell
    assert {r["device"]["name"] for r in runs} == {"RTX 4090"}  # '平台' names it beside a phone
    assert runs[0]["metrics"]["tokens_per_s"] == 176 and runs[4]["config"]["batch_size"] == 512
    assert any("'4 ~ 5' is a range, not one figure" in w for w in warnings)


def test_durations_written_in_minutes_and_seconds_are_read() -> None:
    runs, _, _ = load_fixture(HELD / "faster-whisper-readme-times-in-minutes-and-seconds.md")
    assert len(runs) == 16  # was 7, with no time read: '2m23s' is 143 s
    assert runs[0]["metrics"]["duration_s"] == 143 and runs[0]["metrics"]["mem_used_device_mb"] == 4708
    assert units.parse("46m12s") == units.Quantity(2772.0, units.UNITS["s"], "s")
    with pytest.raises(units.UnknownUnit):  # '2m' alone: minutes or metres, never read as a duration
        units.parse("2m")


def test_a_soc_heading_names_the_device_and_a_size_column_the_model() -> None:
    runs, _, _ = load_fixture(HELD / "rknn-llm-npu-socs-under-headings-model-size-column.md")
    assert {r["device"]["name"] for r in runs} == {"RK3588", "RK3576", "RK3562", "RV1126B"}
    first = runs[0]
    assert first["config"]["model"] == "Qwen2 0.5B" and first["metrics"]["tokens_per_s"] == 41.58
    rk3576 = [r["config"]["model"] for r in runs if r["device"]["name"] == "RK3576"]
    assert rk3576[:3] == ["Qwen2 0.5B"] * 3  # a blank model cell continues the row above
    assert len({(r["device"]["name"], r["config"]["model"], r["config"].get("quantization")) for r in runs}) == len(
        runs)  # no two sizes of one family pooled as repeats


def test_a_rate_of_stated_unit_proves_a_unitless_time_a_batchs_latency() -> None:
    runs, _, warnings = load_fixture(HELD / "torchao-sam-benchmark-unitless-time-beside-img-per-s.csv")
    m = runs[0]["metrics"]
    assert runs[0]["config"]["precision"] == "bf16"  # 'torch.bfloat16'
    assert m["latency_avg_ms"] == pytest.approx(1457.04, abs=0.01) and "duration_s" not in m
    assert any("img/s x time / batchsize = 1000 in every row" in w for w in warnings)


def test_torch_benchmark_compare_tables_are_a_run_per_cell_and_compile_times_are_left_out() -> None:
    path = HELD / "accelerate-regional-compilation-torch-benchmark-compare.md"
    runs, fmt, warnings = load_fixture(path)
    assert fmt == "torch-benchmark-compare" and len(runs) == 24  # was refused: 4 models x 3 strategies x 2 shapes
    first = runs[0]
    assert first["config"]["model"] == "NousResearch/Llama-3.2-1B" and first["config"]["mode"] == "infer"
    assert first["config"]["tag"] == "Baseline, Inference time (1x128), 1 threads"
    assert first["metrics"]["latency_p50_ms"] == 18.3
    assert any("Compile time (1x128)" in w and "not the timed statement's" in w for w in warnings)
    bad = path.read_text().replace("18.3 ", "fast ", 1)
    with pytest.raises(Exception, match=r"line 52: Inference time \(1x128\): 'fast' is not a time"):
        load(bad.encode(), "README.md")
    micro = load(path.read_text().replace("milliseconds (ms)", "microseconds (us)").encode(), "README.md")[0]
    assert micro.runs[0]["metrics"]["latency_p50_ms"] == pytest.approx(0.0183)  # the footer's unit


def test_mnn_benchmark_out_is_a_run_per_model_line_its_backend_and_phone_in_the_tag() -> None:
    path = HELD / "mnn-benchmark-out-three-phones-cpu-vulkan.md"
    runs, fmt, _ = load_fixture(path)
    assert fmt == "mnn-benchmark" and len(runs) == 30  # 3 phones x 2 backends x 5 models; was refused
    first = runs[0]
    assert first["config"]["model"] == "resnet-v2-50" and first["metrics"]["latency_avg_ms"] == 154.803
    assert first["config"]["tag"] == "P10 Plus (Kirlin 960), CPU backend, 4 threads, precision mode low"
    assert first["device"] is None and runs[5]["config"]["tag"].startswith("P10 Plus (Kirlin 960), Vulkan")
    assert len({(r["config"]["model"], r["config"]["tag"]) for r in runs}) == 30  # no two setups pooled
    swapped = path.read_text().replace("avg =  154.803ms", "avg =  999.803ms", 1)  # outside [min, max]
    f, _ = load(swapped.encode(), "2019-6-17.md")
    assert len(f.runs) == 29 and any("an avg outside its [min, max]" in w for w in f.warnings)


def test_a_table_of_boards_as_columns_under_numbers_in_fps_is_a_run_per_board() -> None:
    runs, _, warnings = load_fixture(HELD / "qengineering-yolo-boards-as-columns-numbers-in-fps.md")
    nanodet = {r["device"]["name"]: r["metrics"]["throughput_sps"] for r in runs if r["config"]["model"] == "NanoDet"}
    assert nanodet == {"Jetson Nano": 26.2, "RPi 4": 13.0, "RPi 5": 43.2, "Rock 5": 36.0}  # was refused: no unit
    assert any("RK3588 NPU (FPS)" in w for w in warnings)  # 'RK3588<sup>1</sup><br>NPU': the footnote left out
    assert any("columns not read" in w and "mAP" in w for w in warnings)  # a score is no FPS
    from importers.table_text import devices_in_unit
    header = ["Model", "Jetson Nano", "RPi 5"]
    rows = [(3, ["yolo", "26.2", "43.2"])]
    assert devices_in_unit(header, rows, ["Numbers in **FPS**"]) == ["Model", "Jetson Nano (FPS)", "RPi 5 (FPS)"]
    assert devices_in_unit(header, rows, ["Numbers in FPS", "times in ms"]) == header  # two units said: neither
    assert devices_in_unit(["Model", "Params", "FLOPs"], rows, ["in FPS"]) == ["Model", "Params", "FLOPs"]


def test_a_header_cell_broken_by_br_is_one_name() -> None:
    runs, _, _ = load_fixture(HELD / "deepstream-yolo-v100-fps-header-with-line-break.md")
    assert len(runs) == 43 and runs[0]["metrics"]["throughput_sps"] == 235.27  # 'FPS<br />(without display)'
    assert runs[0]["device"]["name"] == "NVIDIA Tesla V100 16GB"


def test_mlperf_tiny_summary_power_is_energy_per_inference_and_zero_is_not_measured() -> None:
    runs, fmt, _ = load_fixture(HELD56 / "mlperf-tiny-v1.2-summary-power-is-energy-per-inference.csv")
    assert fmt == "mlperf-tiny-summary" and len(runs) == 73  # was refused: 'Power' without a unit of its own
    measured = [r for r in runs if "j_per_sample" in r["metrics"]]
    assert len(measured) == 18 and all("energy_missing_reason" in r["metrics"] for r in runs if r not in measured)
    syntiant = next(r for r in measured if r["config"]["model"] == "visual wake words")
    assert syntiant["device"]["name"] == "NDP9120" and syntiant["metrics"]["j_per_sample"] == pytest.approx(71.711e-6)
    assert syntiant["metrics"]["throughput_sps"] == 78.6


def test_a_first_token_latency_written_1st_is_the_ttft() -> None:
    runs, _, _ = load_fixture(HELD56 / "ipex-llm-int4-gpu-1st-token-latency.csv")
    m = runs[0]["metrics"]
    assert m["ttft_avg_ms"] == 55.87 and "latency_avg_ms" not in m  # was stored as the latency of a whole request
    assert m["tpot_avg_ms"] == pytest.approx(12.05)


def test_figure_columns_naming_two_devices_are_a_run_per_device() -> None:
    runs, _, _ = load_fixture(HELD56 / "efficientvit-seg-readme-orin-latency-a100-throughput-columns.md")
    l1 = [r for r in runs if r["config"]["model"].startswith("EfficientViT-L1") and "Cityscapes" in r["config"]["tag"]]
    by_device = {r["device"]["name"]: r["metrics"] for r in l1}
    assert by_device == {"Jetson Orin": {**by_device["Jetson Orin"], "latency_avg_ms": 45.9},
                         "A100": {**by_device["A100"], "throughput_sps": 122.0}}  # '122 image/s'
    assert "throughput_sps" not in by_device["Jetson Orin"] and "latency_avg_ms" not in by_device["A100"]


def test_models_as_columns_with_a_dot_in_their_names_are_setups() -> None:
    runs, _, _ = load_fixture(HELD56 / "flexllmgen-t4-models-as-columns-token-per-s.md")
    assert len(runs) == 12  # 4 systems x 3 models; 'OPT-6.7B' was taken for a JSON path and two models left out
    assert sorted(r["metrics"]["decode_tokens_per_s"] for r in runs)[-1] == 29.12


def test_a_csv_whose_units_are_only_in_its_cells_is_taken_by_the_table_reader() -> None:
    runs, fmt, warnings = load_fixture(HELD56 / "openvino-genai-cb-compare-report-units-in-cells.csv")
    assert fmt == "general-table" and len(runs) == 13  # was refused: no header names a unit
    m = runs[0]["metrics"]
    assert (m["prompt_tokens_per_s"], m["tokens_per_s"], m["ttft_avg_ms"], m["duration_s"]) == (463, 2, 61911, 106)
    assert any("mean_ttft read as ttft_avg_ms (each cell's own unit)" in w for w in warnings)


def test_a_line_that_is_a_devices_name_alone_names_the_tables_below_it_until_the_next_heading() -> None:
    runs, _, _ = load_fixture(HELD / "zhilight-engines-device-lines-alone-unitless-ttft.md")
    named = [(r["device"] or {}).get("name") for r in runs]
    assert named.count("NVIDIA A800") == 8 and named.count("NVIDIA H20") == 1  # "> **NVIDIA A800*8**", "* 4"
    # 'NVIDIA AD102 PCIe * 2' names a chip no device list holds: those tables' runs stay not stated, never the
    # H20 of an earlier section
    assert named.count(None) == len(runs) - 9


def test_mlperf_mobile_results_are_a_run_per_benchmark_with_the_rate_counted_not_the_apps_score() -> None:
    runs, fmt, _ = load_fixture(HELD56 / "mlperf-mobile-app-v4.1-result-iqoo12-sm8650.json")
    assert fmt == "mlperf-mobile" and len(runs) == 7  # was refused
    first = runs[0]
    assert first["device"]["name"] == "iQOO 12 (SM8650)" and first["config"]["model"] == "mobilenet_v4_htp"
    m = first["metrics"]
    assert m["throughput_sps"] == pytest.approx(71508 / 61.29204177856445)  # not the score 1093.83 = 1 / p90
    assert m["latency_p90_ms"] == pytest.approx(0.914218) and m["latency_avg_ms"] == pytest.approx(0.837807)
    offline = next(r for r in runs if "Offline" in r["config"]["tag"])
    assert offline["metrics"]["throughput_sps"] == pytest.approx(1658.387, abs=1e-3)  # 24720 / the query's 14.906 s
    assert offline["config"]["batch_size"] == 12360
    older, _, _ = load_fixture(HELD56 / "mlperf-mobile-app-extended-result-ipadpro-a12z.json")
    assert len(older) == 6 and older[0]["device"]["name"].endswith("(A12Z Bionic)")
    assert older[0]["config"]["batch_size"] is None  # 0: not set


def test_a_torch_profiler_table_is_refused_as_a_per_operator_profile_not_read_as_runs() -> None:
    path = HELD.parent.parent / "general_table_refused" / "torch-profiler-key-averages-table-sd35-fp8.txt"
    with pytest.raises(Exception, match="a per-layer profile: each row is one layer or operator of one pass"):
        load(path.read_bytes(), "fp8_sdpa_stable_diffusion_profiler.txt")  # was: "'------------' is not a number"
