"""`joulebench mapping`: the saved mappings of tables no reader knows (export, import, list, delete), and what
`joulebench import` does with them: `--mapping RECIPE` reads the files by that recipe, and a file whose shape has
a saved mapping is read by it, said on the import's first line for that file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ingest.stores import add_store_arguments, target
from joulebench.text import table

if TYPE_CHECKING:
    from importers import Source
    from importers.mapping import Mapped, Recipe

DESCRIPTION = ("A mapping says, for a table no reader knows, which result field each column is and in which unit, "
               "and the labels the table never states (device, mode). It is made on the app's Upload page (or "
               "written by hand as `export` writes it), saved under a name and keyed by the table's shape (its "
               "column names): the next file of that shape is read by it, and the import says so. A mapping file "
               "is checked as any upload is (size, nesting, every name) and refused naming what is wrong.")


def read_recipe(path: Path) -> Recipe:
    """A recipe file; MappingError (a ResultFileError) when it is not one, or OSError's words."""
    from importers.mapping import MAX_RECIPE_BYTES, MappingError, parse

    try:
        with path.open("rb") as f:
            data = f.read(MAX_RECIPE_BYTES + 1)
    except OSError as e:
        raise MappingError(str(path), [f"(whole file): cannot be read ({e.strerror})"]) from e
    return parse(data, str(path))


def saved_recipes(db: str | None) -> tuple[list[Recipe], str]:
    """The recipes saved in this machine's store (none when it does not exist yet), and a note when they could
    not be read (the store busy or damaged: the files are then read without them)."""
    import db.recipes as recipes
    from db import Store
    from joulebench.errors import JouleBenchError
    from joulebench.paths import resolve_db_path

    path = resolve_db_path(db)
    if not path.exists():
        return [], ""
    try:
        with Store.open(path, seed_reference=False) as store:
            return recipes.recipes(store.con), ""
    except JouleBenchError as e:
        return [], f"saved mappings not read ({e.format_message()[:200]}); files of a mapped shape may be refused"


def mapped_sources(sources: list[Source], given: Recipe | None, saved: list[Recipe]
                   ) -> tuple[list[Source], dict[int, Mapped], dict[int, str]]:
    """Each source read by `given` (--mapping), else by the saved recipe of its shape, else as it is; with the
    Mapped of each rewritten one and the refusal of each that `given` does not fit (by position)."""
    from importers.mapping import MappingError, apply, find, read_table
    from joulebench.errors import ResultFileError

    out: list[Source] = []
    mapped: dict[int, Mapped] = {}
    refused: dict[int, str] = {}
    for i, source in enumerate(sources):
        if source.is_folder or (given is None and not saved):
            out.append(source)
            continue
        try:
            table = read_table(source)
        except ResultFileError as e:
            if given is not None:
                refused[i] = e.format_message()
            out.append(source)
            continue
        recipe = given or find(saved, table)
        if recipe is None:
            out.append(source)
            continue
        try:
            done = apply(recipe, source, table)
        except MappingError as e:
            refused[i] = e.format_message()
            out.append(source)
            continue
        mapped[i] = done
        out.append(done.source)
    return out, mapped, refused


def cmd_mapping(args: argparse.Namespace) -> int:
    import db.recipes as recipes
    from importers.mapping import MappingError
    from ingest.service import open_store
    from joulebench.errors import JouleBenchError

    chosen = target(args)
    try:
        if args.action == "list":
            with chosen.open_reading() as store:
                rows = recipes.stored(store.con)
            for line in rows[1]:
                print(f"left out: {line}", file=sys.stderr)
            if not rows[0]:
                print("no mapping saved; map a table on the app's Upload page, or `joulebench mapping import FILE`")
                return 0
            print(table(("name", "table", "columns mapped", "labels given", "saved", "by"),
                        [(s.recipe.name, f"{s.recipe.shape.kind}, {len(s.recipe.shape.columns)} columns",
                          ", ".join(f"{c.column} -> {c.field}" for c in s.recipe.mapped())[:100],
                          ", ".join(f"{k}={v}" for k, v in s.recipe.labels) or "-",
                          f"{s.saved_at:%Y-%m-%d %H:%M}", s.saved_by or "-") for s in rows[0]]))
            return 0
        if args.action == "export":
            with chosen.open_reading() as store:
                recipe = recipes.by_name(store.con, args.name)
            if recipe is None:
                print(f"error: no mapping named {args.name!r}; `joulebench mapping list` names them", file=sys.stderr)
                return 2
            text = recipe.dumps() + "\n"
            if args.output is None:
                sys.stdout.write(text)
            else:
                from joulebench.files import write_atomic

                write_atomic(args.output, text.encode())
                print(f"mapping {recipe.name!r} written to {args.output}")
            return 0
        if args.action == "import":
            recipe = read_recipe(args.file)
            if chosen.team is not None and args.db is None:
                print("error: a team store is written only by `joulebench push`; import the mapping into this "
                      "machine's store (--db) and push it", file=sys.stderr)
                return 2
            with open_store(chosen.db) as store:
                print(recipes.save(store.con, recipe))
            return 0
        with open_store(chosen.db) as store:  # delete
            found = recipes.delete(store.con, args.name)
        print(f"mapping {args.name!r} deleted" if found else f"no mapping named {args.name!r}")
        return 0 if found else 2
    except MappingError as e:
        print(e.format_message(), file=sys.stderr)
        return 2
    except JouleBenchError as e:
        print(f"error: {e.format_message()}", file=sys.stderr)
        return getattr(e, "exit_code", 1) or 1


def add_subcommand(sub: argparse._SubParsersAction[argparse.ArgumentParser], db_help: str) -> None:
    p = sub.add_parser("mapping", help="the saved mappings of tables no reader knows: list, export, import, delete",
                       description=DESCRIPTION)
    actions = p.add_subparsers(dest="action", required=True)
    q = actions.add_parser("list", help="the saved mappings, newest first")
    add_store_arguments(q, db_help, reads=True)
    q = actions.add_parser("export", help="write a saved mapping as a file (to share it, or to edit it)")
    q.add_argument("name", help="the mapping's name (`joulebench mapping list`)")
    q.add_argument("-o", "--output", type=Path, help="file to write (default: standard output)")
    add_store_arguments(q, db_help, reads=True)
    q = actions.add_parser("import", help="save a mapping file in this machine's store (replacing the mapping of "
                                          "the same table shape)")
    q.add_argument("file", type=Path, help="a mapping file, as `joulebench mapping export` writes it")
    add_store_arguments(q, db_help, reads=False)
    q = actions.add_parser("delete", help="forget a saved mapping (the runs it read stay)")
    q.add_argument("name")
    add_store_arguments(q, db_help, reads=False)
    p.set_defaults(func=cmd_mapping)
