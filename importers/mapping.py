"""A person's mapping of a table no reader knows: which result field each column is, in which unit, and the labels
the table never states, saved as a named recipe keyed by the table's shape.

A table is read as the general reader reads it (`importers.general_table`: a wide CSV/TSV, a long table pivoted by
its metric/value columns, JSON Lines or records flattened), so its columns are the ones a person sees. Its shape
is its kind and its normalised column names (`Shape.key`, a hash): the next file of that shape is read by the same
recipe. A recipe is checked before it is used (`check`): a field given by two columns, a unit of another quantity
than its field (W as J/token), a column the table lacks, a recipe made for another shape, each refused naming the
column. A recipe file is read with the limits of any upload (`parse`): its size, its nesting, its number of
columns and every string (one line, 200 characters, no control characters).

`apply` never converts a value itself: it writes the mapped columns under names the general reader reads as
exactly the field chosen, with the unit chosen (`FIELDS[...].header`), and that reader converts them through
`joulebench.units` and checks them against the result schema's ranges, as for every file. The caller imports the
rewritten source through the one import path (`importers.load_source`, `ingest`); `Mapped.explain` turns the
reader's words (its field names, 'record N') back into the table's (the column, 'line N').
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from importers import mapping_log
from importers.base import Conversion, Hints, Source, check_run_count, read_csv
from importers.general_table import (
    MAX_KEYS,
    GeneralTableImporter,
    flatten,
    is_json,
    json_records,
)
from importers.table_fields import plain
from importers.table_long import long_columns, pivot
from importers.table_text import text_tables
from importers.table_units import delimiter_of
from joulebench import units
from joulebench.errors import ResultFileError
from joulebench.metrics import LATENCY_BY_BASE
from joulebench.metrics import label as metric_label
from joulebench.ranges import RangeError, check_text
from joulebench.ranges import check as check_range
from joulebench.vocab import MODES, PRECISIONS

FORMAT = "joulebench-mapping"
VERSION = 1
MAX_RECIPE_BYTES = 256 * 1024  # a recipe of MAX_KEYS columns with long names is under 100 KB
MAX_DEPTH = 4  # {recipe: {columns: {name: {field, unit}}}}
SHOWN_ROWS = 5


@dataclass(frozen=True)
class MapField:
    key: str
    title: str  # for a person
    kind: str | None  # the units kind of its values (None: a label, a count or a setting, read as written)
    header: str  # the name the general reader reads as exactly this field
    section: str = "metrics"  # metrics | label | config


def _fields() -> dict[str, MapField]:
    out: dict[str, MapField] = {}
    for key, kind, header in (  # titles: the metric's one label (joulebench.metrics)
        ("energy_j", "energy", "energy"), ("avg_power_w", "power", "power"),
        ("duration_s", "time", "duration"),
        ("tokens_per_s", "token_rate", "throughput"),
        ("decode_tokens_per_s", "token_rate", "decode throughput"),
        ("prompt_tokens_per_s", "token_rate", "prefill throughput"),
        ("throughput_sps", "item_rate", "throughput"),
        ("requests_per_s", "item_rate", "request throughput"),
        ("j_per_token", "energy_per_token", "energy per token"),
        ("decode_j_per_token", "energy_per_token", "decode energy per token"),
        ("j_per_sample", "energy_per_item", "energy per sample"),
        ("j_per_request", "energy_per_item", "energy per request"),
        ("mem_used_device_mb", "memory", "gpu memory used"),
        ("gpu_clock_avg_mhz", "frequency", "gpu clock"),
        ("output_tokens", None, "output tokens (tokens)"),
        ("prompt_tokens_mean", None, "input tokens (tokens)"),
    ):
        out[key] = MapField(key, metric_label(key), kind, header)
    for base, dist in LATENCY_BY_BASE.items():
        for m in dist.metrics():
            stat = m.name.removeprefix(base + "_").removesuffix("_ms")
            out[m.name] = MapField(m.name, metric_label(m.name), "time", f"{base.replace('_', ' ')} {stat}")
    for key, title, section, header in (
        ("device", "Device", "label", "device"), ("model", "Model", "label", "model"),
        ("mode", "Mode (train, infer)", "label", "mode"), ("precision", "Precision", "label", "precision"),
        ("repeat", "Repeat / run number", "label", "repeat"), ("batch_size", "Batch size", "config", "batch_size"),
        ("engine", "Engine", "config", "engine"), ("quantization", "Quantization", "config", "quantization"),
        ("max_concurrency", "Concurrency", "config", "max_concurrency"),
        ("request_rate_per_s", "Request rate (req/s)", "config", "request_rate"),
        ("prompt_tokens_requested", "Input length requested", "config", "input_len"),
        ("output_tokens_requested", "Output length requested", "config", "output_len"),
        ("seq_len", "Sequence length", "config", "seq_len"), ("gpu_count", "GPU count", "config", "gpu_count"),
        ("power_mode", "Power mode", "config", "power_mode"), ("tag", "Tag", "config", "tag"),
    ):
        out[key] = MapField(key, title, None, header, section)
    for key, title, kind, header in mapping_log.LOG_FIELDS:
        out[key] = MapField(key, title, kind, header, "log")
    return out


FIELDS = _fields()
# the labels a recipe may give once for every file of its shape (the table states them nowhere)
GIVEN_LABELS = ("device", "mode", "precision", "model", "batch_size")
NEEDED = ("device", "mode")  # asked for when no column and no value gives them


def units_for(key: str) -> list[str]:
    """The units a field's column may be in (its stored unit first)."""
    kind = FIELDS[key].kind
    if kind is None:
        return []
    seen: dict[str, None] = {units.BASE[kind]: None}
    for unit in units.UNITS.values():
        if unit.kind == kind and spelling(key, unit.symbol) is not None:
            seen.setdefault(unit.symbol, None)
    if kind == "time" and key.endswith("_ms"):
        return ["ms", *[s for s in seen if s != "ms"]]
    return list(seen)


_OTHER_ITEMS = re.compile(r"req|prompt|query", re.IGNORECASE)  # a per-request unit, read as energy per request


def spelling(key: str, unit: str) -> str | None:
    """How the unit is written for the general reader to read the column as exactly `key` (a spelling of the same
    factor: 'mJ/sample' for energy per sample, never 'mJ/request'); None when no spelling is."""
    found = units.find_unit(unit)
    if found is None:
        return None
    names = [s for s, u in units.UNITS.items() if u == found]
    if key == "j_per_sample":
        names = [s for s in names if not _OTHER_ITEMS.search(s)]
    return names[0] if names else None


class MappingError(ResultFileError):
    """A recipe that cannot be used: each problem names the column (or the recipe's part) and the fix."""


# --- the table as the general reader sees it ---------------------------------------------------------

@dataclass(frozen=True)
class Shape:
    kind: str  # wide | long | records
    columns: tuple[str, ...]  # normalised, sorted

    @property
    def key(self) -> str:
        text = self.kind + "\n" + "\n".join(self.columns)
        return hashlib.sha256(text.encode()).hexdigest()[:32]


def normalise(column: str) -> str:
    return " ".join(plain(column).split())[:200]


@dataclass
class Table:
    name: str
    kind: str
    header: list[str]
    rows: list[tuple[str, list[str]]]  # (where: 'line 3', 'record 2', cells)

    @property
    def shape(self) -> Shape:
        return Shape(self.kind, tuple(sorted({normalise(c) for c in self.header if c.strip()})))

    def column_values(self, i: int, limit: int = 200) -> list[str]:
        return [r[i] for _, r in self.rows[:limit] if i < len(r)]


def read_table(source: Source) -> Table:
    """The table of a file as the general reader reads it; MappingError when the file is no table."""
    conv = Conversion(source=source, hints=Hints(), importer=GeneralTableImporter())
    head = source.head
    if not head:
        raise MappingError(source.name, ["(whole file): not text; only a table (CSV, TSV, JSON Lines or JSON "
                                         "records) can be mapped"])
    if is_json(source):  # an object, an array, or JSON encoded twice (a JSON string holding JSON: decoded once)
        records = json_records(source)
        if not records:
            raise MappingError(source.name, ["(whole file): JSON, but not JSON Lines or a list of records"])
        check_run_count(conv, len(records), "its records")
        flat = [flatten(r) for r in records if isinstance(r, dict)]
        header = list(dict.fromkeys(k for r in flat for k in r))[:MAX_KEYS]
        rows = [(f"record {i + 1}", ["" if r.get(k) is None else str(r.get(k)) for k in header])
                for i, r in enumerate(flat)]
        return Table(source.name, "records", header, rows)
    delimiter = delimiter_of(head)
    header, lines = read_csv(conv, source.text or "", delimiter=delimiter)
    if len(header) < 2 and (tables := text_tables(source.text or "")[0]):  # a Markdown or console table: its first
        return Table(source.name, "wide", tables[0].header, [(f"line {n}", r) for n, r in tables[0].rows])
    if len(header) < 2:
        raise MappingError(source.name, ["line 1: one column; a table to map has a column per figure or label"])
    if delimiter == ";":  # as the general reader: a decimal comma goes with ';'
        lines = [(n, [c.replace(",", ".") if c.count(",") == 1 and "." not in c else c for c in r]) for n, r in lines]
    long = long_columns(header)
    if long is not None:
        header, lines = pivot(conv, header, lines, long)
        return Table(source.name, "long", header, [(f"rows of line {n}", r) for n, r in lines])
    check_run_count(conv, len(lines), "its rows")
    return Table(source.name, "wide", header, [(f"line {n}", r) for n, r in lines])


# --- the recipe --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ColumnMap:
    column: str  # as the table writes it
    field: str | None  # a FIELDS key; None: left out
    unit: str | None = None  # the unit its values are in (a measurement); None for a label


@dataclass(frozen=True)
class Recipe:
    name: str
    shape: Shape
    columns: tuple[ColumnMap, ...]
    labels: tuple[tuple[str, str], ...] = ()  # (label, value) given once for every file of the shape

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "name": self.name,
                "shape": {"key": self.shape.key, "kind": self.shape.kind, "columns": list(self.shape.columns)},
                "columns": {c.column: {"field": c.field, **({"unit": c.unit} if c.unit else {})}
                            for c in self.columns},
                "labels": dict(self.labels)}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False, sort_keys=True)

    def mapped(self) -> list[ColumnMap]:
        return [c for c in self.columns if c.field is not None]

    def needed(self) -> list[str]:
        """The labels neither a column nor a given value states: asked for (or left 'not stated')."""
        if mapping_log.is_log([c.field for c in self.mapped()]):
            return []  # a power log's device is given at the import
        have = {c.field for c in self.mapped()} | {k for k, _ in self.labels}
        gen = any(c.field in _GENERATION for c in self.mapped())
        return [k for k in NEEDED if k not in have and not (k == "mode" and gen)]


_GENERATION = {"tokens_per_s", "decode_tokens_per_s", "prompt_tokens_per_s", "j_per_token", "decode_j_per_token",
               "ttft_avg_ms", "ttft_p50_ms", "tpot_avg_ms", "itl_avg_ms"}  # the general reader's: mode infer


def recipe_from(name: str, table: Table, choices: dict[str, tuple[str | None, str | None]],
                labels: dict[str, str] | None = None) -> Recipe:
    """A recipe from a person's choices ({column: (field, unit)}), checked against the table (`check`)."""
    given = tuple((k, v.strip()) for k, v in (labels or {}).items() if v is not None and str(v).strip())
    recipe = Recipe(name.strip(), table.shape,
                    tuple(ColumnMap(c, *choices.get(c, (None, None))) for c in table.header if c.strip()), given)
    check(recipe, table)
    return recipe


def check(recipe: Recipe, table: Table | None = None) -> None:
    """MappingError naming every column whose mapping cannot be used (nothing is read or stored then)."""
    problems: list[str] = []
    try:
        check_text(recipe.name, "the mapping's name")
        if not recipe.name.strip():
            problems.append("name: give the mapping a name (it is saved under it)")
    except RangeError as e:
        problems.append(f"name: {e.format_message()}")
    by_field: dict[str, list[str]] = {}
    for c in recipe.columns:
        where = f"column {c.column[:80]!r}"
        if c.field is None:
            continue
        spec = FIELDS.get(c.field)
        if spec is None:
            problems.append(f"{where}: {c.field[:40]!r} is no field JouleBench stores")
            continue
        by_field.setdefault(c.field, []).append(c.column)
        if spec.kind is None:
            if c.unit:
                problems.append(f"{where}: {spec.title} carries no unit (it is read as written), not {c.unit[:20]!r}")
            continue
        if not c.unit:
            problems.append(f"{where}: give the unit its values are in ({', '.join(units_for(c.field)[:6])}, ...)")
            continue
        found = units.find_unit(c.unit)
        if found is None:
            problems.append(f"{where}: {c.unit[:20]!r} is not a unit JouleBench converts")
        elif found.kind == spec.kind and spelling(c.field, c.unit) is None:
            problems.append(f"{where}: {spec.title} is not read in {c.unit}; convert it to one of "
                            f"{', '.join(units_for(c.field))}")
        elif found.kind != spec.kind:
            problems.append(f"{where}: its unit {c.unit} is one of {units.KIND_WORDS[found.kind]}, but "
                            f"{spec.title} ({c.field}) holds {units.KIND_WORDS[spec.kind]} "
                            f"({units.BASE[spec.kind]}): choose another field or unit")
    for key, cols in by_field.items():
        if len(cols) > 1:
            problems.append(f"columns {', '.join(repr(c[:60]) for c in cols)}: all mapped to {FIELDS[key].title} "
                            f"({key}); one column per field")
    if mapping_log.is_log([c.field for c in recipe.mapped()]):
        problems += mapping_log.problems([(c.column, c.field) for c in recipe.mapped()], [k for k, _ in recipe.labels])
    elif not any(FIELDS[c.field].section == "metrics" for c in recipe.mapped() if c.field in FIELDS):
        problems.append("columns: map at least one column to a figure (energy, power, a rate or a latency)")
    for label, value in recipe.labels:
        problems += _label_problems(label, value, {c.field: c.column for c in recipe.mapped()})
    if table is not None:
        problems += _shape_problems(recipe, table)
    if problems:
        raise MappingError(table.name if table is not None else f"mapping {recipe.name[:60]!r}", problems)


def _label_problems(label: str, value: str, by_column: dict[str | None, str]) -> list[str]:
    where = f"labels: {label[:40]!r}"
    if label not in GIVEN_LABELS:
        return [f"{where}: not a label a mapping gives (it gives {', '.join(GIVEN_LABELS)})"]
    if label in by_column:
        return [f"{where}: column {by_column[label][:60]!r} gives it already; keep one"]
    try:
        check_text(value, label)
        if label == "mode" and value not in MODES:
            return [f"{where}: {value[:20]!r} is not one of {', '.join(MODES)}"]
        if label == "precision" and value not in PRECISIONS:
            return [f"{where}: {value[:20]!r} is not one of {', '.join(PRECISIONS)}"]
        if label == "batch_size" and check_range("config", "batch_size", value, label="batch size") is None:
            return [f"{where}: give a whole number"]
    except RangeError as e:
        return [f"{where}: {e.format_message()}"]
    return []


def _shape_problems(recipe: Recipe, table: Table) -> list[str]:
    shape = table.shape
    if recipe.shape.key == shape.key:
        return []
    mine, theirs = set(recipe.shape.columns), set(shape.columns)
    said = []
    if recipe.shape.kind != shape.kind:
        said.append(f"it is a {recipe.shape.kind} table, this file a {shape.kind} one")
    if theirs - mine:
        said.append("columns the mapping does not know: " + ", ".join(sorted(theirs - mine))[:200])
    if mine - theirs:
        said.append("columns the file lacks: " + ", ".join(sorted(mine - theirs))[:200])
    return [f"shape: the mapping {recipe.name[:60]!r} is for another table ({'; '.join(said) or 'another shape'}); "
            "map this file on its own"]


def parse(raw: bytes | str, name: str = "mapping") -> Recipe:
    """A recipe file read with the limits of any upload; MappingError naming what is wrong."""
    data = raw.encode() if isinstance(raw, str) else raw
    if len(data) > MAX_RECIPE_BYTES:
        raise MappingError(name, [f"(whole file): {len(data):,} bytes; a mapping is at most {MAX_RECIPE_BYTES:,}"])
    try:
        doc = json.loads(data.decode("utf-8"), parse_constant=lambda c: None)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise MappingError(name, [f"(whole file): not a JSON mapping ({str(e)[:80]})"]) from e
    if _depth(doc) > MAX_DEPTH:
        raise MappingError(name, [f"(whole file): nested deeper than {MAX_DEPTH} levels; not a mapping"])
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise MappingError(name, [f"format: not a JouleBench mapping (it says \"format\": \"{FORMAT}\")"])
    if doc.get("version") != VERSION:
        raise MappingError(name, [f"version: {str(doc.get('version'))[:10]!r}; this JouleBench reads version "
                                  f"{VERSION}"])
    extra = set(doc) - {"format", "version", "name", "shape", "columns", "labels"}
    shape, columns, labels = doc.get("shape"), doc.get("columns"), doc.get("labels") or {}
    problems = [f"{k[:40]!r}: not part of a mapping" for k in sorted(extra)[:5]]
    if not isinstance(shape, dict) or not isinstance(shape.get("columns"), list) or shape.get("kind") not in (
            "wide", "long", "records"):
        problems.append("shape: give its kind (wide, long or records) and its columns")
    if not isinstance(columns, dict) or not isinstance(labels, dict):
        problems.append("columns and labels: each is an object")
    elif len(columns) > MAX_KEYS or len(labels) > len(GIVEN_LABELS) or (
            isinstance(shape, dict) and isinstance(shape.get("columns"), list) and len(shape["columns"]) > MAX_KEYS):
        problems.append(f"columns: at most {MAX_KEYS} (a table read has no more)")
    if problems:
        raise MappingError(name, problems)
    assert isinstance(shape, dict) and isinstance(columns, dict)
    try:
        cols = tuple(ColumnMap(_text(c, "column name"), *_column(c, v)) for c, v in columns.items())
        shape_cols = tuple(_text(c, "shape column") for c in shape["columns"])
        given = tuple((_text(k, "label"), _text(v, f"label {k[:20]}")) for k, v in labels.items())
        recipe = Recipe(_text(doc.get("name"), "name"), Shape(str(shape["kind"]), shape_cols), cols, given)
    except RangeError as e:
        raise MappingError(name, [e.format_message()]) from e
    if shape.get("key") not in (None, recipe.shape.key):
        raise MappingError(name, ["shape: its key does not match its columns (edited by hand?); export it again"])
    check(recipe)
    return recipe


def _text(value: Any, label: str) -> str:
    if not isinstance(value, str):
        raise RangeError(f"{label}: {str(value)[:20]!r} is not text")
    return check_text(value, label) or ""


def _column(column: str, value: Any) -> tuple[str | None, str | None]:
    if value is None:
        return None, None
    if not isinstance(value, dict) or set(value) - {"field", "unit"}:
        raise RangeError(f"column {column[:60]!r}: give {{\"field\": ..., \"unit\": ...}}")
    fld, unit = value.get("field"), value.get("unit")
    return (None if fld is None else _text(fld, f"column {column[:60]!r} field"),
            None if unit is None else _text(unit, f"column {column[:60]!r} unit"))


def _depth(value: Any, level: int = 0) -> int:
    if level > MAX_DEPTH:
        return level
    if isinstance(value, dict):
        return max([_depth(v, level + 1) for v in value.values()] or [level + 1])
    if isinstance(value, list):
        return max([_depth(v, level + 1) for v in value] or [level + 1])
    return level


# --- applying a recipe ------------------------------------------------------------------------------

@dataclass
class Mapped:
    """A file rewritten by a recipe for the general reader, with the way back to the table's own words."""

    source: Source  # the rewritten file, under the original file's name
    recipe: Recipe
    said: str  # 'read by the saved mapping ...': for the import's report
    back: dict[str, str] = field(default_factory=dict)  # reader's header -> 'column X'
    rows: list[str] = field(default_factory=list)  # record N -> the table's own 'line N'

    def explain(self, text: str) -> str:
        """The reader's message in the table's words: its column names and its lines."""
        def where(m: re.Match[str]) -> str:
            n = int(m.group(1))
            return self.rows[n - 1] if 0 < n <= len(self.rows) else m.group(0)

        out = re.sub(r"\brecord (\d+)\b", where, text)
        for header, column in sorted(self.back.items(), key=lambda kv: -len(kv[0])):
            out = out.replace(header, column)
        return out

    def explained(self, e: ResultFileError) -> ResultFileError:
        return ResultFileError(e.file_name, [self.explain(p) for p in e.problems])


def header_of(column: ColumnMap) -> str:
    spec = FIELDS[column.field or ""]
    if spec.kind is None:
        return spec.header
    return f"{spec.header} ({spelling(spec.key, column.unit or '') or column.unit})"


def apply(recipe: Recipe, source: Source, table: Table | None = None) -> Mapped:
    """The file rewritten by the recipe (checked against the file's shape first: MappingError, nothing read)."""
    table = table or read_table(source)
    check(recipe, table)
    by_norm = {normalise(c.column): c for c in recipe.mapped()}
    picked = [(i, by_norm[normalise(h)]) for i, h in enumerate(table.header) if normalise(h) in by_norm]
    if mapping_log.is_log([c.field for _, c in picked]):
        data, said, back = mapping_log.rewritten(recipe.name, table.header, [cells for _, cells in table.rows],
                                                 [(i, c.field or "", c.unit or "") for i, c in picked])
        return Mapped(Source.single(data, source.name, source.dirs), recipe, said, back,
                      [where for where, _ in table.rows])
    given = [(label, value) for label, value in recipe.labels]
    records = []
    for _, cells in table.rows:
        record = {header_of(c): (cells[i] if i < len(cells) else "") for i, c in picked}
        record.update({FIELDS[label].header: value for label, value in given})
        records.append(record)
    data = json.dumps({"records": records, "mapping": recipe.name}, ensure_ascii=False).encode()
    back = {header_of(c): f"column {table.header[i][:80]!r}" for i, c in picked}
    back.update({f"{header_of(c)} ({c.field})": f"{table.header[i][:80]!r} as {c.field}" for i, c in picked})
    parts = [f"{table.header[i][:40]} as {FIELDS[c.field or ''].title}" + (f" ({c.unit})" if c.unit else "")
             for i, c in picked]
    labels = [f"{k} {v!r}" for k, v in given]
    said = (f"read by the saved mapping {recipe.name!r} (a {table.kind} table of this shape): " + "; ".join(parts)
            + (f"; given: {', '.join(labels)}" if labels else ""))
    return Mapped(Source.single(data, source.name, source.dirs), recipe, said[:600], back,
                  [where for where, _ in table.rows])


def find(recipes: list[Recipe], table: Table) -> Recipe | None:
    """The saved recipe for this table's shape (the newest first in `recipes`), if any."""
    key = table.shape.key
    return next((r for r in recipes if r.shape.key == key), None)


__all__ = ["FIELDS", "FORMAT", "GIVEN_LABELS", "MAX_RECIPE_BYTES", "ColumnMap", "MapField", "Mapped", "MappingError",
           "Recipe", "Shape", "Table", "apply", "check", "find", "header_of", "parse", "read_table",
           "recipe_from", "units_for"]
