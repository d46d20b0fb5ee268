"""OpenVINO benchmark_app (importers.openvino_benchmark) on real captures: three logs pasted in one Markdown file
(CPU, GPU, NPU: three runs, never pooled, the hand-made summary table not read a second time), a C++ log pair in a
guide beside another tool's device listing, a batch-4 log, and a log that stopped with an error; its statistics
report (benchmark_report.csv) in the Python and C++ writers' forms."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import load
from tests.helpers import load_fixture, refusal

OV = Path(__file__).parent / "fixtures" / "formats" / "openvino_benchmark"
NANONET = OV / "nanonet-benchmark_app-cpu-gpu-npu.md"
BATCH4 = OV / "fis-yolov8s-batch4-gpu0-throughput.txt"
FAILED = OV.parent.parent / "openvino_benchmark_refused" / "fis-efficientnet-v2-b0-gpu1-clfinish-error.txt"
EULER = OV / "openeuler-openvino-samples-cpp-cpu-gpu1.md"


def test_three_devices_three_runs_each_tagged_with_its_execution_device() -> None:
    runs, fmt, warnings = load_fixture(NANONET)
    assert fmt == "openvino-benchmark" and len(runs) == 3  # the logs, not the summary table besides
    cpu, gpu, npu = runs
    assert [r["config"]["tag"] for r in runs] == [
        "execution device CPU; 4 infer requests; hint THROUGHPUT",
        "execution device GPU.0; 4 infer requests; hint THROUGHPUT",
        "execution device NPU.3720; 4 infer requests; hint THROUGHPUT"]
    assert all(r["device"] is None for r in runs)  # CPU, GPU.0, NPU.3720 are kinds, not products
    m = cpu["metrics"]
    assert (m["throughput_sps"], m["latency_p50_ms"], m["latency_avg_ms"], m["latency_max_ms"]) == (
        166.09, 20.76, 23.91, 90.43)
    assert m["duration_s"] == pytest.approx(10.04246) and m["examples"] == 1668
    assert m["iterations_per_s"] == pytest.approx(1668 / 10.04246)
    assert "latency_min_ms" not in m and "Min latency 11.55 ms" in cpu["notes"]
    assert gpu["metrics"]["throughput_sps"] == 356.54 and gpu["metrics"]["latency_p50_ms"] == 10.73
    assert npu["metrics"]["throughput_sps"] == 92.51 and npu["metrics"]["latency_p50_ms"] == 42.83
    config = cpu["config"]
    assert config["model"] == "nanonet-fp32-shape-1-3-256-256-model" and config["batch_size"] == 1
    assert (config["max_concurrency"], config["load_kind"], config["engine_version"]) == (4, "concurrency",
                                                                                         "2024.1.0")
    # the compiled model's INFERENCE_PRECISION_HINT: f32 on the CPU, f16 on the NPU, not printed for the GPU
    assert [r["config"]["precision"] for r in runs] == ["fp32", None, "fp16"]
    assert "4 request(s) in flight: not 1 / throughput" in cpu["notes"]
    assert "compile model 8119.39 ms, first inference 7.2 ms" in gpu["notes"]  # set-up costs: notes, not figures
    assert "not set on the command line" in cpu["notes"] and "-t 10;" in cpu["notes"]  # the CPU run has no -d
    assert "-d NPU" in npu["notes"] and any("device" in w for w in warnings)


def test_a_batch_of_four_counts_four_frames_an_iteration() -> None:
    runs, _, _ = load_fixture(BATCH4)
    m, config = runs[0]["metrics"], runs[0]["config"]
    assert m["throughput_sps"] == 4.5 and m["examples"] == 72 * 4  # 72 iterations x batch 4 / 63.97 s
    assert m["throughput_sps"] == pytest.approx(72 * 4 / 63.97417, abs=0.005)
    assert m["latency_p50_ms"] == 3552.51 and m["latency_avg_ms"] == 3480.01  # one request: a batch of 4
    assert config["batch_size"] == 4 and config["precision"] == "fp16" and config["model"] is None  # no -m here
    assert "one batch of 4" in runs[0]["notes"]


def test_the_cpp_tool_in_a_guide_and_another_tools_device_names_not_taken() -> None:
    runs, _, _ = load_fixture(EULER)
    assert len(runs) == 2
    cpu, gpu = runs
    assert cpu["metrics"]["throughput_sps"] == 37.86 and cpu["metrics"]["latency_p50_ms"] == 26.26
    assert cpu["config"]["tag"] == "execution device CPU; 1 infer request; hint LATENCY"
    assert gpu["metrics"]["throughput_sps"] == 476.26 and gpu["metrics"]["latency_avg_ms"] == 8.36
    assert gpu["config"]["tag"] == "execution device GPU.1; 4 infer requests; hint THROUGHPUT"  # -hint throughput
    assert gpu["config"]["model"] == "asl-recognition-0004" and gpu["config"]["engine_version"] == "2024.3.0"
    # hello_query_device's FULL_DEVICE_NAME listing above the logs is another program's: not the run's device
    assert all(r["device"] is None for r in runs)


def test_a_full_device_name_in_the_log_is_the_device() -> None:
    text = BATCH4.read_text().replace("[ INFO ] Execution Devices:",
                                      "Full device name: Intel(R) Arc(TM) A770 Graphics (dGPU)\n\n"
                                      "[ INFO ] Execution Devices:")
    run = load(text.encode(), "log.txt")[0].runs[0]
    assert run["device"]["name"] == "Intel(R) Arc(TM) A770 Graphics (dGPU)" and run["device"]["kind"] == "gpu"


def test_a_log_stopped_by_an_error_or_cut_is_no_run() -> None:
    said = refusal(FAILED.read_bytes(), "failed.txt")
    assert "stopped with an error" in said and "[GPU] clFinish, error code: -5" in said
    cut = BATCH4.read_text().split("[Step 11/11]")[0]
    assert "cut before its statistics report" in refusal(cut.encode(), "cut.txt")
    both = load((BATCH4.read_text() + FAILED.read_text()).encode(), "both.txt")[0]
    assert len(both.runs) == 1 and any("clFinish" in w and "left out" in w for w in both.warnings)


PY_REPORT = """Command line parameters
-m;/models/resnet-50.xml
-d;GPU
-report_type;no_counters

Configuration setup
topology;torch-jit-export
target device;GPU
API;async
inference_only;True
precision;UNSPECIFIED
batch size;1
number of parallel infer requests;4

Execution results
read model time (ms);20.11
compile model time (ms);2100.50
first inference time (ms);6.32
total execution time (ms);60009.64
total number of iterations;28580
latency (ms);8.24
avg latency;8.36
min latency;3.27
max latency;13.66
throughput;476.26
"""


def test_the_statistics_report_in_both_writers_forms() -> None:
    loaded, fmt = load(PY_REPORT.encode(), "benchmark_report.csv")
    run = loaded.runs[0]
    assert fmt == "openvino-benchmark" and run["metrics"]["throughput_sps"] == 476.26
    assert run["metrics"]["latency_p50_ms"] == 8.24 and run["config"]["tag"] == "execution device GPU; 4 infer requests"
    assert run["config"]["model"] == "resnet-50" and "compile model 2100.5 ms" in run["notes"]
    # the C++ writer: every cell ends with ';', labels 'Median latency (ms)', sync API
    cpp = (PY_REPORT.replace("\n", ";\n").replace(";;", ";").replace("-m;", "m;").replace("API;async", "API;sync")
           .replace("latency (ms);8.24", "Median latency (ms);8.240000").replace("batch size;1", "batch size;2")
           .replace("number of parallel infer requests;4", "number of parallel infer requests;1"))
    run = load(cpp.encode(), "benchmark_report.csv")[0].runs[0]
    assert run["metrics"]["latency_p50_ms"] == 8.24 and run["config"]["max_concurrency"] == 1
    assert run["metrics"]["throughput_sps"] == pytest.approx(28580 * 2 / 60.00964)  # sync: iterations x batch / time
    layers = ("layerName;execStatus;layerType;execType;realTime (ms);cpuTime (ms)\n"
              "conv1;EXECUTED;Convolution;jit;0.2;0.2\n")
    assert "per-layer performance counters" in refusal(layers.encode(), "benchmark_detailed_counters_report.csv")
