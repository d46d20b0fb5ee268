"""GuideLLM `benchmarks.json` (also written as `.yaml`): one run per benchmark of the sweep.

Learned from the writer (vllm-project/guidellm src/guidellm/benchmark/schemas/{report,benchmark,base,
metrics}.py, schemas/statistics.py, schemas/request_stats.py, scheduler/strategies.py): the report is
`{"metadata", "args" | "config", "benchmarks": [...]}`; each benchmark has `config.strategy` (older
files: `args.strategy`) with `type_` synchronous | concurrent (`streams`) | throughput | constant |
poisson (`rate`, requests/s) and `max_concurrency`, and `metrics`, where each figure is a status
distribution `{"successful": {"mean", "median", "percentiles": {"p50", "p90", "p95", "p99", ...}, ...},
"errored", "incomplete", "total"}`:
- `request_latency` is per-request end-to-end, in SECONDS; `time_to_first_token_ms` TTFT in ms;
- `requests_per_second` and `output_tokens_per_second` are the benchmark's rates (their mean is the
  system's), `tokens_per_second` adds the prompt tokens (never stored as output tokens/s);
- `inter_token_latency_ms` is each request's (last token - first token) / (output tokens - 1), weighted
  by its output tokens - 1: its mean is every gap pooled (JouleBench's ITL average), but its
  percentiles are of per-request means (neither ITL's pooled gaps nor TPOT's per request): notes only;
- `time_per_output_token_ms` is (last token - request start) / output tokens, TTFT included: neither
  TPOT nor ITL, notes only.
GuideLLM names no GPU and measures no energy. Its console tables are read into the same shape
(`importers.guidellm_console`).

`benchmarks.csv` (src/guidellm/benchmark/outputs/csv.py) is one row per benchmark under three header rows
(group, "<Status> <unit>" or field, statistic): each distribution gives Mean, Median, Std Dev and Percentiles,
the text "[min, p001, p01, p05, p10, p25, p75, p90, p95, p99, max]". Its rows are read into the JSON's shape
(the same figures, the same rules); the CSV keeps the strategy's type but not its rate.
"""

from __future__ import annotations

from typing import Any

from importers.base import (
    MS_PER_S,
    Conversion,
    Importer,
    Source,
    as_dict,
    check_run_count,
    clean_str,
    num,
    pos_int,
    positive,
)
from importers.guidellm_console import console_benchmarks, is_console
from joulebench.metrics import E2E, ITL, TTFT, Distribution

NO_ENERGY = "GuideLLM does not measure energy"
_PCTS = ("p50", "p90", "p95", "p99")


def _benchmarks(doc: Any) -> list[Any] | None:
    if not isinstance(doc, dict):
        return None
    benchmarks = doc.get("benchmarks")
    if not isinstance(benchmarks, list) or not benchmarks:
        return None
    first = benchmarks[0]
    metrics = first.get("metrics") if isinstance(first, dict) else None
    if (isinstance(metrics, dict) and "time_to_first_token_ms" in metrics and "requests_per_second" in metrics
            and str(first.get("type_", "generative_benchmark")).startswith("generative")):
        return benchmarks
    return None


# CSV group and unit (status "Successful") -> the JSON metric key
_CSV_METRICS = {("Request Latency", "Sec"): "request_latency", ("Time to First Token", "ms"): "time_to_first_token_ms",
                ("Inter Token Latency", "ms"): "inter_token_latency_ms",
                ("Time per Output Token", "ms"): "time_per_output_token_ms",
                ("Server Throughput", "Requests/Sec"): "requests_per_second",
                ("Token Throughput", "Output Tokens/Sec"): "output_tokens_per_second",
                ("Token Throughput", "Total Tokens/Sec"): "tokens_per_second",
                ("Token Metrics", "Input Tokens"): "prompt_token_count",
                ("Token Metrics", "Output Tokens"): "output_token_count"}
_CSV_PCTS = {"p90": 7, "p95": 8, "p99": 9}  # places in the Percentiles text


def _is_csv(head: str) -> bool:
    return head.startswith("Run Info,") and "Time to First Token" in head.split("\n", 1)[0]


def _csv_benchmarks(conv: Conversion) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The CSV's rows as benchmark objects of the JSON's shape, and the report's arguments."""
    import csv
    import io
    import json

    try:
        table = [row for row in csv.reader(io.StringIO(conv.source.text or "")) if any(c.strip() for c in row)]
    except csv.Error as e:
        raise conv.fail("CSV", f"cannot be read: {e}") from e
    if len(table) < 4:
        raise conv.fail("line 4", "no benchmark row under the three header rows: import benchmarks.csv as GuideLLM "
                        "wrote it")
    check_run_count(conv, len(table) - 3, "the benchmark rows")
    heads = list(zip(*(r + [""] * (len(table[0]) - len(r)) for r in table[:3]), strict=False))
    benchmarks: list[dict[str, Any]] = []
    args: dict[str, Any] = {}
    for n, row in enumerate(table[3:]):
        line = n + 4
        cells = {h: (row[j].strip() if j < len(row) else "") for j, h in enumerate(heads)}
        metrics: dict[str, Any] = {}
        for (group, unit), key in _CSV_METRICS.items():
            sub = f"Successful {unit}"
            entry: dict[str, Any] = {"mean": cells.get((group, sub, "Mean")) or None,
                                     "median": cells.get((group, sub, "Median")) or None}
            text = cells.get((group, sub, "Percentiles")) or ""
            if text:
                parts = [p.strip() for p in text.strip("[]").split(",")]
                if len(parts) != 11:
                    raise conv.fail(f"line {line}: {group} {sub} Percentiles", f"{text[:60]!r} is not the 11 values "
                                    "[min, p001, p01, p05, p10, p25, p75, p90, p95, p99, max] GuideLLM writes")
                entry["percentiles"] = {"p50": entry["median"], **{k: parts[i] for k, i in _CSV_PCTS.items()}}
            if any(v is not None for v in entry.values()):
                metrics[key] = {"successful": entry}
        metrics["request_totals"] = {k.lower(): cells.get(("Request Counts", k, "")) or None
                                     for k in ("Successful", "Errored")}
        backend: dict[str, Any] = {}
        for where, field in ((("Run Info", "Backend", ""), "backend"), (("Runtime Info", "Arguments", ""), "args")):
            try:
                value = json.loads(cells.get(where) or "null")
            except (ValueError, RecursionError):
                conv.warn(f"line {line}: {where[0]} {where[1]} is not JSON; left out")
                continue
            if field == "backend":
                backend = as_dict(value)
            else:
                args = args or as_dict(value)
        benchmarks.append({"metrics": metrics, "config": {
            "strategy": {"type_": cells.get(("Benchmark", "Strategy", "")) or None}, "backend": backend}})
    return benchmarks, args


def _yaml(source: Source) -> Any:
    head = source.head
    if "benchmarks:" not in head or "time_to_first_token_ms" not in (source.text or ""):
        return None
    import yaml

    try:
        return yaml.safe_load(source.text or "")
    except yaml.YAMLError:
        return None


class GuideLlmImporter(Importer):
    NAME = "guidellm"
    TOOL = "GuideLLM"
    DESCRIPTION = "GuideLLM benchmarks.json / .yaml / .csv or its console tables (one run per benchmark of the sweep)"

    def sniff(self, source: Source) -> bool:
        if _is_csv(source.head) or is_console(source.head):
            return True
        doc = source.json
        if doc is None and source.text is not None and source.text.lstrip()[:1] not in ("{", "["):
            doc = _yaml(source)
        return _benchmarks(doc) is not None

    def convert(self, conv: Conversion) -> dict[str, Any]:
        if is_console(conv.source.head):
            runs = [self._run(conv, i, b, {}) for i, b in enumerate(console_benchmarks(conv))]
            for n, run in enumerate(runs):
                if run["config"].get("load_kind") is None and len(runs) > 1:  # a rate the console does not print
                    run["config"]["tag"] = f"benchmark {n + 1} of the sweep"
            conv.warn("GuideLLM's console tables print each benchmark's strategy but not its rate, and each figure's "
                      "median, p95 or mean only: rate-based loads are stored without the rate (import "
                      "benchmarks.json for it)")
            if conv.hints.device is None:
                conv.warn("GuideLLM names neither the GPU nor the serving engine (it measures an endpoint)")
            return conv.document(conv.as_sweep(runs))
        if _is_csv(conv.source.head):
            rows, csv_args = _csv_benchmarks(conv)
            runs = [self._run(conv, i, b, csv_args) for i, b in enumerate(rows)]
            conv.warn("GuideLLM's CSV keeps each benchmark's strategy but not its rate: rate-based loads are "
                      "stored without the rate (import benchmarks.json for it)")
            if conv.hints.device is None:
                conv.warn("GuideLLM names neither the GPU nor the serving engine (it measures an endpoint)")
            return conv.document(conv.as_sweep(runs))
        doc = conv.source.json
        if doc is None:
            doc = _yaml(conv.source)
        benchmarks = _benchmarks(doc) or []
        check_run_count(conv, len(benchmarks), "the benchmarks")
        report = as_dict(doc)
        meta = as_dict(report.get("metadata"))
        conv.tool_version = clean_str(meta.get("guidellm_version"))
        args = as_dict(report.get("args")) or as_dict(report.get("config"))
        runs = [self._run(conv, i, b, args) for i, b in enumerate(benchmarks)]
        if conv.hints.device is None:
            conv.warn("GuideLLM names neither the GPU nor the serving engine (it measures an endpoint)")
        return conv.document(conv.as_sweep(runs))

    def _run(self, conv: Conversion, i: int, bench: Any, args: dict[str, Any]) -> dict[str, Any]:
        where = f"benchmarks[{i}]"
        if not isinstance(bench, dict) or not isinstance(bench.get("metrics"), dict):
            raise conv.fail(where, "expected a benchmark object with 'metrics': import the benchmarks file as "
                            "GuideLLM wrote it")
        m = bench["metrics"]

        def ok(key: str) -> dict[str, Any]:
            return as_dict(as_dict(m.get(key)).get("successful"))

        def stat(key: str, name: str) -> float | None:
            entry = ok(key)
            value = entry.get("mean") if name == "avg" else as_dict(entry.get("percentiles")).get(name)
            if value is None and name == "p50":
                value = entry.get("median")  # GuideLLM states its median apart from the percentiles
            return num(value, f"{where}.metrics.{key}.successful.{name}", conv)

        metrics: dict[str, Any] = {"energy_missing_reason": NO_ENERGY}
        dist: Distribution
        for key, dist, factor in (("time_to_first_token_ms", TTFT, 1.0), ("request_latency", E2E, MS_PER_S)):
            for s in ("avg", *_PCTS):
                v = stat(key, s)
                if v is not None and v >= 0:
                    metrics[dist.stat(s).name] = v * factor
        if (itl := stat("inter_token_latency_ms", "avg")) is not None and itl >= 0:
            metrics[ITL.stat("avg").name] = itl
        metrics["requests_per_s"] = positive(stat("requests_per_second", "avg"))
        metrics["tokens_per_s"] = positive(stat("output_tokens_per_second", "avg"))
        metrics["prompt_tokens_mean"] = positive(stat("prompt_token_count", "avg"))
        metrics["output_tokens_mean"] = positive(stat("output_token_count", "avg"))
        totals = as_dict(m.get("request_totals")) or as_dict(bench.get("request_totals"))
        metrics["requests_completed"] = pos_int(totals.get("successful"))
        errored = num(totals.get("errored"))
        whole = errored is not None and errored >= 0 and errored == int(errored)
        metrics["requests_failed"] = int(errored) if whole and errored is not None else None
        status, error = "ok", None
        if metrics["requests_completed"] is None and totals:
            status, error = "failed", f"no request completed ({totals.get('errored', '?')} errored)"
            metrics = {"energy_missing_reason": NO_ENERGY, "requests_failed": metrics["requests_failed"]}
        config = as_dict(bench.get("config")) or as_dict(bench.get("args"))
        strategy = as_dict(config.get("strategy"))
        kind = clean_str(strategy.get("type_"))
        rate = positive(num(strategy.get("rate")))
        cap = pos_int(strategy.get("max_concurrency"))
        load: dict[str, Any] = {"load_kind": None, "request_rate_per_s": None, "max_concurrency": cap, "arrival": None}
        if kind == "synchronous":
            load.update(load_kind="concurrency", max_concurrency=1)
        elif kind == "concurrent":
            load.update(load_kind="concurrency", max_concurrency=pos_int(strategy.get("streams")))
        elif kind in ("constant", "poisson") and rate:
            load.update(load_kind="rate", request_rate_per_s=rate, arrival=kind)
        backend = as_dict(config.get("backend")) or as_dict(bench.get("worker"))
        model = clean_str(backend.get("model") or backend.get("backend_model") or args.get("model")
                          or as_dict(args.get("backend")).get("model"))
        notes = [f"GuideLLM benchmark {i + 1}, strategy {kind or 'not stated'}"
                 + (f" at {rate:g} requests/s" if rate else "")
                 + (f", {load['max_concurrency']} concurrent" if load["max_concurrency"] else "")]
        if kind == "throughput":
            notes.append("throughput strategy: as many requests as the server takes (no fixed rate or concurrency)")
        itl_p = {s: stat("inter_token_latency_ms", s) for s in _PCTS}
        if any(v is not None for v in itl_p.values()):
            notes.append("inter_token_latency_ms percentiles (of per-request means, token-weighted; not stored) "
                         + ", ".join(f"{s} {v:.4g} ms" for s, v in itl_p.items() if v is not None))
        if (tpot := stat("time_per_output_token_ms", "avg")) is not None:
            notes.append(f"time_per_output_token_ms mean {tpot:.4g} ms includes the first token's wait: not TPOT")
        if (total := stat("tokens_per_second", "avg")) is not None:
            notes.append(f"prompt + output {total:.5g} tokens/s")
        return {
            "run_id": conv.run_id(i),
            "status": status,
            "error": error,
            "device": conv.device(None, "gpu", where="(whole file; GuideLLM measures an endpoint and names no GPU)"),
            "config": conv.generation_config(model[:200] if model else None, **load),
            "metrics": {k: v for k, v in metrics.items() if v is not None},
            "notes": "; ".join(notes)[:10_000],
        }

