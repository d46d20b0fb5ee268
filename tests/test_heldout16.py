"""Issue 39, sixteenth held-out set (files and attribution in tests/fixtures/formats/SOURCES.md), counted unaided at
6a23af4: a decode step's latency read as the ITL and the device named beside a backend column, a wrapper's nested
labels, 0 as a missing figure, a stated J/token that its own power and rate contradict, the MLPerf reference
app's results.json, one figure written twice in a JSON record, a flattened vLLM result in vLLM's units with its
load as the configuration, a clock target as a setting, 'OOM' in a cell, and a power limit as the setting it is.
Each rule on the file's own numbers, with its negative case."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from importers.table_fields import measure_field, setting_field
from tests.helpers import load_fixture as _load
from tests.helpers import refusal

FORMATS = Path(__file__).parent / "fixtures" / "formats"
STEPS = FORMATS / "general_table" / "infer-engine-qwen3-1.7b-rtx5080-per-step-latency.json"
NET = FORMATS / "general_table" / "llm-energy-framework-llama3.2-1b-a100-net-j-per-token.json"
OFFLINE = FORMATS.parent / "general_table_refused" / "inference-bench-rtx5070-resnet50-trt-offline-results.json"
SINGLE = FORMATS / "mlperf_app" / "inference-bench-rtx5070-resnet50-trt-singlestream-results.json"
OBSERVE = FORMATS / "general_table" / "gpu-power-lab-b300-observe-decode.json"
VLLM_CSV = FORMATS / "general_table" / "genai-power-vllm-llama70b-node-power-first40.csv"
CLOCKS = FORMATS / "general_table" / "gpu-power-capping-conv2d-clock-sweep.csv"
OOM = FORMATS / "general_table" / "glm-3090-decode-speed-oom.csv"


def test_a_decode_steps_latency_is_the_itl_and_the_gpu_name_beside_cuda_is_the_device() -> None:
    runs, fmt, warnings = _load(STEPS)
    assert fmt == "general-table" and len(runs) == 7  # one run per config, memory columns split none
    first = runs[0]
    assert first["device"]["name"] == "NVIDIA GeForce RTX 5080" and first["config"]["precision"] == "bf16"
    m = first["metrics"]
    assert (m["itl_avg_ms"], m["itl_p50_ms"], m["itl_p99_ms"]) == (7.59, 7.39, 10.94)
    assert not any(k.startswith("latency_") for k in m)  # a step makes one token: never a request's latency
    assert (m["tokens_per_s"], m["decode_tokens_per_s"], m["ttft_p50_ms"]) == (133.2, 135.5, 8.6)
    assert len({r["config"]["tag"] for r in runs}) == 7
    assert any("per_step_latency_max_ms left out" in w for w in warnings)


def test_a_wrappers_nested_labels_zero_sentinels_and_a_net_j_per_token(tmp_path: Path) -> None:
    runs, _, warnings = _load(NET)
    assert len(runs) == 20
    assert {r["device"]["name"] for r in runs} == {"NVIDIA A100 80GB PCIe"}  # hardware.gpu_name, one level down
    assert {r["config"]["precision"] for r in runs} == {"fp16"}  # model.precision
    assert {r["config"]["model"] for r in runs} == {"meta-llama/Llama-3.2-1B-Instruct"}
    short = [r for r in runs if r["config"]["tag"] == "prompt_id sum_short"]
    assert len(short) == 4 and all("j_per_token" not in r["metrics"] and "avg_power_w" not in r["metrics"]
                                   for r in short)  # 0 J/token and 0 W: not measured, never stored as 0
    assert any("0 read as not measured" in w for w in warnings)
    qa = next(r["metrics"] for r in runs if r["config"]["tag"] == "prompt_id qa_factual"
              and r["config"]["batch_size"] == 1)
    # the file's 0.4198 J/token is net of a 60 W idle draw: its own 94.56 W at 83.83 tokens/s give 1.128 J/token
    assert qa["j_per_token"] == pytest.approx(94.5633 / 83.8329)
    assert qa["output_tokens"] == 78  # the mean over repeats of the run's count, not a per-request mean
    assert any("the stated 0.4198 J/token left out" in w for w in warnings)
    # a stated J/token that agrees with its power and rate stays as stated
    agree = tmp_path / "agree.csv"
    agree.write_text("model,tokens_per_s,avg_power_w,j_per_token,ttft_p50_ms\nm,100,50,0.51,20\n")
    runs, fmt, _ = _load(agree)
    assert fmt == "general-table" and runs[0]["metrics"]["j_per_token"] == 0.51
    # a 0 in a field that can be 0 is no sentinel: a rate of 0 tokens/s is 'not measured' already, an energy
    # outside its range for another reason is refused as before
    bad = tmp_path / "bad.csv"
    bad.write_text("model,tokens_per_s,j_per_token\nm,100,-3\n")
    assert "j_per_token" in refusal(bad.read_bytes(), "bad.csv")


def test_the_mlperf_reference_apps_results_json() -> None:
    runs, fmt, _ = _load(SINGLE)
    assert fmt == "mlperf-app" and len(runs) == 1
    m, c = runs[0]["metrics"], runs[0]["config"]
    assert m["throughput_sps"] == pytest.approx(318.6459, rel=1e-5)  # SingleStream: a query is one image
    assert m["latency_p90_ms"] == pytest.approx(5.322576, rel=1e-5) and m["duration_s"] == pytest.approx(37.659359)
    assert (c["model"], c["precision"], c["engine"], c["batch_size"]) == ("resnet50", "fp16", "tensorrt", 1)
    # Offline: qps counts the app's batches of up to 128 images: no sample rate, said with where to get one
    said = refusal(OFFLINE.read_bytes(), OFFLINE.name)
    assert "counts the app's batches" in said and "mlperf_log_summary.txt" in said
    # a qps that is not count / took is no figure of the app's
    doc = json.loads(SINGLE.read_text())
    doc["TestScenario.SingleStream"]["qps"] = 500.0
    assert "is not count / took" in refusal(json.dumps(doc).encode(), SINGLE.name)


def test_one_figure_written_twice_in_a_record_is_read_once(tmp_path: Path) -> None:
    runs, _, warnings = _load(OBSERVE)
    assert len(runs) == 1
    run = runs[0]
    assert run["device"]["name"] == "NVIDIA B300 SXM6 AC" and run["config"]["power_limit_w"] == 1100.0
    assert run["metrics"]["avg_power_w"] == 1070.389 and run["metrics"]["energy_j"] == 64210.081
    assert run["metrics"]["duration_s"] == 60.0  # the steady window, not the 65 s of wall time around it
    assert any("efficiency.energy_j left out: the same figure as power.energy_j" in w for w in warnings)
    assert measure_field("energy_per_work_j")[0] is None  # an energy per iteration of 'work': no run's energy
    # two sections giving one field in different values: the first read, the other said left out, never 'the same'
    two = tmp_path / "two.json"
    two.write_text(json.dumps({"power": {"energy_j": 1.0}, "transient": {"energy_counter_j": 1.2}, "latency_ms": 3}))
    runs, _, warnings = _load(two)
    assert runs[0]["metrics"]["energy_j"] == 1.0
    assert any("energy_counter_j left out: energy_j is already given" in w for w in warnings)


def test_a_flattened_vllm_result_in_vllms_units_with_its_load(tmp_path: Path) -> None:
    runs, _, warnings = _load(VLLM_CSV)
    assert len(runs) == 40
    first = runs[0]
    m, c = first["metrics"], first["config"]
    assert m["duration_s"] == pytest.approx(104.12326938798651)  # vLLM's 'duration', not the harness's 118.9 s
    assert m["tokens_per_s"] == pytest.approx(1528.6400526563211)  # its output_throughput, in tokens/s
    assert m["e2e_latency_avg_ms"] == pytest.approx(3172.8371236373205)  # 'mean_e2el_ms'
    assert (c["request_rate_per_s"], c["output_tokens_requested"]) == (10.0, 256.0)  # request_rate_x, hf-output-len
    assert c["model"] == "Llama-3.1-70B-Instruct"  # a local folder of weights, by its name
    assert "tag" not in c  # _repeat, id and seed tell no setups apart
    assert any("read in the units vLLM benchmark_serving" in w for w in warnings)
    rows = list(csv.DictReader(VLLM_CSV.open()))
    keys = {(r["config"]["request_rate_per_s"], r["config"]["output_tokens_requested"]) for r in runs}
    assert len(keys) == len({(r["request_rate_x"], r["hf-output-len"]) for r in rows})
    # a bare 'duration' beside too few of vLLM's names stays a figure without its unit
    lone = tmp_path / "lone.csv"
    lone.write_text("model,duration,output_throughput,latency_ms\nm,10,5,3\n")
    assert "duration_s" not in _load(lone)[0][0]["metrics"]


def test_a_clock_target_is_a_setting_and_tells_the_rows_apart() -> None:
    runs, _, warnings = _load(CLOCKS)
    assert len(runs) == 129
    tags = {r["config"].get("tag") for r in runs}
    assert len(tags) == 43 and "clock_target_mhz 3105" in tags  # 43 clocks of 3 repeats, never pooled
    assert not any("peak_clock" in (t or "") for t in tags)  # a measured peak is no setting
    assert measure_field("gpu_clock_locked_mhz")[0] is None and measure_field("gpu_clock_mhz")[0] is not None


def test_oom_in_a_cell_is_no_figure_and_no_run() -> None:
    runs, _, warnings = _load(OOM)
    assert len(runs) == 14  # 5 contexts x 3 setups, one out of memory
    assert any("glm_minipc_vulkan 'OOM' (out of memory): no run of that setup" in w for w in warnings)
    assert "'maybe' is not a number" in refusal(b"model,tokens_per_s\nm,maybe\n", "t.csv")


@pytest.mark.parametrize(("name", "limit"), [("pl_w", True), ("power_limit_w", True), ("Power cap (W)", True),
                                             ("power_limit_max_w", False), ("avg_power_w", False),
                                             ("power.default_limit [W]", False)])
def test_a_power_limit_is_the_setting_never_a_measured_power(name: str, limit: bool) -> None:
    assert (setting_field(name) is not None) is limit
    assert measure_field(name)[0] is None or name == "avg_power_w"


def test_a_power_limit_column_sets_each_runs_limit(tmp_path: Path) -> None:
    table = tmp_path / "sweep.csv"
    table.write_text("model,power_limit_mw,tokens_per_s,avg_power_w\nm,250000,100,240\nm,300000,110,290\n")
    runs, fmt, _ = _load(table)
    assert fmt == "general-table"
    assert [r["config"]["power_limit_w"] for r in runs] == [250.0, 300.0]
    assert [r["metrics"]["avg_power_w"] for r in runs] == [240.0, 290.0]
