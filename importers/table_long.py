"""Long tables for the general reader (`importers.general_table`) and the mapping step: one figure a row, named in a
metric column (`Type, Model, GPU, Run, Metric, Value[, Unit]`), pivoted to a column per metric; and tables that give
a metric column's statistics as columns (`Metric | Median | P95`), written long first, one figure and statistic a
row."""

from __future__ import annotations

import csv
import io
import re

from importers.base import MAX_CSV_CELLS, Conversion
from importers.table_fields import FieldError, measure_field, plain
from importers.table_labels import label_field
from importers.table_rows import MISSING_CELLS
from joulebench import units

_METRIC_COLS = ("metric", "metric_name", "measure", "measurement", "metrica", "métrica", "metrik", "kpi", "key",
                "name", "variable", "statistic", "stat", "axis", "item", "parameter", "property", "indicator",
                "quantity")
_VALUE_COLS = ("value", "val", "valor", "wert", "valeur", "result", "measurement_value", "amount", "metric_value")
_UNIT_COLS = ("unit", "units", "unidad", "einheit", "unité", "unite", "metric_unit")
_COUNT_COLS = ("n", "n_valid", "count", "n_samples", "samples", "repeats", "n_runs")  # beside statistics: over how many
# a note written beside each figure ('22 prompt tokens; 128 output tokens'), or where it came from: no run's identity
_NOTE_COLS = ("note", "notes", "comment", "comments", "remark", "remarks", "telemetry_source", "metric_source",
              "source_of_metric")


def long_columns(header: list[str]) -> tuple[int, int, int | None] | None:
    """(metric, value, unit or None) column indices of a long table; None when it is not one."""
    low = [plain(h.strip()).replace(" ", "_") for h in header]  # 'Metric Name' as 'metric_name'
    metric = next((low.index(c) for c in _METRIC_COLS if c in low), None)
    value = next((low.index(c) for c in _VALUE_COLS if c in low), None)
    unit = next((low.index(c) for c in _UNIT_COLS if c in low), None)
    if metric is None or value is None or metric == value:
        return None
    return metric, value, unit


# the statistics a table gives as columns beside a metric column ('Metric | Median | P95 | Mean | Min/Max')
_STAT_NAMES = {"median", "med", "mean", "avg", "average", "p50", "p90", "p95", "p99", "min", "max", "min/max", "std",
               "stdev", "stddev", "sd"}


def stat_columns(header: list[str]) -> tuple[int, list[int]] | None:
    """(the metric column, the statistic columns) of a table whose figures are named in a metric column and given as
    statistics in columns ('prompt tok/s' under Metric, 84.74 under Median); None for any other table."""
    low = [plain(h.strip()) for h in header]
    metric = next((low.index(c) for c in _METRIC_COLS if c in low), None)
    stats = [i for i, h in enumerate(low) if h in _STAT_NAMES or re.fullmatch(r"p\d{1,2}(?:\.\d{1,2})?", h)]
    return (metric, stats) if metric is not None and stats else None


UNIT_AT_END = re.compile(r"(?P<name>.+?)\s*(?P<unit>[(\[][^()\[\]]{1,30}[)\]])\s*")  # 'TTFT (ms)': the bracket


def with_stat(name: str, stat: str) -> str:
    """The figure's name with its statistic before the unit it ends in: 'Time to First Token min (ms)', never
    '... (ms) min', whose last word reads as minutes."""
    m = UNIT_AT_END.fullmatch(name)
    if m:
        return f"{m.group('name')} {stat} {m.group('unit')}"
    return f"{stat} {name}" if stat in ("min", "max") else f"{name} {stat}"  # 'min ttft_ms': never 'ttft_ms min'
    # (its last word a unit, minutes)


def stats_long(conv: Conversion, header: list[str], rows: list[tuple[int, list[str]]], stats: tuple[int, list[int]]
                ) -> tuple[list[str], list[tuple[int, list[str]]], tuple[int, int, int | None]]:
    """The table written long, one figure a row named by its metric and statistic ('prompt tok/s median'), so that
    each statistic is read as the field its name gives (a rate's median or mean, never its percentiles as a
    latency). A setup named on the first of its rows only (a console table's 'Test' column) holds for the rows below
    it."""
    metric, columns = stats
    low = [plain(h.strip()).replace(" ", "_") for h in header]
    unit = next((low.index(c) for c in _UNIT_COLS if c in low), None)  # 'metric, unit, median, p90': each row's unit
    counts = [i for i, h in enumerate(low) if h in _COUNT_COLS]  # how many repeats each statistic is over
    keys = [i for i in range(len(header)) if i != metric and i not in columns and i != unit and i not in counts]
    long: list[tuple[int, list[str]]] = []
    above = ["" for _ in keys]
    for n, row in rows:
        cells = [row[i].strip() if i < len(row) else "" for i in keys]
        if not any(cells) and any(above):  # the setup of the row above, written once
            cells = list(above)
        above = cells
        name = row[metric].strip() if metric < len(row) else ""
        for i in columns:
            if name and i < len(row) and row[i].strip().lower() not in MISSING_CELLS:  # 'N/A': no statistic of it
                given = [row[unit].strip() if unit < len(row) else ""] if unit is not None else []
                long.append((n, [*cells, with_stat(name, header[i].strip().lower()), row[i].strip(), *given]))
    conv.warn(f"{header[metric][:40]} names the figures and {', '.join(header[i][:20] for i in columns)} give their "
              "statistics: read as one column per figure and statistic"
              + (f" ({', '.join(header[i][:20] for i in counts)}: the repeats each is over, not read)"
                 if counts else ""))
    names = [header[i] for i in keys] + ["metric", "value"] + (["unit"] if unit is not None else [])
    return names, long, (len(keys), len(keys) + 1, len(keys) + 2 if unit is not None else None)


def pivot(conv: Conversion, header: list[str], rows: list[tuple[int, list[str]]], long: tuple[int, int, int | None]
           ) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """One row per combination of the other columns (Type, Model, GPU, Run), a column per metric (its unit
    in brackets when a unit column gives it). The same metric twice for one combination is refused."""
    m_i, v_i, u_i = long
    keys = [i for i in range(len(header)) if i not in (m_i, v_i, u_i)]
    notes = [i for i in keys if plain(header[i].strip()).replace(" ", "_") in _NOTE_COLS]
    if notes:  # a note beside each figure would make each figure a run of its own
        keys = [i for i in keys if i not in notes]
        conv.warn(f"{', '.join(header[i][:30] for i in notes)}: a note beside each figure, not read (no run's "
                  "identity)")
    groups: dict[tuple[str, ...], dict[str, str]] = {}
    first_line: dict[tuple[str, ...], int] = {}
    names: dict[str, None] = {}
    cells = repeated = 0
    for lineno, row in rows:
        def at(i: int, row: list[str] = row) -> str:
            return row[i].strip() if i is not None and i < len(row) else ""

        key = tuple(at(i) for i in keys)
        metric = at(m_i)
        if not metric:
            continue
        unit = at(u_i) if u_i is not None else ""
        name = metric  # the unit travels with its value ('0.0325 Wh'): a metric may change unit between runs
        group = groups.setdefault(key, {})
        first_line.setdefault(key, lineno)
        value = f"{at(v_i)} {unit}" if unit and unit not in ("-", "none") and at(v_i) else at(v_i)
        if name in group and group[name] == value:  # a log appended again with what it held: one measurement
            repeated += 1
            continue
        if name in group:
            raise conv.fail(f"line {lineno}: {header[m_i]}", f"{metric[:60]!r} given twice for "
                            f"{', '.join(k for k in key if k)[:120] or 'the same run'} with other values; one value "
                            "per metric and run")
        group[name] = value
        names[name] = None
        cells += 1
        if len(groups) * len(names) > MAX_CSV_CELLS:
            raise conv.fail(f"line {lineno}", "the pivoted table would be too large; split the file")
    if repeated:
        conv.warn(f"{repeated} row(s) repeat an earlier row's metric, run and value exactly (the log was appended "
                  "again with what it held): read once")
    if len(groups) > 1 or keys:
        conv.warn(f"long table pivoted: {len(groups)} run(s) by {', '.join(header[i] for i in keys) or 'nothing'}, "
                  f"{len(names)} metric(s)")
    new_header = [header[i] for i in keys] + list(names)
    new_rows = [(first_line[k], list(k) + [g.get(n, "") for n in names]) for k, g in groups.items()]
    return new_header, new_rows


_SETUP = re.compile(r"^\s*(?P<n>\d{1,9}(?:\.\d+)?)\s*(?P<word>[^\d\s].{0,40}?)\s*$|^\s*(?P<word2>[^\d\s].{0,40}?)"
                    r"\s*[=:]?\s*(?P<n2>\d{1,9}(?:\.\d+)?)\s*$")


def _figure_name(name: str, cells: list[str] | None = None) -> bool:
    """Whether a name (a row's, with the units its `cells` carry: 'Throughput' over '182,729 tok/s') is a figure."""
    try:
        return measure_field(name, units.unit_of_cells([c.strip().strip("*_`") for c in cells or []]))[0] is not None
    except FieldError:
        return True



_COMPARISON = {"speedup", "ratio", "improvement", "gain", "change", "diff", "difference", "delta", "vs", "reduction",
               "slowdown", "relative"}


def transposed(header: list[str], rows: list[tuple[int, list[str]]]
               ) -> tuple[list[str], list[tuple[int, list[str]]], str] | None:
    """A table turned on its side: the figures named down its metric column, a setup per column ('Metric, 1
    concurrency, 2 concurrency' over 'Output token throughput (tok/s), 115.31, 199.70'), as (the header, the rows,
    what was done) of the table with a row per setup; None for any other table. Setups named by a number and one
    word ('1 concurrency', 'batch 8') give that word's column; others are kept as the setup's name. Rows that mark a
    section ('[[Time to First Token]]') or give no value are left out."""
    if len(header) < 3 or stat_columns(header) is not None or plain(header[0].strip()) not in (*_METRIC_COLS, "") and (
            plain(header[0].strip()).rsplit(" ", 1)[-1] not in _METRIC_COLS):  # 'Test metric' ('測試指標') too
        return None
    if any(_figure_name(h) or label_field(h) is not None for h in header[1:]):
        return None  # a column of figures, or of a setting ('Batch Size' beside 'ND H200 V5'): no setup's column
    named = [(n, r) for n, r in rows if r and r[0].strip() and any(c.strip() for c in r[1:len(header)])]
    compared = [h.strip() for h in header[1:] if set(re.split(r"[^a-z]+", plain(h))) & _COMPARISON
                or h.strip() in ("Δ", "δ", "±", "+/-")]
    kept = [j for j, h in enumerate(header) if j and h.strip() not in compared]  # a 'Δ' column's '+0.27%' is no unit
    if not any(2 * sum(bool(re.search(r"\d", r[j])) for _, r in named if j < len(r)) >= len(named) for j in kept):
        return None  # no setup's column of numbers: a glossary ('Metric | Unit | Meaning': 'TTFT | ms | ...')
    figures = [(n, r) for n, r in named if _figure_name(r[0].strip(), [r[j] for j in kept if j < len(r)])]
    if len(figures) < 2:
        return None
    setups = [_SETUP.match(h) for h in header[1:]]
    words = {plain((m.group("word") or m.group("word2")).strip()) for m in setups if m is not None}
    by_number = all(m is not None for m, h in zip(setups, header[1:], strict=True) if h.strip() not in compared
                    ) and len(words) == 1 and label_field(next(iter(words))) is not None  # '1 concurrency'; a word
    # no label reads ('580 驅動程式': a driver) keeps the whole title as the setup's name
    first = words.pop() if by_number else "setup"
    if (word_field := label_field(first)) is not None and word_field.key == "device":
        first = "gpu_count"  # '2 GPU', '8 GPU': how many
    metrics = list(dict.fromkeys(r[0].strip() for _, r in named))
    at = {name: r for _, r in reversed(named) for name in [r[0].strip()]}  # the first row of each name
    out = []
    for j, title in enumerate(header[1:], start=1):
        if title.strip() in compared:  # 'Speedup': '×4.60', a ratio of the setups beside it, no setup of its own
            continue
        m = setups[j - 1]
        setup = (m.group("n") or m.group("n2")) if by_number and m is not None else title.strip()
        out.append((named[0][0], [setup, *(at[name][j].strip() if j < len(at[name]) else "" for name in metrics)]))
    left = f" ({', '.join(compared)[:60]}: a comparison of the setups, left out)" if compared else ""
    return [first, *metrics], out, (f"a table on its side: {len(metrics)} figures named down its first column, a "
                                   f"column per setup ({', '.join(h.strip() for h in header[1:4])}, ...): read as a "
                                   f"row per setup{left}")


def head_rows(head: str, delimiter: str) -> list[list[str]]:
    """The non-blank rows of the first 60 lines of a CSV head, cells stripped; [] where they are no CSV."""
    try:
        return [[c.strip() for c in r] for r in csv.reader(io.StringIO("\n".join(head.splitlines()[:60])),
                                                            delimiter=delimiter) if any(c.strip() for c in r)]
    except csv.Error:
        return []


def transposed_head(head: str, delimiter: str) -> bool:
    """Whether the first lines of a CSV are a table on its side (`transposed`)."""
    lines = head_rows(head, delimiter)
    if len(lines) < 3 or len(lines[0]) < 3:
        return False
    header = list(lines[0])
    while header and not header[-1]:
        header.pop()
    return transposed(header, list(enumerate(lines[1:], start=2))) is not None


_AGG_NAMES = _STAT_NAMES | {"count", "sum", "first", "last", "var", "sem", "size", "nunique"}


def multi_header(conv: Conversion, header: list[str], rows: list[tuple[int, list[str]]]
                 ) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """pandas' `groupby(...).agg([...]).to_csv()`: a header of figure names over a row of statistics
    (`,throughput_tok_s,throughput_tok_s` / `,mean,std`), then a row naming the index (`batch_size,,`): one header
    of 'name_statistic' columns ('throughput_tok_s_mean'), the index its first column. Any other table as it is."""
    if len(rows) < 2 or header[:1] != [""] or rows[0][1][:1] != [""]:
        return header, rows
    stats = [plain(c.strip()) for c in rows[0][1][1:]]
    if not stats or not all(s in _AGG_NAMES for s in stats) or len(rows[0][1]) != len(header):
        return header, rows
    named = rows[1][1] if len(rows) > 2 else []
    index = named[0].strip() if named and named[0].strip() and not any(c.strip() for c in named[1:]) else ""
    out = [index or "index", *(f"{name.strip()}_{stat}" for name, stat in zip(header[1:], stats, strict=True))]
    conv.warn(f"a header of {len(header) - 1} figure columns over a row of their statistics (pandas' aggregate "
              f"table) read as one: {', '.join(out[1:4])}{', ...' if len(out) > 4 else ''}")
    return out, rows[2 if index else 1:]
