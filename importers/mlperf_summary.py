"""MLPerf Inference results summaries (`summary.csv`, as MLCommons' submission checker writes them: mlcommons/inference
tools/submission/submission_checker.py `log_result`), the table a results round publishes a row per system, model and
scenario: `Organization, Availability, Division, SystemType, SystemName, Platform, Model, MlperfModel, Scenario, Result,
Accuracy, ..., accelerator_model_name, accelerators_per_node, ..., has_power, Units, weight_data_types`.

`Result` is the scenario's result in the row's own `Units`: Offline 'Samples/s' and Server 'Queries/s' (samples a
second of the whole system; a Server query is one sample), 'Tokens/s' for the LLM benchmarks, SingleStream and
MultiStream 'Latency (ms)' (the 90th and 99th percentile of a query's latency), and for power rows 'Watts' (the
system's average wall power, Offline and Server) or 'millijoules' (energy a query, SingleStream and MultiStream). A
performance row and the power row of one system, model and scenario are one run. An LLM's result (its Accuracy
names TOKENS_PER_SAMPLE) in Samples/s or Queries/s is left out, said: MLPerf states LLM results in tokens/s, and the
checker has written other units for them (llama3.1-405b in v5.0). The device is `accelerator_model_name`, its count
`accelerators_per_node` x `number_of_nodes`; the precision `weight_data_types` where it is one JouleBench stores;
the whole row's energy is the system's (boundary wall). Accuracy stays in the notes; nothing else is guessed."""

from __future__ import annotations

from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count, clean_str, num, pos_int, read_csv
from importers.table_fields import PRECISIONS

_NEEDED = {"Organization", "SystemName", "Model", "Scenario", "Result", "Units"}
_RATES = {"samples/s": "throughput_sps", "queries/s": "throughput_sps", "tokens/s": "tokens_per_s"}
_LATENCY = {"SingleStream": "latency_p90_ms", "MultiStream": "latency_p99_ms"}
_KEYS = ("Division", "SystemName", "Platform", "Model", "Scenario")


class MlperfSummaryImporter(Importer):
    NAME = "mlperf-summary"
    TOOL = "MLPerf results summary"
    DESCRIPTION = "MLPerf Inference summary.csv (a row per system, model and scenario: Result in its row's Units)"

    def sniff(self, source: Source) -> bool:
        first = source.head.split("\n", 1)[0]
        return _NEEDED <= {c.strip().strip('"') for c in first.split(",")}

    def convert(self, conv: Conversion) -> dict[str, Any]:
        header, rows = read_csv(conv, conv.source.text or "")
        col = {name: i for i, name in enumerate(header)}
        check_run_count(conv, len(rows), "its rows")
        runs: dict[tuple[str, ...], dict[str, Any]] = {}
        for lineno, row in rows:
            cell = {name: (row[i].strip() if i < len(row) else "") for name, i in col.items()}
            where = f"line {lineno}"
            key = tuple(cell.get(k, "") for k in _KEYS)
            run = runs.get(key) or self._run(conv, len(runs), where, cell)
            runs[key] = run
            self._result(conv, where, cell, run)
        kept = [r for r in runs.values() if r["metrics"]]
        if not kept:
            raise conv.fail("line 2", "no row states a result in a unit JouleBench reads")
        return conv.document(kept)

    @staticmethod
    def _run(conv: Conversion, index: int, where: str, cell: dict[str, str]) -> dict[str, Any]:
        per_node, nodes = pos_int(cell.get("accelerators_per_node")), pos_int(cell.get("number_of_nodes")) or 1
        weights = (cell.get("weight_data_types") or "").strip().lower()
        notes = [f"MLPerf Inference {cell.get('version') or ''} {cell.get('Division') or ''} "
                 f"{cell.get('Organization') or ''} {cell.get('Platform') or ''}".replace("  ", " ").strip()]
        if cell.get("Accuracy"):
            notes.append(f"accuracy: {cell['Accuracy'][:200]}")
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": conv.device(clean_str(cell.get("accelerator_model_name")),
                                  where=f"({where}: accelerator_model_name is empty)"),
            "config": {
                "workload": conv.hints.workload or f"mlperf {cell.get('MlperfModel') or cell.get('Model')}"[:200],
                "model": clean_str(cell.get("Model")),
                "mode": "infer",
                "precision": conv.precision(PRECISIONS.get(weights)),
                "quantization": weights if weights and weights not in PRECISIONS else None,
                "gpu_count": per_node * nodes if per_node else None,
                "tag": ", ".join(p for p in (cell.get("Scenario"), cell.get("SystemName"), cell.get("Division"))
                                 if p)[:200],
            },
            "metrics": {},
            "flags": [],
            "notes": "; ".join(notes),
        }

    @staticmethod
    def _result(conv: Conversion, where: str, cell: dict[str, str], run: dict[str, Any]) -> None:
        units = (cell.get("Units") or "").strip()
        value = num(cell.get("Result"), f"{where}: Result", conv)
        if value is None or value <= 0:
            conv.warn(f"{where}: no result ({cell.get('Result')!r}): left out")
            return
        metrics, low = run["metrics"], units.lower()
        llm = "TOKENS_PER_SAMPLE" in (cell.get("Accuracy") or "")
        if low in _RATES and llm and low != "tokens/s":
            conv.warn(f"{where}: {cell.get('Model')} {value:g} {units}: MLPerf states an LLM's result in tokens/s, "
                      "and the checker writes other units for some (llama3.1-405b): not stored")
        elif low in _RATES:
            metrics[_RATES[low]] = value
        elif low.startswith("latency") and cell.get("Scenario") in _LATENCY:
            metrics[_LATENCY[cell["Scenario"]]] = value
        elif low == "watts":
            metrics.update(avg_power_w=value, energy_boundary=conv.boundary("wall"), energy_method="reported")
        elif low == "millijoules":  # a query's energy: one sample in SingleStream, eight in MultiStream
            per_query = 8 if cell.get("Scenario") == "MultiStream" else 1
            metrics.update(j_per_sample=value / 1e3 / per_query, energy_boundary=conv.boundary("wall"),
                           energy_method="reported")
        else:
            conv.warn(f"{where}: a result in {units!r} is not one JouleBench reads: left out")
