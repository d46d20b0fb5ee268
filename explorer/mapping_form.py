"""The Upload page's "Map it" section: for a table no reader is sure of, its first rows and, per column, the field
it becomes and its unit (pre-filled from the header: importers.mapping_guess.guess), the labels still needed (device,
mode), and the runs it would make with their converted values (read through the one import path in a bounded
child: explorer.mapping_read). "Import with this mapping" saves the recipe under its name and queues the file as
every upload is queued (explorer.upload_queue: imported whole or not at all, by the server, in a bounded child);
the next file of the same shape is then read by the recipe without a question (`with_saved`), and said so."""

from __future__ import annotations

import dataclasses
import hashlib

import polars as pl
import streamlit as st

import importers
from decision.markdown import md
from decision.text import count
from explorer import mapping_read, upload, upload_queue
from explorer.tables import styled
from importers.mapping import FIELDS, ColumnMap, Mapped, MappingError, Recipe, recipe_from, units_for
from importers.mapping import Table as MappingTable
from joulebench.errors import JouleBenchError
from joulebench.vocab import MODES

LEFT_OUT = ""
MAX_COLUMNS_SHOWN = 60  # a wider table is mapped from the command line (`joulebench mapping import`)
PARTLY = "columns not read:"  # the general reader's warning for a table it read only in part


def partly_read(p: upload.Preview) -> bool:
    """Whether the preview read the file only in part for want of a reader (columns left unread)."""
    return any(w.startswith(PARTLY) for w in p.warnings)


def offer(db: str, unit: tuple[str, bytes], given: importers.Hints | None, p: upload.Preview,
          by_mapping: dict[str, Mapped]) -> list[upload_queue.Upload] | None:
    """Where no reader is sure of a file (refused, or read only in part) and no saved mapping read it: the mapping
    section (in an expander under a partly read file); the uploads it queued, once Import is clicked."""
    if unit[0] in by_mapping:
        return None
    if p.error:
        return section(db, unit, given)
    if partly_read(p):
        with st.expander("Map the columns yourself"):
            return section(db, unit, given, partly=True)
    return None


def with_saved(db: str, units: list[tuple[str, bytes]]) -> tuple[list[tuple[str, bytes]], dict[str, Mapped]]:
    """The uploaded files, those of a saved mapping's shape rewritten by it (explorer.mapping_read)."""
    return mapping_read.with_saved(db, units)


def explained(p: upload.Preview, mapped: Mapped | None) -> upload.Preview:
    """A preview of a file read by a saved mapping, in the table's words, saying which mapping read it."""
    if mapped is None:
        return p
    return dataclasses.replace(p, error=mapped.explain(p.error), warnings=[
        mapped.said, *(mapped.explain(w) for w in p.warnings if " read as " not in w)])


def _field_title(key: str) -> str:
    return "— leave out —" if key == LEFT_OUT else f"{FIELDS[key].title} · {key}"


def section(db: str, unit: tuple[str, bytes], given: importers.Hints | None, *, partly: bool = False
            ) -> list[upload_queue.Upload] | None:
    """The mapping form for one uploaded file; the queued upload once "Import with this mapping" is clicked."""
    name, data = unit
    ins = mapping_read.inspected(name, data)
    if ins.error or not ins.header:
        return None  # not a table: nothing to map (the refusal above says what it is)
    sha = hashlib.sha256(data).hexdigest()[:16]
    st.markdown(f"**Map the columns of {md(name)}**" + (" yourself" if partly else "") + ": " +
                ("the reader left some columns unread. " if partly else "no reader knows this table. ") +
                "Check what each column is (pre-filled from its name) and its unit; the mapping is saved, and the "
                "next file with these columns is read by it.")
    st.dataframe(styled(pl.DataFrame([dict(zip(ins.header, r, strict=False)) for r in ins.rows],
                                     schema=dict.fromkeys(ins.header, pl.String))), hide_index=True)
    st.caption(f"The first {len(ins.rows)} of {count(ins.row_count, 'row')} ({ins.kind} table).")
    choices: dict[str, tuple[str | None, str | None]] = {}
    options = [LEFT_OUT, *FIELDS]
    shown_columns = zip(ins.header[:MAX_COLUMNS_SHOWN], ins.guesses, strict=False)
    for i, (column, (guessed, guessed_unit)) in enumerate(shown_columns):
        if not column.strip():
            continue
        c = st.columns([2, 3, 2])
        sample = next((r[i] for r in ins.rows if i < len(r) and r[i].strip()), "")
        c[0].markdown(f"`{md(column[:60])}`  \n{md(sample[:40])}")
        picked = c[1].selectbox(f"Field of {column[:60]}", options, index=options.index(guessed or LEFT_OUT),
                                format_func=_field_title, key=f"map_{sha}_{i}_field")
        kinds = units_for(picked) if picked else []
        chosen_unit = None
        if kinds:
            default = guessed_unit if picked == guessed and guessed_unit in kinds else kinds[0]
            chosen_unit = c[2].selectbox(f"Unit of {column[:60]}", kinds, index=kinds.index(default),
                                         key=f"map_{sha}_{i}_unit_{picked}")
        choices[column] = (picked or None, chosen_unit)
    if len(ins.header) > MAX_COLUMNS_SHOWN:
        st.caption(f"Only the first {MAX_COLUMNS_SHOWN} columns are shown; map a wider table from the command line "
                   "(`joulebench mapping import`, `joulebench import --mapping`).")
    table = MappingTable(name, ins.kind, ins.header, [(w, r) for w, r in zip(ins.wheres, ins.rows, strict=False)])
    labels = _needed(sha, table, choices)
    c = st.columns([3, 1])
    default_name = ", ".join(h for h in ins.header[:4] if h.strip())[:80] + " table"
    title = c[0].text_input("Save the mapping as", value=default_name, key=f"map_{sha}_name")
    try:
        recipe = recipe_from(title, table, choices, labels)
    except MappingError as e:
        st.error("This mapping cannot be used yet:\n\n" + "\n".join(f"- {md(p)}" for p in e.problems))
        return None
    shown = mapping_read.previewed(recipe, name, data, given)
    if shown.error:
        st.error("Refused, nothing imported: " + md(shown.error))
        return None
    st.markdown("**The runs it makes** (values converted to the units JouleBench stores)")
    st.dataframe(styled(pl.DataFrame(shown.runs, infer_schema_length=None)), hide_index=True)
    if shown.run_count > len(shown.runs):
        st.caption(f"The first {len(shown.runs)} of {count(shown.run_count, 'run')}.")
    for warning in shown.warnings:
        st.caption(f"⚠ {md(warning)}")
    if not c[1].button("Import with this mapping", key=f"map_{sha}_import", type="primary"):
        return None
    return _import(db, recipe, name, shown.data, given)


def _needed(sha: str, table: MappingTable, choices: dict[str, tuple[str | None, str | None]]) -> dict[str, str]:
    """The device and mode when no column gives them (asked once, saved with the mapping; empty: not stated)."""
    needed = Recipe("", table.shape, tuple(ColumnMap(c, f, u) for c, (f, u) in choices.items())).needed()
    if not needed:
        return {}
    st.markdown("**Still needed** (no column says it; saved with the mapping for every file of this shape, or "
                "leave it empty and fill it after the import)")
    c = st.columns(len(needed))
    out: dict[str, str] = {}
    for i, key in enumerate(needed):
        if key == "mode":
            out[key] = c[i].selectbox("Mode", ["", *MODES], key=f"map_{sha}_mode")
        else:
            out[key] = c[i].text_input("Device", key=f"map_{sha}_device", placeholder="e.g. Jetson Orin Nano 8GB")
    return {k: v for k, v in out.items() if v.strip()}


def _import(db: str, recipe: Recipe, name: str, data: bytes, given: importers.Hints | None
            ) -> list[upload_queue.Upload] | None:
    """Save the recipe, then queue the rewritten file as every upload is queued."""
    try:
        said = mapping_read.save(db, recipe)
        queued = upload_queue.queue(db, [(name, data)], given)
    except JouleBenchError as e:
        st.error(md(e.format_message()))
        return None
    st.success(md(f"{said[:1].upper()}{said[1:]}; {name} is queued for import."))
    return queued


__all__ = ["explained", "partly_read", "section", "with_saved"]
