"""Ultralytics' `benchmark()` (`yolo benchmark model=... imgsz=... device=...`, `YOLO(...).benchmark()`), learned
from its writer, ultralytics/ultralytics ultralytics/utils/benchmarks.py (`benchmark`; YOLOv8.0's
ultralytics/yolo/utils/benchmarks.py), the validator's timing (ultralytics/engine/validator.py, `self.speed`), the
console header (ultralytics/utils/torch_utils.py `select_device`) and real benchmarks.log files.

Each call exports the model to every format (or the one `format=` names), predicts once, validates at batch=1 and
appends to `benchmarks.log` (and logs) one block:

    Benchmarks complete for yolo11n.pt on coco128.yaml at imgsz=640 (59.65s)
    Benchmarks legend:  - ✅ Success  - ❎ Export passed but validation failed  - ❌️ Export failed
        Format Status❔  Size (MB)  metrics/mAP50-95(B)  Inference time (ms/im)   FPS
    0  PyTorch       ✅        5.4               0.5101                  398.74  2.51

The table is pandas' printout (index from 0; YOLOv8.0 had no FPS column and no legend, NaN in a missing cell, later
'-'), or, in recent releases, polars' ASCII table (`+---+` borders, `|` edges, index from 1). The metric column is
the task's (metrics/mAP50-95(B) detection, (M) segmentation, (P) pose, metrics/accuracy_top5 classification).

One run per ✅ row: `Inference time (ms/im)` = the validator's `speed["inference"]`, the model-forward time summed
over the validation images / their count, at batch 1 (pre-processing and post-processing/NMS excluded), stored as
latency_avg_ms; FPS = round(1000 / (ms + 1e-3), 2), which benchmark() computes from the same unrounded time, is
stored as throughput_sps in images/s with the formula in throughput_derivation (derived, not a separately measured
rate: kept, marked, because it is the figure the tool reports; the printed FPS has more digits than 1000 / the
rounded ms for sub-ms times), else 1000 / ms where no FPS is printed. FPS must agree with the time (a check of the
columns). The mAP/accuracy (quality, not speed), the exported size and the block's `(59.65s)` (the whole call:
exports, warm-up predictions, validations; no measurement window) go in the notes. ❌ (export failed, or a format the
platform cannot run) and ❎ (exported, then prediction or validation failed) rows carry no time (the code appends
None): left out, named in one warning with the console's `Benchmark failure for X: why` where captured; a file of
failed rows only is refused. The model is the `.pt` the block names (`runs/.../NAME/weights/best.pt` is
`NAME/best.pt`); the dataset and the full path are in the tag; the format is the engine. Batch 1 is the code's own
(a fork that passes another batch would print the same table). The log names no device: a console capture's
`Ultralytics 8.x 🚀 Python-... torch-... CUDA:0 (NAME, NMiB)` / `CPU (NAME)` / `MPS (NAME)` header printed since the
previous block names it (one name, else not stated); the printout never states the precision (a captured call's
`half=` / `int8=` go in the notes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count
from importers.text_lines import TERMINAL

MAX_LINES = 200_000
SNIFF_CHARS = 4_000_000  # a console capture may print its first block after long export logs
_COMPLETE = re.compile(r"^[ \t]{0,8}Benchmarks complete for (?P<model>[^\n]{1,500}?) on (?P<data>[^\n]{1,500}?) at "
                       r"imgsz=(?P<imgsz>\[[^\]\n]{0,40}\]|[^\s(]{1,40}) \((?P<secs>\d{1,9}(?:\.\d{1,6})?)s\)[ \t\r]*$",
                       re.MULTILINE)
_HEADER = re.compile(r"^[ \t|]{0,20}Format\s{1,40}(?P<status>Status\S{0,3}\s{1,40})?Size \(MB\)\s{1,40}"
                     r"(?P<key>\S{1,80})\s{1,40}Inference time \(ms/im\)(?P<fps>\s{1,40}FPS)?[ \t|]{0,200}$")
_BORDER = re.compile(r"^[ \t]{0,8}\+[-=+]{2,1000}\+[ \t]*$")
# a table row, whole or cut: a leading index or a status emoji (a Markdown fence or a log line after a pasted table is
# none); benchmark() itself ends its table with a blank line
_ROW_LIKE = re.compile(r"^[ \t|]{0,20}(?:\d{1,3}\s|[^\n]{0,80}?[✅❎❌])")
_LEGEND = re.compile(r"^[ \t]{0,8}Benchmarks legend:")
_DEVICE_HEAD = re.compile(r"^[ \t]{0,8}Ultralytics (?:YOLOv)?(?P<version>\d{1,3}\.\d{1,3}\.\d{1,5})\b[^\n]{0,12}?"
                          r"Python-\S{1,40} torch-\S{1,80} (?P<device>[^\n]{1,300}?)[ \t]*$")
_GPU = re.compile(r"(?:CUDA|NPU):\d{1,3} \((?P<name>[^\n]{1,200}?)(?:, (?P<mib>\d{1,9})MiB)?\)")
_CPU = re.compile(r"(?P<kind>CPU|MPS)(?: \((?P<name>[^\n]{1,200})\))?")
_MORE_GPU = re.compile(r"^[ \t]{8,}CUDA:\d{1,3} \(")
_FAILURE = re.compile(r"Benchmark failure for (?P<fmt>[^:\n]{1,60}): ?(?P<why>[^\n]{0,300})")
_CALL_ARG = re.compile(r"\b(half|int8)\s{0,3}=\s{0,3}(True|False)\b")
_STATUS = {"✅": "ok", "❎": "exported, then prediction or validation failed", "❌": "export failed"}
_MISSING = {"-", "nan", "none", "<na>", "null"}
_ENGINES = {"pytorch": "pytorch", "torchscript": "torchscript", "onnx": "onnxruntime", "openvino": "openvino",
            "tensorrt": "tensorrt", "coreml": "coreml", "tensorflow savedmodel": "tensorflow-savedmodel",
            "tensorflow graphdef": "tensorflow-graphdef", "tensorflow lite": "tflite", "tensorflow edge tpu": "edgetpu",
            "tensorflow.js": "tfjs", "paddlepaddle": "paddle", "mnn": "mnn", "ncnn": "ncnn", "imx": "imx",
            "rknn": "rknn", "executorch": "executorch", "axelera": "axelera", "axelera ai": "axelera"}
_TASKS = {"(B)": "object-detection", "(M)": "instance-segmentation", "(P)": "pose-estimation"}
NO_POWER = "Ultralytics benchmark() measures no power"


@dataclass
class _Row:
    line: int
    fmt: str
    status: str | None
    size_mb: float | None
    metric: float | None
    ms: float | None
    fps: float | None


@dataclass
class _Block:
    line: int
    model: str
    data: str
    imgsz: str
    secs: float
    key: str = ""
    rows: list[_Row] = field(default_factory=list)
    context: list[tuple[int, str]] = field(default_factory=list)  # console lines printed since the previous block


def _number(conv: Conversion, token: str, where: str) -> float | None:
    if token.lower() in _MISSING:
        return None
    try:
        return float(token)
    except ValueError:
        raise conv.fail(where, f"{token[:30]!r} is not a number: the row is cut or damaged (a benchmark() row is "
                        "Format, Status, Size (MB), metric, Inference time (ms/im)[, FPS]); import the whole "
                        "benchmarks.log") from None


class UltralyticsBenchmarkImporter(Importer):
    NAME = "ultralytics-benchmark"
    TOOL = "Ultralytics benchmark"
    DESCRIPTION = ("Ultralytics' benchmarks.log or `yolo benchmark` console output ('Benchmarks complete for MODEL on "
                   "DATA at imgsz=N' and its Format / Inference time (ms/im) / FPS table)")

    def sniff(self, source: Source) -> bool:
        head = source.head
        if _found(head):
            return True
        if "ultralytics" not in head.lower() and "yolo" not in head.lower():
            return False
        return _found((source.text or "")[:SNIFF_CHARS])

    def convert(self, conv: Conversion) -> dict[str, Any]:
        text = conv.source.text
        if text is None:
            raise conv.fail("(whole file)", "not UTF-8 text: a benchmarks.log is the text Ultralytics appends")
        blocks = self._blocks(conv, text)
        if not blocks:
            raise conv.fail("(whole file)", "no 'Benchmarks complete for MODEL on DATA at imgsz=N (Ts)' line followed "
                            "by its table: not a finished Ultralytics benchmark")
        ok = [(b, r) for b in blocks for r in b.rows if r.ms]
        for r in (r for b in blocks for r in b.rows if r.ms == 0):
            conv.warn(f"line {r.line}: {r.fmt} 0.00 ms/im is below the printout's 0.01 ms resolution: no run")
        self._warn_failed(conv, blocks)
        if not ok:
            raise conv.fail("(whole file)", "every format row failed (❌ export failed, ❎ exported but prediction or "
                            "validation failed): no inference time to import")
        check_run_count(conv, len(ok), "the benchmark rows with a time")
        versions = {m.group("version") for b in blocks for _, line in b.context if (m := _DEVICE_HEAD.match(line))}
        conv.tool_version = versions.pop() if len(versions) == 1 else None
        devices = {id(b): self._device(conv, b) for b in blocks}
        return conv.document([self._run(conv, i, b, r, devices[id(b)]) for i, (b, r) in enumerate(ok)])

    @staticmethod
    def _blocks(conv: Conversion, text: str) -> list[_Block]:
        lines = [TERMINAL.sub("", raw) if "\x1b" in raw else raw for raw in text.splitlines()[:MAX_LINES]]
        blocks: list[_Block] = []
        context: list[tuple[int, str]] = []
        i = 0
        while i < len(lines):
            m = _COMPLETE.match(lines[i])
            if m is None:
                if _DEVICE_HEAD.match(lines[i]) or _MORE_GPU.match(lines[i]) or _FAILURE.search(lines[i]) or (
                        _CALL_ARG.search(lines[i]) and "benchmark" in lines[i].lower()):
                    context.append((i + 1, lines[i][:400]))
                i += 1
                continue
            block = _Block(i + 1, m.group("model").strip(), m.group("data").strip(), m.group("imgsz"),
                           float(m.group("secs")), context=context[-200:])
            context = []
            j = i + 1
            while j < len(lines) and j <= i + 4 and (not lines[j].strip() or _LEGEND.match(lines[j])
                                                     or _BORDER.match(lines[j])):
                j += 1
            header = _HEADER.match(lines[j]) if j < len(lines) else None
            if header is None:
                raise conv.fail(f"line {i + 1}", "a 'Benchmarks complete' line without its table (Format, Status❔, "
                                "Size (MB), metric, Inference time (ms/im)) after it: the capture is cut or the table "
                                "was reformatted; import the benchmarks.log Ultralytics wrote")
            block.key = header.group("key")
            j += 1
            while j < len(lines) and _BORDER.match(lines[j]) and lines[j].strip().startswith("+="):
                j += 1
            while j < len(lines) and _ROW_LIKE.match(lines[j]) and not _BORDER.match(lines[j]):
                block.rows.append(_row(conv, j + 1, lines[j], bool(header.group("fps"))))
                j += 1
            if not block.rows:
                raise conv.fail(f"line {i + 1}", "the benchmark table has a header and no row: the capture is cut")
            blocks.append(block)
            i = j
        return blocks

    @staticmethod
    def _warn_failed(conv: Conversion, blocks: list[_Block]) -> None:
        failed = []
        for b in blocks:
            why = {m.group("fmt").strip(): m.group("why").strip() for _, line in b.context
                   if (m := _FAILURE.search(line))}
            for r in b.rows:
                if r.ms is None:
                    said = _STATUS.get(r.status or "", "failed (no time)")
                    reason = f": {why[r.fmt][:120]}" if why.get(r.fmt) else ""
                    failed.append(f"{r.fmt} (line {r.line}, {said}{reason})")
        if failed:
            shown = "; ".join(failed[:12]) + (f"; and {len(failed) - 12} more" if len(failed) > 12 else "")
            conv.warn(f"{len(failed)} format row(s) without a time left out (benchmark() records no time for a "
                      f"failed export, prediction or validation): {shown}")

    @staticmethod
    def _device(conv: Conversion, b: _Block) -> tuple[dict[str, Any], str | None]:
        heads = [(n, m) for n, line in b.context if (m := _DEVICE_HEAD.match(line))]
        several = any(_MORE_GPU.match(line) for _, line in b.context)
        named: dict[str, tuple[int, str, float | None]] = {}
        bare = False
        for n, m in heads:
            dev = m.group("device")
            gpu = _GPU.match(dev)
            cpu = _CPU.match(dev)
            if gpu is not None:
                mib = gpu.group("mib")
                named.setdefault(gpu.group("name").strip(), (n, "gpu", int(mib) * 1.048576 / 1e3 if mib else None))
            elif cpu is not None and cpu.group("name") and cpu.group("name").strip().lower() != "unknown":
                named.setdefault(cpu.group("name").strip(), (n, "cpu" if cpu.group("kind") == "CPU" else "gpu", None))
            else:
                bare = True
        where = f"(line {b.line}: benchmarks.log names no device; only a console capture's Ultralytics header does)"
        if several or len(named) > 1:
            said = "several GPUs" if several else ", ".join(named)[:200]
            conv.warn(f"line {b.line}: the console headers before this block name {said}: no one device taken")
            return conv.device(None, where=f"(line {b.line}: several devices in the header)"), None
        if len(named) == 1:
            name, (n, kind, memory) = next(iter(named.items()))
            device = conv.device(name, kind, where=where, memory_gb=round(memory, 2) if memory else None)
            return device, f"device from the Ultralytics console header at line {n}"
        if bare:
            return conv.device(None, "cpu", where=f"(line {b.line}: the Ultralytics header says CPU without its "
                               "model)"), "the console header names the CPU without its model"
        return conv.device(None, where=where), None

    @staticmethod
    def _run(conv: Conversion, index: int, b: _Block, r: _Row, device: tuple[dict[str, Any], str | None]
             ) -> dict[str, Any]:
        assert r.ms  # rows with a time above zero only
        path = b.model
        parts = re.split(r"[\\/]", path)
        model = parts[-1]
        if model in ("best.pt", "last.pt") and len(parts) >= 3 and parts[-2] == "weights":
            model = f"{parts[-3]}/{model}"
        stem = re.sub(r"\.(pt|pth|yaml|yml|onnx|engine)$", "", model)
        imgsz = _image_size(b.imgsz)
        metrics: dict[str, Any] = {"energy_missing_reason": NO_POWER, "sample_unit": "image"}
        metrics["latency_avg_ms"] = r.ms
        if r.fps is not None and r.fps > 0:
            metrics.update(throughput_sps=r.fps, throughput_derivation=(
                "FPS = round(1000 / (Inference time ms/im + 0.001), 2), benchmark()'s own, from the unrounded time: "
                "images/s of model forward passes at batch 1, not a separately measured rate"))
        else:
            metrics.update(throughput_sps=1000 / r.ms, throughput_derivation=(
                "1000 / Inference time (ms/im): images/s of model forward passes at batch 1 (this version prints no "
                "FPS), not a separately measured rate"))
        notes = [f"Ultralytics benchmark(): {r.fmt} export of {path[:200]}, validated on {b.data[:200]} at imgsz "
                 f"{b.imgsz} and batch 1 (line {b.line})",
                 "Inference time (ms/im) = the validator's model-forward time per image (pre-processing and "
                 "post-processing/NMS excluded)"]
        if r.metric is not None:
            notes.append(f"{b.key} {r.metric:g} on {b.data[:200]} (accuracy, not a speed figure: not stored as a "
                         "metric)")
        if r.size_mb is not None:
            notes.append(f"exported model {r.size_mb:g} MB")
        notes.append(f"({b.secs:g}s) is the whole benchmark() call of this block (exports, warm-up predictions and "
                     "validations): no measurement window, not stored")
        if device[1]:
            notes.append(device[1])
        args = sorted({f"{m.group(1)}={m.group(2)}" for _, line in b.context for m in _CALL_ARG.finditer(line)})
        if args:
            notes.append(f"the captured call says {', '.join(args)} (precision per format not stated by the table)")
        task = next((t for k, t in _TASKS.items() if b.key.endswith(k)), None)
        if task is None and "accuracy" in b.key:
            task = "image-classification"
        tag = f"format {r.fmt}; data {b.data}" + (f"; {path}" if path != parts[-1] else "")
        tag = tag if len(tag) <= 200 else f"{tag[:100]}...{tag[-97:]}"
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": device[0],
            "config": {
                "workload": conv.hints.workload or stem[:200],
                "model": model[:200],
                "task": task,
                "mode": "infer",
                "precision": conv.precision(None),
                "batch_size": 1,
                "image_size": imgsz,
                "engine": _ENGINES.get(r.fmt.lower(), r.fmt.lower()[:200]),
                "tag": tag,
            },
            "metrics": metrics,
            "flags": [],
            "notes": "; ".join(notes),
        }


def _found(text: str) -> bool:
    for n, m in enumerate(_COMPLETE.finditer(text)):
        if "Inference time (ms/im)" in text[m.end():m.end() + 3000]:
            return True
        if n >= 20:
            break
    return False


def _image_size(text: str) -> int | None:
    sides = {int(s) for s in re.findall(r"\d{1,6}", text)}
    return sides.pop() if len(sides) == 1 and min(sides) > 0 else None


def _row(conv: Conversion, n: int, line: str, has_fps: bool) -> _Row:
    where = f"line {n}"
    cells = line.strip().strip("|").split()
    count = 4 if has_fps else 3
    if len(cells) < count + 1:
        raise conv.fail(where, f"{line.strip()[:80]!r} is not a whole benchmark row (Format, Status, Size (MB), "
                        "metric, Inference time (ms/im)[, FPS]): the capture is cut; import the whole benchmarks.log")
    values, rest = cells[-count:], cells[:-count]
    status = None
    if rest and rest[-1].rstrip("\ufe0f") in _STATUS:
        status = rest.pop().rstrip("\ufe0f")
    if len(rest) > 1 and rest[0].isdigit():
        rest = rest[1:]
    fmt = " ".join(rest)
    if not fmt or len(fmt) > 60:
        raise conv.fail(where, f"{line.strip()[:80]!r}: no export format name in the row: the table is damaged")
    size, metric, ms = (_number(conv, v, f"{where}: {fmt} {col}") for v, col in
                        zip(values[:3], ("Size (MB)", "metric", "Inference time (ms/im)"), strict=True))
    fps = _number(conv, values[3], f"{where}: {fmt} FPS") if has_fps else None
    if status == "✅" and ms is None:
        raise conv.fail(where, f"{fmt} is marked ✅ without an inference time: the row is damaged")
    if status in ("❎", "❌") and ms is not None:
        raise conv.fail(where, f"{fmt} is marked {status} (failed) yet has a time: the row is damaged")
    if ms is not None and fps is not None and ms > 0.01:
        low, high = 1000 / (ms + 0.005 + 1e-3), 1000 / (ms - 0.005 + 1e-3)
        if not low - 0.006 <= fps <= high + 0.006:
            raise conv.fail(where, f"{fmt} FPS {fps:g} is not 1000 / its Inference time {ms:g} ms/im (benchmark() "
                            "computes one from the other): the columns are misread or the row was edited")
    return _Row(n, fmt, status, size, metric, ms, fps)
