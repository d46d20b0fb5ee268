"""Tables written in text, for the general reader (`importers.general_table`): Markdown pipe tables and fixed-width
console tables (a summary a script prints, pasted into notes or a code block), each with the headings above it.

    ## GeForce RTX 2070
    ```
    Model                         gen tok/s   RSS ΔMB   wall s   ok
    ---------------------------------------------------------------
    llama3.2:3b                        98.79       0.0     3.11  yes
    gemma3:27b                             -         -        -   no
    ```

A fixed-width table is a header of two or more names (a name may hold single spaces: `gen tok/s`), split from each
other by two or more spaces, then rows whose cells sit under the header's names (each overlaps its column's name, or
ends within two characters of it: numbers are right-aligned; else lies wholly between its name and the next name;
values one space apart in two columns are two cells), a dashed rule between them optional (without one, two rows at
least). A pipe table is a header row, a `|---|---|` rule and its rows; `**bold**` and `code` marks are
taken off its cells. Headings are Markdown's, outside code blocks (a `## ...` line inside a code block is text).

A text is read as its tables only when its figures are in them: lines outside the tables that state figures
(`Generation Speed: 13.55 tokens/sec`, two or more) leave the text to the reader of figures in text
(`importers.text_figures`).
A table whose figures are approximate ranges (`~15-17 tokens/sec`) holds no measurement: `approximate_column` names
it for the refusal.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from importers.device_text import device_from_path, device_named, names_a_cpu
from importers.table_checks import says_training
from importers.table_console import _RULE, MAX_COLUMNS, MAX_LINE, MAX_LINES, fixed_table, gap_table, tab_table, unboxed
from importers.table_html import html_tables
from importers.table_long import UNIT_AT_END, with_stat
from joulebench import units

GAP_BUDGET = 400_000  # line visits of the console-table search over a whole text (8 passes over its longest table)
_PIPE_RULE = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")  # GFM: one hyphen a cell will do
MARKDOWN_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")  # level, title
_FENCE = re.compile(r"^\s*(```|~~~)")
_MARKS = re.compile(r"^(\*\*|__|\*|_|`)(.+)\1$")
# a range ('15-17 tokens/sec', '~5–7 tok/s') or a value marked approximate ('~20 tokens/s', '≈ 3 W')
_ABOUT = r"(?:~|≈|approx\.?|about|ca\.)"
_APPROXIMATE = re.compile(rf"^(?:{_ABOUT}\s*)?\d+(?:\.\d+)?\s*(?:-|–|to)\s*\d+(?:\.\d+)?\s*(?P<u>.+)$"
                          rf"|^{_ABOUT}\s*\d+(?:\.\d+)?\s*(?P<v>.+)$", re.IGNORECASE)
# a figure stated on a line of text: 'Generation Speed: 13.55 tokens/sec', 'wall=22.4s'
_STATED = re.compile(r"(?::(?=[\s*])|=)\s*\**\s*([-+]?\d[\d,]*(?:\.\d+)?\s?[A-Za-zµ%][\w/%]*(?:/\w+)?)")


@dataclass
class TextTable:
    line: int  # the header's line number
    header: list[str]
    rows: list[tuple[int, list[str]]]  # (line number, cells under the header's columns)
    headings: tuple[str, ...]  # the Markdown headings above it, outermost first (a text's one title left out)
    kind: str  # pipe | fixed width


def _filled_down(rows: list[tuple[int, list[str]]]) -> list[tuple[int, list[str]]]:
    """A pipe table grouped by its first column (a model named once over its rows, the cells under it left blank, as
    people write them): each blank first cell takes the name above it. A first column of numbers is left as it is."""
    firsts = [r[0].strip() if r else "" for _, r in rows]
    if not firsts or not firsts[0] or all(firsts) or any(f and re.fullmatch(r"[-+.\d\s]+", f) for f in firsts):
        return rows
    out, above = [], firsts[0]
    for (n, row), first in zip(rows, firsts, strict=True):
        above = first or above
        out.append((n, [above, *row[1:]] if row and not first and any(c.strip() for c in row[1:]) else row))
    return out


def text_tables(text: str) -> tuple[list[TextTable], list[int]]:
    """(the tables of a text, the line numbers they take up). A text's one level-1 heading is its title, above
    every table: no table's heading."""
    lines = unboxed([line[:MAX_LINE] for line in html_tables(text).splitlines()[:MAX_LINES]])
    tables: list[TextTable] = []
    used: list[int] = []
    stack: list[tuple[int, str]] = []
    above: list[tuple[tuple[int, str], ...]] = []
    titles = 0
    code = False
    budget = [GAP_BUDGET]  # the lines the console-table search may visit in all: bounded on any text
    i = 0
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            code = not code
            i += 1
            continue
        heading = None if code else MARKDOWN_HEADING.match(line)
        if heading is not None:
            level = len(heading.group(1))
            titles += level == 1
            title = heading.group(2).strip()
            stack = [(lvl, t) for lvl, t in stack if lvl < level or lvl == level and _keyed(t) and _keyed(title)
                     and _keyed(t) != _keyed(title)] + [(level, title)]  # '### Model: x' beside '### GPUs: 1'
            i += 1
            continue
        banner = 0 < i < len(lines) - 1 and "  " not in line.strip() and bool(_RULE.match(lines[i - 1])
                                                                          and _RULE.match(lines[i + 1]))
        found = None if banner else (  # 'FINAL BENCHMARK RESULTS' between two rules: a title, no table's header
            _pipe_table(lines, i) or tab_table(lines, i) or fixed_table(lines, i) or gap_table(lines, i, budget))
        if found is None:
            i += 1
            continue
        header, rows, end, kind = found
        header, rows = units_row(header, [r for r in rows if not all(_RULE_CELL.fullmatch(c.strip()) for c in r[1])])
        header, rows = sub_header(header, rows) if kind == "pipe" else (header, rows)
        tables.append(TextTable(i + 1, header, _filled_down(rows) if kind == "pipe" else rows, (), kind))
        above.append(tuple(stack))
        used.extend(range(i + 1, end + 1))
        i = end
    for table, stack_above in zip(tables, above, strict=True):
        table.headings = tuple(title for level, title in stack_above if level > 1 or titles > 1)
        if stack_above:
            table.header = of_heading(table.header, table.rows, stack_above[-1][1])
            table.header = units_said(table.header, stack_above[-1][1])
            table.header = setups_of_heading(table.header, table.rows, stack_above[-1][1])
    _captioned(tables, lines)
    for table, stack_above in zip(tables, above, strict=True):
        table.header = _legended(table.header, lines[max(0, table.line - 41):table.line - 1])
        table.header = devices_in_unit(table.header, table.rows, [
            *(title for _, title in stack_above[-1:]), *lines[max(0, table.line - 4):table.line - 1]])
    return tables, used


_RULE_CELL = re.compile(r"[-=_]{0,400}")  # a rule under or closing a console's table ('-------  -----'): no row


# a table's one unit said above it: 'Numbers in **FPS**', '## Model performance benchmark(FPS)', 'latency in ms'
_TABLE_UNIT = re.compile(r"(?i)(?:\bin\s{1,3}|\()[*_`]{0,2}\s{0,2}(?P<unit>fps|ms|milliseconds|tokens/s|tok/s|t/s|"
                         r"img/s|it/s|qps)\s{0,2}[*_`]{0,2}\)?(?:\W|$)")
_MARKUP = re.compile(r"\*\*|__")  # '**Jetson Nano**'


def devices_in_unit(header: list[str], rows: list[tuple[int, list[str]]], above: list[str]) -> list[str]:
    """A table whose columns are devices ('Jetson Nano', 'RPi 4 1950', 'RK3588 NPU') and whose cells are bare
    numbers, under a heading or a line that gives the table's one unit ('Numbers in **FPS**'): each device's column
    named with that unit ('Jetson Nano (FPS)'), a figure per device. Any other header as it is."""
    said = [m.group("unit") for line in above if (m := _TABLE_UNIT.search(line[:300])) is not None]
    if len(set(said)) != 1 or units.find_unit(said[0]) is None:
        return header
    clean = [" ".join(_MARKUP.sub(" ", c).split()) for c in header]
    devices = [i for i, c in enumerate(clean) if c and units.header_unit(c)[1] is None and device_named(c)
               and all(_numeric(r[i]) or r[i].strip() in _NO_VALUE for _, r in rows if i < len(r))]
    if len(devices) < 2:
        return header
    return [f"{clean[i]} ({said[0]})" if i in devices else c for i, c in enumerate(header)]


_LEGEND = re.compile(r"^\s*[-*]\s+`?(?P<name>[^`\n]{1,40}?)`?\s+[-–:=]\s+(?P<desc>[^\n]{3,120}?)\s*$")


def _legended(header: list[str], above: list[str]) -> list[str]:
    """A legend above a table ('- `TG` - Output token throughput (tok/s)'): a column it defines with a unit reads as
    its definition ('TG' as 'Output token throughput (tok/s)'). A definition stating no unit changes nothing."""
    said: dict[str, str] = {}
    for line in above:
        if (m := _LEGEND.match(line)) is not None and units.header_unit(m.group("desc"))[1] is not None:
            said[m.group("name").strip()] = m.group("desc").strip()
    return [said.get(c.strip(), c) if units.header_unit(c)[1] is None else c for c in header] if said else header


def _captioned(tables: list[TextTable], lines: list[str]) -> None:
    """Tables under the same headings told apart by the short line each has just above it ('- text to text',
    '- image&text to text'): that caption joins its headings, so their rows are never pooled as repeats."""
    shared = [t for t in tables if sum(u.headings == t.headings for u in tables) > 1]
    captions = {}
    for table in shared:
        above: list[str] = []
        for line in reversed(lines[max(0, table.line - 4):table.line - 1]):  # up to the heading above, 2 lines
            if MARKDOWN_HEADING.match(line) or len(above) == 2:
                break
            if line.strip():
                above.insert(0, line.strip(" -*\t")[:60])
        captions[id(table)] = " / ".join(above) or None
    if len({captions[id(t)] for t in shared}) == len(shared) and all(captions.values()):
        for table in shared:
            table.headings = (*table.headings, str(captions[id(table)]))


_STAT_ONLY = re.compile(r"(?P<stat>mean|median|avg|average|p\d{1,3}|min|max|std|stdev|sd)\s*"
                        r"(?P<unit>[(\[][^()\[\]]{1,30}[)\]])?", re.IGNORECASE)
_NUMBERED = re.compile(r"^\s*(?:\d+(?:\.\d+)*\.?|[IVX]+\.)\s+")  # '2.1 ', 'IV. '


def units_row(header: list[str], rows: list[tuple[int, list[str]]]) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """A table whose first row under the header gives the columns' units ('| | ms | img/s |', '| | Memory | TPS |
    TPS |'): the units joined to the header ('Latency (ms)', 'Raspberry Pi 4 (TPS)') and the row left out. Any other
    table is returned as it is."""
    if len(rows) < 2:
        return header, rows
    cells = rows[0][1]
    if any(_numeric(c) for c in cells):
        return header, rows
    found = [units.find_unit(c.strip()) if c.strip() else None for c in cells]
    if sum(u is not None for u in found) < 2:
        return header, rows
    joined = [(f"{h} ({c.strip()})" if u is not None else f"{h} {c}".strip()) if c.strip() else h
              for h, c, u in zip(header, cells, found, strict=False)]
    return joined + header[len(joined):], rows[1:]


def sub_header(header: list[str], rows: list[tuple[int, list[str]]]) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """A table of two header rows, the first naming groups over the empty cells they span ('| | A311D | | S905D3 |
    |'), the second (the first row under the rule, words only) the columns of each ('| 模型 | CPU(ms) | NPU(ms) |'):
    one name a column, its group's then its own ('A311D CPU(ms)'); a column named by neither, empty in every row, left
    out. Any other table is returned as it is."""
    if len(rows) < 2 or not any(h.strip() for h in header):
        return header, rows
    cells = rows[0][1]
    spans = any(not h.strip() and any(g.strip() for g in header[:i]) for i, h in enumerate(header))
    if not spans or any(_numeric(c) for c in cells) or sum(bool(c.strip()) for c in cells) < 2:
        return header, rows
    groups, group = [], ""
    for h in header:
        group = h.strip() or group
        groups.append(group)
    names = [" ".join(p for p in dict.fromkeys((g, c.strip())) if p) if c.strip() else h.strip()
             for g, c, h in zip(groups, cells + [""] * (len(header) - len(cells)), header, strict=False)]
    keep = [i for i, name in enumerate(names) if name or any(i < len(r) and r[i].strip() for _, r in rows[1:])]
    return [names[i] for i in keep], [(n, [r[i] if i < len(r) else "" for i in keep]) for n, r in rows[1:]]


def _numeric(cell: str) -> bool:
    return bool(re.match(r"^\s*[-+]?\d", cell))


_UNIT_SAID = re.compile(r"(?i)\b(?:all\s+)?(?:times?|latenc(?:y|ies)|durations?)\s+(?:are\s+)?(?:given\s+)?in\s+\[?"
                        r"(?P<unit>ms|milliseconds?|s|secs?|seconds?|us|µs|microseconds?)\]?(?:\W|$)")
_STAT_LAST = re.compile(r"(?i).{0,40}?\b(?:mean|median|avg|average|p\d{1,3}|min|max|std|stdev)")


def units_said(header: list[str], heading: str) -> list[str]:
    """A heading that says its table's unit of time ('CPU vs GPU Comparison - all times in ms'): the unit given to
    the columns that name a statistic and no unit ('CPU Mean', 'GPU P95' become 'CPU Mean (ms)'). Any other header
    as it is."""
    m = _UNIT_SAID.search(heading[:300])
    unit = m.group("unit") if m else None
    if unit is None or units.find_unit(unit) is None:
        return header
    return [f"{c.strip()} ({unit})" if _STAT_LAST.fullmatch(c.strip()) and units.header_unit(c)[1] is None else c
            for c in header]


_NO_VALUE = {"", "-", "—", "–", "n/a", "N/A", "na"}
_NOT_FIGURE_WORDS = {"comparison", "results", "result", "benchmark", "benchmarks", "summary", "table", "by", "per",
                     "vs", "and", "of", "the", "average", "avg", "mean"}


def setups_of_heading(header: list[str], rows: list[tuple[int, list[str]]], heading: str) -> list[str]:
    """A comparison table whose heading names its figure and unit ('Throughput Comparison (req/s)', 'Latency
    Comparison (Average ms)') and whose columns are setups ('BentoML', 'FastAPI', 'Ray Serve'): each column of plain
    numbers with no unit becomes that figure of its setup ('BentoML Throughput (req/s)'). Any other header as it is."""
    m = UNIT_AT_END.fullmatch(_NUMBERED.sub("", heading).strip())
    if m is None:
        return header
    said = m.group("unit")[1:-1].split()
    unit = said[-1] if said and units.find_unit(said[-1]) is not None else None
    figure = " ".join(w for w in re.findall(r"[^\W\d_][\w-]*", m.group("name")) if w.lower() not in _NOT_FIGURE_WORDS)
    if unit is None or not figure or len(figure) > 40:
        return header
    pivot = re.fullmatch(r"(?P<rows>[^\\/]{1,40}?)\s*[\\/]\s*(?P<levels>[A-Za-z][\w ]{0,30})", header[0].strip())
    numeric = [i for i, c in enumerate(header) if i > 0 and units.header_unit(c)[1] is None and (
        pivot is not None or not re.fullmatch(r"[\d.\s]+", c)) and rows and all(  # columns named by numbers are
        re.fullmatch(r"[-+]?\d+(?:\.\d+)?", r[i].strip()) for _, r in rows  # a setting's levels, read only where the
        if i < len(r) and r[i].strip() not in _NO_VALUE) and any(  # first column says which ('framework \ concurrency')
        i < len(r) and r[i].strip() not in _NO_VALUE for _, r in rows)]
    if len(numeric) < 2:
        return header
    if pivot is not None and all(re.fullmatch(r"\d{1,6}", header[i].strip()) for i in numeric):
        level = pivot.group("levels").strip()
        return [pivot.group("rows").strip(), *(f"{level} {c.strip()} {figure} ({unit})" if i in numeric else c
                                                for i, c in enumerate(header) if i > 0)]
    return [f"{c.strip()} {figure} ({unit})" if i in numeric else c for i, c in enumerate(header)]


def of_heading(header: list[str], rows: list[tuple[int, list[str]]], heading: str) -> list[str]:
    """A table whose figure columns name only a statistic ('Mean (s)', 'P95 (s)', or 'Mean' under 'Latency (ms)')
    measures what the heading above it names: those columns become 'TTFT Mean (s)' ('### 2.1 TTFT' above them).
    Any other header is returned as it is, and so is a table whose rows name their figures with units ('Request
    Latency (ms)' over 'avg', 'p99': GenAI-Perf's console table)."""
    stats = [bool(_STAT_ONLY.fullmatch(c.strip())) for c in header]
    named = sum(bool(r) and units.header_unit(r[0])[1] is not None for _, r in rows)  # rows naming their figure
    if sum(stats) < 2 or named >= 2 and 2 * named >= len(rows):
        return header
    title = _NUMBERED.sub("", heading).strip()
    m = UNIT_AT_END.fullmatch(title)
    heading_unit = m.group("unit") if m and units.find_unit(m.group("unit")[1:-1].strip()) is not None else None
    name = re.sub(r"\s*[(\[][^()\[\]]*[)\]]", "", m.group("name") if heading_unit and m else title).strip()
    if not name:  # the heading is all brackets: nothing to name the figures by
        return header
    out = []
    for cell, is_stat in zip(header, stats, strict=True):
        if not is_stat:
            out.append(cell)
            continue
        found = _STAT_ONLY.fullmatch(cell.strip())
        assert found is not None
        unit = found.group("unit") or heading_unit
        out.append(with_stat(f"{name} {unit}" if unit else name, found.group("stat")))
    return out


_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!~<>])")  # Markdown's backslash escapes: 'Q4\_K\_M' is Q4_K_M


_LINK = re.compile(r"\[([^\]\n]{0,200})\]\([^)\s]{0,500}\)")  # '[Pi 5 - 16GB](https://...)': its text
_TAG = re.compile(r"</?[a-z]{1,10}>")  # '<b>', '</b>'
_NOTE = re.compile(r"<sup>[^<]{0,20}</sup>")  # a footnote's mark: 'RK3588<sup>1</sup>'
_BREAK = re.compile(r"<br\s{0,2}/?>", re.IGNORECASE)  # a line break in a cell: 'RK3588<br>NPU' is 'RK3588 NPU'


def _pipe_cells(line: str) -> list[str]:
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
    out = []
    for cell in cells:
        if "[" in cell or "<" in cell:
            cell = " ".join(_TAG.sub("", _BREAK.sub(" ", _NOTE.sub("", _LINK.sub(r"\1", cell)))).split())
        m = _MARKS.match(cell)
        out.append(_ESCAPED.sub(r"\1", (m.group(2).strip() if m else cell).replace("\\|", "|")))
    return out


def _pipe_table(lines: list[str], i: int) -> tuple[list[str], list[tuple[int, list[str]]], int, str] | None:
    """A GFM pipe table; its outer pipes may be left out ('a | b' over '--|--'), as GFM allows."""
    outer = lines[i].lstrip().startswith("|")
    if i + 1 >= len(lines):
        return None
    if not _PIPE_RULE.match(lines[i + 1]):
        return _ruleless(lines, i) if outer else None
    if not outer and (lines[i].count("|") < 2 or "|" not in lines[i + 1]):
        return None
    header = _pipe_cells(lines[i])
    if not 2 <= len(header) <= 2 * MAX_COLUMNS:
        return None
    rows = []
    end = i + 2
    while end < len(lines) and (lines[end].lstrip().startswith("|") or not outer and lines[end].count("|") >= len(
            header) - 1 >= 2):
        cells = _pipe_cells(lines[end])
        if not all(set(c) <= {"="} for c in cells):  # '|=====|====|': a rule drawn with '=' (GuideLLM's console)
            rows.append((end + 1, (cells + [""] * len(header))[:len(header)]))
        end += 1
    return (header, rows, end, "pipe") if rows else None


def _ruleless(lines: list[str], i: int) -> tuple[list[str], list[tuple[int, list[str]]], int, str] | None:
    """A pipe table written without its rule line ('| Concurrency | BentoML |' over '| 10 | 18.50 |'): a header of
    names and at least two rows of as many cells, each holding a number."""
    header = _pipe_cells(lines[i])
    if not 2 <= len(header) <= 2 * MAX_COLUMNS or any(re.search(r"\d", c) and not c.isalpha() and
                                                     re.fullmatch(r"[-+]?[\d.]+", c) for c in header):
        return None
    rows = []
    end = i + 1
    while end < len(lines) and lines[end].lstrip().startswith("|") and len(_pipe_cells(lines[end])) == len(header):
        cells = _pipe_cells(lines[end])
        if not any(re.fullmatch(r"[-+]?\d+(?:\.\d+)?", c) for c in cells):
            break
        rows.append((end + 1, cells))
        end += 1
    return (header, rows, end, "pipe") if len(rows) >= 2 else None


def _keyed(title: str) -> str | None:
    """The key of a heading written 'Key: value' ('Model: h2oai/llama2-7b' -> 'model'), or None."""
    key, colon, value = title.partition(":")
    return key.strip().lower() if colon and value.strip() and 0 < len(key.strip()) <= 40 else None


# a heading that is a device's name and then what was measured on it
_BEFORE_RESULTS = re.compile(r"(?i)^(.{2,60}?)\s+(?:eval(?:uation)?\s+|benchmark\s+|inference\s+|training\s+)?"
                             r"(?:results?|benchmarks?|performance|measurements?|numbers|report)\b")


def heading_device(title: str) -> str | None:
    """The GPU or Jetson a heading names: the whole heading, a part in brackets, the end after 'on' ('GeForce RTX
    2070', 'Results (RTX 3090)', 'Benchmark Results on Jetson Orin Nano Super') or its first word where no other
    word names a device ('RK3588 YOLO 性能与精度摘要'); None for any other ('jetson orion': no device JouleBench knows
    by that name, never guessed; 'A100 vs H100': two)."""
    parts = [title, *re.findall(r"[(\[]([^()\[\]]{2,60})[)\]]", title),
             *re.findall(r"(?:\bon|@)\s+([^()\[\]=]{2,60}?)[\s=]*$", title),  # '... Results on Jetson Orin Nano =='
             *re.findall(_BEFORE_RESULTS, title)[:1],  # 'NVIDIA Jetson AGX Thor Developer Kit eval results'
             *(re.split(r"\s*[:(\[]", title, maxsplit=1)[:1] if re.search(r"[:(\[]", title) else [])]  # 'RTX 3090:
    # pp520 tg128', 'NVIDIA DGX Spark (GB10, sm_121a)': the name before what is said of it
    for part in parts:
        found = device_from_path((part.strip()[:100],))
        if found:
            return found
    words = title.split()[:20]
    named = [w for w in words if device_from_path((w.strip("*_`,:")[:40],))]
    return device_from_path((words[0].strip("*_`,:")[:40],)) if len(named) == 1 and named[0] == words[0] else None


def title_device(text: str) -> str | None:
    """The device a text's one level-1 heading (its title, above every table) names, or None."""
    titles = [m.group(2) for line in text.splitlines()[:MAX_LINES] if line.startswith("# ")
              and (m := MARKDOWN_HEADING.match(line)) is not None]
    return heading_device(titles[0]) if len(titles) == 1 else None


_DEVICE_LINE = re.compile(r"^[\s>*_`-]*(?:gpu|gpu[ _]name|device|device[ _]name|hardware|accelerator|board|environment"
                          r"|platform|machine|system|testbed|test[ _]bed|config|configuration|setup|stack|gpus|cards|hw"
                          r"|node|server)"
                          r"[\s*_`]*[:=][\s*_`]*(?P<value>[^|,;]{2,120}?)[\s*_`]*(?:[,;][^|]{0,400})?$", re.IGNORECASE)


def device_lines(text: str, used: list[int]) -> list[tuple[int, str, int]]:
    """(line number, device, the line it holds until) of the lines outside tables that name the device a report ran
    on: 'GPU: A6000-24GB', 'device_name: NVIDIA GeForce RTX 3090', '- **Hardware:** Jetson AGX Orin' (until the end),
    or a line that is a device's name alone, '> **NVIDIA A800*8**' (until the next heading). A known device only; a
    CPU only on a line that says it is the device ('Platform: AMD Ryzen 9 7900') and no GPU named on another."""
    taken = set(used)
    out: list[tuple[int, str, int]] = []
    lines = text.splitlines()[:MAX_LINES]
    headings = [k for k, line in enumerate(lines, start=1) if line.startswith("#") and MARKDOWN_HEADING.match(line)]
    for n, line in enumerate(lines, start=1):
        if n in taken:
            continue
        if ":" not in line and "=" not in line:
            # '> **NVIDIA A800*8**', '- NVIDIA RTX 4090 * 2'; a heading naming a device is `heading_device`'s
            alone = None if MARKDOWN_HEADING.match(line) else _DEVICE_ALONE.match(line[:120])
            name = alone.group("name") if alone is not None else ""
            found = device_named(name) if name else None
            if found is not None and len(name.split()) - len(found.split()) <= 1 and not names_a_cpu(found):
                at = bisect.bisect_right(headings, n)  # the next heading: one search, on any text
                out.append((n, found, headings[at] if at < len(headings) else MAX_LINES + 1))
            continue
        m = _DEVICE_LINE.match(line[:200])
        if m is not None and (found := device_named(m.group("value"))) is not None:
            count = re.match(r"\s*(\d{1,3})\s*[x×]\s", m.group("value"))  # '**GPU:** 2x RTX 3060 12GB': two of them
            out.append((n, f"{count.group(1)}x {found}" if count else found, MAX_LINES + 1))
    if any(not names_a_cpu(d) for _, d, _ in out):  # 'Platform: Xeon 8480' beside 'GPU: H100': the CPU is the host
        out = [line for line in out if not names_a_cpu(line[1])]
    return out


# a line that is a device's name alone, perhaps quoted, bulleted or bold, perhaps with its count: '> **NVIDIA A800*8**'
_DEVICE_ALONE = re.compile(r"^\s{0,3}(?:>\s{0,3})?(?:[-*+]\s{1,3})?(?:\*\*|__)?(?P<name>[^*_\n]{2,80}?)"
                           r"(?:\s{0,2}[*x×]\s{0,2}\d{1,3})?(?:\*\*|__)?\s*$")


def figures_outside(text: str, used: list[int], repeated: frozenset[str] = frozenset()) -> bool:
    """Whether lines outside the tables state two figures or more with their units (`name: value unit`) under two
    names or more: a run of figures in text (one alone, or one name under each table, is no run there, and leaves
    the tables to be read). Where most of the figures outside are numbers the tables hold (`repeated`: a log's
    progress lines above its summary table), the lines repeat the tables and are no run of their own."""
    taken = set(used)
    names: set[str] = set()
    repeats = 0
    for n, line in enumerate(text.splitlines()[:MAX_LINES], start=1):
        if n in taken or ":" not in line and "=" not in line:
            continue
        for m in _STATED.finditer(line[:MAX_LINE]):
            try:
                q = units.parse(m.group(1))
            except units.UnitError:
                continue
            if q is None or q.unit is None or q.unit.kind == "percent":
                continue
            if numbers_in(m.group(1)) <= repeated:
                repeats += 1
            else:
                names.add(line[:m.start()].strip(" -*#|").lower()[-60:])  # 'Total duration' under each table: one
                if len(names) >= 2 and len(names) > repeats:
                    return True
    return len(names) >= 2 and len(names) > repeats


def numbers_in(text: str) -> frozenset[str]:
    """The numbers a text writes, as written without thousands' commas ('1,234.5 ms' -> {'1234.5'})."""
    return frozenset(m.group().replace(",", "") for m in re.finditer(r"\d[\d,]*(?:\.\d+)?", text[:MAX_LINE]))


def approximate_column(tables: list[TextTable]) -> tuple[str, str, str] | None:
    """(the column, an example cell, the kind of table) of the first column whose values are all approximate
    ranges or approximate values with a unit ('~15-17 tokens/sec'); None when no column is."""
    for table in tables:
        for c, name in enumerate(table.header):
            cells = [row[c] for _, row in table.rows if c < len(row) and row[c] and row[c] not in ("-", "n/a")]
            if not cells:
                continue
            found = [_APPROXIMATE.match(cell) for cell in cells]
            if all(m is not None and is_unit(m.group("u") or m.group("v")) for m in found):
                return name, cells[0], "Markdown table" if table.kind == "pipe" else "table"
    return None


def is_unit(text: str) -> bool:
    """Whether a text is a unit JouleBench converts ('tok/s', 'ms')."""
    try:
        q = units.parse(f"1 {text.strip()}")
    except units.UnitError:
        return False
    return q is not None and q.unit is not None


def side_by_side(tables: list[TextTable]) -> list[TextTable]:
    """Tables that give other figures of the same rows, one table per quantity ('2.1 TTFT', then '2.2 Latency', each
    row 'spark-test | low-load'), joined row by row into one table under their common headings. Tables are joined
    when their headings do not set a training apart from an inference, they have as many rows, the columns they
    share hold the same cells row by row, and no other column is in both: two tables of the same figures are two
    setups (one per heading), never joined."""
    out: list[TextTable] = []
    for table in tables:
        last = out[-1] if out else None
        if last is not None and _parallel(last, table):
            shared = set(last.header) & set(table.header)
            extra = [h for h in table.header if h not in shared]
            at = {h: i for i, h in enumerate(table.header)}
            rows = [(n, [*cells, *(other[at[h]] for h in extra)])
                    for (n, cells), (_, other) in zip(last.rows, table.rows, strict=True)]
            common = tuple(a for a, b in zip(last.headings, table.headings, strict=False) if a == b)
            out[-1] = TextTable(last.line, [*last.header, *extra], rows, common, last.kind)
        else:
            out.append(table)
    return out


def _parallel(a: TextTable, b: TextTable) -> bool:
    if says_training(" ".join(a.headings)) != says_training(" ".join(b.headings)):
        return False  # 'A. Training Benchmark' above one, 'B. Inference Benchmark' above the other: two workloads
    shared = [h for h in a.header if h in b.header and h.strip()]
    if not shared or len(a.rows) != len(b.rows) or len(shared) == min(len(a.header), len(b.header)):
        return False
    ia, ib = {h: i for i, h in enumerate(a.header)}, {h: i for i, h in enumerate(b.header)}
    return all(ra[ia[h]] == rb[ib[h]] for (_, ra), (_, rb) in zip(a.rows, b.rows, strict=True) for h in shared)
