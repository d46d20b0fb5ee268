"""Lambda's deeplearning-benchmark tables (`<framework>-<train|inference>-throughput-<precision>.csv`).

A wide table: name_gpu, num_gpu, watt, price, then one throughput column per model. The
`watt` column is the system's TDP, not measured power: it becomes the device's rated power,
never an energy figure. Units differ per model (images/s, sequences/s, tokens/s) and are not
stated; they are stored as published.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import Conversion, Importer, Source, clean_str, num, pos_int, positive, read_csv

FIXED = ["name_gpu", "num_gpu", "watt", "price"]
_NAME = re.compile(r"^([a-z0-9]+)-(train|inference)-throughput-(fp32|fp16|tf32|bf16)\.csv$", re.IGNORECASE)
SYSTEM_PREFIXES = ("LambdaCloud", "DellTexas", "Dell", "SMC", "1CC", "RAIDZ1", "Lambda")
_COUNT = re.compile(r"^(\d+)\s*x\s*", re.IGNORECASE)


def split_name(name: str) -> tuple[str | None, str]:
    system = None
    for prefix in SYSTEM_PREFIXES:
        if name.startswith(prefix + " "):
            system, name = prefix, name[len(prefix) + 1 :]
            break
    return system, _COUNT.sub("", name).strip()


class LambdaImporter(Importer):
    NAME = "lambda-dlbench"
    TOOL = "lambdal/deeplearning-benchmark"
    DESCRIPTION = "Lambda throughput and batch-size tables"

    def sniff(self, source: Source) -> bool:
        first = source.head.split("\n", 1)[0]
        return [c.strip() for c in first.split(",")][:2] == FIXED[:2]

    def convert(self, conv: Conversion) -> dict[str, Any]:
        header, rows = read_csv(conv, conv.source.text or "")
        m = _NAME.match(conv.source.base_name)
        mode = {"train": "train", "inference": "infer"}.get(m.group(2).lower()) if m else None
        mode = conv.mode(mode, "file name (<framework>-<train|inference>-throughput-<precision>.csv)")
        precision = conv.precision(m.group(3).lower() if m else None)
        is_bs_table = "-bs" in conv.source.base_name or "batch" in conv.source.base_name.lower()
        models = [h for h in header if h not in FIXED]
        conv.warn(
            "the watt column is TDP, not measured power: no energy figures; throughput units per model "
            "are not stated (images/s, sequences/s, tokens/s)"
        )
        runs = []
        for lineno, row in rows:
            name = clean_str(row[0] if row else None)
            if not name:
                raise conv.fail(f"line {lineno}: name_gpu", "empty")
            system, device_name = split_name(name)
            count = pos_int(row[1] if len(row) > 1 else None)
            watt = positive(num(row[2] if len(row) > 2 else None, f"line {lineno}: watt", conv))
            price = positive(num(row[3] if len(row) > 3 else None, f"line {lineno}: price", conv))
            device = conv.device(device_name, "gpu", where=f"line {lineno}: name_gpu")
            if watt and count:
                device["tdp_w"] = watt / count
            for model in models:
                i = header.index(model)
                raw = row[i] if i < len(row) else ""
                if raw == "" or raw.upper() in ("OOM", "NA", "N/A"):
                    continue
                value = num(raw, f"line {lineno}: {model}", conv)
                config: dict[str, Any] = {
                    "workload": model,
                    "model": model,
                    "mode": mode,
                    "precision": precision,
                    "gpu_count": count,
                }
                metrics: dict[str, Any] = {
                    "energy_missing_reason": "Lambda's table gives TDP (watt), not measured power"
                }
                if is_bs_table:
                    config["batch_size"] = pos_int(value)
                else:
                    metrics["throughput_sps"] = positive(value)
                    metrics["throughput_derivation"] = "as published; unit per model not stated"
                runs.append(
                    {
                        "run_id": conv.run_id(f"{lineno}-{model}"),
                        "status": "ok",
                        "device": dict(device),
                        "config": config,
                        "metrics": metrics,
                        "environment": {"system_name": system},
                        "notes": f"Lambda table row '{name}'; system TDP {watt or '?'} W; price {price or '?'} USD",
                    }
                )
        return conv.document(runs)
