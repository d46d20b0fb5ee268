"""Columns that hold two or more statistics of one figure in each cell, as a hand-written table does to save width:
`TTFT p50 / p90 (ms)` over `199 / 221`, `min/max (ms)` over `12/30`. Split into a column per statistic
(`TTFT p50 (ms)`, `TTFT p90 (ms)`), so the general reader reads each by its name; a cell that is not such a group
('~74 (avg)', another statistic) fills none of them and is said."""

from __future__ import annotations

import re

from importers.base import Conversion

Rows = list[tuple[int, list[str]]]
_STAT = r"p\d{1,2}(?:\.\d)?|mean|avg|average|median|min|max|std"
_GROUPED = re.compile(rf"(?i)^(?P<name>.*?)(?P<stats>(?:{_STAT})(?:\s*/\s*(?:{_STAT}))+)(?P<rest>(?:\s*[\(\[].*)?)$")
_NUMBER = r"[-+]?(?:\d+(?:[.,]\d+)?|\.\d+)"
_PLACEHOLDER = {"", "-", "—", "–", "n/a", "na", "none", "null", "nan"}


def _parts(cell: str, n: int) -> list[str] | None:
    """A cell's n values, or None when it is not n numbers split by '/'."""
    found = [p.strip() for p in cell.strip().strip("*_` ").split("/")]
    return found if len(found) == n and all(re.fullmatch(_NUMBER, p) for p in found) else None


def split_statistics(conv: Conversion, header: list[str], rows: Rows) -> tuple[list[str], Rows]:
    """The table with each column of grouped statistics split into one column per statistic; only where every
    group-shaped cell has as many values as the name has statistics, and at least one cell is such a group."""
    out_header: list[str] = []
    plans: list[tuple[int, int]] = []  # (column, how many statistics; 1 for a column kept as it is)
    for c, name in enumerate(header):
        m = _GROUPED.match(name.strip())
        stats = re.split(r"\s*/\s*", m.group("stats")) if m else []
        cells = [row[c] if c < len(row) else "" for _, row in rows]
        grouped = [x for x in cells if _parts(x, len(stats)) is not None] if m else []
        odd = [x for x in cells if "/" in x and x.strip().lower() not in _PLACEHOLDER and _parts(x, len(stats)) is None]
        if not m or not grouped or odd:
            out_header.append(name)
            plans.append((c, 1))
            continue
        head = m.group("name").rstrip(" _-")
        out_header.extend(f"{head} {s}{m.group('rest')}".strip() for s in stats)
        plans.append((c, len(stats)))
        other = [(line, row[c].strip()) for line, row in rows if c < len(row) and _parts(row[c], len(stats)) is None
                 and row[c].strip().lower() not in _PLACEHOLDER]
        conv.warn(f"{name[:60]}: each cell holds {' / '.join(stats)}, split into a column each"
                  + (f"; {len(other)} cell(s) of another shape left out (line {other[0][0]}: {other[0][1][:30]!r})"
                     if other else ""))
    if all(n == 1 for _, n in plans):
        return header, rows
    out_rows: Rows = []
    for line, row in rows:
        split: list[str] = []
        for c, n in plans:
            cell = row[c] if c < len(row) else ""
            split.extend([cell] if n == 1 else (_parts(cell, n) or [""] * n))
        out_rows.append((line, split))
    return out_header, out_rows
