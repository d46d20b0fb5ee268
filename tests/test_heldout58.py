"""Result files found by held-out sets 57 to 59 (counted unaided before they were added: tests/fixtures/formats/
SOURCES.md), each with what it was read as before and a case that must stay as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import load
from joulebench.errors import NothingToImportError
from tests.helpers import load_fixture

HELD56 = Path(__file__).parent / "fixtures" / "formats" / "heldout56_57"


def test_a_rate_per_gpu_is_the_runs_times_its_gpu_count_and_a_heading_names_the_model() -> None:
    runs, fmt, warnings = load_fixture(HELD56 / "xtuner-megatron-moe-training-per-gpu-rate-no-outer-pipes.md")
    assert fmt == "general-table" and len(runs) == 25  # was refused: 'Tokens/GPU/Second' read as no unit
    first = runs[0]
    assert first["device"]["name"] == "H800"  # 'Environment: H800 256 cards'
    assert first["config"]["mode"] == "train" and first["config"]["gpu_count"] == 256  # 'GPUNum'
    assert first["config"]["model"] == "Qwen3-235B-A22B"  # the heading above the tables
    m = first["metrics"]
    assert m["tokens_per_s"] == pytest.approx(1461.56 * 256)  # each GPU's rate x the GPUs: 4096 x 2048 / 22.42 s
    assert m["tokens_per_s"] == pytest.approx(4096 * 2048 / 22.42, rel=1e-4)
    assert m["latency_avg_ms"] == pytest.approx(22420)  # 'TimePerIter (s)': one step's time
    assert "prompt_tokens_per_s" not in m  # 'pp32' is the pipeline's degree, no prompt-processing phase
    assert first["notes"] == "general table line 81"  # the text's own line: no Markdown heading read as a CSV preamble
    assert any("read as the model of its rows" in w for w in warnings)
    # without a GPU count, each GPU's rate is no run's rate: not stored, said
    lone = "| Setup | Tokens/s per GPU |\n|---|---|\n| a | 100 |\n| b | 120 |\n"
    with pytest.raises(Exception, match="no figure in any row"):
        load(lone.encode(), "per_gpu.md")
    both = "| Setup | GPUs | Tokens/s per GPU | Output tokens/s |\n|---|---|---|---|\n| a | 2 | 100 | 210 |\n"
    imported, _ = load(both.encode(), "both.md")
    assert imported.runs[0]["metrics"]["tokens_per_s"] == 210  # the system's own rate is read before each GPU's


HELD58 = HELD56.parent / "heldout58_65"


def test_llama_bench_tables_under_headings_are_setups_of_their_own() -> None:
    runs, fmt, _ = load_fixture(HELD56.parent / "llama_bench" / "rx7900xtx-vulkan_benchmark_20251211_143639.txt")
    assert fmt == "llama-bench" and len(runs) == 6
    tg = [r for r in runs if "tokens_per_s" in r["metrics"]]
    # GPU 0 alone and GPU 1 alone were one configuration (their tags equal): now the heading tells them apart
    assert len({r["config"]["tag"] for r in tg}) == 3
    assert [r["metrics"]["tokens_per_s"] for r in tg] == [150.97, 172.86, 129.80]
    assert [r["config"]["gpu_count"] for r in tg] == [1, 1, 2]  # 'Found 2 Vulkan devices' above the dual table
    assert "GPU 1 ONLY" in tg[1]["config"]["tag"]


def test_serving_blocks_under_different_headings_are_tagged_by_them() -> None:
    runs, fmt, _ = load_fixture(HELD58 / "sglang-bench-serving-glm51-three-setups-under-headings.md")
    assert fmt == "serving-report"
    assert [r["config"]["tag"] for r in runs] == ["concurrency 512, FP8 (2-Node Setup)",
                                                   "concurrency 512, NVFP4 (1-Node Setup)",
                                                   "concurrency 512, NVFP4 (2-Node Setup)"]  # were 'report line N'
    assert runs[0]["metrics"]["tokens_per_s"] == 2785.55


def test_aiperf_json_with_its_metrics_under_records() -> None:
    runs, fmt, _ = load_fixture(HELD56.parent / "genai_perf" / "aiperf-profile-export-records-gptoss20b.json")
    assert fmt == "genai-perf" and len(runs) == 1  # was refused as a JSON object nesting two sets of records
    m = runs[0]["metrics"]
    assert m["ttft_avg_ms"] == pytest.approx(2343.219436988764)  # AIPerf's tag 'ttft'
    assert m["tpot_avg_ms"] == pytest.approx(27.763065454471807)  # its inter_token_latency: vLLM's TPOT
    assert m["tokens_per_s"] == pytest.approx(2320.7222350404572)
    assert (m["requests_completed"], m["requests_failed"]) == (89, 11)


def test_a_box_drawn_console_table_of_statistics() -> None:
    runs, fmt, _ = load_fixture(HELD58 / "genai-perf-console-box-table-readme-rtx5060ti.md")
    assert fmt == "general-table" and len(runs) == 1  # was refused: rich's box table was no table
    run = runs[0]
    assert run["device"]["name"] == "RTX 5060 Ti 16GB"  # the heading above the table
    m = run["metrics"]
    assert (m["e2e_latency_avg_ms"], m["e2e_latency_p99_ms"]) == (11527.18, 15705.92)
    assert m["tokens_per_s"] == 1745.56 and m["requests_per_s"] == 1.73  # 'N/A' statistics left out, not rates
    assert m["output_tokens_mean"] == 1006.87 and "output_tokens" not in m  # a p99 of lengths is no count
    grid = ("+------+--------------+\n| name | latency (ms) |\n+======+==============+\n| a    | 5            |\n"
            "+------+--------------+\n")
    assert load(grid.encode(), "grid.txt")[0].runs[0]["metrics"]["latency_avg_ms"] == 5  # tabulate's grid


def test_a_json_of_temperature_dicts_is_one_run_and_a_variant_column_the_quantization() -> None:
    runs, fmt, _ = load_fixture(HELD58 / "edge-ai-benchmark-jetson-ort-trt-int8-thermal-dicts.json")
    assert fmt == "general-table" and len(runs) == 1  # was refused: the two temperature dicts as two record sets
    run = runs[0]
    assert run["config"]["quantization"] == "int8"  # 'variant': int8 beside the input's dtype float32
    m = run["metrics"]
    assert m["latency_p50_ms"] == pytest.approx(2.4508615) and m["throughput_sps"] == pytest.approx(390.2272698)
    assert m["energy_j"] == pytest.approx(42.02002509) and m["duration_s"] == pytest.approx(5.3101206)


def test_tensorrt_7_implicit_batch_sweep_counts_samples_in_its_qps() -> None:
    runs, fmt, _ = load_fixture(HELD56.parent / "trtexec" / "trtexec-trt7-implicit-batch-sweep-resnet50-int8.txt")
    assert fmt == "trtexec" and len(runs) == 7  # was refused: no '=== Performance summary ==='
    assert [r["config"]["batch_size"] for r in runs] == [1, 4, 8, 16, 32, 64, 128]
    b64 = runs[5]["metrics"]
    assert b64["throughput_sps"] == 848.189  # qps as printed: 64 samples a query already counted
    assert b64["latency_avg_ms"] == 75.4019  # 'Host Latency' mean: one query of 64
    assert b64["throughput_sps"] == pytest.approx(64 / b64["latency_avg_ms"] * 1000, rel=0.02)  # serial queries
    assert b64["examples"] == 2688  # 'Timing trace has 2688 queries': samples


def test_appended_exported_traces_are_a_run_each() -> None:
    one = (HELD56.parent / "trtexec" / "edge-vision-alexnet_fp16.timing.json").read_text()
    imported, fmt = load((one + "\n" + one).encode(), "times_all.json")
    assert fmt == "trtexec-times" and [r["config"]["tag"] for r in imported.runs] == ["trace 1 of 2", "trace 2 of 2"]
    with pytest.raises(Exception, match="not a JSON array"):
        load((one + "\n{oops").encode(), "times_all.json")


def test_a_durations_median_over_repeats_is_no_latency_and_a_title_names_the_device() -> None:
    runs, _, _ = load_fixture(HELD58 / "rk3588-motion-aggregate-duration-median.csv")
    assert all("latency_p50_ms" not in r["metrics"] for r in runs)  # was 20 s read as a latency
    assert runs[0]["metrics"]["duration_s"] == pytest.approx(20.063805023666646)
    runs, _, _ = load_fixture(HELD58 / "rk3588-yolo-summary-device-in-title-zh.md")
    assert {r["device"]["name"] for r in runs} == {"RK3588"}  # '# RK3588 YOLO 性能与精度摘要'
    two = "# A100 vs H100\n\n| model | TTFT (ms) |\n|---|---|\n| m | 10 |\n"
    assert load(two.encode(), "r.md")[0].runs[0].get("device") is None  # a title naming two: none of them


def test_an_html_table_with_spans_is_read_as_the_grid_it_draws() -> None:
    runs, fmt, _ = load_fixture(HELD56.parent / "heldout53_55" / "nanosam-readme-html-table-rowspan-colspan-orin-ms.md")
    assert fmt == "general-table"  # was refused: an HTML table was no table
    got = {(r["config"]["model"], r["device"]["name"]): r["metrics"]["latency_avg_ms"] for r in runs}
    assert got == {("MobileSAM", "Jetson Orin Nano"): 146.0, ("MobileSAM", "Jetson AGX Orin"): 39.0,
                   ("NanoSAM (ResNet18)", "Jetson Orin Nano"): 27.0, ("NanoSAM (ResNet18)", "Jetson AGX Orin"): 8.1}
    nested = "<table><tr><th>a</th><th>latency (ms)</th></tr><tr><td><table><tr><td>x</td></tr></table></td>" \
             "<td>5</td></tr></table>\n"
    with pytest.raises(NothingToImportError):  # a table in a cell: left as written, never guessed into a grid
        load(nested.encode(), "nested.md")


def test_prompt_eval_speed_is_the_prompts_rate_and_an_arc_graphics_device_a_gpu() -> None:
    runs, _, _ = load_fixture(HELD58 / "executorch-vs-llamacpp-galaxy-a25-prompt-eval-speed.md")
    first = runs[0]["metrics"]  # ExecuTorch: 'Prompt Eval Speed' 7.14, 'Generation Speed' 5.31 (was both decode)
    assert (first["prompt_tokens_per_s"], first["decode_tokens_per_s"]) == (7.14, 5.31)
    assert len(runs) == 8
    runs, fmt, _ = load_fixture(HELD56.parent / "benchncnn" / "benchncnn-intel-arc-b580-vulkan.log")
    assert fmt == "benchncnn" and runs[0]["device"] == {"name": "Intel(R) Arc(tm) B580 Graphics (BMG G21)",
                                                       "kind": "gpu"}  # was kind 'cpu' for 'Intel(R)'


def test_a_two_level_pipe_header_is_a_setup_per_group_and_a_config_line_names_the_device() -> None:
    runs, _, _ = load_fixture(HELD56.parent / "heldout53_55" / "modelopt-benchmark-two-level-header-config-lines.md")
    ptq = [r for r in runs if "tokens_per_s" in r["metrics"]]
    assert len(ptq) == 24  # 6 rows x 4 precision groups (was 6 runs of the BF16 column alone)
    got = {(r["config"]["model"], r["config"]["batch_size"], r["config"]["tag"].rsplit(", ", 1)[-1]):
           r["metrics"]["tokens_per_s"] for r in ptq}
    assert got[("Llama3.1-8B", 8, "FP8 (TP1)")] == 1051.17 and got[("Llama3.1-8B", 1, "W4A8 AWQ (TP1)")] == 239.70
    assert {r["device"]["name"] for r in ptq} == {"H200"}  # 'Config: H200, nvidia-modelopt v0.21.1, ...'
    assert {r["config"]["mode"] for r in ptq} == {"infer"}  # 'Post-training quantization' is no training
    sd = [r for r in runs if "latency_avg_ms" in r["metrics"]]  # the other table's GPU column and its setups
    assert {(r["device"]["name"], r["config"]["tag"].rsplit(", ", 1)[-1]) for r in sd} >= {("RTX 4090", "INT8"),
                                                                                        ("L40S", "FP8")}


def test_a_clock_column_is_no_duration_and_a_cpu_backend_is_where_a_phone_ran() -> None:
    runs, _, warnings = load_fixture(HELD58 / "llama-bench-loop-elapsed-clock-m1pro.csv")
    assert len(runs) == 81 and all("duration_s" not in r["metrics"] for r in runs)  # was 5 s, 8 s, ... as durations
    assert any("time since the start" in w for w in warnings)
    runs, _, _ = load_fixture(HELD58 / "llamacpp-pixel6a-backend-cpu.jsonl")
    assert runs[0]["device"] == {"name": "Pixel6a", "kind": "cpu"}  # was kind 'gpu' with 'CPU' as the engine
    assert "engine" not in runs[0]["config"]


def test_runs_named_in_a_file_column_and_bit_widths_are_setups_never_repeats() -> None:
    runs, _, _ = load_fixture(HELD58 / "guidellm-summary-source-file-rate-profiles.csv")
    assert len({r["config"]["tag"] for r in runs}) == 16  # the sweep's constant rates were pooled as repeats
    runs, _, _ = load_fixture(HELD56 / "gpt-fast-readme-technique-bit-widths.md")
    first = [r for r in runs if r["config"]["model"] == "Llama-2-7B" and r["config"]["tag"].startswith(
        "Benchmarks, Technique")]  # the first table's (the AMD table's tag names its heading too)
    assert [(r["config"]["tag"].rsplit("Technique ", 1)[-1], r["metrics"]["tokens_per_s"]) for r in first] == [
        ("Base", 104.9), ("8-bit", 155.58), ("4-bit (G=32)", 196.8)]  # were one setup's three repeats


def test_a_precision_score_is_no_quantization_and_steps_per_second_are_iterations() -> None:
    runs, _, _ = load_fixture(HELD58 / "jetson-seg-bench-precision-score-column.csv")
    assert all("quantization" not in r["config"] for r in runs)  # was '0.7667', a detector's precision score
    assert runs[0]["metrics"]["j_per_sample"] == 0.1102 and runs[0]["metrics"]["avg_power_w"] == 4.42
    runs, _, _ = load_fixture(HELD58 / "gpt-nano-steps-per-s-time-budgets.jsonl")
    assert len(runs) == 48 and runs[0]["metrics"]["iterations_per_s"] == 12.33  # was refused: no unit read
    assert len({r["config"]["tag"] for r in runs}) == 48  # each variant's four time budgets are four setups
    assert "budget_s 10.0" in runs[0]["config"]["tag"]


def test_amds_laptop_gpus_are_known_by_name() -> None:
    from importers.device_text import device_named
    assert device_named("GPU: AMD Radeon 8060S Graphics") == "AMD Radeon 8060S"  # a Strix Halo's GPU (set 63)
    assert device_named("Radeon 780M iGPU") == "Radeon 780M"
    assert device_named("Ryzen AI Max 395") == "Ryzen AI Max 395"  # the CPU's name names no GPU, but the CPU
    assert device_named("Ryzen AI Max+ 395 with Radeon 8060S") == "Radeon 8060S"  # beside a GPU, the CPU is the host


def test_records_holding_a_member_per_backend_are_a_run_per_member() -> None:
    runs, _, warnings = load_fixture(HELD58 / "vitpose-batch-matrix-members-per-backend.json")
    assert len(runs) == 15  # 5 batch sizes x 3 backends (was refused: no figure at the records' own level)
    got = {(r["config"]["batch_size"], r["config"]["engine"]): r["metrics"]["latency_avg_ms"] for r in runs}
    assert got[(1, "tensorrt")] == pytest.approx(5.061435988172889)  # never PyTorch's 21.09 ms standing for it
    assert got[(1, "pytorch")] == pytest.approx(21.094272411428392)
    assert any("read as a run each" in w for w in warnings)


def test_unclosed_html_tables_leave_the_text_as_written() -> None:
    from importers.table_html import html_tables
    hostile = "<table>" * 10_000 + "\n| a | latency (ms) |\n|---|---|\n| x | 5 |\n"
    assert html_tables(hostile) == hostile  # one pass forward: an unclosed '<table' ends the search
    assert load(hostile.encode(), "r.md")[0].runs[0]["metrics"]["latency_avg_ms"] == 5  # the pipe table still read
