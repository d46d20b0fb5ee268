"""Issue 39, sixth held-out set (files and attribution in tests/fixtures/formats/SOURCES.md): vLLM results appended
one per line with `--metadata` labels, a JSON wrapper's labels beside its records, mean ± stdev rows beside their
repeats, `T/s` in a README's table, timm's `infer_*` settings. Each rule is checked on the file's own numbers and has
its negative case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from importers import load
from joulebench import units
from tests.helpers import load_fixture as _load
from tests.helpers import refusal

FORMATS = Path(__file__).parent / "fixtures" / "formats"
VLLM_LINES = FORMATS / "vllm_bench" / "vllm-bench-automation-l40s-append-result-metadata.jsonl"
MEAN_ROWS = FORMATS / "general_table" / "llm_rs2-adreno830-prefill-decode-mean-stdev-rows.csv"
WRAPPER = FORMATS / "general_table" / "llm-serving-benchmark-tgi-a10-wrapper-labels.json"
README = FORMATS / "general_table" / "llm-inference-benchmarks-m4-max-lmstudio-README.md"
TIMM = FORMATS / "general_table" / "timm-benchmark-infer-amp-nchw-rtx5090-excerpt.csv"


# 1. vLLM's --append-result: one result per line, its engine from `backend`, --metadata as labels ---------------

def test_vllm_results_appended_line_by_line_keep_their_metadata_apart() -> None:
    runs, fmt, warnings = _load(VLLM_LINES)
    lines = [json.loads(line) for line in VLLM_LINES.read_text().splitlines()]
    assert fmt == "vllm-bench" and len(runs) == len(lines) == 9  # never SGLang's reader: vLLM names its model_id
    for run, line in zip(runs, lines, strict=True):
        assert run["config"]["engine"] == "vllm"  # "backend": "vllm"
        assert run["device"]["name"] == "NVIDIA L40S" and run["config"]["gpu_count"] == 4  # "gpu": "4xNVIDIA_L40S"
        assert run["config"]["prompt_tokens_requested"] == 1000 and run["config"]["output_tokens_requested"] == 500
        assert f"deployment {line['deployment']}" in run["config"]["tag"]
        assert run["metrics"]["tokens_per_s"] == pytest.approx(line["output_throughput"])
        assert run["metrics"]["ttft_avg_ms"] == pytest.approx(line["mean_ttft_ms"])
    # the three deployments at one rate are three configurations, never repeats of one
    at_ten = {r["config"]["tag"] for r in runs if r["config"]["request_rate_per_s"] == 10.0}
    assert len(at_ten) == 3
    assert not any("names neither the GPU" in w for w in warnings)


def test_a_vllm_line_without_metadata_states_no_device_and_an_sglang_line_stays_sglangs() -> None:
    line = json.loads(VLLM_LINES.read_text().splitlines()[0])
    bare = {k: v for k, v in line.items() if k not in ("gpu", "deployment", "gateway", "prefill_replicas",
                                                        "decode_replicas", "input_len", "output_len", "model")}
    imported, fmt = load((json.dumps(bare) + "\n" + json.dumps(bare) + "\n").encode(), "results.jsonl")
    assert fmt == "vllm-bench" and all(r["device"] is None for r in imported.runs)
    assert any("names neither the GPU" in w for w in imported.warnings)
    sglang = {k: v for k, v in bare.items() if k not in ("model_id", "tokenizer_id", "date")}
    sglang["backend"] = "sglang"
    imported, fmt = load((json.dumps(sglang) + "\n").encode(), "sglang.jsonl")
    assert fmt == "sglang-bench" and imported.runs[0]["config"]["engine"] == "sglang"


# 2. a wrapper's labels hold for every record it wraps; its figures never do --------------------------------------

def test_a_wrappers_device_model_and_server_are_each_records() -> None:
    runs, fmt, _ = _load(WRAPPER)
    assert fmt == "general-table" and len(runs) == 5
    assert {r["device"]["name"] for r in runs} == {"NVIDIA A10"}
    assert {r["config"]["model"] for r in runs} == {"Llama-3-8B-Instruct"}
    assert {r["config"]["engine"] for r in runs} == {"TGI"}  # "server" (the first column for the engine)
    first = runs[0]["metrics"]
    assert first["latency_avg_ms"] == pytest.approx(1141.0) and first["tokens_per_s"] == 28.0
    assert first["output_tokens"] == 32


def test_a_wrappers_figure_is_not_given_to_its_records() -> None:
    doc = {"gpu": "NVIDIA A10", "total_duration_s": 100.0,
           "results": [{"latency_ms": 5.0, "tokens_per_second": 10.0}, {"latency_ms": 6.0, "tokens_per_second": 9.0}]}
    imported, _ = load(json.dumps(doc).encode(), "r.json")
    assert all("duration_s" not in r["metrics"] for r in imported.runs)
    assert {r["device"]["name"] for r in imported.runs} == {"NVIDIA A10"}


# 3. mean ± stdev: a cell's mean read, a summary row beside its repeats left out, one without them kept -------------

def test_summary_rows_beside_their_repeats_are_left_out_and_alone_they_are_read() -> None:
    runs, fmt, warnings = _load(MEAN_ROWS)
    assert fmt == "general-table"
    ours = [r for r in runs if r["config"]["engine"] == "llm.rs-gpu"]
    assert len(ours) == 6  # r1-r3 of f16 and q4_0; their two r3_mean_stdev rows are not runs
    assert [r["metrics"]["prompt_tokens_per_s"] for r in ours[:3]] == [127.8, 127.5, 127.9]
    assert ours[0]["metrics"]["decode_tokens_per_s"] == 14.8 and ours[0]["metrics"]["tpot_avg_ms"] == 67.52
    theirs = [r for r in runs if r["config"]["engine"] == "llama.cpp-gpu"]
    assert [r["metrics"]["prompt_tokens_per_s"] for r in theirs] == [202.8, 615.22]  # '202.80±0.82': the mean
    assert any("line 5, 9 left out" in w and "summary of the repeats" in w for w in warnings)


def test_a_spread_after_a_mean_is_not_a_unit() -> None:
    assert units.parse("127.73±0.21") == units.Quantity(127.73, None, "")
    assert units.value_in("5.1 +- 0.3 ms", "s") == pytest.approx(0.0051)
    with pytest.raises(units.UnitError):
        units.parse("3 ± x")  # no number after the sign: not a spread


# 4. 'T/s', tokens in any case; SI prefixes keep their case --------------------------------------------------------

def test_a_readme_table_in_tokens_per_second_written_t_s() -> None:
    runs, fmt, _ = _load(README)
    assert fmt == "general-table" and len(runs) == 40  # the table's 40 rows
    assert runs[0]["metrics"]["tokens_per_s"] == 282.0 and runs[0]["config"]["model"] == "qwen 2.5"
    assert units.header_unit("Speed (T/s)")[1] == units.UNITS["tokens/s"]
    assert units.find_unit("Tokens/s") == units.UNITS["tokens/s"]
    assert units.find_unit("MW") is None and units.find_unit("MS") is None  # not mW, not ms


# 5. timm: the phase's batch and image size are settings; runs at four sizes are four configurations ---------------

def test_timm_infer_settings_are_the_configuration() -> None:
    runs, fmt, _ = _load(TIMM)
    assert fmt == "general-table"
    resnet = [r for r in runs if r["config"]["model"] == "resnet50"]
    assert [r["config"]["image_size"] for r in resnet] == [160, 176, 224, 288]
    assert {r["config"]["batch_size"] for r in resnet} == {1024}
    assert resnet[0]["metrics"]["throughput_sps"] == 11604.38


def test_a_numeric_column_that_tells_rows_apart_joins_the_tag_only_when_whole_and_named_as_a_setting() -> None:
    table = ("model,replicas,gmacs,samples_per_sec\n"
             "a,1,2.1,100\na,2,4.2,180\nb,1,3.3,90\n")
    imported, _ = load(table.encode(), "t.csv")
    assert [r["config"].get("tag") for r in imported.runs] == ["replicas 1", "replicas 2", "replicas 1"]
    fractional = "model,gmacs,samples_per_sec\na,2.1,100\na,4.2,180\n"
    imported, _ = load(fractional.encode(), "t.csv")
    assert all(r["config"].get("tag") is None for r in imported.runs)  # a figure without its unit: no setting


def test_a_table_with_only_a_spread_is_still_refused() -> None:
    assert "holds no benchmark figures" in refusal(b"model,std\na,1\nb,2\n", "t.csv")


# 6. a console log's printed Trainer metrics; a tqdm bar's shown rate is a moving average --------------------------

TRAINER_LOG = FORMATS / "hf_trainer" / "ezpz-polaris-aurora-hf-trainer-comparison.md"
WRAPPED = FORMATS / "llama_bench" / "strix-halo-testing-glm45-air-llm-bench-wrapped-excerpt.jsonl"
QUANTIZED = FORMATS / "general_table" / "benchmarking-energy-llms-llama2-7b-quantization-metrics_output.csv"


def test_the_metrics_a_trainer_printed_are_its_runs_never_its_progress_bars() -> None:
    runs, fmt, warnings = _load(TRAINER_LOG)
    assert fmt == "hf-trainer" and len(runs) == 2  # Aurora (line 289) and Polaris (line 419); the bars are not runs
    aurora, polaris = runs
    assert aurora["metrics"] == {"duration_s": 299.1983, "throughput_sps": 8.021, "iterations_per_s": 0.334}
    assert polaris["metrics"]["throughput_sps"] == 1.958 and polaris["metrics"]["duration_s"] == 408.6051
    assert {r["config"]["mode"] for r in runs} == {"train"}
    assert aurora["config"]["tag"] != polaris["config"]["tag"]  # two machines' runs: never repeats of one
    assert any("printed on line 289, 419" in w for w in warnings)


def test_a_trainer_progress_line_is_not_the_end_of_a_run() -> None:
    log = "{'loss': 2.6, 'train_runtime': 252.0, 'train_tokens_per_second': 78016.9}\n"
    assert "hf-trainer" not in refusal(log.encode(), "train.log")


def test_a_bars_shown_rate_outside_its_mean_is_replaced_by_the_mean() -> None:
    slowed = "100%|##########| 100/100 [04:59<00:00,  2.27s/it]\n"  # shown 0.44 it/s; the mean is 100 / 299 s
    imported, fmt = load(slowed.encode(), "train.log")
    assert fmt == "tqdm"
    assert imported.runs[0]["metrics"]["iterations_per_s"] == pytest.approx(100 / 299.5)
    short = "100%|##########| 50/50 [00:02<00:00, 30.1it/s]\n"  # 2 s in whole seconds: too coarse to check
    assert load(short.encode(), "a.log")[0].runs[0]["metrics"]["iterations_per_s"] == 30.1


# 7. a harness wrapping each of a tool's records: the tool reads them, the harness's own labels stay apart ---------

def test_records_each_nesting_a_llama_bench_record_are_read_by_llama_bench() -> None:
    runs, fmt, warnings = _load(WRAPPED)
    lines = [json.loads(line) for line in WRAPPED.read_text().splitlines()]
    assert fmt == "llama-bench" and len(runs) == len(lines) == 8
    for run, line in zip(runs, lines, strict=True):
        raw = line["bench_raw"]
        if line["mode"] == "pp":  # a prompt rate, never the output rate
            assert run["metrics"]["prompt_tokens_per_s"] == pytest.approx(raw["avg_ts"])
            assert "tokens_per_s" not in run["metrics"]
        else:
            assert run["metrics"]["tokens_per_s"] == pytest.approx(raw["avg_ts"])
        assert f"build {line['build']}" in run["config"]["tag"]  # amdvlk and radv: two drivers, two configurations
        assert "energy_j" not in run["metrics"]  # the harness's power covers its own window, not llama-bench's
    assert len({r["config"]["tag"] for r in runs}) == 8
    assert any("'bench_raw' object read as that tool's own output" in w for w in warnings)


def test_records_nesting_objects_no_tool_reads_stay_with_the_general_reader() -> None:
    lines = [{"gpu": "NVIDIA A10", "latency_ms": 5.0, "extra": {"a": 1}},
             {"gpu": "NVIDIA A10", "latency_ms": 6.0, "extra": {"a": 2}}]
    imported, fmt = load("\n".join(json.dumps(x) for x in lines).encode(), "r.jsonl")
    assert fmt == "general-table" and [r["metrics"]["latency_avg_ms"] for r in imported.runs] == [5.0, 6.0]


# 8. a home-grown table with settings only the general reader reads goes to it: its configurations kept apart ------

def test_quantization_and_lengths_keep_a_home_grown_tables_configurations_apart() -> None:
    runs, fmt, _ = _load(QUANTIZED)
    assert fmt == "general-table" and len(runs) == 14
    first = runs[0]
    # fp16 in a 'quantization' column is the precision (no quantization); int8 / int4 stay the quantization
    assert first["config"]["precision"] == "fp16" and "quantization" not in first["config"]
    assert first["config"]["prompt_tokens_requested"] == 4096
    assert first["metrics"]["energy_j"] == pytest.approx(5001.76) and first["metrics"]["output_tokens"] == 4096
    assert first["metrics"]["j_per_token"] == pytest.approx(1.2211, abs=1e-4)  # the file's Energy_per_OutputToken
    setups = {(r["config"].get("quantization") or r["config"].get("precision"), r["config"]["prompt_tokens_requested"],
               r["config"]["tag"]) for r in runs}
    assert len(setups) == 6  # fp16/int8/int4, three prompt lengths, two datasets: never averaged together
