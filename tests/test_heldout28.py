"""Issue 39, sets 28 to 32 (files and attribution in tests/fixtures/formats/SOURCES.md), counted unaided at 3269730:
a power line written twice in a powermetrics block, one unnumbered desktop GPU's power beside its VRAM, RAPL's domains
with a GPU's energy in mJ, display-formatted numbers, an execution status, a task column that is no mode, and a unit
written alone ('J/Token', 't/s'). Each rule on the file's own numbers, with its negative case."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from importers import load
from importers.table_fields import measure_field
from joulebench import units
from tests.helpers import load_fixture

FORMATS = Path(__file__).parent / "fixtures" / "formats"


def test_powermetrics_reads_a_line_written_twice_in_a_block_once() -> None:
    path = FORMATS / "power_logs_macos" / "ut2024-powermetrics-m1-flant5-first-1570-lines-cut-mid-block.txt"
    runs, fmt, warnings = load_fixture(path)
    assert fmt == "powermetrics" and len(runs) == 1
    metrics = runs[0]["metrics"]
    assert metrics["duration_s"] == pytest.approx(29.39115)  # 29 windows of ~1 s: the cut 30th holds no power line
    text = path.read_text()
    windows_ms = [float(m) for m in re.findall(r"\(([\d.]+)ms elapsed\)", text)][:29]
    combined_mw = [float(m) for m in re.findall(r"^Combined Power \(CPU \+ GPU \+ ANE\): (\d+) mW", text, re.M)]
    assert len(combined_mw) == 29 and text.count("GPU Power:") == 58  # each block's GPU power written twice
    expected_j = sum(mw * ms for mw, ms in zip(combined_mw, windows_ms, strict=True)) / 1e6
    assert metrics["energy_j"] == pytest.approx(expected_j)  # 2.64 J: the idle lead-in (59 to 359 mW)
    assert any("GPU Power" in w and "parts of it" in w for w in warnings)


def test_one_desktop_gpus_power_beside_its_vram_is_a_gpu_trace_not_a_jetson_log() -> None:
    runs, fmt, _ = load_fixture(FORMATS / "power_logs_meter" / "artigo-rtx4090-pynvml-system-metrics-gpu-power-w.csv")
    assert len(runs) == 1
    metrics = runs[0]["metrics"]
    assert metrics["energy_j"] == pytest.approx(12893.07, abs=0.01)  # the repo's own integration of the same file
    assert metrics["duration_s"] == pytest.approx(91.206) and metrics["energy_boundary"] == "gpu_board"
    # without a VRAM column the same power column may be a Jetson's GPU rail: read as before, asking for the board
    text = b"Timestamp,GPU Usage (%),GPU Power (W)\n0,1,5.0\n1,80,9.0\n2,80,9.5\n"
    assert "energy_j" not in load(text, "log.csv")[0].runs[0]["metrics"]


def test_rapl_domains_and_a_gpus_energy_in_mj_add_up_and_a_wrapped_counter_is_no_energy() -> None:
    runs, _, warnings = load_fixture(FORMATS / "general_table" /
                                     "greenlab-energibridge-run-table-rapl-gpu-mj-first-80-lines.csv")
    first = runs[0]
    assert first["config"]["model"] == "qwen:7b"  # model_version
    assert first["config"]["tag"] == "task_type generation, input_size long"  # tasks, never a mode
    assert first["config"]["mode"] is None
    assert first["metrics"]["energy_j"] == pytest.approx(0 + 237.88946533203125 + 400082 / 1000)  # DRAM+package+GPU
    assert len(runs) == 78  # line 71's package counter wrapped (-261,901 J): that run has no energy, said
    assert any("line 71" in w and "wrapped" in w for w in warnings)
    assert any("PP0_ENERGY (J)" in w and "inside the CPU package" in w for w in warnings)


def test_display_numbers_with_thousands_commas_and_an_execution_status() -> None:
    path = FORMATS / "general_table" / "check-models-mlxvlm-m5max-results-display-numbers.tsv"
    runs, _, warnings = load_fixture(path)
    assert len(runs) == 61  # the failed row left out, said
    lfm = next(r for r in runs if r["config"]["model"] == "LiquidAI/LFM2.5-VL-450M-MLX-bf16")
    assert lfm["metrics"]["prompt_tokens_per_s"] == 23197 and lfm["metrics"]["decode_tokens_per_s"] == 506
    assert any("execution_status is 'failed'" in w for w in warnings)
    # a decimal comma anywhere ('1,5') keeps every comma from being read as a thousands mark
    text = b"model\tlatency_ms\ttokens_per_second\na\t1,5\t23,197\nb\t2.5\t10\n"
    with pytest.raises(Exception, match="'1,5' is not a number"):
        load(text, "mixed.tsv")


def test_parts_named_by_their_unit_alone_and_components_of_a_soc() -> None:
    path = FORMATS / "experiment_csv" / "llm-benchmarking-zeus-apple-m4max-ollama-7b-j-per-token.csv"
    runs, _, _ = load_fixture(path)
    assert runs[0]["metrics"]["j_per_token"] == 0.4453 and runs[0]["metrics"]["energy_j"] == 566.86
    runs, _, _ = load_fixture(FORMATS / "general_table" / "coreml-diffusion-sd15-unet-ane-gpu-power.jsonl")
    ane = runs[0]["metrics"]
    assert ane["avg_power_w"] == pytest.approx(4.490223610953058 + 0.00021450896159317182)  # ANE + GPU: never one
    assert ane["latency_p50_ms"] == pytest.approx(399.01954149996754)


@pytest.mark.parametrize(("header", "field"), [
    ("J/Token", "j_per_token"), ("t/s", "tokens_per_s"), ("img/s", "throughput_sps"), ("docs_s", "throughput_sps"),
    ("avg_token_latency_ms", "tpot_avg_ms"), ("FTL[s]", "ttft_avg_ms"), ("model_version", None),
])
def test_names_read_by_their_unit(header: str, field: str | None) -> None:
    found, _, _ = measure_field(header)
    assert (found.key if found else None) == field


def test_names_that_are_no_figure_of_ours() -> None:
    assert measure_field("avg_io_throughput_mb_s")[0] is None  # megabytes a second: never items a second
    assert measure_field("t/s (req)")[0] is None  # each request's rate, not the system's
    assert units.header_unit("W/GPU")[1] is None and units.header_unit("I/O")[1] is None


def test_training_step_lines_are_one_run_a_block() -> None:
    runs, _, warnings = load_fixture(FORMATS / "text_figures" / "build-nanogpt-s21-gpt2-mps-and-cuda-training-log.md")
    assert len(runs) == 10  # ten timed blocks, never a run a step (550 before)
    first = runs[0]
    assert first["config"]["mode"] == "train" and first["config"]["tag"] == "steps from line 243"
    assert first["metrics"]["tokens_per_s"] == pytest.approx(10127.39)  # median of steps 1..49 (step 0 left out)
    assert first["metrics"]["duration_s"] == pytest.approx(5.00662)  # their step times summed
    assert any("the first step left out as the warm-up" in w for w in warnings)
    # four step lines are too few to be a run's steps; a step number that falls starts another run
    lines = [f"step {i % 6}, loss: 3.{i}, time: 100 ms, tokens/sec: {1000 + i}\n" for i in range(12)]
    assert len(load(("## Log\n\n" + "".join(lines[:4])).encode(), "few.md")[0].runs) == 4
    two = load(("## Log\n\n" + "".join(lines)).encode(), "two.md")[0].runs
    assert [r["metrics"]["tokens_per_s"] for r in two] == [1003, 1009]


def test_a_model_named_once_per_group_backends_and_captions_keep_rows_apart() -> None:
    path = FORMATS / "general_table" / "ispcojp-coreultra7-155h-openvino-genai-model-once-per-group.md"
    runs, _, _ = load_fixture(path)
    assert len(runs) == 12 and len({r["config"]["tag"] for r in runs}) == 6  # two captions x three backends
    npu = [r for r in runs if r["config"]["model"] == "microsoft/Phi-3.5-mini-instruct"]
    assert [r["config"]["tag"] for r in npu] == [f"benchmark_openvino.py / text to text, on {b}"
                                                 for b in ("NPU", "CPU", "GPU")]
    assert npu[2]["metrics"]["ttft_avg_ms"] == pytest.approx(221.8) and npu[2]["metrics"]["tokens_per_s"] == 27.5077
    # NPU/CPU/GPU name backends, not a device: the device is the one chip (its CPU line, its file's name)
    assert {(r["device"]["name"], r["device"]["kind"]) for r in runs} == {("coreultra7 155h", "cpu")}
    # a first column of numbers is never filled down: a blank there is a blank
    text = b"| batch | tok/s |\n|---|---|\n| 1 | 10 |\n|  | 12 |\n| 4 | 30 |\n"
    assert [r["config"].get("batch_size") for r in load(text, "t.md")[0].runs] == [1, None, 4]


def test_run_lines_named_runn_are_repeats_of_one_setup() -> None:
    runs, _, _ = load_fixture(FORMATS / "text_figures" / "local-llm-benchmarks-rx9070xt-llama-server-run-lines.txt")
    assert len(runs) == 3 and len({r["config"].get("tag") for r in runs}) == 1  # run1..run3: repeats
    first = runs[0]["metrics"]
    assert first["prompt_tokens_per_s"] == 58.9 and first["decode_tokens_per_s"] == 4.25
    assert first["output_tokens"] == 700 and first["duration_s"] == 164.51
    assert [r["notes"].split("; ")[-1] for r in runs] == ["repeat run1", "repeat run2", "repeat run3"]


def test_records_of_two_shapes_read_one_model_label_and_a_decode_time_is_no_latency() -> None:
    runs, _, _ = load_fixture(FORMATS / "general_table" / "laperf-report-m4max-records-of-two-shapes.json")
    assert [r["config"]["model"] for r in runs] == ["nomic-ai/modernbert-embed-base", "openai/gpt-oss-20b",
                                                    "gpt-oss:20b", "qwen3-vl-8b-thinking-mlx", "qwen3-vl:8b"]
    assert all(r["device"] is None for r in runs)  # 'mps:0' is a backend
    llm = runs[1]["metrics"]
    assert llm["ttft_p50_ms"] == pytest.approx(883.9) and llm["e2e_latency_p50_ms"] == pytest.approx(1425.3)
    assert "latency_p50_ms" not in llm  # final_p50_tg_s: the time generating after the first token


def test_a_pandas_aggregate_header_and_an_energy_per_thousand_tokens() -> None:
    path = FORMATS / "general_table" / "ecocompute-a800-batch-size-pandas-aggregate-header.csv"
    runs, _, warnings = load_fixture(path)
    assert [r["config"]["batch_size"] for r in runs] == [1, 2, 4, 8, 16, 32, 64]
    first = runs[0]["metrics"]
    assert first["tokens_per_s"] == 18.97 and first["avg_power_w"] == 131.02 and first["j_per_request"] == 1768.3
    assert first["j_per_token"] == pytest.approx(6907.42 / 1000)  # energy_per_1k_tokens_j: never a run's energy
    assert first["j_per_token"] == pytest.approx(131.02 / 18.97, rel=1e-3)  # the file's own power over its rate
    assert any("pandas' aggregate table" in w for w in warnings)
    assert units.header_unit("energy_per_1k_tokens_mj")[1] is None  # a scale this reader has no unit for
    # statistics' words under a header that names its first column are cells of that column, not a header row
    text = b"model,latency_ms,tokens_per_second\nmean,5,100\nmax,9,80\n"
    assert [r["config"]["model"] for r in load(text, "t.csv")[0].runs] == ["mean", "max"]


def test_the_trainers_runtime_is_in_seconds_and_an_audio_clips_duration_is_its_length() -> None:
    path = FORMATS / "hf_trainer" / "mac-ml-speed-test-m3max-distilbert-trainer-metrics-table.csv"
    runs, _, _ = load_fixture(path)
    assert [r["config"]["batch_size"] for r in runs] == [16, 32, 64, 128, 256]  # the FAILED row holds no figure
    assert runs[0]["metrics"]["duration_s"] == pytest.approx(1531.3382) and runs[0]["config"]["mode"] == "train"
    assert runs[0]["metrics"]["throughput_sps"] == pytest.approx(48.977)
    assert measure_field("train_runtime")[0] is None  # alone, with no other Trainer name: no unit stated
    runs, _, warnings = load_fixture(FORMATS / "general_table" / "dawn-whisper-cpp-clips-duration-is-audio.csv")
    assert runs[0]["metrics"]["duration_s"] == pytest.approx(0.4101)  # transcription_time_ms, never the 5 s clip
    assert any("each clip's length" in w for w in warnings)
    text = b"model,duration_sec,energy_j\nbert,5.0,100\n"  # no audio column: a duration is the run's
    assert load(text, "t.csv")[0].runs[0]["metrics"]["duration_s"] == 5.0


def test_a_heading_that_says_the_tables_time_unit_and_tables_of_averages_across_runs() -> None:
    path = FORMATS / "general_table" / "tei-manager-embedding-bench-times-in-ms-heading.md"
    runs, _, warnings = load_fixture(path)
    assert len(runs) == 108  # 54 rows x (CPU, GPU); the two 'avg across all' tables are no runs
    cpu, gpu = runs[0], runs[1]
    assert cpu["metrics"]["latency_avg_ms"] == 2.54 and gpu["metrics"]["latency_p95_ms"] == 2.01
    assert cpu["device"] is None  # the CPU rows did not run on the RTX 4080 SUPER the file names
    assert gpu["device"]["name"] == "NVIDIA GeForce RTX 4080 SUPER"
    assert any("averages across the runs of the other tables" in w for w in warnings)


def test_banners_under_markdown_headings_keep_both_in_the_tag() -> None:
    runs, _, _ = load_fixture(FORMATS / "text_figures" / "llm-format-benchmarker-intel-aipc-banners-under-headings.md")
    tags = [r["config"]["tag"] for r in runs]
    assert tags[:3] == ["Llama 3.2 3B (HuggingFace format on Intel CPU) > Summary",
                        "Llama 3.2 3B (HuggingFace format on Intel GPU - FP16) > Summary",
                        "Llama 3.2 3B (HuggingFace format on Intel GPU - FP16, 20 tokens) > Summary"]
    # 'FP32 Performance: 74.99 tokens/sec' / 'INT8 Performance: 60.08 tokens/sec' under one banner: a setup each
    assert [t.rsplit(", ", 1)[-1] for t in tags[3:]] == ["FP32", "INT8"]
    assert runs[0]["metrics"]["latency_avg_ms"] == 1038.8


def test_a_total_rate_of_a_phase_and_a_streams_setting() -> None:
    runs, _, _ = load_fixture(FORMATS / "general_table" / "llama-benchy-rtx5090-ts-total-by-phase.md")
    assert len(runs) == 18
    assert runs[0]["metrics"]["prompt_tokens_per_s"] == 7761.72 and runs[1]["metrics"]["decode_tokens_per_s"] == 278.09
    runs, _, _ = load_fixture(FORMATS / "general_table" / "thor-mec-trtexec-infstreams-summary.csv")
    assert [r["config"].get("max_concurrency") for r in runs] == [1, 2, 4]  # infStreams: never pooled
    assert runs[0]["metrics"]["throughput_sps"] == 240.953


def test_complementary_columns_glued_rates_an_overhead_and_a_percentile_of_a_rate() -> None:
    runs, _, _ = load_fixture(FORMATS / "general_table" / "qwen-8b-vllm-rtx5090-speed-or-throughput.csv")
    assert [round(r["metrics"]["tokens_per_s"], 2) for r in runs] == [12.53, 371.64, 731.96, 1185.61, 2832.3]
    runs, _, _ = load_fixture(FORMATS / "general_table" / "exl2-speed-data-gentps-overhead.csv")
    assert len(runs) == 32  # one run a row: 'overhead_seconds' is no setup beside 'gen_seconds'
    assert runs[0]["metrics"]["decode_tokens_per_s"] > 0 and runs[0]["metrics"]["prompt_tokens_per_s"] > 0
    assert measure_field("P95 TPS")[0] is None and measure_field("P40 (TPS)")[0] is not None  # a Tesla P40


def test_a_first_record_that_is_a_note_and_snapshots_that_are_no_setups() -> None:
    runs, _, _ = load_fixture(FORMATS / "general_table" / "mcufit-bench-jsonl-note-first.jsonl")
    assert runs and all("kernels" in r["config"]["tag"] for r in runs)  # optimized vs reference kernels
    assert not any("min_us" in r["config"]["tag"] for r in runs)  # a figure, never a setting
    runs, _, _ = load_fixture(FORMATS / "general_table" / "i3s-llm-benchmark-gpu-snapshots.csv")
    assert all(r["config"]["tag"].startswith("model_alias ") and "," not in r["config"]["tag"] for r in runs)


def test_a_legend_above_a_table_without_outer_pipes() -> None:
    runs, _, warnings = load_fixture(FORMATS / "general_table" / "ml-gfx906-vllm-readme-legend-no-outer-pipes.md")
    assert runs and runs[0]["metrics"]["tokens_per_s"] == 19.11  # 'TG', defined above as output tokens/s
    assert any("Output token throughput (tok/s) read as tokens_per_s" in w for w in warnings)
    # a legend that states no unit changes nothing: its column stays as named
    text = b"# t\n\n- `A` - the first column\n\n| A | latency_ms |\n|---|---|\n| x | 5 |\n| y | 6 |\n"
    imported = load(text, "t.md")[0]
    assert [r["metrics"]["latency_avg_ms"] for r in imported.runs] == [5, 6]
    assert not any("the first column" in w for w in imported.warnings)


def test_a_quantity_over_its_unit_and_a_clock_sweep() -> None:
    runs, _, _ = load_fixture(FORMATS / "general_table" / "dlbench-dvfs-titanx-googlenet-time-s-power-w.csv")
    assert len(runs) == 20 and len({r["config"]["tag"] for r in runs}) == 20  # each clock pair its own setup
    assert runs[0]["config"]["tag"] == "coreF 1700, memF 3500"
    assert runs[0]["metrics"]["avg_power_w"] == pytest.approx(193.86630892143808)
    assert units.header_unit("time/s")[1] == units.UNITS["s"] and units.header_unit("W/GPU")[1] is None


def test_numbered_scopes_of_a_report_tell_runs_apart() -> None:
    runs, _, _ = load_fixture(FORMATS / "text_figures" / "ollama-streaming-report-level-scopes.txt")
    assert [r["config"].get("tag") for r in runs][1:] == ["Level 50", "Level 150"]
    assert runs[1]["metrics"]["ttft_p95_ms"] == pytest.approx(1104788.0)
    assert "tokens_per_s" not in runs[1]["metrics"]  # a P95 of TPS is no rate


def test_a_row_per_iteration_or_frame_is_one_run() -> None:
    runs, _, warnings = load_fixture(FORMATS / "general_table" / "nyu25-t4-resnet50-train-iterations.csv")
    assert len(runs) == 1 and runs[0]["config"]["batch_size"] == 64  # 100 iterations of one run (100 runs before)
    assert any("iter_idxs of one run" in w for w in warnings)
    runs, _, warnings = load_fixture(FORMATS / "general_table" / "yolo-tensorrt-bench-per-frame-with-avg-row.csv")
    assert len(runs) == 1 and runs[0]["metrics"]["latency_avg_ms"] < 10  # the cold 1,110 ms first frame left out
    assert any("'avg': their summary" in w for w in warnings)
    # four frames are too few to be one run's; a counter that falls starts another run
    assert len(load(b"frame,latency_ms\n1,5\n2,6\n3,5\n4,6\n", "f.csv")[0].runs) == 4
    rows = "".join(f"{i % 6},{10 + i}\n" for i in range(12))
    assert [r["metrics"]["latency_avg_ms"] for r in load(f"step,latency_ms\n{rows}".encode(), "s.csv")[0].runs] == [
        13, 19]


def test_swept_levels_are_setups_snapshots_and_costs_are_not() -> None:
    runs, _, _ = load_fixture(FORMATS / "general_table" / "khadas-rknn-yolov8n-cpu-load-sweep.csv")
    assert len({r["config"]["tag"] for r in runs}) == 5  # five load levels of ten trials each
    runs, _, _ = load_fixture(FORMATS / "general_table" / "mixed-workload-ollama-sweep-ratios.csv")
    assert runs[0]["config"]["tag"] == "policy fifo, streaming_ratio 0.9"
    assert runs[0]["metrics"]["requests_per_s"] == pytest.approx(0.40761177190501946)  # 'throughput_rps'
    runs, _, _ = load_fixture(FORMATS / "general_table" / "openvino-yolo-benchmark-platform-string.json")
    assert all(r["device"] is None for r in runs)  # 'Darwin 24.6.0 (x86_64)' is an operating system
    assert measure_field("mask_time_ms")[0] is None and measure_field("Model Info Time (s)")[0] is None


def test_a_heading_that_names_the_figure_of_columns_of_setups_in_a_table_without_its_rule() -> None:
    path = FORMATS / "general_table" / "bentoml-rayserve-loadtest-heading-figure-setup-columns.md"
    runs, _, _ = load_fixture(path)
    assert len(runs) == 24  # 4 concurrencies x 3 frameworks x (throughput, latency)
    first = runs[0]
    assert first["config"]["tag"].endswith(", BentoML") and first["config"]["max_concurrency"] == 10
    assert first["metrics"]["requests_per_s"] == 18.5
    latency = next(r for r in runs if "Latency" in r["config"]["tag"] and r["config"]["tag"].endswith("Ray Serve"))
    assert latency["metrics"]["latency_avg_ms"] == 364.78
    # a heading with no unit names no figure: its table of bare numbers stays unread
    text = b"## Results\n| Concurrency | A | B |\n| 10 | 1.5 | 2.5 |\n| 20 | 3.5 | 4.5 |\n"
    with pytest.raises(Exception, match="no benchmark figures|no column is a figure"):
        load(text, "r.md")
    # columns named by numbers are a setting's levels, read only where the first column names it
    text = b"### Latency p95 (seconds)\n\n| framework \\\\ concurrency | 1 | 8 |\n|---|---|---|\n| hf | 4.4 | 22.4 |\n"
    runs = load(text, "m.md")[0].runs
    assert [(r["config"]["engine"], r["config"]["tag"].split(", ")[-1], r["metrics"]["latency_p95_ms"]) for r in runs] \
        == [("hf", "concurrency 1 Latency p95", 4400.0), ("hf", "concurrency 8 Latency p95", 22400.0)]
    with pytest.raises(Exception, match="no benchmark figures|no column is a figure"):
        load(text.replace(b"framework \\\\ concurrency", b"framework"), "n.md")


def test_a_matrix_of_frameworks_by_concurrency_under_a_heading_with_its_unit() -> None:
    path = FORMATS / "general_table" / "whisper-serving-decision-matrix-framework-by-concurrency.md"
    runs, _, _ = load_fixture(path)
    assert len(runs) == 24  # (3 + 5 + 5) levels on the A100 and 11 on the L4; RTF and WER have no unit: not read
    a100 = [r for r in runs if r["device"]["name"] == "NVIDIA A100-SXM4-80GB" and r["config"]["engine"] == "vllm"]
    assert [r["metrics"]["latency_p95_ms"] for r in a100] == [897.0, 4614.0, 6985.0, 11387.0, 15043.0]
