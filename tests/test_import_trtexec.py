"""Issue 39: TensorRT `trtexec` logs, how most Jetson inference is benchmarked. The figures below were read off
the real log by hand (attribution in tests/fixtures/formats/SOURCES.md); the format was learned from TensorRT's
own printer (samples/common/sampleReporting.cpp)."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import Hints, load
from joulebench.errors import ResultFileError

TRT = Path(__file__).parent / "fixtures" / "formats" / "trtexec"
RESULT_01 = TRT / "trt-samples-cookbook-result-01-h100pcie-onnx-fp32.log"
NO_SUMMARY = TRT.parent.parent / "trtexec_refused" / "trt-samples-cookbook-result-05-dumpprofile-no-summary.log"


def _with_command(command: str) -> bytes:
    """The real log with another command line (the flags trtexec echoes in its first line)."""
    lines = RESULT_01.read_text().splitlines(keepends=True)
    first = lines[0].split(" # ", 1)[0] + f" # {command}\n"
    body = [line for line in lines[1:] if "] [I] Precision:" not in line]
    return (first + "".join(body)).encode()


def test_a_real_trtexec_log_gives_throughput_latency_percentiles_device_and_engine() -> None:
    imported, fmt = load(RESULT_01.read_bytes(), RESULT_01.name)
    assert fmt == "trtexec" and len(imported.runs) == 1
    run = imported.runs[0]
    m, c = run["metrics"], run["config"]
    assert run["device"]["name"] == "NVIDIA H100 PCIe"  # "Selected Device: NVIDIA H100 PCIe"
    assert m["iterations_per_s"] == pytest.approx(15374.3)  # "Throughput: 15374.3 qps"
    assert m["throughput_sps"] == pytest.approx(15374.3)  # input binding 1x1x28x28: one sample a query
    assert m["latency_avg_ms"] == pytest.approx(0.0441053)  # "Latency: ... mean = 0.0441053 ms"
    assert m["latency_p50_ms"] == pytest.approx(0.0440674)  # "median = 0.0440674 ms"
    assert m["latency_p90_ms"] == pytest.approx(0.0450439) and m["latency_p95_ms"] == pytest.approx(0.0458984)
    assert m["latency_p99_ms"] == pytest.approx(0.0512695) and m["latency_max_ms"] == pytest.approx(0.14917)
    assert m["duration_s"] == pytest.approx(3.00013)  # "Total Host Walltime: 3.00013 s"
    assert m["examples"] == 46125  # "Timing trace has 46125 queries over 3.00013 s"
    assert "energy_j" not in m and "no power" in m["energy_missing_reason"]
    assert c["precision"] == "fp32" and c["batch_size"] == 1 and c["mode"] == "infer"
    assert c["model"] == "model-trained" and c["engine"] == "tensorrt" and c["engine_version"] == "10.16.1"
    assert "GPU Compute Time" in run["notes"] and "mean 0.0359588 ms" in run["notes"]


@pytest.mark.parametrize(("flags", "precision", "quantization"), [
    ("--fp16", "fp16", None), ("--int8", None, "int8"), ("--best", "fp16", "int8"), ("--fp16 --int8", "fp16", "int8"),
    ("--bf16", "bf16", None),
])
def test_precision_flags_are_read_as_precision_and_quantization(flags: str, precision: str | None,
                                                                 quantization: str | None) -> None:
    imported, _ = load(_with_command(f"trtexec --onnx=/models/yolov8n.onnx {flags}"), "trtexec.log")
    config = imported.runs[0]["config"]
    assert config["precision"] == precision and config["quantization"] == quantization
    assert config["model"] == "yolov8n"


def test_a_batch_in_the_shapes_multiplies_queries_into_samples() -> None:
    imported, _ = load(_with_command("trtexec --loadEngine=resnet50_b8.engine --shapes=input:8x3x224x224"), "t.log")
    run = imported.runs[0]
    assert run["config"]["batch_size"] == 8 and run["config"]["model"] == "resnet50_b8"
    assert run["metrics"]["throughput_sps"] == pytest.approx(15374.3 * 8)
    assert run["metrics"]["examples"] == 46125 * 8


def test_the_summary_pasted_into_notes_without_its_prolog_is_read_with_the_device_asked_for() -> None:
    lines = [line for line in RESULT_01.read_text().splitlines() if "Performance summary" in line
             or "Throughput:" in line or ("Latency:" in line and "min =" in line) or "GPU Compute Time:" in line
             or "Walltime" in line]
    text = "Results on our board:\n```\n" + "\n".join(lines) + "\n```\n"
    imported, fmt = load(text.encode(), "NOTES.md")
    run = imported.runs[0]
    assert fmt == "trtexec" and run["device"] is None and imported.not_stated()["device"] == 1
    assert run["metrics"]["latency_p50_ms"] == pytest.approx(0.0440674)
    assert "throughput_sps" not in run["metrics"]  # the batch of a query is not stated: no samples/s invented
    imported, _ = load(text.encode(), "NOTES.md", hints=Hints(device="Jetson AGX Orin 64GB", batch_size=4))
    assert imported.runs[0]["device"]["kind"] == "jetson"
    assert imported.runs[0]["metrics"]["throughput_sps"] == pytest.approx(15374.3 * 4)


def test_tensorrt_7_statistics_lines_are_read() -> None:
    text = ("&&&& RUNNING TensorRT.trtexec # ./trtexec --deploy=ResNet50.prototxt --output=prob --batch=16 --fp16\n"
            "[I] Host Latency: min: 9.10 ms (end to end 17.1 ms), max: 12.4 ms (end to end 22.0 ms), mean: 9.50 ms "
            "(end to end 17.9 ms), median: 9.40 ms (end to end 17.8 ms), percentile: 11.2 ms at 99% (end to end "
            "20.3 ms)\n[I] Throughput: 105.3 qps\n&&&& PASSED TensorRT.trtexec\n")
    run = load(text.encode(), "trt7.log")[0].runs[0]
    assert run["config"]["batch_size"] == 16 and run["config"]["precision"] == "fp16"
    assert run["metrics"]["latency_p50_ms"] == pytest.approx(9.40) and run["metrics"]["latency_p99_ms"] == 11.2
    # an implicit batch: trtexec's qps already counts each query's 16 samples (sampleReporting.cpp's printEpilog:
    # batch x timings / walltime), so the samples/s is the qps as printed and the engine ran 105.3 / 16 times a second
    assert run["metrics"]["throughput_sps"] == pytest.approx(105.3)
    assert run["metrics"]["iterations_per_s"] == pytest.approx(105.3 / 16)


def test_a_log_without_a_performance_summary_is_refused_saying_why() -> None:
    with pytest.raises(ResultFileError) as e:
        load(NO_SUMMARY.read_bytes(), NO_SUMMARY.name)
    message = e.value.format_message()
    assert NO_SUMMARY.name in message and "Performance summary" in message and "--skipInference" in message


def test_a_failed_run_is_stored_as_failed() -> None:
    data = RESULT_01.read_text().replace("&&&& PASSED TensorRT.trtexec", "&&&& FAILED TensorRT.trtexec")
    run = load(data.encode(), "failed.log")[0].runs[0]
    assert run["status"] == "failed" and "FAILED" in run["error"]
