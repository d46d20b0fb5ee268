"""Which tables of a text the general reader takes (`importers.general_table`), and the one table it reads them as:
the tables that hold a figure (in a column named by a field and unit, a column of statistics, or a table on its side),
when the text states no run of figures on lines of its own; their rows joined under the union of their columns, with
the device a heading or a 'GPU: ...' line above a table names and the other headings as the tag. `has_figure` is the
general reader's test of a header's figures, shared with it (a column's unit is `units.unit_of_cells`)."""

from __future__ import annotations

import re

from importers.base import Conversion
from importers.table_cards import key_value_tables
from importers.table_console import MAX_LINES
from importers.table_fields import HEADING_DEVICE, HEADING_TAG, Field, FieldError, measure_field
from importers.table_labels import label_field
from importers.table_long import head_rows, long_columns, stat_columns, transposed
from importers.table_records import MAX_KEYS
from importers.table_text import (
    TextTable,
    device_lines,
    figures_outside,
    heading_device,
    numbers_in,
    text_tables,
    title_device,
)
from importers.text_scan import candidates
from joulebench import units

COUNTS = frozenset({"duration_s", "output_tokens", "output_tokens_mean", "prompt_tokens_mean"})  # no result alone


def has_figure(names: list[str]) -> bool:
    """Whether a header names a figure a field reads (a count alone is none; a unit that contradicts its name is one,
    so that the file is read and refused naming the column)."""
    for name in names[:MAX_KEYS]:
        try:
            found = measure_field(name)[0]
            if found is not None and found.key not in COUNTS - {"duration_s"}:
                return True
        except FieldError:
            return True
    return False


def cells_give_figure(head: str, delimiter: str) -> bool:
    """Whether the first rows of a CSV carry a figure in their cells' units under a header that names none
    ('mean_ttft' over '61911 ms', 'input_throughput' over '463 tokens / s')."""
    lines = head_rows(head, delimiter)
    if len(lines) < 2:
        return False
    header, rows = lines[0], [r for r in lines[1:] if len(r) == len(lines[0])]
    for i, name in enumerate(header[:MAX_KEYS]):
        unit = units.unit_of_cells([r[i] for r in rows[:20]])
        try:
            found = measure_field(name, unit)[0] if unit is not None else None
        except FieldError:
            return True
        if found is not None and found.key not in COUNTS - {"duration_s"}:
            return True
    return False


def has_named_figure(names: list[str]) -> bool:
    return has_figure([n for n in names if n.strip()])


def any_figure(cells: list[str]) -> bool:
    """Whether a column holds a number (with or without its unit) in any of its cells."""
    for cell in cells:
        try:
            if units.parse(cell) is not None:
                return True
        except units.UnitError:
            continue
    return False


def figure_tables(text: str) -> list[TextTable]:
    """The tables of a text (`importers.table_text`) that hold a figure, when its figures are all in tables (none
    stated on a line of its own, which is the reader of figures in text's); [] otherwise."""
    if not text or "  " not in text and "|" not in text and "\t" not in text:
        return []
    tables, used = text_tables(text)
    tables = key_value_tables(tables)
    found = []
    for table in tables:
        long = long_columns(table.header) if len(table.header) >= 3 else None
        if long is not None and (long[2] is not None or units.unit_of_cells([r[long[1]] for _, r in table.rows])):
            found.append(table)  # one figure a row named in a metric column, with its unit: pivoted later
            continue  # ('Metric | Value' alone is a card, `key_value_tables`)
        stats = stat_columns(table.header)
        if stats is not None and has_named_figure([row[stats[0]] for _, row in table.rows]):
            found.append(table)
            continue
        flipped = transposed(table.header, table.rows)
        if flipped is not None:  # figures named down its first column, a setup per column
            table.header, table.rows = flipped[0], flipped[1]
            found.append(table)
            continue
        for c, name in enumerate(table.header):
            try:
                field = measure_field(name, units.unit_of_cells([row[c] for _, row in table.rows]))[0]
            except FieldError:
                field = Field("refused", "", "metrics")  # read, to refuse it naming the column
            if field is not None and field.section == "metrics" and field.key != "output_tokens":
                if len(tables) > 1 and not any_figure([row[c] for _, row in table.rows]):
                    continue  # a text's table of words ('Speed (TPS)': Moderate, High): not one of its figures
                found.append(table)
                break
    if found and figures_outside(text, used, frozenset(x for t in found for _, row in t.rows for cell in row
                                                       for x in numbers_in(cell))):
        return [] if candidates(text) else found  # figures outside that make no run of their own: the tables'
    return found


_ACROSS = re.compile(r"(?i)\baggregated\s+by\b|\b(?:averaged?|avg|mean)\s+(?:across|over)\s+all\b")


def joined(conv: Conversion, tables: list[TextTable], text: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """One table of a text's tables: the union of their columns, with the device a heading above a table names (a
    known device only, never guessed) and the other headings as the tag."""
    across = [t for t in tables if any(_ACROSS.search(h) for h in t.headings)]
    if across and len(across) < len(tables):  # 'Aggregated by Model Size - avg across all queries': averages of
        conv.warn(f"{len(across)} table(s) left out (line {', '.join(str(t.line) for t in across)}): averages across "
                  "the runs of the other tables (their headings say so), not runs of their own")
        tables = [t for t in tables if t not in across]  # the other tables' runs, never a run of their own
    header = list(dict.fromkeys(h for t in tables for h in t.header))
    given = {f.key for h in header if (f := label_field(h)) is not None}
    devices = [next((d for t in reversed(table.headings) if (d := heading_device(t))), None) for table in tables]
    used = [n for t in tables for n in (t.line, t.line + 1, *(r[0] for r in t.rows))]
    stated = device_lines(text, used)  # 'GPU: A6000-24GB' above a table, or one such line in the whole text
    lasting = {d for _, d, until in stated if until > MAX_LINES}
    only = lasting.pop() if len(lasting) == 1 and len({d for _, d, _ in stated}) == 1 else (
        None if stated else title_device(text))  # '# RK3588 YOLO 性能与精度摘要': the title above every table
    devices = [d or next((s for n, s, until in reversed(stated) if n < t.line < until), only)
               for d, t in zip(devices, tables, strict=True)]
    tags = [" / ".join(t for t in table.headings if heading_device(t) is None)[:200] for table in tables]
    # a table's first column with no name holds its rows' names ('| | TTFT | ...' over '| **vLLM** | 46 ms |'):
    # kept in the tag beside the headings, so that the rows of one table are not read as repeats of one setup
    named = [bool(t.header) and not t.header[0].strip() and t.kind == "pipe" for t in tables]
    extra = [key for key, values in (("device", devices), ("tag", tags + named)) if key not in given and any(values)]
    names = {"device": HEADING_DEVICE, "tag": HEADING_TAG}
    rows = []
    device_columns = {h for h in header if (f := label_field(h)) is not None and f.key == "device"}
    for table, device, tag, by_name in zip(tables, devices, tags, named, strict=True):
        at = {h: i for i, h in enumerate(table.header)}
        for n, row in table.rows:  # a table without another's device column: the device stated above it there
            cells = [row[at[h]] if h in at and h.strip() else (device or "") if h in device_columns else ""
                     for h in header]
            row_tag = " / ".join(t for t in (tag, row[0].strip() if by_name else "") if t)[:200]
            rows.append((n, cells + [{"device": device or "", "tag": row_tag}[key] for key in extra]))
    shown = ", ".join(f"line {t.line}" + (f" ({' / '.join(t.headings)[:60]})" if t.headings else "") for t in tables)
    said = {"device": "the device named above them (in a heading or a line such as 'GPU: ...')",
            "tag": "the headings above them kept as the tag"}
    conv.warn(f"{len(tables)} {tables[0].kind} table{'s' if len(tables) > 1 else ''} read from the text ({shown[:300]})"
              + (": " + " and ".join(said[key] for key in extra) if extra else ""))
    return header + [names[key] for key in extra], rows
