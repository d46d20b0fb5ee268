"""A text's run card: tables of keys and values (`| field | value |`, `| metric | value |`) and tables of one figure's
statistics (`| Percentile | Time (ms) |` over `| Mean | 84.26 |`, under the heading that names the figure) that,
all together, describe one run; read as one row whose columns are their keys (`importers.table_document`)."""

from __future__ import annotations

import re

from importers.table_fields import plain
from importers.table_labels import label_field
from importers.table_long import UNIT_AT_END
from importers.table_records import MAX_KEYS
from importers.table_text import TextTable, is_unit
from joulebench import units

_KEY_VALUE = re.compile(r"(?i)(?:field|metric|key|parameter|param|name|property|setting|item|measure)s?\s*\|\s*"
                        r"(?:value|values|result)s?")
# the first column of a table of statistics ('Percentile', 'Statistic', or no name) and the statistic a row names
_STAT_HEAD = {"", "percentile", "percentiles", "statistic", "statistics", "stat", "stats", "quantile", "metric"}
_STAT_CELL = re.compile(r"(?i)[*_`\s]*(?P<stat>mean|median|average|avg|min|max|std|stdev|p\d{1,2}(?:\.\d{1,2})?)\b")


def _statistic(cell: str) -> str | None:
    """The statistic a row's first cell names ('**Median (p50)**' -> 'median', 'P99' -> 'p99'), or None."""
    m = _STAT_CELL.match(cell)
    return m.group("stat").lower() if m is not None and len(cell) <= 40 else None


def _unit_of(name: str, cells: list[str]) -> str | None:
    """The unit a column's header brackets ('Time (ms)' -> '(ms)') or, failing that, its cells carry ('' for the cells
    as they are); None where the column has no unit."""
    m = UNIT_AT_END.fullmatch(name.strip())
    if m is not None and is_unit(m.group("unit").strip("()[]")):
        return m.group("unit")
    return "" if units.unit_of_cells(cells) is not None else None


def statistic_pairs(table: TextTable) -> TextTable | None:
    """A table of one figure's statistics, one a row, named by the heading above it ('### Time to First Token
    (TTFT)' over '| Percentile | Time (ms) |'), as a table of keys and values ('mean Time to First Token (TTFT) (ms)':
    '203,458.50'): the first column with a unit gives each value (another is the same figure in another unit, or
    rounded: '~203.5s'); None for any other table."""
    if (len(table.header) < 2 or plain(table.header[0].strip("*_` ")) not in _STAT_HEAD or len(table.rows) < 2
            or not table.headings):
        return None
    stats = [_statistic(row[0]) for _, row in table.rows]
    if None in stats:
        return None
    figure = re.sub(r"^[^\w(]+", "", table.headings[-1]).strip()[:80]  # '📈 Throughput': the emoji left out
    for c, name in enumerate(table.header[1:], start=1):
        cells = [row[c] for _, row in table.rows]
        unit = _unit_of(name, cells)
        if unit is not None and figure:
            rows = [(n, [f"{stat} {figure} {unit}".strip(), row[c]]) for (n, row), stat in zip(table.rows, stats,
                                                                                                 strict=True)]
            return TextTable(table.line, ["Metric", "Value"], rows, table.headings, table.kind)
    return None


def key_value_tables(tables: list[TextTable]) -> list[TextTable]:
    """A text's tables of keys and values ('| field | value |', '| metric | value |': a run card), and of one figure's
    statistics (`statistic_pairs`), as one row whose columns are their keys when every table of the text is such a
    table; otherwise the tables as they are (beside a text's other tables, a key's table is one of its setups'),
    but a table of one figure's statistics as a row of its own."""
    pairs = [t if len(t.header) == 2 and _KEY_VALUE.fullmatch(" | ".join(h.strip() for h in t.header))
             else statistic_pairs(t) for t in tables]
    if not pairs or None in pairs:  # a table of one figure's statistics among other tables: a row of its own
        return [t if p is None or p is t else _one_row(p) for t, p in zip(tables, pairs, strict=True)]
    keys: dict[str, str] = {}
    for table in pairs:
        assert table is not None
        for _, row in table.rows:
            value = row[1].strip().strip("`*_ ") if len(row) >= 2 else ""
            if not (key := row[0].strip().strip("`*_ ")) or not (re.search(r"\d", value) or label_field(key)):
                continue  # 'TPS kind': aggregate_output, a note
            if keys.setdefault(key, value) != value:
                return tables  # a key given twice: the cards of several runs, not one's
    return [_as_row(keys, tables[0])]


def _one_row(pairs: TextTable) -> TextTable:
    """A table of keys and values as one row under its keys."""
    return _as_row({row[0]: row[1] for _, row in pairs.rows}, pairs)


def _as_row(keys: dict[str, str], like: TextTable) -> TextTable:
    """Keys and their values as a table of one row, where `like` stands in the text."""
    return TextTable(like.line, list(keys)[:MAX_KEYS], [(like.line + 2, list(keys.values())[:MAX_KEYS])],
                     like.headings, like.kind)
