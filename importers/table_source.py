"""The file the general reader reads, as one table (`importers.general_table` reads its columns): a JSON document's
records (`importers.table_records`: JSON Lines, a list, an object wrapping a list, nested records) flattened with
their nested settings, a key/value table as the object its dotted keys flatten, long records pivoted; a CSV/TSV read
with its decimal marks, its pandas multi-row header and its metric/value/unit or statistics columns pivoted, a
transposed table turned; or a text's tables (Markdown, fixed-width) joined under their headings.
"""

from __future__ import annotations

from typing import Any

from importers.base import Conversion, check_run_count, read_csv
from importers.json_text import is_json, key_value_object, twice_encoded
from importers.table_document import cells_give_figure, figure_tables, has_figure, joined
from importers.table_identities import head_proves_units
from importers.table_long import (
    long_columns,
    multi_header,
    pivot,
    stat_columns,
    stats_long,
    transposed,
    transposed_head,
)
from importers.table_pairs import split_statistics
from importers.table_records import (
    MAX_KEYS,
    flatten,
    json_records,
    nested_ambiguity,
)
from importers.table_requests import listed_requests, names_request_times
from importers.table_text import side_by_side
from importers.table_units import data_row, decimal_marks, delimiter_of

Rows = list[tuple[int, list[str]]]
MAP_IT = "map its columns on the Upload page, or joulebench import --mapping RECIPE FILE"


def csv_like(head: str, delimiter: str) -> bool:
    """Whether the first line is a CSV/TSV header the wide or long reader takes (else a text's tables are read)."""
    cells = [c.strip().strip('"') for c in head.split("\n", 1)[0].split(delimiter)]
    if len(cells) >= 2 and (long_columns(cells) is not None or stat_columns(cells) is not None or data_row(cells)
                            or has_figure(cells) or names_request_times(cells)):
        return True
    return transposed_head(head, delimiter) or head_proves_units(head, delimiter) or cells_give_figure(head,
                                                                                                      delimiter)


def file_table(conv: Conversion) -> tuple[list[str], Rows, str, tuple[str, dict[str, Any]] | None]:
    """The file as one table: its header, its rows (line number, cells), what a row is called in messages, and
    for an object that lists one run's requests beside its figures (`listed_requests`), the list's key and the
    object's own members."""
    source = conv.source
    listed = None
    kv = None if is_json(source) else key_value_object(source)
    if is_json(source) or kv is not None:
        said: list[str] = [] if kv is None else ["a table of keys and values: read as the object its dotted keys "
                                                 "flatten"]
        records = json_records(source, said, kv)
        if not records:
            doc = kv or (source.json if source.json is not None else twice_encoded(source.text))
            why = nested_ambiguity(doc) if isinstance(doc, dict) else None
            if why is not None:
                raise conv.fail("(whole file)", f"a JSON object nesting records: {why}; {MAP_IT}")
            raise conv.fail("(whole file)", "neither JSON Lines nor a list of JSON records")
        for note in said:
            conv.warn(note)
        if kv is None and isinstance(source.json, dict):
            listed = listed_requests(source.json)
        check_run_count(conv, len(records), "its records")
        flat = [flatten(r) for r in records]
        header = list(dict.fromkeys(k for r in flat for k in r))[:MAX_KEYS]
        rows = [(i + 1, ["" if r.get(k) is None else str(r.get(k)) for k in header]) for i, r in enumerate(flat)]
        where = "record"
        if (long := long_columns(header)) is not None:  # records of one figure each: metric_name, _value, _unit
            header, rows = pivot(conv, header, rows, long)
            where = "records of"
    else:
        delimiter = delimiter_of(source.head)
        tables = side_by_side(figure_tables(source.text or "")) if not csv_like(source.head, delimiter) \
            else []
        text = source.text or ""
        header, rows = joined(conv, tables, text) if tables else read_csv(conv, text, delimiter=delimiter)
        if data_row(header):
            shown = ", ".join(repr(c[:30]) for c in header[:4])
            raise conv.fail("line 1", f"the first row is data, not a header ({shown}, ...: values with units or a "
                            "date-time): the table has no header row, so its columns are not named; write the "
                            f"header as the first line (nvidia-smi: --format=csv without noheader), or {MAP_IT}")
        header, rows = multi_header(conv, header, decimal_marks(rows, delimiter))  # '1,5'; '23,197'; pandas'
        header, rows = split_statistics(conv, header, rows)  # aggregate; 'TTFT p50 / p90 (ms)' over '199 / 221'
        where = "line"
        long = long_columns(header)
        stats = stat_columns(header) if long is None else None
        if stats is not None:
            header, rows, long = stats_long(conv, header, rows, stats)
        elif long is None and (flipped := transposed(header, rows)) is not None:
            header, rows, said_flipped = flipped
            conv.warn(said_flipped)
        if long is not None:
            header, rows = pivot(conv, header, rows, long)
            where = "rows of"
    return header, rows, where, listed
