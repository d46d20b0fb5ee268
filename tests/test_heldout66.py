"""Result files found by held-out sets 66 to 70 (counted unaided before they were added: tests/fixtures/formats/
SOURCES.md), each with what it was read as before and a case that must stay as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from importers import load
from importers.device_text import counted_device, device_named
from importers.table_fields import measure_field
from importers.table_labels import label_field
from joulebench import units
from joulebench.errors import ResultFileError
from tests.helpers import load_fixture, runs_or_refusal

FORMATS = Path(__file__).parent / "fixtures" / "formats"
HELD = FORMATS / "heldout66_70"
GENAI_BENCH = FORMATS / "genai_bench" / "D100_100_text-to-text_num_concurrency_1_time_120s.json"


def test_genai_bench_keeps_every_request_and_checks_the_rate() -> None:
    runs, fmt, warnings = load_fixture(GENAI_BENCH)
    assert fmt == "genai-bench" and len(runs) == 1  # was refused: no reader knew genai-bench's run file
    run = runs[0]
    doc = json.loads(GENAI_BENCH.read_text())
    agg = doc["aggregated_metrics"]
    config, m = run["config"], run["metrics"]
    assert (config["load_kind"], config["max_concurrency"]) == ("concurrency", 1)
    assert (config["prompt_tokens_requested"], config["output_tokens_requested"]) == (100, 100)  # 'D(100,100)'
    assert config["length_distribution"] == "fixed"
    assert m["tokens_per_s"] == pytest.approx(agg["mean_output_throughput_tokens_per_s"])
    assert m["requests_per_s"] == pytest.approx(10 / agg["run_duration"])  # completed / duration, checked
    assert len(run["requests"]) == 10 and all(r["status"] == "ok" for r in run["requests"])
    # the figures are the requests': TTFT in s in the file, ms here, the same median as genai-bench's own
    assert m["ttft_p50_ms"] == pytest.approx(agg["stats"]["ttft"]["p50"] * 1e3)
    assert m["tpot_avg_ms"] == pytest.approx(agg["stats"]["tpot"]["mean"] * 1e3, rel=1e-3)
    assert "disagrees" not in run["notes"]
    assert run["device"] is None and any("experiment_metadata.json" in w for w in warnings)  # asked, never guessed
    assert "energy_j" not in m and m["energy_missing_reason"] == "genai-bench does not measure energy"
    # a summary that counts other requests than it holds is refused, naming the field
    bad = {**doc, "aggregated_metrics": {**agg, "num_requests": 11}}
    with pytest.raises(ResultFileError, match="num_requests"):
        load(json.dumps(bad).encode(), GENAI_BENCH.name)
    # milliseconds where the file says so
    ms = json.loads(GENAI_BENCH.read_text())
    ms["_time_unit"] = "ms"
    for r in ms["individual_request_metrics"]:
        r["ttft"], r["e2e_latency"] = r["ttft"] * 1e3, r["e2e_latency"] * 1e3
    imported, _ = load(json.dumps(ms).encode(), GENAI_BENCH.name)
    assert imported.runs[0]["metrics"]["ttft_p50_ms"] == pytest.approx(m["ttft_p50_ms"])


def test_two_lists_of_records_are_two_sweeps_and_a_counted_device_with_its_parallelism() -> None:
    runs, fmt, _ = load_fixture(HELD / "sglang-sweeps-two-lists-2x-r9700.json", "results.json")
    assert fmt == "general-table" and len(runs) == 17  # was refused: two lists of records, neither taken
    assert {r["device"]["name"] for r in runs} == {"R9700"}  # '2x R9700 TP=2': two of the Radeon AI PRO R9700
    assert {r["config"]["gpu_count"] for r in runs} == {2}
    assert counted_device("2x DGX Spark") == (2, "DGX Spark") and device_named("NVIDIA GB10") == "NVIDIA GB10"
    first = runs[0]
    assert first["config"]["prompt_tokens_requested"] == 64 and first["metrics"]["tpot_avg_ms"] == 36.04


def test_statistics_over_repeats_failed_prompts_and_the_gpu_column_of_several() -> None:
    runs, fmt, warnings = load_fixture(HELD / "autoprompter-stats-mean-median-over-repeats.csv")
    assert fmt == "general-table" and len(runs) == 14  # was refused: a mean beside a median read as no figure
    assert {r["device"]["name"] for r in runs} == {"RTX 5060ti"}  # hardware_gpu, not hardware_model 'GTi15'
    assert runs[0]["config"]["prompt_tokens_requested"] == 1214  # each prompt its own length: its own run
    assert runs[0]["metrics"]["tokens_per_s"] == pytest.approx(38.20132113081405)  # the mean over 5 iterations
    assert sum("successful_runs is '0'" in w for w in warnings) == 2  # zeros of a failed prompt are no figures
    assert all(r["metrics"]["tokens_per_s"] > 0 for r in runs)


def test_figures_written_column_by_column_are_a_record_per_setup() -> None:
    runs, fmt, _ = load_fixture(HELD / "flex-sdpa-results-column-by-column.json")
    assert fmt == "general-table" and len(runs) == 2  # was refused
    by_setup = {r["config"]["tag"].split(",")[0]: r for r in runs}
    assert by_setup["setup sdpa"]["metrics"]["latency_avg_ms"] == pytest.approx(4.409385070800782)  # ms_per_iter
    assert by_setup["setup flex"]["metrics"]["tokens_per_s"] == pytest.approx(390618.9788740879)
    assert runs[0]["config"]["batch_size"] == 8 and runs[0]["config"]["precision"] == "bf16"  # the object's args
    # one record's figures nested by name are not columns: {"latency_ms": {"p50": .., "p99": ..}} stays one run
    one = runs_or_refusal(b'{"latency_ms": {"p50": 1.0, "p99": 2.0}, "fps": {"p50": 10.0, "p99": 9.0}}', "one.json")
    assert len(one) <= 1


def test_spaced_units_a_systems_gpus_and_a_model_said_in_a_heading() -> None:
    runs, fmt, warnings = load_fixture(HELD / "megatron-bridge-performance-summary-spaced-units.md",
                                       "performance-summary.md")
    assert fmt == "general-table" and len(runs) == 18  # was refused: 'Tokens / sec / GPU' read as no unit
    first = runs[0]
    assert first["device"]["name"] == "GB300"  # the System column's 'DGX-GB300': its GPUs
    assert first["config"]["gpu_count"] == 256  # '#-GPUs', not TP's 1
    assert first["config"]["model"] == "DeepSeekV3" and first["config"]["mode"] == "train"  # headings above
    assert first["metrics"]["tokens_per_s"] == 6288 * 256  # each GPU's rate times the GPUs
    assert any("'Model: ...'" in w for w in warnings)
    assert measure_field("Energy / token (J)")[0].key == "j_per_token"  # was energy_j: the spaced slash
    assert units.header_unit("Tokens / sec")[1] is not None
    assert label_field("#-GPUs").key == "gpu_count"
    # a System column of names JouleBench does not know as devices names no device ('QUIET', 'Linux')
    table = "| System | latency (ms) |\n|---|---|\n| QUIET | 4 |\n| LOADED | 9 |\n"
    assert all(r["device"] is None for r in runs_or_refusal(table.encode(), "systems.md"))


def test_a_table_without_outer_bars_under_a_psql_rule() -> None:
    runs, fmt, _ = load_fixture(HELD / "trtutils-overview-table-no-outer-bars.md", "OVERVIEW_TABLE.md")
    assert fmt == "general-table" and len(runs) == 160  # was refused
    first = runs[0]
    assert first["device"]["name"] == "OrinAGX" and first["config"]["image_size"] == 160
    assert first["metrics"]["latency_avg_ms"] == 3.0 and first["metrics"]["latency_p50_ms"] == 3.0
    gfm = "intro\n\nmodel | tok/s\n--- | ---\nllama | 12.5\nqwen | 14\n"
    assert [r["metrics"]["tokens_per_s"] for r in runs_or_refusal(gfm.encode(), "t.md")] == [12.5, 14]


def test_a_time_per_document_and_documents_per_second() -> None:
    runs, fmt, _ = load_fixture(HELD / "rkllm-rerank-log-ms-per-doc.txt", "log.txt")
    assert fmt == "text-figures" and len(runs) == 1  # was refused: 'ms/doc' and 'docs/sec' were no units
    m = runs[0]["metrics"]
    assert (m["latency_avg_ms"], m["throughput_sps"], m["duration_s"]) == (198.3, 5.03, 1.987)
    for header in ("ms_per_iter", "s/it", "time per step (ms)", "sec_per_batch"):
        assert measure_field(header)[0].key == "latency_avg_ms", header  # one step's time, never the run's
    assert measure_field("total time (s)")[0].key == "duration_s"


TORCHTITAN_LINE = ("step: {step:2}  loss: 10.5  grad_norm:  1.0  memory: 30.00GiB(37.50%)  tps: {tps}  tflops: 10.00  "
                   "mfu: 5.00%")


def test_a_torchtitan_log_is_each_devices_rate_times_the_world_size() -> None:
    runs, fmt, _ = load_fixture(HELD / "torchtitan-aurora-xpu-log-in-markdown.md", "aurora.md")
    assert fmt == "torchtitan" and len(runs) == 1  # was refused: its step lines split by spaces, 'tps: 6,697'
    run = runs[0]
    assert run["config"]["mode"] == "train" and run["config"]["gpu_count"] == 24  # 'world_size=24'
    assert run["device"]["name"] == "Data Center GPU Max 1550"  # 'XPU capacity: Intel(R) Data Center GPU Max 1550'
    assert run["metrics"]["tokens_per_s"] == 6633 * 24  # the median tps after the warm-up step, x every rank
    assert run["metrics"]["mem_used_device_mb"] == pytest.approx(8.44 * 1073.741824)
    steps = "\n".join(TORCHTITAN_LINE.format(step=s, tps=f"{t:,}") for s, t in ((1, 12), (2, 1200), (3, 1300),
                                                                                (1, 15), (2, 2000), (3, 2100)))
    # no world size in the log: each device's rate is no run's rate, so none is stored, and two runs (step 1 again)
    alone, _ = load(steps.encode(), "train.log")
    assert len(alone.runs) == 2 and all("tokens_per_s" not in r["metrics"] for r in alone.runs)
    assert any("not stored" in w for w in alone.warnings)
    meshed, _ = load(("Building 2-D device mesh with ['dp_shard', 'tp'], [4, 2]\n" + steps).encode(), "train.log")
    assert [r["metrics"]["tokens_per_s"] for r in meshed.runs] == [1250 * 8, 2050 * 8]
    # a log of one logged step is its warm-up only: refused, saying so
    with pytest.raises(ResultFileError, match="warm-up"):
        load(("world_size=8\n" + TORCHTITAN_LINE.format(step=1, tps=10) + "\n" + TORCHTITAN_LINE.format(
            step=1, tps=10)).encode(), "train.log")


def test_a_ratio_row_is_no_figure_and_a_column_of_names_with_numbers_tells_rows_apart() -> None:
    runs, fmt, warnings = load_fixture(HELD / "nnvc-energy-table-ratio-row.md", "table2.md")
    assert fmt == "general-table" and len(runs) == 5  # was refused: '5.23×' is no number
    assert any("'5.23×' is a ratio" in w for w in warnings)
    tags = [r["config"]["tag"] for r in runs[:2]]
    assert tags[0] != tags[1] and "LOP7 off" in tags[0]  # 'Condition' tells LOP7 off from on: never pooled
    assert units.is_ratio("1.5x") and not units.is_ratio("15 ms") and not units.is_ratio("x86")


def test_a_training_summary_is_training_by_its_optimizer_and_steps() -> None:
    runs, _, _ = load_fixture(HELD / "nanochat-train-summary-optimizer-max-steps.json")
    assert len(runs) == 1 and runs[0]["config"]["mode"] == "train"  # was read as inference
    assert runs[0]["metrics"]["tokens_per_s"] == pytest.approx(54950.47514298097)


def test_tegrastats_parser_current_columns_are_each_rails_power_now() -> None:
    runs, fmt, warnings = load_fixture(HELD / "depth_50W.csv")
    assert fmt == "jtop" and len(runs) == 1  # was refused: 'VDD_GPU_SOC Current (mW)' read as a current
    m = runs[0]["metrics"]
    assert m["energy_boundary"] == "jetson_module" and m["duration_s"] == 265
    assert 20 < m["avg_power_w"] < 30  # the AGX Orin's rails summed (its VDDQ rail left out, said)
    assert any("VDDQ_VDD2_1V8AO is fed from those rails" in w for w in warnings)


def test_a_format_column_names_the_engine_and_a_rate_in_hz() -> None:
    runs, _, _ = load_fixture(HELD / "yolo-benchmark-format-column.json", "benchmark.json")
    assert [r["config"]["engine"] for r in runs] == ["PyTorch", "onnx", "TensorRT"]  # were pooled as one setup
    assert runs[2]["metrics"]["throughput_sps"] == pytest.approx(276.0, rel=1e-2)
    runs, _, _ = load_fixture(HELD / "tinykws-latency-throughput-hz.csv", "latency.csv")
    assert runs[0]["metrics"]["throughput_sps"] == pytest.approx(3269.4, rel=1e-3)  # 'throughput_hz' was unread


def test_a_log_ending_in_its_scripts_json_is_read_as_that_json() -> None:
    runs, fmt, warnings = load_fixture(HELD / "mageflow-install-log-ending-in-json.log", "run.log")
    assert fmt == "general-table" and len(runs) == 5  # was refused as a tqdm log with no workload's bar
    assert any("the JSON document the log ends in (line 196 on)" in w for w in warnings)
    assert runs[0]["config"]["model"] == "microsoft/Mage-Flow"
    assert runs[0]["metrics"]["latency_avg_ms"] == pytest.approx(5709.375683999951)
    # a log whose last '{' lines are no JSON document is read as before; a hostile run of them costs 5 parses
    assert runs_or_refusal(("log\n" + "{\n" * 50_000 + "}").encode(), "x.log") == []


def test_nemo_step_times_without_a_summary_give_the_rate_over_the_steady_steps() -> None:
    runs, fmt, _ = load_fixture(HELD / "nemo-dllogger-gpt3-step-timing.json", "dllogger.json")
    assert fmt == "dllogger" and len(runs) == 1  # was a run with no figure at all
    run = runs[0]
    assert run["config"]["mode"] == "train" and run["config"]["seq_len"] == 2048
    assert run["metrics"]["throughput_sps"] == pytest.approx(2048 / 25.38, rel=2e-3)  # the median step, step 1 out
    assert "left out as the warm-up" in run["metrics"]["throughput_derivation"]


def test_nanogpt_step_lines_split_by_bars_with_the_unit_as_the_name() -> None:
    runs, fmt, _ = load_fixture(HELD / "nanogpt-step-lines-pipes-tok-sec.md", "log.md")
    assert fmt == "text-figures" and len(runs) == 1  # was refused: 'tok/sec: 6785.97' had no unit after it
    m = runs[0]["metrics"]
    assert runs[0]["config"]["mode"] == "train"
    assert m["tokens_per_s"] == pytest.approx(6769.16)  # the median step's rate
    assert m["latency_avg_ms"] == pytest.approx(19448.2604)  # 'dt': the mean step time, the warm-up step left out
    # the same lines split by commas in a .log are no CSV table: a line of figures is no header
    lines = "\n".join(f"step {i}, loss: 10.9, time: 250.5 ms, tokens/sec: {5000 + i}" for i in range(0, 60, 10))
    imported, fmt = load(lines.encode(), "train.log")
    assert fmt == "text-figures" and imported.runs[0]["metrics"]["tokens_per_s"] == 5030


def test_sequences_a_second_a_double_dash_and_a_chip_beside_the_platform() -> None:
    runs, _, _ = load_fixture(HELD / "neuron-trn1-training-seq-per-sec.csv", "training_data_encoder.csv")
    assert len(runs) == 3 and runs[0]["metrics"]["throughput_sps"] == pytest.approx(57407.9207)  # 'seq/sec'
    runs, _, _ = load_fixture(HELD / "mlx-lm-system-info-chip.json")
    assert {r["device"]["name"] for r in runs} == {"Apple M3 Ultra"}  # platform 'Darwin' names no device
    runs, _, warnings = load_fixture(HELD / "alcf-testbed-homework-double-dash.md", "homework_7.md")
    assert len(runs) == 3  # was refused: '--' is no number, it states no value


def test_python_datetimes_in_a_power_log_and_a_footnote_mark_on_a_figure() -> None:
    runs, fmt, _ = load_fixture(HELD / "gpu_power.log")
    assert fmt == "nvidia-smi" and runs[0]["metrics"]["energy_j"] > 0  # was refused: '2025-04-15 15:54:33'
    assert units.parse("188*").value == 188 and units.parse("22.1 ms†").unit.symbol == "ms"  # a footnote's mark


def test_openvinos_first_and_second_token_latencies_and_a_token_throughput() -> None:
    runs, _, warnings = load_fixture(HELD / "llm_models_7-268V.csv")
    first = runs[0]
    assert len(runs) == 148  # was 296: the 1st and 2nd latency read as two setups of one figure
    assert first["config"]["model"] == "tiny-llama-1.1b-chat" and first["config"]["prompt_tokens_requested"] == 32
    assert (first["metrics"]["ttft_avg_ms"], first["metrics"]["tpot_avg_ms"]) == (31.7, 9.6)
    assert "image_size" not in first["config"]  # 'Input Size' beside a TTFT is the prompt's tokens
    runs, _, _ = load_fixture(HELD / "fmbench-all-metrics-summary-token-throughput.csv", "all_metrics_summary.csv")
    assert all("output_tokens" not in r["metrics"] for r in runs)  # a throughput of tokens is no count of them
    assert all(r["metrics"]["tokens_per_s"] > 0 for r in runs)
    assert measure_field("output_token_throughput")[0].key == "tokens_per_s"


def test_a_device_named_with_its_count_after_it() -> None:
    text = b"device,duration_s,energy_j\nNVIDIA RTX A6000 1 device(s),10,1000\nNVIDIA RTX A6000 1 device(s),12,1300\n"
    runs = runs_or_refusal(text, "emission.csv")
    assert {r["device"]["name"] for r in runs} == {"NVIDIA RTX A6000"}  # eco2ai's 'NAME N device(s)'


def test_a_side_table_named_by_its_cells_units_and_no_setting_taken_for_a_setup() -> None:
    side = ("| Metric | run A | run B | Δ |\n|---|---|---|---|\n| Latency | 12.5 ms | 11.0 ms | -12% |\n"
            "| Throughput | 80 img/s | 91 img/s | +13% |\n")
    runs = runs_or_refusal(side.encode(), "side.md")
    assert [(r["metrics"]["latency_avg_ms"], r["metrics"]["throughput_sps"]) for r in runs] == [(12.5, 80), (11.0, 91)]
    # a column of batch sizes beside a device's column is no setup of a table on its side: never read as a device
    odd = ("| | Batch Size | ND H200 V5 |\n|---|---|---|\n| Tokens per second | 16 | 647.78 |\n"
           "| Tokens per second | 32 | 861.77 |\n")
    assert all((r.get("device") or {}).get("name") != "Batch Size" for r in runs_or_refusal(odd.encode(), "odd.md"))


def test_a_rate_the_experiment_reader_does_not_know_goes_to_the_general_reader() -> None:
    text = (b"run_index,device,model_name,tok_s_avg,power_avg_w,energy_j\n"
            b"1,jetson_agx_orin,a.gguf,31.36,43.75,1323.0\n2,jetson_agx_orin,b.gguf,98.6,34.2,315.9\n")
    imported, fmt = load(text, "profile.csv")
    assert fmt == "general-table"  # the experiment table's reader stored power and energy and lost the tok/s
    assert [r["metrics"]["tokens_per_s"] for r in imported.runs] == [31.36, 98.6]
    # the fastest or slowest of several machines is a comparison's figure, no run's
    assert measure_field("Fastest gen tok/s")[0] is None
    per_image = "Image_Index,Inference_Time_ms\n" + "\n".join(f"{i},{100 + i % 3}" for i in range(10))
    assert len(runs_or_refusal(per_image.encode(), "per_image.csv")) == 1  # the images of one run


def test_a_rate_unit_after_a_hyphen_and_unpadded_times_of_day() -> None:
    assert measure_field("avg-token/s")[0].key == "tokens_per_s"  # M5Stack's ModuleLLM table
    log = "Date,Time,GPU Power Consumption (W)\n17.4.2025,5:59:59.517,30.0\n17.4.2025,6:0:0.517,31.0\n" \
          "17.4.2025,6:0:1.517,32.0\n"
    runs = runs_or_refusal(log.encode(), "power_log.csv")
    assert len(runs) == 1 and runs[0]["metrics"]["duration_s"] == pytest.approx(2.0)  # HWiNFO's '6:0:0.517'


def test_a_hash_is_no_device_and_a_device_before_its_memory() -> None:
    text = ("device_name,hardware_name,tokens_per_second\n" + "606386391570a84cdd0d0e5868f35b22dba271ba8d7fe65f,"
            "RTX4090,111.9\n" + "7f0c2a9e1b3d4c5e6f708192a3b4c5d6e7f8091a2b3c4d5e,RTX4090,110.2\n")
    assert {r["device"]["name"] for r in runs_or_refusal(text.encode(), "bench.csv")} == {"RTX4090"}
    text = '{"device": "Apple M4, 16GB RAM, Metal", "results": [{"model": "a", "gen_tok_s": 43.8}]}'
    assert [r["device"]["name"] for r in runs_or_refusal(text.encode(), "results.json")] == ["Apple M4"]
    assert measure_field("output_toks_per_s_mean")[0].key == "tokens_per_s"


def test_a_ddp_training_table_with_tokens_a_second_is_training() -> None:
    table = ("kernel,ddp,gpus,epochs,steps_per_epoch,global_batch_size,local_batch_size,wall_sec,tokens_per_sec\n"
             "sdpa,none,1,2,100,8,8,118.5,13214.6\nsdpa,bucketed,2,2,50,16,8,134.6,23278.1\n")
    runs = runs_or_refusal(table.encode(), "ddp_results.csv")
    assert [r["config"]["mode"] for r in runs] == ["train", "train"]  # was inference: tokens/s read as generation
