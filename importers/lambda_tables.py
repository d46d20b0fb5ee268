"""Lambda's deeplearning-benchmark tables (lambdal/deeplearning-benchmark, PyTorch training).

Every layout the repository published:
- v1 `pytorch-train-{throughput,bs}-<precision>.csv` and its `.json` records (csv2json.py):
  name_gpu, num_gpu, watt, price, then one column per task;
- v2 `pytorch-train-throughput-v2-<precision>.csv` (compile_results_pytorch_v2.py): a blank first
  header cell, the results folder name as the row key (`LambdaBM_ENG04_1xH200_140GB_SXM_h200_v2`:
  the GPU count and model are only in it), no watt or price;
- v0 (2020) `pytorch_benchmark_throughput.csv`: name_gpu, then `<task>_<PRECISION>` columns.

Units per task come from the compiler's regexes over the NVIDIA DeepLearningExamples logs: resnet50,
ssd and maskrcnn images/s; bert_* sequences/s; gnmt and transformerxl* tokens/s; ncf samples/s;
tacotron2 mel frames/s; waveglow audio samples/s. All are whole-system figures (every GPU of the
row), truncated to integers. A cell of 0 means the task was not run (or its log did not parse):
no run. The `watt` column is TDP x GPUs, not measured power: the device's rated power, never an
energy figure. `-bs-` tables hold per-GPU batch sizes, not throughputs.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import (
    Conversion,
    Importer,
    Source,
    check_run_count,
    clean_str,
    num,
    pos_int,
    positive,
    read_csv,
)

FIXED = ["name_gpu", "num_gpu", "watt", "price"]
_NAME = re.compile(r"^([a-z0-9]+)-(train|inference)-(throughput|bs)(?:-v2)?-(fp32|fp16|tf32|bf16)\.(csv|json)$",
                   re.IGNORECASE)
SYSTEM_PREFIXES = ("LambdaCloud", "DellTexas", "Dell", "SMC", "1CC", "RAIDZ1", "Lambda")
_COUNT = re.compile(r"^(\d+)\s*x\s*", re.IGNORECASE)
_KEY_DEVICE = re.compile(r"(?:^|_)(\d+)x([A-Za-z0-9]+(?:_\d+GB)?(?:_(?:SXM\d?|PCIe|NVL))?)")
_V0_COLUMN = re.compile(r"^(.+)_(AMP|FP16|FP32|TF32|BF16)$", re.IGNORECASE)
# task -> (column, sample unit or None, what the number counts), from compile_results_pytorch*.py
UNITS: dict[str, tuple[str, str | None, str]] = {
    "resnet50": ("throughput_sps", "image", "images/s"),
    "ssd": ("throughput_sps", "image", "images/s"),
    "maskrcnn": ("throughput_sps", "image", "images/s"),
    "bert_base_squad": ("throughput_sps", "sequence", "sequences/s"),
    "bert_large_squad": ("throughput_sps", "sequence", "sequences/s"),
    "ncf": ("throughput_sps", "sample", "samples/s"),
    "tacotron2": ("throughput_sps", "frame", "mel-spectrogram frames/s"),
    "waveglow": ("throughput_sps", "sample", "audio samples/s"),
    "gnmt": ("tokens_per_s", None, "tokens/s"),
    "transformerxlbase": ("tokens_per_s", None, "tokens/s"),
    "transformerxllarge": ("tokens_per_s", None, "tokens/s"),
}
PRECISIONS = {"amp": "fp16", "fp16": "fp16", "fp32": "fp32", "tf32": "tf32", "bf16": "bf16"}


def split_name(name: str) -> tuple[str | None, str]:
    system = None
    for prefix in SYSTEM_PREFIXES:
        if name.startswith(prefix + " "):
            system, name = prefix, name[len(prefix) + 1 :]
            break
    return system, _COUNT.sub("", name).strip()


def key_device(key: str) -> tuple[int, str] | None:
    """The GPU count and model in a results folder name ('LambdaOD_4x_Texas_2xH100_80GB_SXM5_..._v2' -> 2, H100 80GB
    SXM5: the last `<k>x<GPU>` part, which is what was benchmarked)."""
    found = _KEY_DEVICE.findall(key)
    if not found:
        return None
    count, gpu = found[-1]
    return int(count), gpu.replace("_", " ")


class LambdaImporter(Importer):
    NAME = "lambda-dlbench"
    TOOL = "lambdal/deeplearning-benchmark"
    DESCRIPTION = "Lambda throughput and batch-size tables (v0, v1 CSV and JSON, v2)"

    def sniff(self, source: Source) -> bool:
        doc = source.json
        if isinstance(doc, list):
            return bool(doc) and all(isinstance(r, dict) and "name_gpu" in r for r in doc[:3])
        cols = [c.strip() for c in source.head.split("\n", 1)[0].split(",")]
        if cols[:2] == FIXED[:2]:
            return True
        if cols[:1] == ["name_gpu"] and any(_V0_COLUMN.match(c) for c in cols[1:]):
            return True
        return cols[:1] == [""] and len(cols) > 2 and sum(c in UNITS for c in cols[1:]) >= 2

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        rows = self._json_rows(conv, doc) if isinstance(doc, list) else self._csv_rows(conv)
        check_run_count(conv, sum(len(r[5]) for r in rows), "its devices x tasks")
        m = _NAME.match(conv.source.base_name)
        mode = {"train": "train", "inference": "infer"}.get(m.group(2).lower()) if m else None
        if mode is None and "-inference-" not in conv.source.base_name:
            mode = "train"
            conv.warn("Lambda's PyTorch benchmark measures training throughput (benchmark_pytorch.sh runs the "
                      "DeepLearningExamples training scripts); mode stored as train")
        mode = conv.mode(mode, "file name (<framework>-<train|inference>-throughput-<precision>.csv)")
        file_precision = conv.precision(m.group(4).lower() if m else None)
        is_bs_table = bool(m and m.group(3).lower() == "bs") or "-bs-" in conv.source.base_name
        conv.warn("the watt column is TDP, not measured power: no energy figures")
        runs: list[dict[str, Any]] = []
        not_run = 0
        for where, key, count, watt, price, cells in rows:
            system, device_name = split_name(key)
            from_key = key_device(key) if count is None else None
            if from_key:
                count, device_name = from_key
                system = key
            device = conv.device(device_name, "gpu", where=f"{where}: name_gpu")
            if watt and count:
                device["tdp_w"] = watt / count
            for column, raw in cells:
                v0 = _V0_COLUMN.match(column)
                task = v0.group(1) if v0 else column
                precision = PRECISIONS[v0.group(2).lower()] if v0 else file_precision
                if raw is None or (isinstance(raw, str) and raw.strip().upper() in ("", "OOM", "NA", "N/A")):
                    continue
                value = num(raw, f"{where}: {column}", conv)
                if value is None or value <= 0:
                    not_run += 1
                    continue
                config: dict[str, Any] = {"workload": task, "model": task, "mode": mode, "precision": precision,
                                          "gpu_count": count}
                metrics: dict[str, Any] = {
                    "energy_missing_reason": "Lambda's table gives TDP (watt), not measured power"}
                notes = [f"Lambda table row '{key}'"]
                if is_bs_table:
                    config["batch_size"] = pos_int(value)
                    notes.append("per-GPU batch size")
                else:
                    field, unit, what = UNITS.get(task.lower(), ("throughput_unit_not_stated", None, "unit not stated"))
                    metrics[field] = value
                    if unit:
                        metrics["sample_unit"] = unit
                    notes.append(f"{value:g} {what}, whole system ({count or '?'} GPU(s))"
                                 + (", truncated to an integer by Lambda's compiler" if value == int(value) else ""))
                if watt or price:
                    notes.append(f"system TDP {watt or '?'} W; price {price or '?'} USD")
                runs.append({
                    "run_id": conv.run_id(f"{where}-{column}"),
                    "status": "ok",
                    "device": dict(device),
                    "config": config,
                    "metrics": metrics,
                    "environment": {"system_name": system},
                    "notes": "; ".join(notes),
                })
        if not_run:
            conv.warn(f"{not_run} cell(s) of 0 (task not run, or its log did not parse) are not runs")
        return conv.document(runs)

    def _csv_rows(self, conv: Conversion) -> list[tuple[str, str, int | None, float | None, float | None,
                                                        list[tuple[str, Any]]]]:
        header, lines = read_csv(conv, conv.source.text or "")
        fixed = [h for h in header if h in FIXED]
        out = []
        for lineno, row in lines:
            key = clean_str(row[0] if row else None)
            if not key:
                raise conv.fail(f"line {lineno}: {header[0] or 'row key'}", "empty")
            values = dict(zip(header, row))
            count = pos_int(values.get("num_gpu")) if "num_gpu" in fixed else None
            watt = positive(num(values.get("watt"), f"line {lineno}: watt", conv)) if "watt" in fixed else None
            price = positive(num(values.get("price"), f"line {lineno}: price", conv)) if "price" in fixed else None
            cells = [(h, row[i] if i < len(row) else "") for i, h in enumerate(header) if i > 0 and h not in FIXED]
            out.append((f"line {lineno}", key, count, watt, price, cells))
        return out

    def _json_rows(self, conv: Conversion, doc: list[Any]) -> list[tuple[str, str, int | None, float | None,
                                                                        float | None, list[tuple[str, Any]]]]:
        out = []
        for i, r in enumerate(doc):
            where = f"[{i}]"
            if not isinstance(r, dict):
                raise conv.fail(where, "expected an object")
            key = clean_str(r.get("name_gpu"))
            if not key:
                raise conv.fail(f"{where}.name_gpu", "empty")
            cells = [(k, v) for k, v in r.items() if k not in FIXED]
            out.append((where, key, pos_int(r.get("num_gpu")), positive(num(r.get("watt"), f"{where}.watt", conv)),
                        positive(num(r.get("price"), f"{where}.price", conv)), cells))
        return out
