"""GuideLLM's console tables (`guidellm benchmark run` without a file output, or its log), read into the shape of
its benchmarks.json for `importers.guidellm`.

Learned from the writer (vllm-project/guidellm src/guidellm/benchmark/outputs/console.py,
`ConsoleTableColumnsCollection`, and utils/console.py `print_table`): each table is printed under a title line
('Request Latency Statistics (Completed Requests)', 'Server Throughput Statistics (All Requests)') between rules of
'=' with three header rows per column, group / name / units-or-statistic, a group or name spanning several columns
written once with the cells after it left empty ('| Request Latency || TTFT ||'), then a row per benchmark of the
run, its first column the strategy's type. A statistic is 'Mdn', 'p95' or 'Mean' of the distribution
(`add_stats`): Request Latency in seconds, TTFT / ITL / TPOT in ms, and the throughput table's Requests / Output
Tokens / Total Tokens Per Sec over all requests. A strategy's rate is not printed; the model is, in the step line
'<Backend> backend validated with model <model>' (benchmark/entrypoints.py `resolve_backend`).
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import Conversion

_TITLE = re.compile(r"^[^A-Za-z|]{0,4}\s*(?P<title>[A-Z][A-Za-z ]{3,60}Statistics|Run Summary Info)\b.*$")
_EQUALS = re.compile(r"^\|[=|]{5,}\|?\s*$")
_DASHES = re.compile(r"^\|[-|:]{5,}\|?\s*$")
# (group, name) -> the benchmarks.json metric key; the statistic is the third header row's
_METRICS = {("Request Latency", "Sec"): "request_latency", ("TTFT", "ms"): "time_to_first_token_ms",
            ("ITL", "ms"): "inter_token_latency_ms", ("TPOT", "ms"): "time_per_output_token_ms",
            ("Requests", "Per Sec"): "requests_per_second", ("Output Tokens", "Per Sec"): "output_tokens_per_second",
            ("Total Tokens", "Per Sec"): "tokens_per_second"}
_STATS = {"mdn": "median", "median": "median", "mean": "mean", "p95": "p95", "p90": "p90", "p99": "p99"}
MAX_TABLE_ROWS = 10_000
_MODEL = re.compile(r"backend validated with model (\S{1,200})")


def is_console(text: str) -> bool:
    """Whether a text holds GuideLLM's console tables (a latency or throughput table under its title)."""
    return "Request Latency Statistics" in text and "| Benchmark" in text or (
        "Server Throughput Statistics" in text and "| Strategy" in text)


def _cells(line: str) -> list[str]:
    """A table line's cells, an empty one where a header spans from the cell before ('a || b': a, '', b)."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [c.strip() for c in inner.split("|")]


def _spanned(row: list[str]) -> list[str]:
    out: list[str] = []
    for c in row:
        out.append(c or (out[-1] if out else ""))
    return out


def _tables(lines: list[str]) -> list[tuple[int, list[tuple[str, str, str]], list[tuple[int, list[str]]]]]:
    """(line of the title, each column's (group, name, statistic), the rows with their line numbers)."""
    found = []
    i = 0
    while i < len(lines):
        if _TITLE.match(lines[i].strip()) is None or i + 1 >= len(lines) or not _EQUALS.match(lines[i + 1].strip()):
            i += 1
            continue
        title_line = i + 1
        head: list[list[str]] = []
        j = i + 2
        while j < len(lines) and lines[j].strip().startswith("|") and not _DASHES.match(lines[j].strip()) \
                and len(head) < 4:
            head.append(_cells(lines[j]))
            j += 1
        if j >= len(lines) or not _DASHES.match(lines[j].strip()) or len(head) < 2:
            i = j
            continue
        width = len(head[0])
        groups, names = _spanned(head[0]), _spanned(head[1])
        stats = head[2] if len(head) > 2 else [""] * width
        columns = [(groups[k], names[k] if k < len(names) else "", stats[k] if k < len(stats) else "")
                   for k in range(width)]
        rows: list[tuple[int, list[str]]] = []
        j += 1
        while j < len(lines) and lines[j].strip().startswith("|") and not _EQUALS.match(lines[j].strip()):
            if len(rows) < MAX_TABLE_ROWS:
                rows.append((j + 1, _cells(lines[j])))
            j += 1
        found.append((title_line, columns, rows))
        i = j
    return found


def console_benchmarks(conv: Conversion) -> list[dict[str, Any]]:
    """The console's benchmarks in the JSON's shape: a row's place in each table is its benchmark."""
    lines = (conv.source.text or "").splitlines()
    benchmarks: dict[int, dict[str, Any]] = {}
    for title_line, columns, rows in _tables(lines):
        for n, (line, cells) in enumerate(rows):
            bench = benchmarks.setdefault(n, {"metrics": {}, "config": {"strategy": {}}})
            strategy = cells[0] if cells else ""
            if strategy and bench["config"]["strategy"].setdefault("type_", strategy) != strategy:
                raise conv.fail(f"line {line}", f"benchmark {n + 1} is {strategy!r} here and "
                                f"{bench['config']['strategy']['type_']!r} in a table above: the tables do not "
                                "list the same benchmarks")
            for (group, name, stat), cell in zip(columns[1:], cells[1:], strict=False):
                key, which = _METRICS.get((group, name)), _STATS.get(stat.lower())
                if key is None or which is None or not cell:
                    continue
                entry = bench["metrics"].setdefault(key, {"successful": {}})["successful"]
                if which in ("median", "mean"):
                    entry[which] = cell
                else:
                    entry.setdefault("percentiles", {})[which] = cell
        if not rows:
            conv.warn(f"line {title_line}: a table with no benchmark row")
    if not benchmarks:
        raise conv.fail("(whole file)", "no GuideLLM table with a benchmark row: import benchmarks.json")
    model = next((m.group(1) for line in lines if (m := _MODEL.search(line)) is not None), None)
    for bench in benchmarks.values():
        bench["config"]["backend"] = {"model": model}
    return [benchmarks[n] for n in sorted(benchmarks)]
