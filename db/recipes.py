"""Mapping recipes kept in the store (migration 0029): a person's mapping of a table no reader knows, named and
keyed by the table's shape (importers.mapping). `save` replaces the recipe of the same shape (a person who maps a
shape again means the new one); a name another shape's recipe holds is refused. Every recipe read back is checked
again by `importers.mapping.parse`, as a recipe file is: a row edited by hand or pushed by an older JouleBench that
fails the checks is left out and said, never used. `push_recipes` copies a machine's recipes to a team store."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import duckdb

from db.connection import first_row
from importers.mapping import MappingError, Recipe, parse
from joulebench.errors import InvalidEditError
from joulebench.labels import current_user

MAX_RECIPES_READ = 1_000  # the newest; a store holds a few dozen


@dataclass(frozen=True)
class Stored:
    recipe: Recipe
    saved_at: datetime
    saved_by: str | None


def save(con: duckdb.DuckDBPyConnection, recipe: Recipe) -> str:
    """Keep `recipe` for its shape (replacing that shape's recipe); InvalidEditError when another shape's recipe
    holds its name. Returns what was done, for a person."""
    other = first_row(con, "SELECT shape_key FROM mapping_recipes WHERE name = ? AND shape_key <> ?",
                      [recipe.name, recipe.shape.key])
    if other is not None:
        raise InvalidEditError([f"mapping name {recipe.name!r}: another table shape's mapping has it; choose another "
                                "name (or export that one and delete it)"])
    before = first_row(con, "SELECT name FROM mapping_recipes WHERE shape_key = ?", [recipe.shape.key])
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("DELETE FROM mapping_recipes WHERE shape_key = ?", [recipe.shape.key])
        con.execute("INSERT INTO mapping_recipes VALUES (?, ?, ?, ?, ?, ?)",
                    [recipe.shape.key, recipe.name, recipe.shape.kind, recipe.dumps(), datetime.now(UTC),
                     current_user()])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    if before is not None and before[0] != recipe.name:
        return f"mapping {recipe.name!r} saved, in place of {before[0]!r} (the same table shape)"
    return f"mapping {recipe.name!r} " + ("updated" if before is not None else "saved")


def stored(con: duckdb.DuckDBPyConnection) -> tuple[list[Stored], list[str]]:
    """The recipes, newest first, and a sentence for each row that fails the checks (left out)."""
    rows = con.execute("SELECT name, recipe_json, saved_at, saved_by FROM mapping_recipes ORDER BY saved_at DESC, "
                       f"name LIMIT {MAX_RECIPES_READ}").fetchall()
    out, bad = [], []
    for name, text, saved_at, saved_by in rows:
        try:
            out.append(Stored(parse(str(text), f"stored mapping {str(name)[:60]!r}"), saved_at, saved_by))
        except MappingError as e:
            bad.append(e.format_message())
    return out, bad


def recipes(con: duckdb.DuckDBPyConnection) -> list[Recipe]:
    return [s.recipe for s in stored(con)[0]]


def by_name(con: duckdb.DuckDBPyConnection, name: str) -> Recipe | None:
    row = first_row(con, "SELECT recipe_json FROM mapping_recipes WHERE name = ?", [name])
    return None if row is None else parse(str(row[0]), f"stored mapping {name[:60]!r}")


def delete(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    found = first_row(con, "SELECT count(*) FROM mapping_recipes WHERE name = ?", [name])
    con.execute("DELETE FROM mapping_recipes WHERE name = ?", [name])
    return bool(found and found[0])


def push_recipes(con: duckdb.DuckDBPyConnection) -> int:
    """In a push's transaction (db.push, the local store attached as `local`): the local recipes whose shape the
    lake lacks, or holds an older recipe of; a lake recipe of another shape under the same name is kept (the
    local one is not pushed: the names stay unique). How many were written."""
    newer = ("FROM local.mapping_recipes l WHERE NOT EXISTS (SELECT 1 FROM mapping_recipes r WHERE "
             "r.shape_key = l.shape_key AND r.saved_at >= l.saved_at) AND NOT EXISTS (SELECT 1 FROM mapping_recipes "
             "r WHERE r.name = l.name AND r.shape_key <> l.shape_key)")
    count = first_row(con, f"SELECT count(*) {newer}")
    if not count or not count[0]:
        return 0
    con.execute("CREATE OR REPLACE TEMP TABLE _recipes AS SELECT l.* " + newer)
    con.execute("DELETE FROM mapping_recipes WHERE shape_key IN (SELECT shape_key FROM _recipes)")
    con.execute("INSERT INTO mapping_recipes BY NAME SELECT * FROM _recipes")
    return int(count[0])


__all__ = ["Stored", "by_name", "delete", "push_recipes", "recipes", "save", "stored"]
