"""Locust's CSV statistics (`locust --csv PREFIX`), as its writer writes them (locustio/locust locust/stats.py,
`StatsCSV` and `StatsCSVFileWriter`): one load test against an endpoint, a serving run.

- `PREFIX_stats.csv`: `Type,Name,Request Count,Failure Count,Median Response Time,Average Response Time,Min Response
  Time,Max Response Time,Average Content Size,Requests/s,Failures/s,50%,66%,...,100%`, a row per endpoint and a last
  row `Aggregated` over them all. Response times and their percentiles are milliseconds (Locust times a request in
  ms); Requests/s is the request count over the test's time.
- `PREFIX_stats_history.csv`: `Timestamp,User Count,Type,Name,Requests/s,...,Total Request Count,Total Failure
  Count,Total Median Response Time,Total Average Response Time,...`, a row a second (Unix seconds): its percentiles
  and Requests/s are the current window's, its `Total ...` columns cumulative since the start. The run is its last
  `Aggregated` row's totals over the time from the first row with users to the last.

A load test's own measurements may come as rows of their own: LLM load scripts fire Locust events of type `METRIC`
whose 'response time' is a time to first token or a total latency (`METRIC,time_to_first_token`); those rows are
read as what they name, and the requests from the request rows (the `Aggregated` row mixes the two). Locust names
neither the model nor the device; its users are the concurrency offered (each waits for its answer).
"""

from __future__ import annotations

from typing import Any

from importers.base import Conversion, Importer, Source, num, positive, read_csv
from joulebench.metrics import E2E, TTFT, Distribution

_STATS = ("Type", "Name", "Request Count", "Failure Count", "Median Response Time", "Average Response Time")
_HISTORY = ("Timestamp", "User Count", "Type", "Name", "Requests/s", "Total Request Count",
            "Total Median Response Time")
_PERCENTILES = {"90%": "p90", "95%": "p95", "99%": "p99"}
# a METRIC row's name -> the distribution its response times are
_METRIC_ROWS = {"time_to_first_token": TTFT, "ttft": TTFT, "total_latency": E2E, "latency": E2E}


def _header(source: Source) -> list[str]:
    return [c.strip().strip('"') for c in source.head.split("\n", 1)[0].split(",")]


class LocustImporter(Importer):
    NAME = "locust"
    TOOL = "Locust"
    DESCRIPTION = "Locust's --csv statistics (_stats.csv: a row per endpoint and Aggregated; _stats_history.csv)"

    def sniff(self, source: Source) -> bool:
        header = _header(source)
        return all(c in header for c in _STATS) or all(c in header for c in _HISTORY)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        header, rows = read_csv(conv, conv.source.text or "")
        at = {name: i for i, name in enumerate(header)}

        def cell(row: list[str], name: str) -> str:
            i = at.get(name)
            return row[i].strip() if i is not None and i < len(row) else ""

        def value(lineno: int, row: list[str], name: str) -> float | None:
            return num(cell(row, name), f"line {lineno}: {name}", conv) if name in at else None

        if "Timestamp" in at:
            metrics, notes, users = self._history(conv, rows, cell, value)
        else:
            metrics, notes, users = self._stats(conv, rows, cell, value)
        if not metrics:
            raise conv.fail("line 2", "no figure in the test's row (its cells are N/A: no request was answered)")
        config: dict[str, Any] = {"load_kind": "concurrency" if users else None, "max_concurrency": users}
        config = {k: v for k, v in config.items() if v is not None}
        run = {
            "run_id": conv.run_id(0),
            "status": "ok",
            "device": conv.device(None, "gpu", where="(whole file; Locust measures an endpoint and names no GPU)"),
            "config": conv.endpoint_config(**config),
            "metrics": {"energy_missing_reason": "Locust measures no power", **metrics},
            "notes": "; ".join(["Locust load test: response times in ms as Locust times them", *notes])[:10_000],
        }
        conv.warn("Locust names neither the model nor the device (it measures an endpoint): give them with "
                  "--workload and --device, or label the run")
        return conv.document([run])

    @staticmethod
    def _stats(conv: Conversion, rows: list[tuple[int, list[str]]], cell: Any, value: Any
               ) -> tuple[dict[str, Any], list[str], int | None]:
        requests = [(n, r) for n, r in rows if cell(r, "Name") != "Aggregated" and cell(r, "Type") != "METRIC"]
        measured = [(n, r) for n, r in rows if cell(r, "Type") == "METRIC"]
        total = next(((n, r) for n, r in rows if cell(r, "Name") == "Aggregated"), None)
        source = total if total is not None and not measured else (requests[0] if len(requests) == 1 else None)
        if source is None and requests:
            raise conv.fail(f"line {requests[0][0]}", f"{len(requests)} endpoints beside METRIC rows, and the "
                            "Aggregated row mixes them: import one endpoint's rows")
        if source is None:
            raise conv.fail("line 2", "no row of requests: a Locust stats file names each endpoint it called")
        n, row = source
        metrics = _requests(n, row, value)
        metrics.update(_distribution(E2E, n, row, value))
        notes = [f"requests of {cell(row, 'Type')} {cell(row, 'Name')}".strip()]
        for n, row in measured:
            dist = _METRIC_ROWS.get(cell(row, "Name").lower())
            if dist is None:
                median = cell(row, "Median Response Time")
                notes.append(f"METRIC {cell(row, 'Name')[:40]}: median {median} (not stored)")
                continue
            metrics.update(_distribution(dist, n, row, value))
            notes.append(f"{dist.title} from line {n} (METRIC {cell(row, 'Name')[:40]})")
        return metrics, notes, None

    @staticmethod
    def _history(conv: Conversion, rows: list[tuple[int, list[str]]], cell: Any, value: Any
                 ) -> tuple[dict[str, Any], list[str], int | None]:
        total = [(n, r) for n, r in rows if cell(r, "Name") == "Aggregated"]
        if not total:
            raise conv.fail("line 2", "no Aggregated row: Locust writes one a second")
        running = [(n, r) for n, r in total if (value(n, r, "User Count") or 0) > 0]
        if not running:
            raise conv.fail(f"line {total[0][0]}", "no row with users: the test never ran")
        first, (n, last) = running[0], running[-1]
        start, end = value(first[0], first[1], "Timestamp"), value(n, last, "Timestamp")
        count = value(n, last, "Total Request Count")
        failed = value(n, last, "Total Failure Count") or 0
        metrics: dict[str, Any] = {}
        duration = end - start if start is not None and end is not None and end > start else None
        if count and duration:
            metrics.update(duration_s=duration, requests_completed=int(count - failed), requests_failed=int(failed),
                           requests_per_s=(count - failed) / duration)
        for key, name in (("avg", "Total Average Response Time"), ("p50", "Total Median Response Time")):
            if (ms := positive(value(n, last, name))) is not None:
                metrics[E2E.stat(key).name] = ms
        users = max(int(value(m, r, "User Count") or 0) for m, r in running)
        notes = [f"the last Aggregated row (line {n}): totals since the start; requests/s = completed requests / "
                 f"the {duration or 0:g} s from the first row with users (line {first[0]}) to it; the percentile "
                 "columns are each second's window (not stored)", f"{users} users at most"]
        return metrics, notes, users


def _requests(n: int, row: list[str], value: Any) -> dict[str, Any]:
    count, failed = value(n, row, "Request Count"), value(n, row, "Failure Count") or 0
    out: dict[str, Any] = {}
    if count is not None:
        out.update(requests_completed=int(count - failed), requests_failed=int(failed))
    rps, fps = value(n, row, "Requests/s"), value(n, row, "Failures/s") or 0
    if (ok := positive(rps - fps if rps is not None else None)) is not None:
        out["requests_per_s"] = ok
    return out


def _distribution(dist: Distribution, n: int, row: list[str], value: Any) -> dict[str, float]:
    out: dict[str, float] = {}
    for stat, name in (("avg", "Average Response Time"), ("p50", "Median Response Time"),
                       *((p, c) for c, p in _PERCENTILES.items())):
        if (ms := positive(value(n, row, name))) is not None:
            out[dist.stat(stat).name] = ms
    return out
