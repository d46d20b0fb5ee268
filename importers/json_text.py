"""How a results file is JSON, before its records are read (`importers.table_records`): JSON, JSON Lines, a JSON
document encoded twice (a JSON string holding JSON), or a two-column table of keys and values standing for the object
its dotted keys flatten."""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

from importers.base import Source
from joulebench.resultfile import MAX_RUNS_PER_FILE


def twice_encoded(text: str | None) -> dict[str, Any] | list[Any] | None:
    """The document inside a JSON string that holds JSON (`json.dump` of a `json.dumps` text: encoded twice),
    decoded once and never more; None when the text is no such string (a plain JSON string, a string holding a
    JSON string, or not JSON)."""
    if text is None or text.lstrip()[:1] != '"':
        return None
    try:
        outer = json.loads(text, parse_constant=lambda c: None)
        if not isinstance(outer, str) or outer.lstrip()[:1] not in ("{", "["):
            return None
        inner = json.loads(outer, parse_constant=lambda c: None)
    except (ValueError, RecursionError):
        return None
    return inner if isinstance(inner, (dict, list)) else None


def is_json(source: Source) -> bool:
    """Whether a file is read as JSON: it opens an object or an array, or it is a JSON string that holds JSON
    (`twice_encoded`; a CSV whose first header cell is quoted opens with '"' too, and stays a table)."""
    first = source.head.lstrip()[:1]
    if first in ("{", "["):  # a log line '[1/9] short ...' opens with '[' too: JSON only where it parses
        return source.json is not None or json_lines(source.text) is not None or first == "{"
    return first == '"' and twice_encoded(source.text) is not None


def json_lines(text: str | None) -> list[Any] | None:
    """The values of a JSON Lines text, one per non-blank line (at most one more than a file may hold runs, for its
    count to be refused); None when it does not open an object or a line is not JSON."""
    if text is None or text.lstrip()[:1] != "{":
        return None
    out: list[Any] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            out.append(json.loads(line, parse_constant=lambda c: None))
        except (ValueError, RecursionError):
            return None
        if len(out) > MAX_RUNS_PER_FILE:
            break
    return out or None


_KEY_HEADS = {"parameter", "parameters", "key", "name", "field", "property", "setting", "item", "metric"}
_VALUE_HEADS = {"value", "values", "val", "result"}
_NUMBER = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$")


def key_value_object(source: Source) -> dict[str, Any] | None:
    """A two-column table of keys and values (`Parameter,Value` over `Latency Statistics.Mean,54.9`) as the object it
    flattens: dotted keys nested again, numbers as numbers; None for any other table, or keys that repeat or are
    both a value and a parent."""
    head = source.head.split("\n", 1)[0]
    if "," not in head or source.text is None or source.json is not None:
        return None
    cells = [c.strip().strip('"').lower() for c in head.split(",")]
    if len(cells) != 2 or cells[0] not in _KEY_HEADS or cells[1] not in _VALUE_HEADS:
        return None
    try:
        rows = [r for r in csv.reader(io.StringIO(source.text, newline="")) if r][1:MAX_RUNS_PER_FILE + 1]
    except csv.Error:  # a malformed table: not read as keys and values (the table readers say what is wrong)
        return None
    out: dict[str, Any] = {}
    for row in rows:
        if len(row) != 2 or not row[0].strip():
            return None
        node, parts = out, row[0].strip().split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                return None
        if parts[-1] in node:
            return None
        value = row[1].strip()
        node[parts[-1]] = float(value) if _NUMBER.match(value) else value
    return out or None
