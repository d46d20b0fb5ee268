"""Columns no field names, read by what their cells name (for the general reader, `importers.general_table`): a column
of GPU or Jetson names is the device ('Compute Name', 'Hardware'), a column of model files is the model ('filename':
yolov8n_fp16.engine, best.onnx, resnet50.hef), a column of int8 / fp8 the quantization, and a column of parameter
counts beside the model's ('Model Size': 0.5B, 3B(A570M)) joins the model's name, so that Qwen2 0.5B and Qwen2 1.5B
are two models; a table whose columns are devices (a figure per setup, the setups 'Jetson Nano', 'RPi 4 1950') gives
each run the device its column names, and figure columns that name different devices ('Jetson Orin Latency', 'A100
Throughput') are a run per device."""

from __future__ import annotations

import re

from importers.base import Conversion, check_run_count
from importers.device_text import device_named
from importers.table_fields import words_of
from importers.table_labels import LABELS
from importers.table_rows import NOT_TAG_WORDS, Columns, Rows, cell

# the files a model is saved or compiled to: TensorRT, ONNX, PyTorch, Hailo, TFLite, RKNN, GGUF, Core ML, OpenVINO
# IR, ExecuTorch, MNN, ncnn, Keras, TensorFlow, safetensors
MODEL_FILE = re.compile(r"(?:^|.*[/\\])(?P<stem>[^/\\]{1,160}?)\.(?:engine|plan|trt|onnx|pt|pth|torchscript|hef|tflite|"
                        r"rknn|gguf|mlpackage|mlmodel|mlmodelc|xml|pte|mnn|param|keras|h5|pb|safetensors|bin|ckpt|dlc|nnc)",
                        re.IGNORECASE)


def model_named(model: str | None) -> str | None:
    """A model given by its file ('models/yolov8n.onnx') is named by the file's stem ('yolov8n'), one given by a local
    folder ('/data/hf_models/Llama-3.1-70B') by the folder's name; a hub id ('meta-llama/Llama-3.1-8B') is kept
    whole."""
    m = MODEL_FILE.fullmatch(model) if model else None
    if m is None and model and model[:1] in "/~." and "/" in model.strip("/"):  # a local folder of weights
        return model.rstrip("/").rsplit("/", 1)[-1] or model
    return m.group("stem") if m else model


def _devices_named(header: list[str], rows: Rows, read: Columns) -> int | None:
    """The column no field reads whose short cells name GPUs or Jetsons ('Nvidia T4', 'RTX A6000'), half of them
    or more (beside CPUs, phones and TPUs no name rule knows), as a 'Compute Name', 'Hardware' or '平台' column does:
    the device column of a table that has none by name."""
    for i, name in enumerate(header):
        if i in read or words_of(name) & NOT_TAG_WORDS:
            continue
        cells = sorted({r[i].strip() for _, r in rows if i < len(r) and r[i].strip()})
        if not cells or any(len(c.split()) > 6 for c in cells) or any(c[:1].isdigit() for c in cells):
            continue
        looked = cells[:200]  # the names of a few hundred rows tell: never a regex pass over every distinct cell
        named = sum(1 for c in looked if device_named(c))
        placed = any(re.match(r"(?i)(cpu|gpu|cuda|mps|npu)\b", c) for c in looked)  # 'CPU (n_gpu_layers=0)'
        if 3 * named >= len(looked) and named >= min(2, len(looked)) or (
                2 * named >= len(looked) and named == 1 and not placed):  # 'RTX 4090' beside a phone
            return i
    return None


def _models_named(header: list[str], rows: Rows, read: Columns) -> int | None:
    """The column no field reads whose every cell is a model file's name, differing between rows."""
    for i in range(len(header)):
        if i in read:
            continue
        cells = {r[i].strip() for _, r in rows[:500] if i < len(r) and r[i].strip()}
        if len(cells) > 1 and all(MODEL_FILE.fullmatch(c) for c in cells):
            return i
    return None


_QUANTIZED = re.compile(r"(?i)int[48]|uint8|fp[48]|nf4|mxfp[48]|nvfp4|w[48]a(?:8|16)")  # weights stored in fewer bits


def _quantizations_named(header: list[str], rows: Rows, read: Columns) -> int | None:
    """The column no field reads whose every cell names an integer or 8-bit float format ('variant': int8), as a
    model's quantization: the precision a dtype column gives stays the compute's."""
    for i, name in enumerate(header):
        if i in read or words_of(name) & NOT_TAG_WORDS:
            continue
        cells = {r[i].strip() for _, r in rows[:500] if i < len(r) and r[i].strip()}
        if cells and all(_QUANTIZED.fullmatch(c) for c in cells):
            return i
    return None


_PARAM_COUNT = re.compile(r"^(E?\d{1,4}(?:\.\d{1,3})?\s?[BMK])(?:\s?\([A-Za-z]?\d{1,4}(?:\.\d{1,3})?[BMK]\))?$")
_SIZE_WORDS = {"size", "params", "parameters", "param", "parametros", "参数量"}


def _sized_models(header: list[str], rows: Rows, read: Columns) -> int | None:
    """The column no field reads, named a size or parameters, whose every cell is a parameter count ('0.5B',
    '3B(A570M)': a mixture of experts' active ones after it), beside a model column."""
    if not any(f.key == "model" for f, _ in read.values()):
        return None
    for i, name in enumerate(header):
        if i in read or not words_of(name) & _SIZE_WORDS:
            continue
        cells = [r[i].strip() for _, r in rows[:500] if i < len(r) and r[i].strip()]
        if cells and all(_PARAM_COUNT.fullmatch(c) for c in cells):
            return i
    return None


def named_columns(conv: Conversion, header: list[str], rows: Rows, read: Columns, taken: dict[str, str]
                  ) -> list[str]:
    """The device, the model and the quantization read from columns that name them, where no column gave them by its
    name: the names of the columns now read (`read` and `taken` updated)."""
    found: list[str] = []
    for key, finder, what in (("device", _devices_named, "devices"), ("model", _models_named, "model files"),
                              ("quantization", _quantizations_named, "integer or 8-bit float formats (int8, fp8)")):
        if key not in taken and (i := finder(header, rows, read)) is not None:
            read[i] = (LABELS[key], None)
            taken[key] = header[i]
            found.append(header[i][:40])
            conv.warn(f"{header[i][:80]} read as the {key}: its cells name {what}")
    if (size := _sized_models(header, rows, read)) is not None:
        model = next(i for i, (f, _) in read.items() if f.key == "model")
        for _, row in rows:
            count = row[size].strip() if size < len(row) else ""
            if count and model < len(row) and row[model].strip() and _compact(count) not in _compact(row[model]):
                row[model] = f"{row[model].strip()} {count}"[:200]
        found.append(header[size][:40])
        conv.warn(f"{header[size][:40]} gives each model's parameter count: joined to its name (a 0.5B and a 1.5B "
                  "model are two models)")
    return found


def _compact(text: str) -> str:
    return text.lower().replace(" ", "")


def devices_of_setups(conv: Conversion, header: list[str], rows: Rows, columns: Columns, setups: list[str]
                      ) -> tuple[list[str], Rows, Columns]:
    """Where a table gives a figure per setup (`table_setups.split_setups`: `setups` their names, each a run's tag's
    last part) and half its setups or more name devices, each run's device the one its setup names (the setup stays
    in the tag); the table as it is otherwise."""
    tag = next((i for i, (f, _) in columns.items() if f.key == "tag"), None)
    named = {s: d for s in setups if (d := device_named(s))}
    if tag is None or not setups or 2 * len(named) < len(setups) or any(
            f.key == "device" for f, _ in columns.values()):
        return header, rows, columns
    conv.warn(f"the setups the columns name are devices ({', '.join(sorted(named))[:120]}): each run's device the "
              "one its column names")
    out = [(n, [*row, *[""] * (len(header) - len(row)), named.get(cell(row, tag).rsplit(", ", 1)[-1], "")])
           for n, row in rows]
    return [*header, "device (from the column names)"], out, {**columns, len(header): (LABELS["device"], None)}


def devices_of_columns(conv: Conversion, header: list[str], rows: Rows, columns: Columns,
                       twins: list[tuple[int, int]]) -> tuple[list[str], Rows, Columns]:
    """A table whose every figure column names a device, the devices giving different figures ('Jetson Orin Latency
    (bs1)', 'A100 Throughput (bs1)'): each row read as one run per device, with that device's figures, so that one
    device's latency never joins another's throughput in a run. Any other table as it is."""
    if any(f.key == "device" for f, _ in columns.values()):
        return header, rows, columns
    field = {i: f.key for i, (f, _) in columns.items() if f.section == "metrics"}
    field |= {other: field[first] for first, other in twins if first in field}  # 'A100 Throughput (bs16)' too
    named = {i: d for i in field if (d := device_named(header[i]))}
    devices = list(dict.fromkeys(named.values()))
    if len(devices) < 2 or len(named) < len(field) or len({field[i] for i in named}) < 2:
        return header, rows, columns  # one figure in a column per device: a setup each (`devices_of_setups`)
    check_run_count(conv, len(rows) * len(devices), "its rows, a run per device")
    conv.warn(f"the figure columns name devices ({', '.join(devices)[:120]}): each row read as a run per device, "
              "with that device's figures")
    out: Rows = []
    for n, row in rows:
        for device in devices:
            cells = [*row, *[""] * (len(header) - len(row))]
            for i, d in named.items():
                if d != device:
                    cells[i] = ""
            if any(cells[i].strip() for i, d in named.items() if d == device):
                out.append((n, [*cells, device]))
    return [*header, "device (from the column names)"], out, {**columns, len(header): (LABELS["device"], None)}


# a model named in a heading or a setup's words, by its parameter count: 'Qwen3-235B-A22B', 'Llama-3.1-8B-Instruct',
# 'Llama 2 7B', 'Mixtral 8x7B', 'llama-2-7b-chat.Q4_0' ('Jetson Orin 8GB' names memory, no model)
_MODEL_IN_TEXT = re.compile(
    r"(?<![\w.-])(?P<name>[A-Za-z][A-Za-z0-9.]{1,30}(?:[-_][A-Za-z0-9.]{1,20}|\s\d{1,2}(?:\.\d{1,2})?){0,3})"
    r"(?P<sep>[-_\s])(?P<size>(?:\d{1,2}x)?\d{1,4}(?:\.\d{1,2})?[BbMm])(?P<rest>(?:[-_][A-Za-z0-9.]{1,20})*)(?![\w.])")
_NOT_MODEL = {"batch", "size", "benchmark", "total", "model", "models", "params", "parameters", "dataset", "tokens",
              "context", "sequence", "seq", "input", "output", "memory", "vram", "ram", "test", "run", "with", "using",
              "for", "on", "of", "and", "the", "dense", "moe", "top", "bs", "len", "length", "steps", "step"}


# a heading that says which model its table measured: '#### Model: DeepSeekV3', '## Modelo: Qwen3-8B'
_MODEL_SAID = re.compile(
    r"(?i)(?:^|/\s)(?:model|modelo|modell|modèle|modello)\s*:\s*(?P<name>[^/,:;]{2,80}?)\s*(?=$|\s/)")


def model_in_tag(conv: Conversion, tag: str | None) -> str | None:
    """The one model a row's tag (the headings above its table, its setup's words) says ('Model: DeepSeekV3') or
    names by its parameter count ('Megatron Training Qwen3-235B-A22B MoE'), said; None where it names none or
    several."""
    said = {m.group("name").strip() for m in _MODEL_SAID.finditer((tag or "")[:500])}
    if len(said) == 1:
        conv.warn("a model named in a heading above a table ('Model: ...') read as the model of its rows, where no "
                  "column names one")
        return said.pop()
    found = set()
    for m in _MODEL_IN_TEXT.finditer((tag or "")[:500]):
        spaced = m.group("sep").isspace() or " " in m.group("name")
        if m.group("name").split()[0].lower() in _NOT_MODEL or spaced and not (
                m.group("name")[0].isupper() and m.group("size")[-1] in "BM"):
            continue  # 'Batch 1M', 'on 7B', 'a 7b': words, no model's name
        found.add(m.group(0))
    if len(found) != 1:
        return None
    conv.warn("a model named in the headings above a table or in a row's setup (by its parameter count, as "
              "'Llama-3.1-8B') read as the model of its rows, where no column names one")
    return found.pop()
