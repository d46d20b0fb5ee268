"""A CSV under comment lines ('# Llama.cpp Benchmark Results', '# gpu_name: Intel(R) Arc(TM) B390 GPU (iGPU)'): the
table read as a source of its own, the preamble's labels (a named GPU, the model, the precision, the engine) added
to every row as columns, so the table's readers take them as any column of labels, and a note saying so.

A preamble is one to 100 lines that start with '#' (blank lines between them allowed) above a header of three or more
cells split by a comma, a tab or a semicolon, whose next line splits into as many. A Markdown text ('# Title' over
prose, whose commas split clauses of many words, or a '|' table) is none. A label is a '# key: value' (or 'key =
value') line whose key names a label (`table_labels.label_field`); a device only where the value names a GPU or Jetson
(`device_text.device_named`).
"""

from __future__ import annotations

import csv
import io
import re

from importers.base import Source
from importers.device_text import device_named
from importers.table_labels import label_field
from importers.table_records import Unwrapped

MAX_PREAMBLE = 100
_KEYED = re.compile(r"#+\s{0,10}(?P<key>[A-Za-z][\w .()-]{0,40}?)\s{0,10}[:=]\s{0,10}(?P<value>\S[^\n]{0,199}?)\s*")
_LABELS = ("device", "model", "precision", "quantization", "engine", "batch_size")


def _delimiter(header: str, row: str) -> str | None:
    for sep in (",", "\t", ";"):
        if header.count(sep) >= 2 and row.count(sep) >= header.count(sep) - 1 >= 1:
            return sep
    return None


FIGURE_CELL = re.compile(r"[A-Za-z][\w /.()-]{0,40}[:=]\s*-?\d")


def uncommented(source: Source) -> Unwrapped | None:
    """The table under a comment preamble as a source of its own (the file's name and content hash), with the
    preamble's labels as constant columns; None for anything else."""
    text = None if source.is_folder or source.json is not None else source.text
    if not text or not text.lstrip().startswith("#"):
        return None
    lines = text.split("\n", MAX_PREAMBLE + 2)
    i = 0
    while i < len(lines) - 1 and i <= MAX_PREAMBLE and (lines[i].lstrip().startswith("#") or not lines[i].strip()):
        i += 1
    comments = [line.strip() for line in lines[:i] if line.strip()]
    rest = "\n".join(lines[i:]) if i < len(lines) else ""
    body = [line for line in rest.split("\n", 3)[:3] if line.strip()]
    if not comments or len(body) < 2 or (sep := _delimiter(body[0], body[1])) is None or "|" in body[0]:
        return None
    if any(len(c.split()) > 8 for c in body[0].split(sep)):  # a sentence's clauses, no column names: Markdown prose
        return None
    if any(FIGURE_CELL.match(c.strip()) for c in body[0].split(sep)):  # 'step 0, loss: 3.1, time: 100 ms': lines
        return None  # of figures under a Markdown heading, no table's header
    labels: dict[str, tuple[str, str]] = {}  # the preamble's key -> (the label, its value)
    for line in comments:
        m = _KEYED.fullmatch(line)
        field = label_field(m.group("key")) if m is not None else None
        if m is None or field is None or field.key not in _LABELS or any(f == field.key for f, _ in labels.values()):
            continue
        if field.key == "device" and not device_named(m.group("value")[:200]):
            continue
        labels[m.group("key").strip()] = (field.key, m.group("value").strip())
    table = rest
    if labels:
        try:
            rows = list(csv.reader(io.StringIO(rest, newline=""), delimiter=sep))
        except csv.Error:  # a malformed table: not unwrapped (the table readers say what is wrong with it)
            return None
        header = [c.strip() for c in rows[0]] if rows else []
        added = {k: v for k, v in labels.items() if k not in header}
        out = io.StringIO()
        writer = csv.writer(out, delimiter=sep, lineterminator="\n")
        for n, row in enumerate(rows):
            if any(c.strip() for c in row):
                writer.writerow([*row, *(added if n == 0 else (v for _, v in added.values()))])
        table = out.getvalue()
    inner = source.part(table.encode())
    said = "; ".join(f"{k} {v!r} read as every row's {f}" for k, (f, v) in labels.items())
    note = (f"{len(comments)} comment line(s) above the table read as its preamble"
            + (f" ({said[:300]})" if said else " (none of them names a label JouleBench reads)"))
    return Unwrapped(inner, note)
