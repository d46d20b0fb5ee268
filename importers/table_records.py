"""The records of a JSON results file: JSON Lines, a list of objects, an object holding one such list (a wrapper:
`{"cmd": [...], "rows": [...], "stderr_tail": "..."}`), an object nesting dicts of figures, each record flattened
with its nested settings (`config.batch_size`, `metrics.ttft.p50_ms`); also a JSON document encoded twice.

`unwrapped` gives the list a wrapper object holds as a source of its own, so that the tool reader of those records
reads them (`importers.detect_source`: one level, never the list's own members).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from importers.base import Source
from importers.json_text import json_lines, twice_encoded
from importers.table_columns import column_records
from importers.table_fields import PRECISIONS, FieldError, measure_field
from importers.table_labels import label_field
from importers.table_rows import DATE_CELL, NOT_TAG_WORDS, system_names
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
               "gpus": "device", "hardware": "device", "boards": "device", "engines": "engine", "backends": "engine",
               "runtimes": "engine", "frameworks": "engine", "servers": "engine"}
MIN_NESTED = 2
MAX_KINDS = 64
_SIZED = re.compile(r"(?i)(?:^|[^a-z0-9])\d+(?:\.\d+)?[bm](?:$|[^a-z0-9])")  # 'qwen2.5:7b', 'llama-3-8B': a model


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _nodes(node: dict[str, Any], path: tuple[str, ...], out: list[tuple[tuple[str, ...], dict[str, Any]]],
           depth: int = 0) -> None:
    """Every dict below the top holding a number of its own (beside any dicts it nests: a record's `source: {path,
    sha256}`), with its path of keys."""
    if len(out) > MAX_RUNS_PER_FILE or depth > MAX_DEPTH:
        return
    if path and any(_number(v) for v in node.values()) and not _statistics(node):
        out.append((path, node))
    for key, child in node.items():
        if isinstance(child, dict):
            _nodes(child, (*path, str(key)[:100]), out, depth + 1)


_STATISTICS = frozenset({"mean", "avg", "average", "median", "min", "max", "std", "stdev", "stddev", "var", "count",
                         "n", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p999", "p99.9", "samples",
                         "start", "end", "first", "last", "sum", "iqr", "cv"})  # 'cpu_temp_celsius': {mean, start, end}


def _statistics(node: dict[str, Any]) -> bool:
    """Whether a dict holds only statistics of one figure ({"latency_stats": {"mean": .., "p99": ..}}): the figure
    its key names, flattened into the record above it ('latency_stats.p99'), never a record of its own."""
    keys = [str(k).lower() for k, v in node.items() if _number(v)]
    return bool(keys) and all(k in _STATISTICS for k in keys) and all(
        _number(v) or v is None for v in node.values())


def _alike(a: set[str], b: set[str]) -> bool:
    """Two records of one kind: they share their numeric keys, at least half of each one's."""
    common = a & b
    return bool(common) and len(common) * 2 >= len(a) and len(common) * 2 >= len(b)


Family = list[tuple[tuple[str, ...], dict[str, Any]]]


def _families(doc: dict[str, Any]) -> tuple[list[Family], Family]:
    """(the sets of two or more dicts of one kind (alike numeric keys), the dicts of figures in none)."""
    nodes: Family = []
    _nodes(doc, (), nodes)
    groups: list[tuple[set[str], Family]] = []
    for path, node in nodes:
        keys = {str(k) for k, v in node.items() if _number(v)}
        group = next((g for g in groups if _alike(g[0], keys)), None)
        if group is not None:
            group[1].append((path, node))
        elif len(groups) < MAX_KINDS:  # bounded: a hostile object of many kinds costs no more than this
            groups.append((keys, [(path, node)]))
    families = [members for _, members in groups if len(members) >= MIN_NESTED]
    alone = [m for _, members in groups if len(members) < MIN_NESTED for m in members]
    return families, alone


def _within(inner: tuple[str, ...], outer: tuple[str, ...]) -> bool:
    return len(inner) > len(outer) and inner[:len(outer)] == outer


def _record_family(doc: dict[str, Any]) -> tuple[Family | None, Family, Family, str | None]:
    """(the records: the one family of dicts of one kind, the innermost where families nest (a model's own scalars
    over its prompts' figures); the dicts that hold them; the dicts of figures of no family; why the structure is
    ambiguous, else None)."""
    families, alone = _families(doc)
    if not families:
        return None, [], alone, None
    inner = [f for f in families if not any(g is not f and all(any(_within(p, q) for q, _ in f) for p, _ in g)
                                            for g in families)]
    outer = [m for f in families if f not in inner for m in f]
    for family in inner:
        paths = [p for p, _ in family]
        if any(_within(p, q) for p in paths for q in paths):
            why = (f"{_shown(family)} nest records of one kind inside each other (a total over parts?): which is a "
                   "run is not told")
            return None, [], alone, why
    readable = [f for f in inner if any(_reads(k) for k in _keys(f))]
    if not readable:  # dicts of what no field reads ('thermal_c_start': {'cpu-thermal': 48.9}): no records at all
        return None, [], alone + [m for f in inner for m in f], None
    if len(readable) < len(inner):  # sets whose keys no field reads ('ttft_improvement_pct'): no runs
        alone = alone + [m for f in inner if f not in readable for m in f]
        inner = readable
    if len(inner) > 1:
        shown = "; ".join(f"{_shown(f)} ({', '.join(sorted(_keys(f))[:4])})" for f in inner[:3])
        why = (f"{len(inner)} sets of records of different keys: {shown}; which of them are the runs is not told, "
               "and reading the object as one run would let one record's figure stand for the others'")
        return None, [], alone, why
    return inner[0], outer, alone, None


def _reads(key: str) -> bool:
    """Whether a key names a figure a field reads (a percentage or a count alone does not)."""
    try:
        found = measure_field(key)[0]
    except FieldError:
        return True
    return found is not None


def _keys(family: Family) -> set[str]:
    return set.intersection(*({k for k, v in node.items() if _number(v)} for _, node in family))


def _shown(family: Family) -> str:
    paths = [".".join(p) for p, _ in family]
    return ", ".join(p[:60] for p in paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def nested_ambiguity(doc: dict[str, Any]) -> str | None:
    """Why a JSON object nesting records cannot be read as runs (several sets of records of different keys, records
    nested in records of their own kind), naming the paths; None when it can, or nests none."""
    return _record_family(doc)[3]


_BATCH_KEY = re.compile(r"(?i)(?:batch|bs|batch_size)[_\-\s]?(\d{1,6})")
_INTEGER_PRECISIONS = {"int8", "int4", "fp8", "fp4"}
_ABOUT_THE_RUN = {"meta", "metadata", "env", "environment", "system", "hardware", "machine", "host", "platform", "info",
                  "setup", "config", "settings"}  # a top-level object of labels beside the records


def _scalars(node: dict[str, Any]) -> dict[str, Any]:
    """A dict's own scalars that apply to the records below it: labels and settings, never a figure (a total
    energy beside per-system records is the whole file's, not each record's)."""
    out = {}
    for key, value in node.items():
        if isinstance(value, (dict, list)) or isinstance(value, bool) or value is None:
            continue
        if not _is_figure(str(key)[:100]):
            out[str(key)[:100]] = value
    return out


@lru_cache(maxsize=1024)
def _figure_key(key: str) -> str | None:
    """The metric a key is read as ('refused' for one whose unit contradicts its name: read, to refuse it), or None."""
    try:
        field = measure_field(key)[0]
    except FieldError:
        return "refused"
    return field.key if field is not None and field.section == "metrics" else None


def _is_figure(key: str) -> bool:
    return _figure_key(key) is not None


# a record named for what it samples besides time ('CPU Statistics', 'RAM Stats', 'Confidence Statistics')
_RESOURCES = {"cpu", "ram", "memory", "mem", "frequency", "freq", "temperature", "temp", "confidence", "detection",
              "detections", "utilization", "utilisation", "util", "usage", "swap", "disk", "network"}
_STATISTICS_OF = {"statistics", "stats", "stat", "summary"}
_WARM_UP = re.compile(r"(?i)^warm[\s_-]?up\b")  # 'Warmup Statistics', 'warm_up': before the measured runs


def _of_a_resource(key: str) -> bool:
    words = set(re.findall(r"[a-z]+", key.lower()))
    return bool(words & _RESOURCES) and bool(words & _STATISTICS_OF) and words <= _RESOURCES | _STATISTICS_OF


def nested_records(doc: dict[str, Any], said: list[str] | None = None) -> list[dict[str, Any]] | None:
    """{"models": {model: {prompt: {gen_tps, ...}}}} or {"systems": {name: {p99_us, ..., "source": {...}}}}: one
    record per dict of figures, when two or more dicts, anywhere in the object, hold numeric keys of one kind (each
    record's nested dicts flattened with it). The path's varying keys become the model (under a 'models' key, or
    keys naming a parameter count), the engine (under 'engines', 'backends', 'runtimes'), the device (under
    'gpus', 'devices') and the tag (the rest, joined by '/'). The scalars of the dicts above a record (the top
    object, a model's own) apply to it, except figures. A record whose every figure equals an earlier one's is that
    measurement listed again (under another key): read once, and said. None when the document is not of that shape,
    or when its shape is ambiguous (`nested_ambiguity`)."""
    family, outer, alone, _ = _record_family(doc)
    if family is None:
        return None
    if alone and said is not None:
        said.append(f"{_shown(alone)} not read: {'its figures are' if len(alone) == 1 else 'their figures are'} of "
                    "another kind than the records'")
    paths = [p for p, _ in family]
    same_depth = len({len(p) for p in paths}) == 1
    depth = len(paths[0]) if same_depth else 0
    varying = [i for i in range(depth) if len({p[i] for p in paths}) > 1]
    named: dict[int, str] = {}
    for i in varying:
        parent = paths[0][i - 1].lower() if i > 0 and i - 1 not in varying else ""
        if parent in _CONTAINERS and _CONTAINERS[parent] not in named.values():
            named[i] = _CONTAINERS[parent]
    has_model = "model" in named.values() or any("model" in leaf for _, leaf in family)
    sized = [i for i in varying if i not in named and all(_SIZED.search(p[i]) for p in paths)]
    if not has_model and sized:
        named[sized[0]] = "model"
    prefix = 0
    while not same_depth and all(len(p) > prefix + 1 and p[prefix] == paths[0][prefix] for p in paths):
        prefix += 1
    above = {path: _scalars(node) for path, node in outer}
    top = _scalars(doc)
    for key, node in doc.items():  # {"meta": {"gpu_name": ...}, "models": {...}}: the file's labels, every record's
        if isinstance(node, dict) and str(key).lower() in _ABOUT_THE_RUN:
            top.update({f"{key}.{k}": v for k, v in _scalars(node).items()
                        if (field := label_field(f"{key}.{k}"[:100])) is not None and field.section != "metrics"})
    records: list[dict[str, Any]] = []
    seen: dict[tuple[tuple[str, Any], ...], str] = {}
    for path, leaf in family:
        warm_up = _WARM_UP.search(path[-1]) is not None
        if warm_up or _of_a_resource(path[-1]):
            if said is not None:
                said.append(f"{'.'.join(path)[:80]} left out: " + (
                    "the warm-up, not the measured run" if warm_up else
                    "statistics of a resource or an output (CPU, RAM, frequency, detections), not of a timed run: "
                    "a rate beside them is not a throughput"))
            continue
        figures = tuple(sorted((k, v) for k, v in flatten(leaf).items() if _number(v)))
        again = seen.get(figures) if any(isinstance(v, float) and not v.is_integer() for _, v in figures) else None
        if again is not None:
            if said is not None:
                said.append(f"{'.'.join(path)[:80]} left out: every figure equals {again[:80]}'s (the same "
                            "measurement listed again)")
            continue
        seen.setdefault(figures, ".".join(path))
        record: dict[str, Any] = dict(leaf)
        for i, label in named.items():
            record.setdefault(label, path[i])
        parts = [path[i] for i in varying if i not in named] if same_depth else list(path[prefix:])
        if parts:
            record.setdefault("tag", "/".join(parts))
        for part in parts:  # 'batch_16' / 'fp16_gpu': the batch size and the precision a key names
            if (batch := _BATCH_KEY.fullmatch(part.strip())) is not None:
                record.setdefault("batch_size", int(batch.group(1)))
            words = {w for w in re.split(r"[_\-\s.]+", part.lower()) if w in PRECISIONS or w in _INTEGER_PRECISIONS}
            if len(words) == 1:
                record.setdefault("precision", words.pop())
        for at, scalars in sorted(above.items(), key=lambda item: -len(item[0])):
            if _within(path, at):
                for k, v in scalars.items():
                    record.setdefault(k, v)
        for k, v in top.items():
            record.setdefault(k, v)
        records.append(record)
    return records


def record_list(doc: dict[str, Any]) -> tuple[str, list[dict[str, Any]]] | None:
    """(its key, the list) of the one member of a JSON object that is a non-empty list of objects under a records'
    key (`rows`, `results`, `data`, ...), or, where none is, the one such list whose records hold a figure; None
    when there is none, or several."""
    lists = [(str(k), v) for k, v in doc.items() if isinstance(v, list) and v and all(isinstance(r, dict)
                                                                                       for r in v[:50])]
    named = [(k, v) for k, v in lists if k.lower() in RECORD_KEYS]
    if named:
        return named[0] if len(named) == 1 else None
    figured = _figured(lists)
    if len(figured) == 1 and _counts_only(figured[0][1]) and _states_results(doc):
        return None  # a breakdown of the object's counts ('endpoint_summaries': completed, tokens), no runs of its own
    return figured[0] if len(figured) == 1 else None


_COUNT_KEYS = frozenset({"output_tokens", "output_tokens_mean", "prompt_tokens_mean", "examples"})  # no result alone


def _counts_only(records: list[dict[str, Any]]) -> bool:
    """Whether a list's records give nothing but counts (requests, tokens): no latency, rate, energy or time."""
    keys = {str(k)[:100] for r in records[:20] for k in flatten(r)}
    found = [f for k in keys if (f := _figure_key(k)) is not None]
    return bool(found) and all(f in _COUNT_KEYS for f in found)


def _states_results(doc: dict[str, Any]) -> bool:
    """Whether an object's own members (its lists aside) give a result: a latency, a rate or an energy."""
    own = flatten({k: v for k, v in doc.items() if not isinstance(v, list)})
    return any(_figure_key(str(k)[:100]) not in (None, "duration_s", *_COUNT_KEYS) for k in own)


def _figured(lists: list[tuple[str, list[Any]]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The lists whose records hold a figure ('metrics': [{backend, avg_latency_ms, ...}]), or whose records'
    members do ('cells': [{batch, pytorch: {mean_ms, ...}, tensorrt: {...}}])."""
    return [(k, v) for k, v in lists if any(_is_figure(str(key)[:100]) for key in v[0]) or any(
        isinstance(m, dict) and any(_is_figure(str(key)[:100]) for key in m) for m in list(v[0].values())[:20])]


LIST_KEY = "list"  # the column naming which of an object's lists of records a record came from


# a list of the parts of a run, not of runs: its warm-up, its raw samples or requests, its steps or its log
_PARTS = re.compile(r"(?i)warm|raw|sample|request|trace|histor|step|iteration|log|detail|individual|per_")


def several_lists(doc: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """An object's lists of records holding figures, where it holds several under no records' key
    (`{"model": ..., "context_sweep": [...], "throughput_sweep": [...]}`): each a sweep of its own, its records
    told apart by the list's name. Lists named for the parts of a run (warm-up, raw samples, requests, steps) are
    none; where they leave one list, it is read alone."""
    lists = [(str(k), v) for k, v in list(doc.items())[:MAX_KEYS] if isinstance(v, list) and v and all(
        isinstance(r, dict) for r in v[:50])]
    figured = _figured(lists)
    if len(figured) < 2 or any(k.lower() in RECORD_KEYS for k, _ in lists):
        return []
    return [(k, v) for k, v in figured if not _PARTS.search(k)]


def wrapper_labels(doc: dict[str, Any], key: str) -> dict[str, Any]:
    """The labels an object wrapping a list of records states beside it, which hold for every record: the device,
    model, engine or a setting (`{"gpu": "NVIDIA A10", "model": ..., "results": [...]}`), also one level down
    (`"hardware": {"gpu_name": ...}`); each label once (the first), never a figure (a wrapper's total is not each
    record's)."""
    scalars = [(str(k), v) for k, v in doc.items() if k != key]
    scalars += [(f"{k}.{k2}", v2) for k, v in doc.items() if k != key and isinstance(v, dict)
                for k2, v2 in list(v.items())[:MAX_KEYS]]  # {"hardware": {"gpu_name": ...}, "model": {"name": ...}}
    out: dict[str, Any] = {}
    for name, value in scalars:
        if isinstance(value, (str, int, float)) and not isinstance(value, bool) and (
                field := label_field(name[:100])) is not None and field.section != "metrics" and field.key not in (
                "status", "repeat") and field.key not in {label_field(k).key for k in out} and not (  # type: ignore[union-attr]
                field.key == "device" and system_names([str(value)])):  # 'platform': Darwin names no device
            out[name] = value
    return out


@dataclass(frozen=True)
class Unwrapped:
    """A wrapper's records as a source of their own, the note saying so, and for records each nesting a tool's
    record, the wrapper records' own text labels that tell them apart (one tag part per record, in order)."""

    source: Source
    note: str
    tags: tuple[str, ...] | None = None


def unwrapped(source: Source) -> Unwrapped | None:
    """The list of records a JSON object wraps (`{"cmd": [...], "rows": [<llama-bench records>], "stderr_tail": ...}`)
    as a source of its own, with the original's name and content hash (its runs are the file's), and a note saying
    so; None for anything else. One level: the list's own members are never unwrapped."""
    if source.is_folder:
        return None
    doc = source.json
    found = record_list(doc) if isinstance(doc, dict) else None
    tags: tuple[str, ...] | None = None
    if found is not None:
        key, records = found
        others = [str(k)[:30] for k in doc if k != key]
        note = (f"the {len(records)} records under {key!r} of a wrapper object read as that tool's own output"
                + (f" (its other keys not read: {', '.join(others[:8])})" if others else ""))
    else:
        lines = doc if isinstance(doc, list) else json_lines(source.text) if doc is None else None
        nested = _nested_key(lines) if lines else None
        if lines is None or nested is None:
            return None
        key, records = nested, [r[nested] for r in lines]
        telling = _telling_text(lines, key)
        others = list(dict.fromkeys(str(k)[:30] for r in lines[:50] for k in r if k != key and k not in telling))
        note = (f"each of the {len(records)} records' {key!r} object read as that tool's own output (the records' "
                f"own keys not read: {', '.join(others[:8])}{' ...' if len(others) > 8 else ''}: a harness's "
                "figures cover its own window, not the tool's)"
                + (f"; {', '.join(telling)} kept in the tag (they tell the records apart)" if telling else ""))
        if telling:
            tags = tuple(", ".join(f"{k} {r[k]}" for k in telling if isinstance(r.get(k), str) and r[k].strip())
                         for r in lines)
    inner = source.part(json.dumps(records).encode())
    return Unwrapped(inner, note, tags)


def _telling_text(records: list[dict[str, Any]], nested: str) -> list[str]:
    """The wrapper records' short text keys whose values differ between records (a build, a driver): labels the
    nested tool's record does not state. Never a date, a time or a message."""
    out = []
    for key in dict.fromkeys(k for r in records[:MAX_RUNS_PER_FILE] for k in r if k != nested):
        values = [r.get(key) for r in records]
        words = [w for w in re.split(r"[^a-z]+", str(key).lower()) if w]
        texts = all(v is None or isinstance(v, str) and len(v) <= 60 and not DATE_CELL.match(v) for v in values)
        if len(set(map(str, values))) > 1 and texts and words and words[-1] not in NOT_TAG_WORDS:
            out.append(str(key))
    return out[:4]


def _nested_key(records: list[Any]) -> str | None:
    """The one key under which every record nests a non-empty object (a harness wrapping each of a tool's records:
    `{"mode": "pp", ..., "bench_raw": {<llama-bench's record>}}`); None when there is none or several."""
    if not all(isinstance(r, dict) for r in records):
        return None
    keys = [k for k, v in records[0].items() if isinstance(v, dict) and v]
    found = [k for k in keys if all(isinstance(r.get(k), dict) and r.get(k) for r in records)]
    return str(found[0]) if len(found) == 1 else None


def _expanded(records: list[Any], said: list[str] | None) -> list[Any]:
    """Records that each hold a list of records of figures (`{"model", "prompt", "runs": [{...}, {...}],
    "summary": {...}}`): the inner records, each with its parent's text labels (model, prompt); the parent's own
    figures, their summary, left out (said). Any other records as they are."""
    first = records[0]
    key = next((k for k, v in first.items() if isinstance(v, list) and v and isinstance(v[0], dict)
                and any(_number(x) for x in v[0].values())), None)
    if key is None or not all(isinstance(r, dict) and isinstance(r.get(key), list) for r in records):
        return records
    out: list[Any] = []
    for record in records:
        labels = {k: v for k, v in record.items() if isinstance(v, str)}
        out.extend({**labels, **inner} for inner in record[key] if isinstance(inner, dict))
        if len(out) > MAX_RUNS_PER_FILE:
            break
    if said is not None:
        said.append(f"the {len(out)} records under each record's {key!r} read as the runs, with their record's labels; "
                    "the records' own figures (their summary) not read")
    return out


def _members(records: list[dict[str, Any]], said: list[str] | None) -> list[dict[str, Any]]:
    """Records each holding two or more objects of the same figures under setup names ({batch: 1, pytorch: {mean_ms,
    fps}, tensorrt: {mean_ms, fps}}): a record per member, its name as the setup and the record's own labels beside
    it; its other members' figures never stand for its. Any other records as they are."""
    def members(record: dict[str, Any]) -> list[str]:
        found = [k for k, v in record.items() if isinstance(v, dict) and any(_is_figure(str(x)[:100]) for x in v)]
        shared = set.intersection(*(set(record[k]) for k in found)) if len(found) > 1 else set()
        return found if any(_is_figure(str(x)[:100]) for x in shared) else []

    named = [members(r) for r in records[:MAX_KEYS]]
    if not named or not all(named) or len(records) * len(named[0]) > 10_000:
        return records
    out = [{**{k: v for k, v in r.items() if not isinstance(v, (dict, list)) and not _is_figure(str(k)[:100])},
            "setup": name, **r[name]} for r, names in zip(records, named, strict=False) for name in names]
    if said is not None:
        said.append(f"each record's members {', '.join(named[0])[:120]} read as a run each (the member's name the "
                    "setup), with the record's labels")
    return out


def json_records(source: Source, said: list[str] | None = None, doc: Any = None) -> list[dict[str, Any]] | None:
    """The records of a JSON Lines file, a JSON list of objects, an object holding one such list, or an object
    nesting dicts of figures (`nested_records`), also inside a JSON string that holds JSON (`twice_encoded`:
    decoded once); None when the file is none of these. `doc`, when given, is the object the file stands for (a
    key/value table's, `key_value_object`). `said` gets a note on how the records were found when it is not plain."""
    doc = source.json if doc is None else doc
    if doc is None and (doc := twice_encoded(source.text)) is not None and said is not None:
        said.append("a JSON string that holds JSON (the document was encoded twice): decoded once and read as the "
                    "JSON inside it")
    if isinstance(doc, list):
        return _expanded(doc, said) if doc and all(isinstance(r, dict) for r in doc[:50]) else None
    if isinstance(doc, dict):
        found = record_list(doc)
        if found is not None:
            key, records = found[0], _members(found[1], said)
            shared = wrapper_labels(doc, key)
            if shared and said is not None:
                said.append(f"the wrapper's {', '.join(shared)[:120]} read as every record's (where a record does "
                            "not state its own)")
            return [{**shared, **r} for r in records] if shared else records
        if lists := several_lists(doc):  # each list a sweep: its records told apart by the list's name
            shared = wrapper_labels(doc, "")
            if said is not None:
                said.append(f"the records of {', '.join(k for k, _ in lists)[:120]} read as one table, each "
                            f"record's list in the tag" + (f"; the wrapper's {', '.join(shared)[:80]} read as every "
                                                           "record's" if shared else ""))
            return [{**shared, LIST_KEY: k, **r} for k, records in lists for r in _members(records, said)]
        if (columns := column_records(doc, _is_figure)) is not None:  # {"fps": {"a": 1, "b": 2}, "ms": {...}}
            shared = wrapper_labels(doc, columns[0])
            if said is not None:
                said.append(f"the figures under {columns[0]!r} written column by column (a value per setup) read as "
                            f"{len(columns[1])} records, one per setup" + (
                                f"; the object's {', '.join(shared)[:80]} read as every record's" if shared else ""))
            return [{**shared, **r} for r in columns[1]]
        nested = nested_records(doc, said)
        if nested is not None:
            if said is not None:
                keys = [k for k in ("model", "tag") if k in nested[0]]
                said.append(f"nested JSON read as {len(nested)} records, one per path to a set of figures (the path "
                            f"kept as {' and '.join(keys) or 'nothing'})")
            return nested
        if nested_ambiguity(doc) is not None:  # read as one record, one record's figure would stand for another's
            return None
        return [doc] if any(isinstance(v, (int, float)) or isinstance(v, dict) for v in doc.values()) else None
    lines = json_lines(source.text)
    return lines if lines and all(isinstance(r, dict) for r in lines) else None


def siblings(a: str, b: str) -> bool:
    """Whether two flattened JSON keys are the same key of two records side by side ('systems.QUIET.p99_us',
    'systems.NVIDIA MIG.p99_us'): one path's length, one last key, one other key differing."""
    pa, pb = a.split("."), b.split(".")
    return (len(pa) == len(pb) >= 2 and pa[-1] == pb[-1]
            and sum(x != y for x, y in zip(pa[:-1], pb[:-1], strict=True)) == 1)
