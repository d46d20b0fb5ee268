"""HTML tables in a text (a README's `<table>` with `rowspan` and `colspan`, as model zoos and NVIDIA's Jetson
projects write them), for `importers.table_text`: each table laid out as the grid a browser draws, then written as a
pipe table, so that the text's table readers take it as any other. The header rows (`<th>` rows before the first
row of `<td>` cells) become one header: each column named by its groups' names and its own ('Jetson Orin Nano (ms)'
over 'Full Pipeline' is 'Jetson Orin Nano Full Pipeline (ms)', a unit in brackets kept at the end). A table nested in
a cell, or one larger than the limits, is left as it is written."""

from __future__ import annotations

import re
from html.parser import HTMLParser

MAX_TABLE_CHARS = 200_000
MAX_CELLS = 20_000
MAX_SPAN = 50
MAX_TABLES = 200
_UNIT = re.compile(r"\s*(\([^()]{1,30}\)|\[[^\[\]]{1,30}\])\s*$")  # 'Jetson Orin Nano (ms)': its unit
_EMOJI = re.compile(r":[a-z_]{2,30}:")  # ':stopwatch:' in a GitHub README


class _Grid(HTMLParser):
    """The cells of one table: rows of (text, is a header cell, rowspan, colspan)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[tuple[str, bool, int, int]]] = []
        self.cell: list[str] | None = None
        self.head = False
        self.spans = (1, 1)
        self.depth = 0
        self.cells = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.depth += 1
        elif self.depth > 1:
            return
        elif tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th") and self.rows:
            found = dict(attrs)
            self.cell, self.head = [], tag == "th"
            self.spans = (_span(found.get("rowspan")), _span(found.get("colspan")))
        elif tag == "br" and self.cell is not None:
            self.cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.depth -= 1
        elif tag in ("td", "th") and self.cell is not None and self.depth == 1:
            text = _EMOJI.sub("", " ".join("".join(self.cell).split())).replace("|", "/")
            self.rows[-1].append((text.strip(), self.head, *self.spans))
            self.cell = None
            self.cells += 1

    def handle_data(self, data: str) -> None:
        if self.cell is not None and self.depth == 1:
            self.cell.append(data)


def _span(value: str | None) -> int:
    return min(int(value), MAX_SPAN) if value and value.strip().isdigit() and int(value) > 0 else 1


def _laid_out(rows: list[list[tuple[str, bool, int, int]]]) -> list[list[tuple[str, bool]]]:
    """The grid a browser draws: a cell spanning rows or columns fills each place it covers."""
    grid: dict[tuple[int, int], tuple[str, bool]] = {}
    for r, row in enumerate(rows):
        c = 0
        for text, head, down, across in row:
            while (r, c) in grid:
                c += 1
            for i in range(down):
                for j in range(across):
                    grid[(r + i, c + j)] = (text, head)
            c += across
    width = max((c for _, c in grid), default=-1) + 1
    return [[grid.get((r, c), ("", False)) for c in range(width)] for r in range(len(rows))]


def _header(rows: list[list[tuple[str, bool]]]) -> list[str]:
    """One name per column from the header rows: the groups' names, then its own, the unit in brackets last."""
    names = []
    for parts in zip(*[[text for text, _ in row] for row in rows], strict=True):
        words, unit = [], ""
        for part in dict.fromkeys(p for p in parts if p):
            m = _UNIT.search(part)
            if m and not unit:
                unit, part = m.group(1), part[: m.start()]
            words.append(part.strip())
        names.append(" ".join(w for w in [*words, unit] if w))
    return names


def pipe_lines(html: str) -> list[str] | None:
    """One HTML table as the lines of a pipe table; None for a table that is no grid of cells (no rows, a nested
    table, beyond the limits)."""
    if len(html) > MAX_TABLE_CHARS:
        return None
    grid = _Grid()
    grid.feed(html)
    grid.close()
    if grid.cells > MAX_CELLS or not grid.rows or "<table" in html[6:].lower():
        return None
    rows = _laid_out([row for row in grid.rows if row])
    heads = 0
    while heads < len(rows) and all(head for text, head in rows[heads] if text):
        heads += 1
    if len(rows) < 2 or len(rows[0]) < 2:
        return None
    heads = heads or 1  # no <th>: the first row names the columns, as a pipe table's would
    header = _header(rows[:heads])
    body = [[text for text, _ in row] for row in rows[heads:]]
    return (["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            + ["| " + " | ".join(row) + " |" for row in body])


def html_tables(text: str) -> str:
    """The text with each HTML table written as a pipe table, on the lines the table took (blank lines after it where
    the pipe table is shorter, so the lines below keep their numbers); a text without '<table' as it is. One pass
    forward: an unclosed '<table' ends the search, so no text makes it scan twice."""
    low = text.lower()
    if "<table" not in low:
        return text
    out, at, done = [], 0, 0
    while done < MAX_TABLES and (start := low.find("<table", at)) >= 0:
        close = low.find("</table", start)
        end = low.find(">", close) + 1 if close >= 0 else 0
        if end <= 0:
            break
        done += 1
        html = text[start:end]
        lines = pipe_lines(html)
        if lines is not None:
            taken = html.count("\n")
            out += [text[at:start], "\n".join(lines + [""] * max(0, taken + 1 - len(lines)))]
        else:
            out.append(text[at:end])
        at = end
    return "".join(out) + text[at:]
