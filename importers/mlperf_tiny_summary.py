"""MLPerf Tiny results summaries (`summary.csv` of mlcommons/tiny_results_*, as the Tiny submission checker writes
it): a row per system and benchmark, `Organization, Availability, Division, BoardName, SystemDesc, Model, MlperfModel,
Result, ResultUnit, Accuracy, HasPower, Power, PowerUnit, HostProcessorModelName, ..., AcceleratorModelName, ...`.

`Result` is the median throughput of the performance-mode run in `ResultUnit` ('inf./sec.'); `Power`, despite its
name, is the median energy of one inference of the energy-mode run in `PowerUnit` ('uJ/inf.'), and only where
`HasPower` is True: a row without it carries '0', not measured, never read as an energy. The two are MLPerf's result
for that system and benchmark, one run here as the checker joins them. The device is the row's `BoardName` (a
development board or module, kept as written; its accelerator, where one is named, goes in the notes); the benchmark
(ad, ic, kws, vww) the workload; one inference at a time (batch 1); the energy is measured at the device's supply (the
boundary is the system). Accuracy stays in the notes.
"""

from __future__ import annotations

from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count, clean_str, num, read_csv
from importers.mlperf_tiny import BENCHMARKS

_NEEDED = {"BoardName", "SystemDesc", "Model", "Result", "ResultUnit", "HasPower", "Power", "PowerUnit"}
_RATE_UNITS = {"inf./sec.", "inf/sec", "inferences/s", "inf./s"}
_ENERGY_UJ = {"uJ/inf.": 1e-6, "uJ/inf": 1e-6, "mJ/inf.": 1e-3, "mJ/inf": 1e-3}


class MlperfTinySummaryImporter(Importer):
    NAME = "mlperf-tiny-summary"
    TOOL = "MLPerf Tiny"
    DESCRIPTION = "MLPerf Tiny summary.csv (a row per system and benchmark: Result inf./sec., Power uJ/inf.)"

    def sniff(self, source: Source) -> bool:
        first = source.head.split("\n", 1)[0]
        return _NEEDED <= {c.strip().strip('"') for c in first.split(",")}

    def convert(self, conv: Conversion) -> dict[str, Any]:
        header, rows = read_csv(conv, conv.source.text or "")
        col = {name.strip(): i for i, name in enumerate(header)}
        runs: list[dict[str, Any]] = []
        for n, row in rows:
            cell = {name: row[i].strip() if i < len(row) else "" for name, i in col.items()}
            check_run_count(conv, len(runs) + 1, "its rows")
            runs.append(self._run(conv, len(runs), f"line {n}", cell))
        if not runs:
            raise conv.fail("line 2", "no rows after the header")
        return conv.document(runs)

    @staticmethod
    def _run(conv: Conversion, index: int, where: str, cell: dict[str, str]) -> dict[str, Any]:
        if cell["ResultUnit"] not in _RATE_UNITS:
            raise conv.fail(f"{where}: ResultUnit", f"{cell['ResultUnit'][:20]!r} is not the throughput's unit the "
                            "checker writes (inf./sec.)")
        rate = num(cell["Result"], f"{where}: Result", conv)
        metrics: dict[str, Any] = {"throughput_sps": rate if rate and rate > 0 else None}
        notes = [f"MLPerf Tiny summary {where}: system {cell['SystemDesc'][:80]}"]
        if cell["HasPower"].lower() == "true":
            factor = _ENERGY_UJ.get(cell["PowerUnit"])
            if factor is None:
                raise conv.fail(f"{where}: PowerUnit", f"{cell['PowerUnit'][:20]!r} is not the energy per inference's "
                                "unit the checker writes (uJ/inf.)")
            energy = num(cell["Power"], f"{where}: Power", conv)
            if energy is None or energy <= 0:
                raise conv.fail(f"{where}: Power", "HasPower is True but the energy per inference is not positive")
            metrics.update(j_per_sample=energy * factor, energy_method="reported",
                           energy_boundary=conv.boundary("system"))
            notes.append("Power is the median energy of one inference of the energy-mode run (uJ/inf.), Result the "
                         "median throughput of the performance-mode run")
        else:
            metrics["energy_missing_reason"] = "the system submitted no energy result (HasPower False)"
        if cell.get("Accuracy"):
            notes.append(f"accuracy {cell['Accuracy'][:20]}")
        if accelerator := clean_str(cell.get("AcceleratorModelName")):
            notes.append(f"accelerator {accelerator[:80]}")
        bench = cell["MlperfModel"].lower() if cell.get("MlperfModel") else cell["Model"].lower()
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": conv.device(clean_str(cell["BoardName"]), "cpu", where=f"({where}: no BoardName)"),
            "config": {"workload": conv.hints.workload or f"mlperf-tiny {bench}"[:200],
                       "model": BENCHMARKS.get(bench, cell["Model"][:200] or None), "mode": "infer",
                       "precision": conv.precision(None), "batch_size": conv.hints.batch_size or 1,
                       "tag": f"MLPerf Tiny {cell.get('Division', '')} {cell['SystemDesc'][:80]}".strip()[:200]},
            "metrics": {k: v for k, v in metrics.items() if v is not None},
            "notes": "; ".join(notes),
        }
