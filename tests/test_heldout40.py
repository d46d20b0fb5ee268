"""Result files of held-out sets 40 to 46 (counted unaided before they were added: tests/fixtures/formats/SOURCES.md,
section heldout40_46), each with what went wrong before and a case that must stay as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers.table_fields import measure_field
from tests.helpers import load_fixture, refusal

HELD = Path(__file__).parent / "fixtures" / "formats" / "heldout40_46"


def test_windows_1252_markdown_is_read_and_said() -> None:
    runs, _, warnings = load_fixture(HELD / "facial-detectors-cp1252-resultados.md")
    assert {r["config"]["model"]: r["metrics"]["throughput_sps"] for r in runs} == {
        "HOG": pytest.approx(29.0239), "HAAR": pytest.approx(28.9879), "MTCNN": pytest.approx(6.36675)}
    assert any("Windows-1252" in w for w in warnings)


def test_binary_data_that_is_not_utf8_is_not_read_as_windows_1252() -> None:
    assert "not UTF-8" in refusal(b"Concurrency,fps\n1,\x81\x02\x03\x04 12\n", "bin.csv")


def test_a_tab_separated_summary_with_spanish_statistics() -> None:
    runs, _, warnings = load_fixture(HELD / "facial-detectors-tab-summary.txt")
    assert {r["config"]["model"]: r["metrics"]["throughput_sps"] for r in runs} == {
        "CNN": 1.02, "DLIB": 5.67, "HAAR": 14.78, "HOG": 14.83, "MFN": 14.81}
    assert any("FPS Max (" in w and "spread" in w for w in warnings)  # the maximum is no run's rate


@pytest.mark.parametrize(("header", "key"), [
    ("FPS Promedio", "throughput_sps"), ("FPS moyen", "throughput_sps"), ("Tiempo promedio (ms)", "latency_avg_ms"),
    ("Latencia media (ms)", "latency_avg_ms"), ("Zeit Mittelwert (ms)", "latency_avg_ms"),
    ("FPS Máximo", None), ("media_duration_s", None), ("tiempo total (s)", "duration_s")])
def test_statistics_named_in_spanish_french_and_german(header: str, key: str | None) -> None:
    found = measure_field(header)[0]
    assert (found.key if found else None) == key


def test_records_with_list_values_are_read_not_crashed_on() -> None:
    runs, _, warnings = load_fixture(HELD / "finetune-bench-a10-amp-vs-fp32-runs.json")
    assert len(runs) == 12 and {r["device"]["name"] for r in runs} == {"NVIDIA A10"}
    first = runs[0]
    assert first["config"]["precision"] == "fp32" and first["metrics"]["duration_s"] == pytest.approx(212.0)
    # the mean time of an epoch is a part of the run, never its window
    assert any("epoch_mean_time_s (a time per epoch" in w for w in warnings)
    runs, _, warnings = load_fixture(HELD / "ollama-api-timings-ns.json")
    assert len(runs) == 24 and all(r["metrics"].get("tokens_per_s") for r in runs)  # each record's 2 runs, not
    assert runs[0]["metrics"]["tokens_per_s"] == pytest.approx(76.491, abs=1e-3)  # its summary's mean
    assert any("under each record's 'runs' read as the runs" in w for w in warnings)


def test_guidellm_console_tables_read_as_its_benchmark() -> None:
    runs, fmt, warnings = load_fixture(HELD.parent / "guidellm" / "guidellm-0.5-console-arc-b60-qwen3-30b.log")
    assert fmt == "guidellm" and len(runs) == 1
    run = runs[0]
    assert run["config"]["model"] == "Qwen/Qwen3-30B-A3B" and run["config"]["max_concurrency"] == 1
    m = run["metrics"]
    assert m["ttft_p50_ms"] == 58.1 and m["ttft_p95_ms"] == 72.8
    assert m["e2e_latency_p50_ms"] == pytest.approx(40_000) and m["tokens_per_s"] == 25.9  # Output Tokens Per Sec Mean
    assert "requests_per_s" not in m  # printed as 0.0 (one decimal): no figure
    assert "itl_avg_ms" not in m and "p50 39.1 ms" in run["notes"]  # ITL's median of per-request means: notes only
    assert any("not its rate" in w for w in warnings)


def test_guidellm_console_tables_that_disagree_on_the_benchmarks_are_refused() -> None:
    text = (HELD.parent / "guidellm" / "guidellm-0.5-console-arc-b60-qwen3-30b.log").read_text()
    head, tail = text.split("Server Throughput Statistics", 1)
    tail = tail.replace("| synchronous |", "| throughput  |", 1)
    assert "benchmark 1 is 'throughput' here" in refusal((head + "Server Throughput Statistics" + tail).encode(),
                                                         "g.log")


def test_inf_and_oom_cells_are_failed_runs_said_once() -> None:
    runs, _, warnings = load_fixture(HELD / "perfdna-l40s-compile-latency-inf-oom.csv")
    assert len(runs) == 74  # 120 rows, 46 of them 'inf' or 'OOM'
    said = [w for w in warnings if "'inf'" in w]
    assert len(said) == 1 and "(26 lines)" in said[0] and "did not finish" in said[0]
    assert any("'OOM' (out of memory)" in w and "(20 lines)" in w for w in warnings)


def test_long_table_with_labels_among_its_figures() -> None:
    runs, fmt, _ = load_fixture(HELD / "gb10-rtdetr-train-metric-value-unit.csv")
    assert fmt == "general-table" and len(runs) == 1
    run = runs[0]
    assert run["device"]["name"] == "CUDA - NVIDIA GB10" and run["config"]["model"] == "PekingU/rtdetr_v2_r50vd"
    assert run["metrics"]["duration_s"] == 807.05 and run["config"]["batch_size"] == 8


def test_a_threshold_is_no_measurement() -> None:
    runs, _, warnings = load_fixture(HELD / "vllm-codecarbon-run-metric-value-thresholds.csv")
    m = runs[0]["metrics"]
    assert "ttft_avg_ms" not in m and "tpot_avg_ms" not in m  # 'TTFT threshold (s)': what the run was judged by
    assert m["output_tokens"] == 38291
    assert any("TTFT threshold (s) (a target or threshold" in w for w in warnings)


def test_a_detectors_precision_score_is_no_numeric_format_and_model_files_name_the_model() -> None:
    runs, _, warnings = load_fixture(HELD / "yolov8-jetson-xavier-json-precision-score.md")
    # 0.8174 was read as the quantization; the engine's name gives it (int8) or the precision (fp16)
    assert {(r["config"].get("precision"), r["config"].get("quantization")) for r in runs} == {
        ("fp16", None), (None, "int8")}
    assert any("Precision (a score (a model's precision or accuracy)" in w for w in warnings)
    runs, _, warnings = load_fixture(HELD / "yolov8-trt-agx-orin-filename-models.json")
    assert [r["config"]["model"] for r in runs][:2] == ["yolov8n_fp16", "yolov8n_int8"]
    assert any("filename read as the model" in w for w in warnings)
    # a column of model files that is one file for every row tells no rows apart: never the model (no guess)
    one = b"filename,fps\nbest.onnx,30.1\nbest.onnx,30.4\n"
    from importers import load
    imported, _ = load(one, "one.csv")
    assert not any("read as the model" in w for w in imported.warnings)


def test_a_setup_whose_figures_are_all_zero_gets_no_run() -> None:
    runs, _, warnings = load_fixture(HELD / "yoloe26-orin-nx-img-vid-zero-not-measured.csv")
    assert len(runs) == 4 and all(r["config"]["tag"].startswith("vid") for r in runs)
    assert any("img: every figure 0 (not measured): no run of that setup" in w for w in warnings)


def test_a_platform_key_naming_a_stack_is_no_device_and_the_gpu_key_is() -> None:
    runs, _, warnings = load_fixture(HELD / "finetune-bench-ubuntu-4070tisuper-platform-key.json")
    assert runs[0]["device"]["name"] == "NVIDIA GeForce RTX 4070 Ti SUPER"
    assert runs[0]["metrics"]["throughput_sps"] == 14.33
    assert any("platform (an operating system, CPU architecture, software stack or host" in w for w in warnings)
    runs, _, _ = load_fixture(HELD / "finetune-bench-macbook-m4-mlx-platform-key.json")
    assert runs[0]["device"]["name"] == "Apple M4 Pro"  # never 'macos_mlx', nor the API 'Metal 3'


def test_training_tables_say_so_by_their_columns() -> None:
    runs, _, _ = load_fixture(HELD / "llm-foundry-mpt-training-throughput-tables.md")
    assert len(runs) == 216 and {r["config"]["mode"] for r in runs} == {"train"}
    first = runs[0]["config"]
    assert first["gpu_count"] == 512 and first["precision"] == "bf16"  # '# GPUs', amp_bf16
    assert runs[0]["metrics"]["tokens_per_s"] == 515636.0


def test_the_device_a_heading_ends_with_and_a_quantization_column_of_precisions() -> None:
    runs, _, _ = load_fixture(HELD / "yolov8-multidevice-headings-on-jetson.md")
    nano = [r for r in runs if (r.get("device") or {}).get("name") == "Jetson Orin Nano Super"]
    assert len(nano) == 8
    assert {(r["config"].get("precision"), r["config"].get("quantization")) for r in nano} == {
        ("fp16", None), (None, "INT8")}
    from importers.table_text import heading_device
    assert heading_device("Benchmark on RTX 4090") == "RTX 4090" and heading_device("Results on the test set") is None


def test_recordings_appended_to_one_power_log_are_runs_of_their_own() -> None:
    runs, fmt, warnings = load_fixture(HELD / "tc66c-jetson-nano-two-recordings-appended.csv")
    assert fmt == "power-table" and len(runs) == 2  # 1,188 runs, then one run over a 3-day gap (2.1 MJ)
    first, second = (r["metrics"] for r in runs)
    assert (first["duration_s"], first["avg_power_w"]) == (pytest.approx(306.9, abs=0.1), pytest.approx(5.74, abs=0.01))
    assert (second["duration_s"], second["avg_power_w"]) == (pytest.approx(351.0, abs=0.1),
                                                             pytest.approx(9.48, abs=0.01))
    assert [r["config"]["tag"] for r in runs] == ["recording 1 of 2", "recording 2 of 2"]
    assert any("never integrated across the gap" in w for w in warnings)


def test_a_table_of_the_inputs_one_run_processed_is_that_run() -> None:
    runs, _, warnings = load_fixture(HELD / "rknn-citrinet-per-utterance-time-ms.csv")
    assert len(runs) == 1  # 51 utterances were 51 runs tagged by their transcripts
    assert runs[0]["metrics"]["duration_s"] == pytest.approx(3.206)  # 51 NPU calls, 62.86 ms on average
    assert any("items of one run (lines 2-52" in w for w in warnings)


def test_a_clock_written_at_each_step_is_no_step_time() -> None:
    runs, _, _ = load_fixture(HELD / "modded-nanogpt-rtx4070-laptop-cumulative-train-time.txt")
    steps = next(r for r in runs if "steps from" in (r["config"].get("tag") or ""))
    # train_time is the time since the start: the window is its rise (771 s at step 150 less the warm-up's 38.6 s),
    # never the sum of the clock's readings (5,823 s)
    assert 700 < steps["metrics"]["duration_s"] < 740


def test_executorch_statistics_lines_are_runs_with_their_banner_and_its_repeats() -> None:
    runs, fmt, warnings = load_fixture(HELD.parent / "executorch" / "llama-vulkan-pixel7a-prefill-2048.log")
    assert fmt == "executorch" and len(runs) == 12
    assert [r["config"]["tag"] for r in runs[:4]] == ["1B-8da4w"] * 3 + ["1B-4w"]  # rep1..3: repeats of one setup
    first = runs[0]["metrics"]
    assert first["prompt_tokens_per_s"] == pytest.approx(169.607, rel=1e-4)  # 2048 tokens over the timestamps
    assert first["duration_s"] == pytest.approx(12.076) and "decode_tokens_per_s" not in first  # no token generated
    assert any("6 run(s) printed no statistics" in w and "8B-8da4w rep1" in w for w in warnings)


def test_mlx_lm_benchmark_trials_are_repeats_and_their_averages_no_run() -> None:
    runs, _, _ = load_fixture(HELD / "mlx-lm-benchmark-trials-strix-halo-readme.md")
    assert len(runs) == 15  # 3 setups x 5 trials; the 'Averages:' lines are the trials' own summary
    bf16 = [r for r in runs if r["config"].get("tag") == "bf16"]
    assert len(bf16) == 5 and {r["config"]["model"] for r in bf16} == {"Qwen3-0.6B"}
    assert bf16[0]["metrics"]["prompt_tokens_per_s"] == 1672.809 and bf16[0]["metrics"]["decode_tokens_per_s"] == 12.404


def test_setups_named_by_a_first_word_and_a_setup_line_above_them() -> None:
    runs, _, _ = load_fixture(HELD / "yolo26-coreml-vs-pytorch-m4-blocks.txt")
    assert len(runs) == 10  # refused: each block's two latencies are one field twice
    by_tag = {r["config"]["tag"]: r["metrics"]["latency_avg_ms"] for r in runs}
    assert by_tag["Model Size n, Original"] == pytest.approx(30.5)
    assert by_tag["Model Size n, CoreML"] == pytest.approx(11.2)
    assert by_tag["Model Size x, CoreML"] == pytest.approx(32.2)


def test_a_thread_count_on_its_own_line_starts_its_blocks_run() -> None:
    runs, _, _ = load_fixture(HELD / "resnet34-jetson-orin-nano-threads-blocks-ko.md")
    cpu = [r for r in runs if "Threads" in (r["config"].get("tag") or "")]
    assert [r["config"]["tag"] for r in cpu] == ["CPU Threads used 1", "CPU Threads used 3", "CPU Threads used 6"]
    assert cpu[2]["metrics"]["latency_avg_ms"] == pytest.approx(218265.1, abs=0.1)  # its own block's, not the next's


def test_each_setups_figures_are_those_its_word_opens() -> None:
    from importers import load
    text = ("Mixed precision:\nFP32 Throughput: 471.76 FPS\nFP32 Latency: 8.5 ms\nFP16 Throughput: 703.37 FPS\n"
            "FP16 Latency: 5.7 ms\nBatch size: 4\n")
    imported, _ = load(text.encode(), "mixed.txt")
    by_tag = {r["config"]["tag"]: r["metrics"] for r in imported.runs}
    assert by_tag["FP32"]["throughput_sps"] == 471.76 and by_tag["FP32"]["latency_avg_ms"] == 8.5
    assert by_tag["FP16"]["throughput_sps"] == 703.37 and by_tag["FP16"]["latency_avg_ms"] == 5.7
