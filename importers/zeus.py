"""Zeus: NSDI'23 power traces (`summary_power_<gpu>.csv`: power_limit W, time_per_epoch s,
average_power W) and power-limit-optimizer profiles (`start_time, window_name, elapsed_time,
gpuN_energy` in s and J). Zeus measures GPU power through NVML: boundary `gpu_board`.
Examples per epoch are not in the files, so J per sample stays missing.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import (
    Conversion,
    Importer,
    Source,
    cell,
    clean_str,
    energy_metrics,
    num,
    pos_int,
    positive,
    read_csv,
)

TRACE_COLS = {"power_limit", "time_per_epoch", "average_power"}
_TRACE_NAME = re.compile(r"^summary_power_([A-Za-z0-9-]+)\.csv$")
_PROFILE_NAME = re.compile(r"^([^+]+)\+([^+]+)\+gpu(\d+(?:,\d+)*)\.csv$")  # tests/profile_data: A40+resnet18+gpu0,1.csv
_WINDOW_LIMIT = re.compile(r"_(\d+(?:\.\d+)?)$")


class ZeusImporter(Importer):
    NAME = "zeus"
    TOOL = "zeus"
    DESCRIPTION = "Zeus power traces (summary_power_*.csv) and power-limit profiles"

    def sniff(self, source: Source) -> bool:
        first = source.head.split("\n", 1)[0]
        cols = {c.strip() for c in first.split(",")}
        if TRACE_COLS <= cols:
            return True
        return {"window_name", "elapsed_time"} <= cols and any(re.fullmatch(r"gpu\d+_energy", c) for c in cols)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        header, rows = read_csv(conv, conv.source.text or "")
        if TRACE_COLS <= set(header):
            return self._trace(conv, header, rows)
        return self._profile(conv, header, rows)

    def _trace(self, conv: Conversion, header: list[str], rows: list[tuple[int, list[str]]]) -> dict[str, Any]:
        m = _TRACE_NAME.match(conv.source.base_name)
        device = conv.device_from_name(m.group(1) if m else None, "gpu", where=(
            "(the file's content does not name its GPU; nor does its name, as summary_power_<gpu>.csv)"))
        conv.warn("examples per epoch are not in the file: J per sample and throughput stay missing")
        runs = []
        for i, (lineno, row) in enumerate(rows):
            where = f"line {lineno}"
            limit = positive(num(cell(header, row, "power_limit"), f"{where}: power_limit", conv))
            epoch_s = num(cell(header, row, "time_per_epoch"), f"{where}: time_per_epoch", conv)
            power = num(cell(header, row, "average_power"), f"{where}: average_power", conv)
            flags: list[str] = []
            metrics: dict[str, Any] = {"duration_s": positive(epoch_s)}
            if epoch_s and epoch_s > 0 and power is not None:
                metrics.update(
                    energy_metrics(
                        power * epoch_s,
                        duration_s=epoch_s,
                        boundary=conv.boundary("gpu_board"),
                        method="reported",
                        what="average_power x time_per_epoch",
                        flags=flags,
                    )
                )
            dataset, network = clean_str(cell(header, row, "dataset")), clean_str(cell(header, row, "network"))
            runs.append(
                {
                    "run_id": conv.run_id(i),
                    "status": "ok",
                    "device": dict(device),
                    "config": {
                        "workload": f"{network or 'unknown'}-{dataset or 'unknown'}",
                        "model": network,
                        "mode": "train",
                        "precision": conv.precision(None),
                        "batch_size": pos_int(cell(header, row, "batch_size")),
                        "power_limit_w": limit,
                        "tag": clean_str(cell(header, row, "optimizer")),
                    },
                    "metrics": metrics,
                    "flags": flags,
                    "notes": "Zeus NSDI'23 trace: one epoch",
                }
            )
        return conv.document(runs)

    def _profile(self, conv: Conversion, header: list[str], rows: list[tuple[int, list[str]]]) -> dict[str, Any]:
        m = _PROFILE_NAME.match(conv.source.base_name)
        device = conv.device_from_name(m.group(1) if m else None, "gpu", where=(
            "(the file's content does not name its GPU; nor does its name, as <GPU>+<model>+gpu<ids>.csv)"))
        model = m.group(2) if m else None
        gpus = [c for c in header if re.fullmatch(r"gpu\d+_energy", c)]
        runs = []
        for i, (lineno, row) in enumerate(rows):
            where = f"line {lineno}"
            window = clean_str(cell(header, row, "window_name")) or ""
            elapsed = num(cell(header, row, "elapsed_time"), f"{where}: elapsed_time", conv)
            energies = [num(cell(header, row, g), f"{where}: {g}", conv) for g in gpus]
            flags: list[str] = []
            metrics: dict[str, Any] = {"duration_s": positive(elapsed)}
            known = [e for e in energies if e is not None]
            if energies and len(known) == len(energies):
                metrics.update(
                    energy_metrics(
                        sum(known),
                        duration_s=positive(elapsed),
                        boundary=conv.boundary("gpu_board"),
                        method="counter",
                        what="gpu energy",
                        flags=flags,
                    )
                )
            lm = _WINDOW_LIMIT.search(window)
            runs.append(
                {
                    "run_id": conv.run_id(i),
                    "status": "ok",
                    "device": dict(device),
                    "config": {
                        "workload": model or conv.hints.workload or "unknown",
                        "model": model,
                        "mode": conv.mode("train" if "PowerLimitOptimizer" in window else None, where),
                        "precision": conv.precision(None),
                        "batch_size": conv.hints.batch_size,
                        "power_limit_w": float(lm.group(1)) if lm else None,
                        "gpu_count": len(gpus) or (len(m.group(3).split(",")) if m else None),
                        "tag": window or None,
                    },
                    "metrics": metrics,
                    "flags": flags,
                    "notes": f"Zeus measurement window '{window}': energy summed over {', '.join(gpus)}"
                    + (" (a fixed number of training steps at this power limit, not an epoch)"
                       if "PowerLimitOptimizer" in window else ""),
                }
            )
        return conv.document(runs)
