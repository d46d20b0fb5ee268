"""optimum-benchmark's text and Markdown renderings of a report (`benchmark_report.txt` / `.md`, >= 0.5, and
the same lines in a `benchmark.log`) read back into the report's JSON shape, for importers.optimum."""

from __future__ import annotations

import re
from typing import Any

from importers.base import Conversion, num

_TEXT_LINE = re.compile(r"^(\t*)\+ ([A-Za-z_][\w.]*): ?(.*)$")
_MD_HEAD = re.compile(r"^(#{1,2}) ([A-Za-z_][\w.]*):\s*$")
_VALUE_UNIT = re.compile(r"^([-+]?[\d.]+(?:[eE][-+]?\d+)?)(?: \(([^)]*)\))?$")


def is_text_report(head: str) -> bool:
    """benchmark_report.txt: `+ target:` then tab-indented `+ metric:` lines."""
    lines = [line for line in head.splitlines()[:3] if line.strip()]
    return (len(lines) >= 2 and bool(re.match(r"^\+ \w+:\s*$", lines[0]))
            and bool(re.match(r"^\t\+ (memory|latency|throughput|energy|efficiency):", lines[1])))


def is_markdown_report(head: str) -> bool:
    """benchmark_report.md: `# target:` then `## metric:` and a `| metric | value | unit |` table."""
    lines = [line for line in head.splitlines()[:6] if line.strip()]
    return (len(lines) >= 3 and bool(re.match(r"^# \w+:\s*$", lines[0]))
            and bool(re.match(r"^## (memory|latency|throughput|energy|efficiency):\s*$", lines[1]))
            and lines[2].replace(" ", "").startswith("|metric|value|unit|"))


def _cell_value(conv: Conversion, where: str, value: str) -> float | int:
    v = num(value, where, conv)
    if v is None:
        raise conv.fail(where, f"{value[:40]!r} is not a number")
    return int(v) if re.fullmatch(r"-?\d+", value.strip()) else v


def parse_text_report(conv: Conversion, text: str) -> dict[str, Any]:
    """A .txt rendering back into the report's JSON shape (values rounded as printed)."""
    report: dict[str, Any] = {}
    target = metric = None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        line = re.sub(r"^.*?\[INFO\] - ", "", re.sub(r"\x1b\[[0-9;]*m", "", line))  # a benchmark.log copy
        m = _TEXT_LINE.match(line)
        if not m:
            raise conv.fail(f"line {lineno}", "expected '+ name:' or '+ field: value (unit)'")
        depth, key, rest = len(m.group(1)), m.group(2), m.group(3).strip()
        if depth == 0:
            target, metric = key, None
            report[target] = {}
        elif depth == 1 and target is not None:
            metric = key
            report[target][metric] = {}
            if rest:  # `+ efficiency: 123 (tokens/kWh)` on one line
                _put(conv, report[target][metric], metric, "value", rest, f"line {lineno}")
        elif depth == 2 and target is not None and metric is not None:
            _put(conv, report[target][metric], metric, key, rest, f"line {lineno}")
        else:
            raise conv.fail(f"line {lineno}", "indented deeper than the report's three levels")
    return report


def _put(conv: Conversion, into: dict[str, Any], metric: str, key: str, rest: str, where: str) -> None:
    vm = _VALUE_UNIT.match(rest)
    if not vm:
        raise conv.fail(where, f"{rest[:40]!r} is not 'value (unit)'")
    field = "value" if key in (metric, "value") and metric in ("throughput", "efficiency") else key
    into[field] = _cell_value(conv, where, vm.group(1))
    unit = vm.group(2)
    if unit and unit not in ("%", "-") and field != "count":
        into["unit"] = unit


def parse_markdown_report(conv: Conversion, text: str) -> dict[str, Any]:
    """A .md rendering back into the report's JSON shape."""
    report: dict[str, Any] = {}
    target = metric = None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        m = _MD_HEAD.match(line.strip())
        if m:
            if m.group(1) == "#":
                target, metric = m.group(2), None
                report[target] = {}
            elif target is not None:
                metric = m.group(2)
                report[target][metric] = {}
            continue
        if not line.lstrip().startswith("|") or target is None or metric is None:
            raise conv.fail(f"line {lineno}", "expected '# target:', '## metric:' or a table row")
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("metric", "") or set(cells[0]) <= set(":-"):
            continue
        _put(conv, report[target][metric], metric, cells[0],
             f"{cells[1]} ({cells[2]})" if cells[2] not in ("", "-") else cells[1], f"line {lineno}")
    return report
