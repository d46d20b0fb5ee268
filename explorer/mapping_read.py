"""The Upload page's mapping, outside Streamlit: what runs in the bounded child (`explorer.bounded`: reading an
uploaded table, rewriting it by a recipe, reading the result through the one import path) and the saved recipes
of the store (read and saved as every page's edit is). `explorer.mapping_form` draws it."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import db.recipes as recipes
import importers
from db import Store
from explorer import bounded
from importers import mapping_log
from importers.mapping import (
    FIELDS,
    SHOWN_ROWS,
    Mapped,
    MappingError,
    Recipe,
    apply,
    find,
    parse,
    read_table,
)
from importers.mapping_guess import guess
from joulebench.errors import DatabaseBusyError, JouleBenchError, ResultFileError
from joulebench.labels import NOT_STATED
from joulebench.metrics import label as metric_label
from joulebench.paths import resolve_db_path

PREVIEW_RUNS = 8
KEPT = 64


@dataclass
class Inspection:
    """An uploaded file as a table to map (or why it is none), and its rewriting by a saved recipe."""

    name: str
    error: str = ""
    kind: str = ""
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)  # the first SHOWN_ROWS
    wheres: list[str] = field(default_factory=list)
    row_count: int = 0
    guesses: list[tuple[str | None, str | None]] = field(default_factory=list)  # per column: (field, unit)
    shape_key: str = ""
    mapped: Mapped | None = None  # read by the saved recipe of its shape


def inspect(name: str, data: bytes, saved: tuple[str, ...] = ()) -> Inspection:
    """In the bounded child: the file's table, its guesses, and the saved recipe of its shape applied."""
    source = importers.Source.single(data, name)
    try:
        table = read_table(source)
    except ResultFileError as e:
        return Inspection(name, error=e.format_message())
    by_shape = [parse(text) for text in saved]
    found = find(by_shape, table)
    guessed = guess(table)
    out = Inspection(name, "", table.kind, table.header, [r for _, r in table.rows[:SHOWN_ROWS]],
                     [w for w, _ in table.rows[:SHOWN_ROWS]], len(table.rows),
                     [guessed.get(c, (None, None)) for c in table.header], table.shape.key)
    if found is not None:
        try:
            out.mapped = apply(found, source, table)
        except MappingError:
            out.mapped = None  # a stored recipe that no longer fits: the person maps the file again
    return out


@dataclass
class MappedPreview:
    """The runs a recipe makes of a file, read through the one import path (converted, range-checked)."""

    runs: list[dict[str, Any]] = field(default_factory=list)
    run_count: int = 0
    error: str = ""
    warnings: list[str] = field(default_factory=list)
    data: bytes = b""  # the rewritten file, to import


def preview(recipe_json: str, name: str, data: bytes, given: importers.Hints | None) -> MappedPreview:
    """In the bounded child: the recipe checked against the file, the file rewritten, read as any upload is."""
    try:
        recipe = parse(recipe_json)
        mapped = apply(recipe, importers.Source.single(data, name))
    except ResultFileError as e:
        return MappedPreview(error=e.format_message())
    try:
        loaded, _ = importers.load_source(mapped.source, given)
    except ResultFileError as e:
        return MappedPreview(error=mapped.explained(e).format_message())
    fields = [c.field for c in recipe.mapped() if c.field and FIELDS[c.field].section == "metrics"] or (
        list(mapping_log.SHOWN) if mapping_log.is_log([c.field for c in recipe.mapped()]) else [])
    runs = []
    for run in loaded.runs[:PREVIEW_RUNS]:
        config, metrics = run.get("config") or {}, run.get("metrics") or {}
        runs.append({"Device": (run.get("device") or {}).get("name") or NOT_STATED,
                     "Mode": config.get("mode") or NOT_STATED, "Model": config.get("model") or NOT_STATED,
                     **{metric_label(k): metrics.get(k) for k in fields}})
    warnings = [mapped.explain(w) for w in loaded.warnings if " read as " not in w]
    return MappedPreview(runs, len(loaded.runs), "", warnings, mapped.source.data)


# --- in the app server -------------------------------------------------------------------------------

_inspected: OrderedDict[tuple[str, str, tuple[str, ...]], Inspection] = OrderedDict()
_previews: OrderedDict[tuple[str, str, str, Any], MappedPreview] = OrderedDict()
_last_saved: dict[str, tuple[str, ...]] = {}


def _kept(cache: OrderedDict[Any, Any], key: Any, make: Any) -> Any:
    if key not in cache:
        cache[key] = make()
        while len(cache) > KEPT:
            cache.popitem(last=False)
    return cache[key]


def inspected(name: str, data: bytes, saved: tuple[str, ...] = ()) -> Inspection:
    """`inspect` in a bounded child, kept per content and saved recipes (every rerun asks again)."""
    def make() -> Inspection:
        try:
            return bounded.call(inspect, name, data, saved, name=name)
        except JouleBenchError as e:
            return Inspection(name, error=e.format_message())

    return _kept(_inspected, (name, hashlib.sha256(data).hexdigest(), saved), make)  # type: ignore[no-any-return]


def previewed(recipe: Recipe, name: str, data: bytes, given: importers.Hints | None) -> MappedPreview:
    def make() -> MappedPreview:
        try:
            return bounded.call(preview, recipe.dumps(), name, data, given, name=name)
        except JouleBenchError as e:
            return MappedPreview(error=e.format_message())

    key = (name, hashlib.sha256(data).hexdigest(), recipe.dumps(), given)
    return _kept(_previews, key, make)  # type: ignore[no-any-return]


def saved(db: str) -> tuple[str, ...]:
    """The store's recipes (as JSON, newest first); those read last when the store is busy; none before it
    exists."""
    if not resolve_db_path(db).exists():
        return ()
    try:
        with Store.open_reading(db) as store:
            found = tuple(r.dumps() for r in recipes.recipes(store.con))
    except DatabaseBusyError:
        return _last_saved.get(db, ())
    _last_saved[db] = found
    return found


def save(db: str, recipe: Recipe) -> str:
    """Keep the recipe in the store (a write, as the page's other edits: refused on a team store)."""
    with Store.open(db) as store:
        done = recipes.save(store.con, recipe)
    _last_saved.pop(db, None)
    return done


def with_saved(db: str, units: list[tuple[str, bytes]]) -> tuple[list[tuple[str, bytes]], dict[str, Mapped]]:
    """The uploaded files, each of a saved recipe's shape rewritten by it (by name: how it was read)."""
    known = saved(db)
    if not known:
        return units, {}
    out, by_name = [], {}
    for name, data in units:
        found = inspected(name, data, known).mapped
        if found is None:
            out.append((name, data))
            continue
        by_name[name] = found
        out.append((name, found.source.data))
    return out, by_name


__all__ = ["Inspection", "MappedPreview", "inspect", "inspected", "preview", "previewed", "save", "saved",
           "with_saved"]
