"""Ultralytics' benchmark() printouts (importers.ultralytics_benchmark) on four real benchmarks.log files (pandas and
polars tables, with and without FPS, CRLF) and two real captures quoted below: one run per ✅ format row with the
validator's ms/image as latency and benchmark()'s FPS as a derived rate, failed rows left out and named, mAP and the
block's total time only in the notes, the device only from an Ultralytics console header."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import IMPORTERS, Source, load
from tests.helpers import load_fixture, refusal

UB = Path(__file__).parent / "fixtures" / "formats" / "ultralytics_benchmark"
RPI5 = UB / "rpi5-yolo11n-per-format-benchmarks.log"

# A console capture quoted in a public Jekyll post on GitHub ("Ultralytics YOLOv8", 2023-03-24; YOLOv8.0.58): the
# header names the GPU for the first block, says 'CPU' with no model for the second (both blocks verbatim, abridged).
T4_CAPTURE = """### GPU
```shell
yolo benchmark model=yolov8n.pt imgsz=640 half=False device=0
```
```
Ultralytics YOLOv8.0.58 🚀 Python-3.10.9 torch-2.0.0 CUDA:0 (Tesla T4, 15110MiB)
Server ✅ (64 CPUs, 251.6 GB RAM, 381.2/548.6 GB disk)

Benchmarks complete for yolov8n.pt on coco128.yaml at imgsz=640 (964.68s)
                   Format Status❔  Size (MB)  metrics/mAP50-95(B)  Inference time (ms/im)
0                 PyTorch       ✅        6.2               0.4478                   13.39
1             TorchScript       ✅       12.4               0.4525                    5.33
2                    ONNX       ✅       12.2               0.4525                   10.97
3                OpenVINO       ❌        0.0                  NaN                     NaN
4                TensorRT       ✅       16.1               0.4525                    4.80
```

### CPU
```shell
yolo benchmark model=yolov8n.pt imgsz=640 half=False device=cpu
```
```
Ultralytics YOLOv8.0.58 🚀 Python-3.10.9 torch-2.0.0 CPU
Setup complete ✅ (64 CPUs, 251.6 GB RAM, 383.1/548.6 GB disk)

Benchmarks complete for yolov8n.pt on coco128.yaml at imgsz=640 (647.94s)
                   Format Status❔  Size (MB)  metrics/mAP50-95(B)  Inference time (ms/im)
0                 PyTorch       ✅        6.2               0.4478                  186.26
5                  CoreML       ❎       12.1                  NaN                     NaN
```
"""
# JoaoRafaelGuimaraes/Comparing_Embedeed_Segmentation_Models benchmarks.log (a52bacb), whole: every row failed.
ALL_FAILED = """
Benchmarks complete for models/land-seg.pt on dataset/landslide_dataset_1000/data.yml at imgsz=512 (0.45s)
Benchmarks legend:  - ✅ Success  - ❎ Export passed but validation failed  - ❌️ Export failed
     Format Status❔  Size (MB) metrics/mAP50-95(M) Inference time (ms/im) FPS
0  TensorRT       ❌        0.0                   -                      -   -

Benchmarks complete for models/land-seg.pt on dataset/landslide_dataset_1000/data.yml at imgsz=512 (10.36s)
Benchmarks legend:  - ✅ Success  - ❎ Export passed but validation failed  - ❌️ Export failed
  Format Status❔  Size (MB) metrics/mAP50-95(M) Inference time (ms/im) FPS
0   ONNX       ❎       38.6                   -                      -   -
"""
# The YOLOv5 repository's benchmarks.py (another tool: no 'for MODEL on DATA at imgsz=') must not be read as this.
YOLOV5 = """YOLOv5 🚀 v6.1-135-g7926afc torch 1.10.0+cu111 CUDA:0 (Tesla V100-SXM2-16GB, 16160MiB)
Setup complete ✅ (8 CPUs, 51.0 GB RAM, 46.7/166.8 GB disk)

Benchmarks complete (458.07s)
                   Format  mAP@0.5:0.95  Inference time (ms)
0                 PyTorch        0.4623                10.19
1             TorchScript        0.4623                 6.85
"""


def test_raspberry_pi_per_format_blocks_one_run_per_successful_format() -> None:
    runs, fmt, warnings = load_fixture(RPI5, "benchmarks.log")
    assert fmt == "ultralytics-benchmark" and len(runs) == 10  # 16 blocks, 6 of them ❌
    by_engine = {r["config"]["engine"]: r for r in runs}
    assert "tensorrt" not in by_engine and "coreml" not in by_engine
    pt = by_engine["pytorch"]
    assert pt["metrics"]["latency_avg_ms"] == 398.74 and pt["metrics"]["throughput_sps"] == 2.51
    assert pt["metrics"]["sample_unit"] == "image"
    assert "1000 / (Inference time" in pt["metrics"]["throughput_derivation"]
    assert by_engine["openvino"]["metrics"]["latency_avg_ms"] == 117.78
    assert by_engine["openvino"]["metrics"]["throughput_sps"] == 8.49
    assert by_engine["mnn"]["metrics"]["latency_avg_ms"] == 136.77
    assert by_engine["tensorflow-savedmodel"]["config"]["tag"] == "format TensorFlow SavedModel; data coco128.yaml"
    config = pt["config"]
    assert (config["model"], config["workload"], config["image_size"], config["batch_size"]) == (
        "yolo11n.pt", "yolo11n", 640, 1)
    assert config["task"] == "object-detection" and config["mode"] == "infer" and config["precision"] is None
    assert pt["device"] is None  # the log names no device; 'rpi5' is only the repository's name
    assert "metrics/mAP50-95(B) 0.5101" in pt["notes"] and "(59.65s) is the whole benchmark() call" in pt["notes"]
    assert "exported model 5.4 MB" in pt["notes"]
    assert "energy_j" not in pt["metrics"] and "Ultralytics benchmark() measures no power" in str(pt["metrics"])
    failed = next(w for w in warnings if "without a time left out" in w)
    assert failed.startswith("6 format row(s)") and "TensorRT (line 25, export failed)" in failed and "RKNN" in failed


def test_polars_table_of_eighteen_formats() -> None:
    runs, _, warnings = load_fixture(UB / "mowbot-yolov8n-polars-benchmarks.log", "benchmarks.log")
    assert len(runs) == 8
    trt = next(r for r in runs if r["config"]["engine"] == "tensorrt")
    assert trt["metrics"]["latency_avg_ms"] == 1.26 and trt["metrics"]["throughput_sps"] == 795.62
    assert [r["config"]["engine"] for r in runs] == ["pytorch", "torchscript", "onnxruntime", "tensorrt",
                                                     "tensorflow-savedmodel", "tensorflow-graphdef", "mnn", "ncnn"]
    failed = next(w for w in warnings if "left out" in w)
    assert failed.startswith("10 format row(s)") and "Axelera AI" in failed


def test_sub_millisecond_times_keep_the_printed_fps_and_models_from_their_training_folders() -> None:
    runs, _, _ = load_fixture(UB / "atlasracing-tensorrt-polars-benchmarks.log", "benchmarks.log")
    assert len(runs) == 9
    first = runs[0]
    assert first["config"]["model"] == "yolo11n_640/best.pt" and first["config"]["engine"] == "tensorrt"
    assert first["metrics"]["latency_avg_ms"] == 0.84
    assert first["metrics"]["throughput_sps"] == 1194.89  # benchmark()'s FPS from the unrounded time, not 1000/0.84
    last = runs[-1]
    assert last["config"]["model"] == "yolo26m_1280/best.pt" and last["config"]["image_size"] == 1280
    assert last["metrics"]["latency_avg_ms"] == 9.6 and last["metrics"]["throughput_sps"] == 104.16
    assert "yolo_models/YOLOv26_1280x1280/yolo26m_1280/weights/best.pt" in last["config"]["tag"]


def test_repeated_blocks_are_repeats_and_an_exported_but_failed_row_is_named() -> None:
    runs, _, warnings = load_fixture(UB / "yolo11-voc-pandas-fps-benchmarks.log", "benchmarks.log")  # CRLF lines
    assert len(runs) == 8
    first, second = runs[0], runs[4]
    assert first["config"] == second["config"] and first["run_id"] != second["run_id"]
    assert (first["metrics"]["latency_avg_ms"], second["metrics"]["latency_avg_ms"]) == (7.01, 6.98)
    assert first["config"]["model"] == "train/best.pt" and first["config"]["workload"] == "train/best"
    assert "ONNX (line 7, exported, then prediction or validation failed)" in next(w for w in warnings if "left" in w)


def test_the_console_header_names_the_device_of_the_block_after_it() -> None:
    imported, fmt = load(T4_CAPTURE.encode(), "README.md")
    assert fmt == "ultralytics-benchmark" and imported.document["producer"]["version"] == "8.0.58"
    gpu = [r for r in imported.runs if r["device"] is not None]
    cpu = [r for r in imported.runs if r["device"] is None]
    assert len(gpu) == 4 and len(cpu) == 1
    assert gpu[0]["device"] == {"name": "Tesla T4", "kind": "gpu", "memory_gb": 15.84}
    trt = next(r for r in gpu if r["config"]["engine"] == "tensorrt")
    assert trt["metrics"]["latency_avg_ms"] == 4.8
    assert trt["metrics"]["throughput_sps"] == pytest.approx(1000 / 4.8)  # YOLOv8.0 printed no FPS column
    assert "this version prints no FPS" in trt["metrics"]["throughput_derivation"]
    assert "half=False" in trt["notes"] and "console header at line 6" in trt["notes"]
    assert "header names the CPU without its model" in cpu[0]["notes"]
    assert cpu[0]["metrics"]["latency_avg_ms"] == 186.26
    two_gpus = T4_CAPTURE.replace("15110MiB)\n", "15110MiB)\n" + " " * 58 + "CUDA:1 (Tesla T4, 15110MiB)\n", 1)
    imported, _ = load(two_gpus.encode(), "README.md")
    assert all(r["device"] is None for r in imported.runs)
    assert any("several GPUs" in w for w in imported.warnings)


def test_cut_damaged_and_all_failed_captures_are_refused() -> None:
    text = RPI5.read_text(encoding="utf-8")
    cut = text[: text.index("398.74") + 3]  # '...  398' with the FPS cut off
    said = refusal(cut.encode(), "benchmarks.log")
    assert "line 5" in said and "cut" in said
    edited = text.replace("117.78  8.49", "117.78  9.49")
    said = refusal(edited.encode(), "benchmarks.log")
    assert "OpenVINO FPS 9.49 is not 1000 / its Inference time 117.78" in said
    head, rest = text.split("TorchScript", 1)  # the second block's header reformatted
    reformatted = head.rsplit("Inference time (ms/im)", 1)[0] + "Inference (ms)   FPS\n0  TorchScript" + rest
    assert "line 7: a 'Benchmarks complete' line without its table" in refusal(reformatted.encode(), "benchmarks.log")
    said = refusal(ALL_FAILED.encode(), "benchmarks.log")
    assert "every format row failed" in said


def test_other_tools_are_not_taken() -> None:
    ours = next(i for i in IMPORTERS if i.NAME == "ultralytics-benchmark")
    assert not ours.sniff(Source.single(YOLOV5.encode(), "yolov5.log"))
    for path in sorted((UB.parent).glob("*/*"))[:400]:
        if path.is_file() and path.parent != UB and path.stat().st_size < 2_000_000:
            assert not ours.sniff(Source.single(path.read_bytes(), path.name)), path


def test_the_consoles_failure_reasons_name_the_rows_left_out() -> None:
    # a `yolo benchmark ... half=True` console capture on GitHub (YOLOv10n on a traffic dataset, abridged rows)
    capture = """ERROR ❌ Benchmark failure for OpenVINO: inference not supported on GPU
ERROR ❌ Benchmark failure for NCNN: End-to-end torch.topk operation is not supported for NCNN prediction yet
Setup complete ✅ (12 CPUs, 31.2 GB RAM, 198.5/231.2 GB disk)

Benchmarks complete for Results/Vehicles/YOLOv10n/runs/detect/train/weights/best.pt on Results/datasets/vehicles/data.yaml at imgsz=640 (205.97s)
Benchmarks legend:  - ✅ Success  - ❎ Export passed but validation failed  - ❌️ Export failed
                   Format Status❔  Size (MB) metrics/mAP50-95(B) Inference time (ms/im)     FPS
0                 PyTorch       ✅        5.5              0.6401                   5.64  177.24
3                OpenVINO       ❌        0.0                   -                      -       -
4                TensorRT       ✅        8.1              0.6302                   1.26  792.31
13                   NCNN       ❎        4.5                   -                      -       -

      ↳ saved logs to Vehicles/YOLOv10n/benchmark_vehicles.log
"""  # noqa: E501
    imported, _ = load(capture.encode(), "capture.txt")
    assert [r["metrics"]["throughput_sps"] for r in imported.runs] == [177.24, 792.31]
    said = next(w for w in imported.warnings if "left out" in w)
    assert "OpenVINO (line 9, export failed: inference not supported on GPU)" in said
    assert "NCNN (line 11, exported, then prediction or validation failed: End-to-end torch.topk" in said
