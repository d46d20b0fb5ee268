"""TensorFlow Lite's `benchmark_model` output (importers.tflite_benchmark), on three real pastes: one run per
invocation, its latency the 'Inference (avg)' line (us -> ms), the timed count= line's max and percentiles, the
delegate and threads apart in engine and tag, the op-profiling tables never runs, a failed invocation kept as failed."""

from __future__ import annotations

from pathlib import Path

from importers import load
from tests.helpers import load_fixture, readers_of_other_fixtures, refusal

TFLITE = Path(__file__).parent / "fixtures" / "formats" / "tflite_benchmark"
QEMU = TFLITE / "meta-tensorflow-lite-qemuriscv64-mobilenet_v1-op-profiling.md"
ANDROID = TFLITE / "yolov5s-android-xiaomi-mi11-cpu-nnapi.md"
TI = TFLITE / "ti-processor-sdk-am62x-cpu-xnnpack.rst"


def test_the_qemu_how_to_one_run_its_inference_avg_never_the_op_profile() -> None:
    runs, fmt, warnings = load_fixture(QEMU)
    assert fmt == "tflite-benchmark" and len(runs) == 1
    run = runs[0]
    assert run["metrics"]["latency_avg_ms"] == 2950.34  # 'Inference (avg): 2.95034e+06' us
    assert run["metrics"]["latency_max_ms"] == 3189.954  # the timed count=50 line's max=3189954
    assert "throughput_sps" not in run["metrics"] and "latency_p50_ms" not in run["metrics"]  # no median in TF 2.8
    cfg = run["config"]
    assert cfg["model"] == "mobilenet_v1_1.0_224" and cfg["engine"] == "tflite" and cfg["tag"] == "CPU, 4 threads"
    assert cfg["measured_steps"] == 50 and cfg["batch_size"] is None and run["device"] is None
    assert "min=2727568, std=109798" in run["notes"] and "first 3512391, warmup 3.51239e+06" in run["notes"]
    assert "memory footprint delta MB init=4.21094 overall=46.0859" in run["notes"]
    assert "op-profiling tables" in run["notes"] and "2949.9" not in run["notes"]  # the profiled total is not kept
    assert any("under QEMU" in w and "emulator" in w for w in warnings)


def test_the_android_page_cpu_and_nnapi_runs_apart_and_the_failed_delegates_kept_failed() -> None:
    runs, _, warnings = load_fixture(ANDROID)
    assert [r["status"] for r in runs] == ["ok"] * 4 + ["failed"] * 2
    cpu, gpu32, gpu16, int8 = runs[:4]
    assert cpu["metrics"]["latency_avg_ms"] == 249.684 and cpu["metrics"]["latency_max_ms"] == 254.474
    assert (cpu["config"]["engine"], cpu["config"]["tag"]) == ("tflite", "CPU, 4 threads")
    assert gpu32["config"]["engine"] == "tflite-nnapi" and "NNAPI accelerator qti-gpu" in gpu32["config"]["tag"]
    assert gpu16["metrics"]["latency_avg_ms"] == 92.5712 and "NNAPI fp16 allowed" in gpu16["config"]["tag"]
    assert gpu32["config"]["tag"] != gpu16["config"]["tag"]  # fp16 allowed is another configuration
    assert int8["config"]["model"] == "yolov5s_int8_640" and int8["metrics"]["latency_avg_ms"] == 95.7883
    failed = runs[4]
    assert failed["config"]["tag"].endswith("qti-default, NNAPI sustained_speed")
    assert "ANEURALNETWORKS_OP_FAILED" in failed["error"] and "latency_avg_ms" not in failed["metrics"]
    # the '--enable_op_profiling' invocation printed per-operator tables only: no run, said so
    assert any("line 69" in w and "left out" in w for w in warnings)


def test_the_ti_page_info_prefixed_output_with_percentiles() -> None:
    runs, _, _ = load_fixture(TI)
    assert len(runs) == 2
    cpu, xnn = runs
    assert cpu["metrics"] == {"energy_missing_reason": "benchmark_model measures no power or energy",
                              "latency_avg_ms": 1240.27, "latency_max_ms": 1252.566, "latency_p50_ms": 1239.807,
                              "latency_p95_ms": 1247.415}
    assert cpu["config"]["tag"] == "CPU, 4 threads, XNNPACK off" and "p5=1238753" in cpu["notes"]
    assert xnn["metrics"]["latency_avg_ms"] == 899.641 and xnn["config"]["engine"] == "tflite-xnnpack"
    assert "partially executed by the delegate" in xnn["notes"]


def test_older_lines_logcat_prefix_and_all_same_timings() -> None:
    old = ("I/tflite  (1234): STARTING!\nI/tflite  (1234): Num threads: [1]\n"
           "I/tflite  (1234): Graph: [/data/local/tmp/mobilenet_quant_v1_224.tflite]\n"
           "I/tflite  (1234): Use gpu : [1]\nI/tflite  (1234): count=50 curr=80660(all same)\n"
           "I/tflite  (1234): Average inference timings in us: Warmup: 91471, Init: 4108, Inference: 80660\n")
    run = load(old.encode(), "logcat.txt")[0].runs[0]
    assert run["metrics"]["latency_avg_ms"] == 80.66 and run["metrics"]["latency_max_ms"] == 80.66
    assert run["config"]["engine"] == "tflite-gpu" and run["config"]["tag"] == "GPU delegate, 1 threads"
    assert run["config"]["model"] == "mobilenet_quant_v1_224"


def test_a_capture_cut_before_its_result_is_refused() -> None:
    text = QEMU.read_text().split("Inference timings in us")[0]
    said = refusal(text.encode(), "cut.md")
    assert "without an 'Inference timings in us" in said and "per-operator" in said


def test_a_count_line_that_is_not_the_timed_series_gives_no_max() -> None:
    text = ("STARTING!\nGraph: [m.tflite]\ncount=1 curr=3512391\n\n"
            "Inference timings in us: Init: 17187, First inference: 3512391, Warmup (avg): 3.51239e+06, "
            "Inference (avg): 2.95034e+06\n")
    imported, _ = load(text.encode(), "warmup-only.log")
    run = imported.runs[0]
    assert run["metrics"]["latency_avg_ms"] == 2950.34 and "latency_max_ms" not in run["metrics"]
    assert any("not the 'Inference (avg)'" in w for w in imported.warnings)


def test_no_other_readers_file_is_taken() -> None:
    assert readers_of_other_fixtures({"tflite-benchmark"}, {"tflite_benchmark"}) == []
