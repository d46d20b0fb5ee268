"""Tables for a person: numbers to sensible significant figures, missing values as words.

`styled()` keeps the numbers as numbers (so a column still sorts numerically when its header is
clicked) and changes only how they are displayed: floats to three significant figures, missing
measurements as 'not measured', missing configuration fields as 'not stated', and never 'None';
times to the second.

Every table a page shows goes through it, so it is also the guard on what a table sends to the
browser: a text cell longer than MAX_CELL_CHARS is cut with an ellipsis (Run detail shows every
value whole), a table sends at most MAX_TABLE_ROWS rows, and one whose cells would still exceed
MAX_TABLE_BYTES keeps the rows that fit; either way it says how many it left out and where the rest
is (the page's downloads).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import polars as pl

from decision.text import NOT_MEASURED, TIME_FORMAT, sig

MAX_CELL_CHARS = 200  # a text cell in a table; the whole value is on Run detail (and in the downloads)
MAX_LINK_CHARS = 2_000  # a link column (values starting with / or http): never cut short of a URL's length
MAX_TABLE_BYTES = 4 * 1024 * 1024  # what one table may send to the browser, about
MAX_TABLE_ROWS = 1_000  # rows one table sends: more is not read on a screen, and 100,000 rows take seconds to send
# A styled table sends each cell twice (its value, and the string shown: the Styler's display values);
# besides its text, a cell takes about this much (Arrow's offsets, a number, its displayed digits).
_CELL_BYTES = 32


def bounded(frame: pl.DataFrame) -> tuple[pl.DataFrame, str | None]:
    """`frame` with long text cut to MAX_CELL_CHARS ('…' at the end), at most MAX_TABLE_ROWS rows and,
    when its cells would still take more than MAX_TABLE_BYTES, only the first rows that fit; with a note
    saying what was left out (None when nothing was)."""
    total = frame.height
    frame = frame.head(MAX_TABLE_ROWS)
    text_cols = [c for c, t in frame.schema.items() if t == pl.String]
    cuts = []
    for c in text_cols:
        values = frame[c].drop_nulls()
        link = values.len() > 0 and bool(values.str.contains(r"^(/|https?://)").all())
        limit = MAX_LINK_CHARS if link else MAX_CELL_CHARS
        if values.len() and (values.str.len_chars().max() or 0) > limit:  # type: ignore[operator]
            cuts.append(pl.when(pl.col(c).str.len_chars() > limit)
                        .then(pl.col(c).str.slice(0, limit - 1) + pl.lit("…")).otherwise(pl.col(c)).alias(c))
    if cuts:
        frame = frame.with_columns(cuts)
    if frame.height == 0:
        return frame, None
    rest = ("narrow the filters, or download the selection (where the page offers it) for every row; Run "
            "detail shows a run whole")
    row_bytes = pl.sum_horizontal([pl.col(c).str.len_bytes().fill_null(0) for c in text_cols]) if text_cols \
        else pl.lit(0)
    sizes = frame.select((2 * row_bytes + _CELL_BYTES * max(1, frame.width)).cum_sum().alias("b"))["b"]
    fits = int((sizes <= MAX_TABLE_BYTES).sum())
    if fits >= frame.height:
        if total > frame.height:
            return frame, f"Showing the first {frame.height:,} of {total:,} rows: {rest}."
        return frame, None
    fits = max(fits, 1)
    note = (f"Showing the first {fits:,} of {total:,} rows: the rest would make this table larger than "
            f"{MAX_TABLE_BYTES // 2**20} MB in the browser; {rest}.")
    return frame.head(fits), note


MAX_PICKER_OPTIONS = 1_000  # options one select box sends (each as its label): a run picker of 100,000 runs sent MBs


def picker_options(options: list[str], keep: str | None = None) -> tuple[list[str], str | None]:
    """At most MAX_PICKER_OPTIONS of `options` (the first ones, and `keep`, the one a link asks for, wherever it
    is), with a note saying how many were left out (None when none was)."""
    if len(options) <= MAX_PICKER_OPTIONS:
        return options, None
    offered = options[:MAX_PICKER_OPTIONS]
    if keep is not None and keep in options and keep not in offered:
        offered = [*offered, keep]
    return offered, (f"The list offers the first {MAX_PICKER_OPTIONS:,} of {len(options):,}: open any other from a "
                     "table's link (Compare's runs) or by its address.")


def styled(frame: pl.DataFrame, *, digits: int = 3, not_stated: Iterable[str] = ()) -> Any:
    """A pandas Styler of `frame` for st.dataframe (float columns: significant figures and
    'not measured'; integer columns: 'not stated' when missing; text: empty when missing), bounded
    (`bounded`: long text cut, at most about MAX_TABLE_BYTES; the note, if any, is its caption)."""
    frame, note = bounded(frame)
    text_cols = [c for c, t in frame.schema.items() if t == pl.String]
    times = [c for c, t in frame.schema.items() if isinstance(t, pl.Datetime)]
    pdf = frame.with_columns([pl.col(c).fill_null("") for c in text_cols]
                             + [pl.col(c).dt.strftime(TIME_FORMAT).fill_null("") for c in times]).to_pandas()
    floats = [c for c, t in frame.schema.items() if t.is_float()]
    ints = [c for c, t in frame.schema.items() if t.is_integer()]
    styler = pdf.style
    if floats:
        styler = styler.format(lambda v: sig(v, digits), subset=floats, na_rep=NOT_MEASURED)
    stated = set(not_stated)
    for col in ints:
        styler = styler.format(lambda v: f"{int(v)}", subset=[col], na_rep="not stated" if col in stated else "")
    if note:
        styler = styler.set_caption(note)
    return styler
