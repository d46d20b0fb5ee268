"""CodeCarbon `emissions.csv` (every version's columns, one row per tracked run) and its JSON.

Energies are in kWh (stored in J), powers in W, duration in s, RAM in GB. CodeCarbon sums
CPU, GPU and RAM energy, partly estimated (CPU from TDP when RAPL is absent, RAM from its
size), so runs are labelled boundary `system`, method `reported`. CodeCarbon does not say
whether the tracked code trained or inferred: pass --mode.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import (
    J_PER_KWH,
    Conversion,
    Importer,
    Source,
    clean_str,
    energy_metrics,
    num,
    pos_int,
    positive,
    read_csv,
)

REQUIRED = ("duration", "energy_consumed")
_GPU = re.compile(r"^\s*(\d+)\s*x\s*(.+)$")


class CodeCarbonImporter(Importer):
    NAME = "codecarbon"
    TOOL = "codecarbon"
    DESCRIPTION = "CodeCarbon emissions.csv or its JSON"

    def sniff(self, source: Source) -> bool:
        doc = source.json
        if doc is not None:
            rows = doc if isinstance(doc, list) else [doc]
            return bool(rows) and all(
                isinstance(r, dict) and set(REQUIRED) <= set(r) and "emissions" in r for r in rows[:3]
            )
        first = source.head.split("\n", 1)[0]
        cols = {c.strip() for c in first.split(",")}
        return {"duration", "emissions", "energy_consumed"} <= cols

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        if doc is not None:
            records = doc if isinstance(doc, list) else [doc]
            rows = [(f"[{i}]" if isinstance(doc, list) else "(object)", r) for i, r in enumerate(records)]
        else:
            header, lines = read_csv(conv, conv.source.text or "")
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                raise conv.fail("line 1", f"header lacks {', '.join(missing)}")
            rows = []
            for lineno, cells in lines:
                if cells == header:  # runs appended by a newer version repeat the header
                    continue
                if len(cells) > len(header) + 1:
                    raise conv.fail(f"line {lineno}", f"{len(cells)} cells for {len(header)} columns")
                rows.append((f"line {lineno}", {h: (cells[i] if i < len(cells) else "") for i, h in enumerate(header)}))
        runs = [self._run(conv, where, record, i) for i, (where, record) in enumerate(rows)]
        return conv.document(runs)

    def _run(self, conv: Conversion, where: str, r: dict[str, Any], index: int) -> dict[str, Any]:
        if not isinstance(r, dict):
            raise conv.fail(where, "expected an object of CodeCarbon fields")
        conv.tool_version = clean_str(r.get("codecarbon_version")) or conv.tool_version
        duration = num(r.get("duration"), f"{where}: duration", conv)
        energy_kwh = num(r.get("energy_consumed"), f"{where}: energy_consumed", conv)
        if duration is None or duration <= 0:
            raise conv.fail(f"{where}: duration", f"{r.get('duration')!r} is not a positive duration in s")
        gpu_model = clean_str(r.get("gpu_model"))
        gpu_count = pos_int(r.get("gpu_count"))
        os_name = clean_str(r.get("os")) or ""
        if gpu_model:
            m = _GPU.match(gpu_model)
            if m:
                gpu_count = gpu_count or int(m.group(1))
                gpu_model = m.group(2).strip()
            device = conv.device(gpu_model, "gpu", where=f"{where}: gpu_model")
        elif "tegra" in os_name.lower():
            device = conv.device(None, "jetson", where=f"{where}: gpu_model (empty on a Jetson)")
            gpu_count = None
        else:
            device = conv.device(clean_str(r.get("cpu_model")), "cpu", where=f"{where}: cpu_model")
            gpu_count = None
        flags: list[str] = []
        metrics: dict[str, Any] = {"duration_s": duration}
        if energy_kwh is not None:
            metrics.update(
                energy_metrics(
                    energy_kwh * J_PER_KWH,
                    duration_s=duration,
                    boundary=conv.boundary("system"),
                    method="reported",
                    what="energy_consumed",
                    flags=flags,
                )
            )
        else:
            metrics["energy_missing_reason"] = "energy_consumed is empty"
        parts = []
        for key in ("cpu", "gpu", "ram"):
            e = num(r.get(f"{key}_energy"))
            p = num(r.get(f"{key}_power"))
            if e is not None:
                parts.append(f"{key} {e * J_PER_KWH:.6g} J")
            if p is not None:
                parts.append(f"{key} {p:.6g} W")
        emissions = num(r.get("emissions"))
        if emissions is not None:
            parts.append(f"emissions {emissions * 1000:.6g} g CO2eq")
        stamp = clean_str(r.get("timestamp"))
        run: dict[str, Any] = {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": device,
            "config": {
                "workload": (clean_str(r.get("project_name")) if conv.hints.workload is None else conv.hints.workload)
                or "unknown",
                "mode": conv.mode(None, f"{where}: (CodeCarbon does not record it)"),
                "precision": conv.precision(None),
                "gpu_count": gpu_count,
                "batch_size": conv.hints.batch_size,
            },
            "metrics": metrics,
            "flags": flags,
            "environment": {
                "os": os_name or None,
                "python_version": clean_str(r.get("python_version")),
                "cpu_model": clean_str(r.get("cpu_model")),
                "cpu_count": pos_int(r.get("cpu_count")),
                "ram_gb": positive(num(r.get("ram_total_size"))),
            },
            "notes": f"CodeCarbon run {clean_str(r.get('run_id')) or '?'} written {stamp or '?'} "
            f"(local time, zone not recorded): " + ", ".join(parts),
        }
        return run
