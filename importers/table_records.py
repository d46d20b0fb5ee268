"""The records of a JSON results file: JSON Lines, a list of objects, an object holding one such list (a wrapper:
`{"cmd": [...], "rows": [...], "stderr_tail": "..."}`), an object nesting dicts of figures, each record flattened
with its nested settings (`config.batch_size`, `metrics.ttft.p50_ms`); also a JSON document encoded twice.

`unwrapped` gives the list a wrapper object holds as a source of its own, so that the tool reader of those records
reads them (`importers.detect_source`: one level, never the list's own members).
"""

from __future__ import annotations

import json
from typing import Any

from importers.base import Source
from joulebench.resultfile import MAX_RUNS_PER_FILE

RECORD_KEYS = ("results", "runs", "records", "data", "benchmarks", "rows", "items", "entries", "experiments")
MAX_DEPTH = 6
MAX_KEYS = 400


def flatten(record: dict[str, Any], prefix: str = "", depth: int = 0, out: dict[str, Any] | None = None
            ) -> dict[str, Any]:
    """{'config.batch_size': 8, 'metrics.ttft.p50_ms': 12.3} from nested objects; lists of scalars joined,
    deeper or larger structures cut at MAX_DEPTH levels and MAX_KEYS keys."""
    out = {} if out is None else out
    for key, value in record.items():
        if len(out) >= MAX_KEYS:
            break
        name = f"{prefix}.{key}" if prefix else str(key)[:100]
        if isinstance(value, dict) and depth < MAX_DEPTH:
            flatten(value, name, depth + 1, out)
        elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
            out[name] = value
        elif isinstance(value, bool):
            out[name] = str(value).lower()
    return out


# a container key whose entries are keyed by a label: {"models": {model: ...}}
_CONTAINERS = {"models": "model", "model": "model", "llms": "model", "networks": "model", "devices": "device",
               "gpus": "device", "hardware": "device", "boards": "device"}
MIN_NESTED = 2


def _leaves(node: dict[str, Any], path: tuple[str, ...], out: list[tuple[tuple[str, ...], dict[str, Any]]],
            depth: int = 0) -> None:
    """Every dict whose values hold no dict and at least one number, with its path of keys."""
    if len(out) > MAX_RUNS_PER_FILE or depth > MAX_DEPTH:
        return
    children = [(str(k)[:100], v) for k, v in node.items() if isinstance(v, dict)]
    numbers = any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in node.values())
    if not children:
        if numbers and path:
            out.append((path, node))
        return
    for key, child in children:
        _leaves(child, (*path, key), out, depth + 1)


def nested_records(doc: dict[str, Any]) -> list[dict[str, Any]] | None:
    """{"models": {model: {prompt: {gen_tps, ...}}}}: one record per path to a dict of figures, when there are
    several at one depth sharing their numeric keys; the path's varying keys become the model (under a 'models'
    key, else the first) and the tag (the rest, joined by '/'). Scalars beside the nesting at the top apply to
    every record. None when the document is not of that shape."""
    found: list[tuple[tuple[str, ...], dict[str, Any]]] = []
    _leaves(doc, (), found)
    if len(found) < MIN_NESTED or len({len(p) for p, _ in found}) != 1:
        return None
    numeric = [{k for k, v in leaf.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
               for _, leaf in found]
    common = set.intersection(*numeric)
    if not common or any(len(n & common) * 2 < len(n) for n in numeric):
        return None
    depth = len(found[0][0])
    varying = [i for i in range(depth) if len({p[i] for p, _ in found}) > 1]
    if not varying:
        return None
    named: dict[int, str] = {}
    for i in varying:
        parent = found[0][0][i - 1].lower() if i > 0 and i - 1 not in varying else ""
        if parent in _CONTAINERS and _CONTAINERS[parent] not in named.values():
            named[i] = _CONTAINERS[parent]
    has_model = "model" in named.values() or any("model" in leaf for _, leaf in found)
    if not has_model:
        named[varying[0]] = "model"
    top = {k: v for k, v in doc.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool)}
    records = []
    for path, leaf in found:
        record: dict[str, Any] = dict(top)
        for i, label in named.items():
            record[label] = path[i]
        tag = "/".join(path[i] for i in varying if i not in named)
        if tag:
            record["tag"] = tag
        record.update({k: v for k, v in leaf.items() if k not in record})
        records.append(record)
    return records


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
    return first in ("{", "[") or (first == '"' and twice_encoded(source.text) is not None)


def record_list(doc: dict[str, Any]) -> tuple[str, list[dict[str, Any]]] | None:
    """(its key, the list) of the one member of a JSON object that is a non-empty list of objects under a records'
    key (`rows`, `results`, `data`, ...); None when there is none, or several."""
    lists = [(str(k), v) for k, v in doc.items() if str(k).lower() in RECORD_KEYS and isinstance(v, list) and v
             and all(isinstance(r, dict) for r in v[:50])]
    return lists[0] if len(lists) == 1 else None


def unwrapped(source: Source) -> tuple[Source, str] | None:
    """The list of records a JSON object wraps (`{"cmd": [...], "rows": [<llama-bench records>], "stderr_tail": ...}`)
    as a source of its own, with the original's name and content hash (its runs are the file's), and a note saying
    so; None for anything else. One level: the list's own members are never unwrapped."""
    if source.is_folder:
        return None
    doc = source.json
    found = record_list(doc) if isinstance(doc, dict) else None
    if found is None:
        return None
    key, records = found
    inner = Source.single(json.dumps(records).encode(), source.name, source.dirs)
    inner.__dict__["content_sha256"] = source.content_sha256  # a cached property: the file's own hash
    others = [str(k)[:30] for k in doc if k != key]
    note = (f"the {len(records)} records under {key!r} of a wrapper object read as that tool's own output"
            + (f" (its other keys not read: {', '.join(others[:8])})" if others else ""))
    return inner, note


def json_records(source: Source, said: list[str] | None = None) -> list[dict[str, Any]] | None:
    """The records of a JSON Lines file, a JSON list of objects, an object holding one such list, or an object
    nesting dicts of figures (`nested_records`), also inside a JSON string that holds JSON (`twice_encoded`:
    decoded once); None when the file is none of these. `said` gets a note on how the records were found when it
    is not plain."""
    doc = source.json
    if doc is None and (doc := twice_encoded(source.text)) is not None and said is not None:
        said.append("a JSON string that holds JSON (the document was encoded twice): decoded once and read as the "
                    "JSON inside it")
    if isinstance(doc, list):
        return doc if doc and all(isinstance(r, dict) for r in doc[:50]) else None
    if isinstance(doc, dict):
        found = record_list(doc)
        if found is not None:
            return found[1]
        nested = nested_records(doc)
        if nested is not None:
            if said is not None:
                keys = [k for k in ("model", "tag") if k in nested[0]]
                said.append(f"nested JSON read as {len(nested)} runs, one per path to a set of figures (the path "
                            f"kept as {' and '.join(keys) or 'nothing'})")
            return nested
        return [doc] if any(isinstance(v, (int, float)) or isinstance(v, dict) for v in doc.values()) else None
    text = source.text
    if text is None or text.lstrip()[:1] != "{":
        return None
    records = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line, parse_constant=lambda c: None)
        except (ValueError, RecursionError):
            return None
        if not isinstance(value, dict):
            return None
        records.append(value)
        if len(records) > MAX_RUNS_PER_FILE:
            break
    return records or None
