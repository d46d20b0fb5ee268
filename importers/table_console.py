"""Tables a console prints aligned by spaces or tabs (for `importers.table_text`): a fixed-width table (a header of
names split by two or more spaces, rows under them, pandas' right-aligned DataFrame print), a console table whose
names may sit one space apart (columns where the rows have text), and a table whose cells are split by tabs."""

from __future__ import annotations

import re
from itertools import islice

from joulebench import units

MAX_COLUMNS = 40
MAX_LINE = 2_000
MAX_LINES = 50_000  # a table of results in text is never further down
_CELL = re.compile(r"\S+(?: \S+)*")  # a cell of a fixed-width line: words split by single spaces
_RULE = re.compile(r"^\s*[-=─━+|: ]{10,}\s*$")


def _spans(line: str) -> list[tuple[int, int, str]]:
    """The cells of a line with their columns, MAX_COLUMNS + 1 at most (a wider line is no table's)."""
    return [(m.start(), m.end(), m.group()) for m in islice(_CELL.finditer(line), MAX_COLUMNS + 1)]


def _header_like(spans: list[tuple[int, int, str]]) -> bool:
    """Two or more names split by two or more spaces, none a value."""
    if not 2 <= len(spans) <= MAX_COLUMNS or any(b[0] - a[1] < 2 for a, b in zip(spans, spans[1:], strict=False)):
        return False
    for _, _, cell in spans:
        if not re.search(r"[A-Za-z]", cell):
            return False
        if cell[:1] not in "0123456789+-.":  # a value opens with its number
            continue
        try:
            if units.parse(cell) is not None:
                return False
        except units.UnitError:
            pass
    return True


def _aligned(header: list[tuple[int, int, str]], line: str) -> list[str] | None:
    """The row's cells under the header's columns, '' where it has none; None when a cell sits under no column, or
    two under one. A cell sits under a column when it overlaps the column's name or ends within two characters of
    it, else when it lies wholly in the column's stretch, from its name to the next name (a value right-aligned past
    a left-aligned name: 'Median' over '      84.74'); values a single space apart ('90.88 84.12/107.51') in two
    columns' stretches are two cells."""
    spans = _spans(line)
    if not 2 <= len(spans) <= len(header) or any(b[0] - a[1] < 2 for a, b in zip(spans, spans[1:], strict=False)):
        return None
    stretch = [(h[0], nxt[0] if nxt else MAX_LINE + 1) for h, nxt in zip(header, [*header[1:], None], strict=True)]
    cells = [""] * len(header)
    split: list[tuple[int, int, str]] = []
    for start, end, text in spans:
        under = [n for n, (s_start, s_end) in enumerate(stretch) if start < s_end and end > s_start]
        words = [(start + m.start(), start + m.end(), m.group()) for m in re.finditer(r"\S+", text)]
        values = all(w[2][:1] in "0123456789+-." for w in words)
        split.extend(words if values and len(under) > 1 and len(words) == len(under) else [(start, end, text)])
    for start, end, text in split:
        best = None
        for n, (h_start, h_end, _) in enumerate(header):
            if start < h_end and end > h_start:
                best = n
                break
        if best is None:
            near = [(min(abs(end - h_end), abs(start - h_start)), n) for n, (h_start, h_end, _) in enumerate(header)]
            gap, n = min(near)
            best = n if gap <= 2 else None
        if best is None:
            best = next((n for n, (s_start, s_end) in enumerate(stretch) if s_start <= start and end <= s_end), None)
        if best is None or cells[best]:
            return None
        cells[best] = text
    return cells


def fixed_table(lines: list[str], i: int) -> tuple[list[str], list[tuple[int, list[str]]], int, str] | None:
    header = _spans(lines[i])
    if not _header_like(header) or lines[i].lstrip().startswith("|"):
        return None
    end = i + 1
    ruled = end < len(lines) and bool(_RULE.match(lines[end])) and lines[end].count("-") + lines[end].count("=") >= 10
    if ruled:
        end += 1
    rows: list[tuple[int, list[str]]] = []
    right = None if ruled else _right_aligned(header, lines, end)  # pandas: every column right-aligned
    if right is not None:
        rows, end = right
    while right is None and end < len(lines):
        if not lines[end].strip():  # under a rule, a blank line between groups of rows, when a row follows
            if not ruled or not rows or end + 1 >= len(lines) or _aligned(header, lines[end + 1]) is None:
                break
            end += 1
        cells = _aligned(header, lines[end])
        if cells is None:
            break
        if ruled and rows and not cells[0] and len(header) >= 3:
            cells[0] = rows[-1][1][0]  # a group's name written once, on its first row ('Single Long Doc (49w)')
        rows.append((end + 1, cells))
        end += 1
    if not rows or (not ruled and (len(rows) < 2 or len(header) < 3)):
        return None
    return [text for _, _, text in header], rows, end, "fixed width"


_NUMBER_CELL = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?%?")
_TABS = re.compile(r"\t+")


def tab_table(lines: list[str], i: int) -> tuple[list[str], list[tuple[int, list[str]]], int, str] | None:
    """A table whose cells are split by tabs (a run of them: a program aligning its columns with '\t\t'), under a
    header of names and an optional rule: every row has as many cells as the header."""
    if "\t" not in lines[i]:
        return None
    header = [c.strip() for c in _TABS.split(lines[i].strip())]
    if not 2 <= len(header) <= MAX_COLUMNS or not all(header) or any(_NUMBER_CELL.fullmatch(c) for c in header):
        return None
    end = i + 1
    if end < len(lines) and _RULE.match(lines[end]):
        end += 1
    rows: list[tuple[int, list[str]]] = []
    while end < len(lines) and "\t" in lines[end]:
        cells = [c.strip() for c in _TABS.split(lines[end].strip())]
        if len(cells) != len(header):
            break
        rows.append((end + 1, cells))
        end += 1
    return (header, rows, end, "tab") if rows else None


def gap_table(lines: list[str], i: int, budget: list[int]
               ) -> tuple[list[str], list[tuple[int, list[str]]], int, str] | None:
    """A console table printed with fixed widths whose names may sit one space apart ('Prefill Decode', each
    right-aligned over its numbers): its columns are where its rows have text, split by two or more blank
    characters down every row, or by one where a name starts after it (a one-space gap stays inside a cell
    otherwise: 'save=11ms read=9ms'); each name belongs to
    the column it overlaps or is nearest, a line of units under the names is a row of units, groups of rows may be
    split by blank lines, and a rule may sit under the names. Three columns and two rows of figures at least."""
    words = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", lines[i])]
    if not 3 <= len(words) <= MAX_COLUMNS or not all(re.search(r"[A-Za-z]", w) for _, _, w in words) or any(
            _NUMBER_CELL.fullmatch(w) for _, _, w in words):
        return None
    if budget[0] <= 0:
        return None
    body: list[int] = []  # the lines of rows (the units line among them)
    end = i + 1
    while end < len(lines) and len(body) < MAX_LINES:
        line = lines[end]
        if not line.strip():
            if end + 1 < len(lines) and _figures_in(lines[end + 1]) >= 2 and body:
                end += 1
                continue
            break
        if _RULE.match(line):
            if any(_figures_in(lines[n]) for n in body):  # a rule under the rows: the table's end
                break
            end += 1  # a rule under the names (and their units)
            continue
        body.append(end)
        end += 1
    budget[0] -= end - i
    if sum(1 for _ in zip(range(2), (n for n in body if _figures_in(lines[n]) >= 2))) < 2:
        return None  # two rows of figures at least (the count stops at two)
    sample = body[:500]  # the columns of a long table are where its first rows have text: bounded work
    width = max(len(lines[n]) for n in sample)
    filled = [False] * width
    for n in sample:
        for k, ch in enumerate(lines[n]):
            if not ch.isspace():
                filled[k] = True
    spans: list[list[int]] = []
    for k, on in enumerate(filled):
        if on and spans and (k - spans[-1][1] <= 1 and not any(k == a for a, _, _ in words)):
            spans[-1][1] = k + 1  # one blank inside a cell ('NVIDIA A10'), except before a name left-aligned there
        elif on:
            spans.append([k, k + 1])
    if not 3 <= len(spans) <= MAX_COLUMNS:
        return None
    names: list[list[str]] = [[] for _ in spans]
    for start, stop, word in words:
        near = min(range(len(spans)), key=lambda c: max(0, spans[c][0] - stop, start - spans[c][1]) * 1000
                   + abs(stop - spans[c][1]))
        names[near].append(word)
    while names and not names[-1] and len(names) > 1:  # words past the last name: the last column's ('a=1 b=2')
        spans[-2][1] = spans[-1][1]
        spans.pop()
        names.pop()
    if any(not n for n in names):
        return None
    rows = [(n + 1, [lines[n][a:b].strip() if c < len(spans) - 1 else lines[n][a:].strip()
                     for c, (a, b) in enumerate(spans)]) for n in body]
    if any(sum(1 for c in cells if c) < 2 for _, cells in rows):
        return None
    return [" ".join(n) for n in names], rows, end, "fixed width"


def _figures_in(line: str) -> int:
    return sum(1 for w in line.split() if _NUMBER_CELL.fullmatch(w))


_INDEX = re.compile(r"\d{1,9}")


def _right_aligned(header: list[tuple[int, int, str]], lines: list[str], start: int
                   ) -> tuple[list[tuple[int, list[str]]], int] | None:
    """The rows of a table whose every column is right-aligned to its name's end, as pandas prints a DataFrame (a
    value may reach left past its name, one space from the column before: '192.3 NVIDIA A10'), its index (row
    numbers left of the first name) dropped; None unless every row ends where the header does and no word crosses a
    column's edge."""
    ends = [e for _, e, _ in header]
    rows: list[tuple[int, list[str]]] = []
    end = start
    while end < len(lines) and lines[end].strip():
        line = lines[end][:MAX_LINE].rstrip()
        if len(line) != ends[-1]:
            return None
        first = re.match(r"\s*(\S+)\s", line)
        lead = 0
        if first and _INDEX.fullmatch(first.group(1)) and first.end(1) < header[0][0] and (
                line[first.end(1):header[0][0]].strip() == "" or line[first.end(1):ends[0]].strip()):
            lead = first.end(1)  # the DataFrame's index
        bounds = [lead, *ends]
        cells = []
        for a, b in zip(bounds, bounds[1:], strict=False):
            chunk = line[a:b]
            if chunk.strip() and (chunk != chunk.rstrip() or a > lead and chunk[0] != " "):
                return None  # not right-aligned to the name, or a word across the edge
            cells.append(chunk.strip())
        rows.append((end + 1, cells))
        end += 1
    return (rows, end) if rows else None


_BOX_BAR = str.maketrans({"│": "|", "┃": "|", "║": "|", "╎": "|", "┆": "|"})
_BOX_RULE = re.compile(r"^\s*[┏┌╔╭┡├╞╠┣┢╟┗└╚╰+|][━─═╌┄\-=:+┳┬╦╤┯╇┼╪╬╋┿┻┴╩╧┷┓┐╗╮┩┤╡╣┫┪╢┛┘╝╯| ]{2,}\s*$")
_ASCII_RULE = re.compile(r"^\s*\+[-=:]{2,}(?:\+[-=:]{2,})*\+\s*$")  # psql's and tabulate's '+------+----+'
_BOX_JOIN = re.compile(r"[┳┬╦╤┯╇┼╪╬╋┿┻┴╩╧┷+]")


# the rule under a header of a table with no outer bars: GFM's 'a | b' over '--|--', psql's ' a | b' over '---+---'
_BARE_RULE = re.compile(r"^\s*:?-{2,}:?(?:\s*[|+]\s*:?-{2,}:?){1,199}\s*\|?\s*$")


def _bare(line: str, bars: int) -> bool:
    """Whether a line is a row of a table with no outer bars and `bars` inner ones."""
    return not line.lstrip().startswith("|") and line.count("|") == bars


def unboxed(lines: list[str]) -> list[str]:
    """A text's box-drawn tables (rich's, as GenAI-Perf and vLLM print them; tabulate's 'grid' and psql's '+---+')
    and tables without outer bars (GFM allows them; psql prints them) as pipe tables: each bar a '|', a rule
    between two rows of cells the GFM rule line, the borders above and below a table blank lines. Any other line
    as it is."""
    bars = [line.translate(_BOX_BAR) if any(c in line for c in "│┃║╎┆") else line for line in lines]
    out: list[str] = []
    inner = 0  # the inner bars of the table with no outer bars whose rows these are (0: none)
    for i, line in enumerate(bars):
        if inner and _bare(line, inner):
            out.append(f"|{line.rstrip()}|")
            continue
        inner = 0
        if _BARE_RULE.match(line) and i > 0 and (n := bars[i - 1].count("|")) and _bare(bars[i - 1], n) \
                and i + 1 < len(bars) and _bare(bars[i + 1], n) and len(re.findall(r"[|+]", line)) >= n:
            inner = n
            out[-1] = f"|{bars[i - 1].rstrip()}|"
            out.append("|" + "---|" * (n + 1))
            continue
        if not (_BOX_RULE.match(line) and (re.search(r"[━─═╌┄]", line) or _ASCII_RULE.match(line))):
            out.append(line)
            continue
        above = i > 0 and bars[i - 1].lstrip().startswith("|")
        below = i + 1 < len(bars) and bars[i + 1].lstrip().startswith("|")
        out.append("|" + "---|" * (len(_BOX_JOIN.findall(line.strip()[1:-1])) + 1) if above and below else "")
    return out
