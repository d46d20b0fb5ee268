"""HailoRT's `hailortcli benchmark` and `run` output (importers.hailortcli), on two real captures and the power lines
of the Hailo Model Zoo's documented example: the streaming FPS is the run's rate, the chip-only figures stay in the
notes, the progress lines are never results, and a power in streaming mode gives J per frame."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import load
from tests.helpers import load_fixture, refusal

HAILO = Path(__file__).parent / "fixtures" / "formats" / "hailortcli"
# hailo-ai/hailo_model_zoo docs/BENCHMARKS.md: the Summary of `hailortcli benchmark resnet_v1_50.hef`, with power
ZOO_SUMMARY = """hailortcli benchmark resnet_v1_50.hef
Starting Measurements...
Measuring FPS in hw_only mode
Network resnet_v1_50/resnet_v1_50: 100% | 19932 | FPS: 1328.83 | ETA: 00:00:00
Measuring FPS and Power in streaming mode
Network resnet_v1_50/resnet_v1_50: 100% | 19932 | FPS: 1328.80 | ETA: 00:00:00
Measuring HW Latency
Network resnet_v1_50/resnet_v1_50: 100% | 5120 | HW Latency: 2.94 ms | ETA: 00:00:00

=======
Summary
=======
FPS     (hw_only)                 = 1328.83
        (streaming)               = 1328.8
Latency (hw)                      = 2.93646 ms
Power in streaming mode (average) = 3.19395 W
                        (max)     = 3.20456 W
"""


def test_six_models_each_its_summary_never_the_progress_lines() -> None:
    runs, fmt, _ = load_fixture(HAILO / "edge-npu-benchmark-rpi5-hailo8-six-yolo.log")
    assert fmt == "hailortcli" and len(runs) == 6
    by_model = {r["config"]["model"]: r for r in runs}
    assert list(by_model) == ["yolov8n", "yolov8s", "yolov8m", "yolov11n", "yolov11s", "yolov11m"]
    n = by_model["yolov8n"]
    assert n["metrics"]["throughput_sps"] == 431.499  # (streaming), never the progress line's rounded 431.50
    assert "latency_avg_ms" not in n["metrics"]  # the hardware latency is the chip's own: in the notes
    assert "Latency (hw) 3.35423 ms" in n["notes"] and "FPS (hw_only) 431.489" in n["notes"]
    assert n["config"]["batch_size"] == 1 and n["device"] is None  # the tool's default; no device guessed
    assert "compiled for hailo8" in n["notes"]
    assert "the platform measured no power" in n["metrics"]["energy_missing_reason"]


def test_a_capture_with_terminal_codes_and_no_command_line() -> None:
    runs, _, _ = load_fixture(HAILO / "pi-5-hailo-yolov8s-h8l-terminal-codes.log")
    assert len(runs) == 1
    run = runs[0]
    assert run["config"]["model"] == "yolov8s"  # named by its progress lines' network group
    assert run["metrics"]["throughput_sps"] == 57.7941
    assert run["config"]["batch_size"] is None  # no command line: the batch size is not stated


def test_power_in_streaming_mode_gives_joules_per_frame() -> None:
    run = load(ZOO_SUMMARY.encode(), "bench.log")[0].runs[0]
    m = run["metrics"]
    assert m["avg_power_w"] == 3.19395 and m["energy_boundary"] == "gpu_board"
    assert m["j_per_sample"] == pytest.approx(3.19395 / 1328.8)
    assert run["config"]["model"] == "resnet_v1_50"
    current = ZOO_SUMMARY.replace("3.19395 W", "0.61 A").replace("3.20456 W", "0.62 A")
    run = load(current.encode(), "bench.log")[0].runs[0]
    assert "avg_power_w" not in run["metrics"] and "is a current" in run["notes"]


def test_the_run_commands_result_and_the_benchmark_csv() -> None:
    run_text = ("hailortcli run yolov5m.hef --batch-size 4\n> Inference result:\n Network group: yolov5m\n"
                "    Frames count: 1200\n    FPS: 80.12\n    HW Latency: 12.02 ms\n    Overall Latency: 48.50 ms\n")
    run = load(run_text.encode(), "run.log")[0].runs[0]
    assert run["metrics"]["throughput_sps"] == 80.12 and run["metrics"]["latency_avg_ms"] == 48.5
    assert run["config"]["batch_size"] == 4
    csv = ("net_name,fps,hw_only_fps,num_of_frames,num_of_frames_hw_only,hw_latency,overall_latency,min_power,"
           "average_power,max_power\nresnet_v1_50,1328.8,1328.83,19932,19932,2.93646,,3.1,3.19395,3.20456\n")
    run = load(csv.encode(), "bench.csv")[0].runs[0]
    assert run["metrics"]["throughput_sps"] == 1328.8 and run["metrics"]["avg_power_w"] == 3.19395
    assert run["config"]["model"] == "resnet_v1_50"


def test_a_capture_cut_before_its_summary_is_refused() -> None:
    text = (HAILO / "edge-npu-benchmark-rpi5-hailo8-six-yolo.log").read_text().split("=======")[0]
    said = refusal(text.encode(), "cut.log")
    assert "without a Summary" in said and "progress lines" in said
