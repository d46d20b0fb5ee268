"""Tables for a person: numbers to sensible significant figures, missing values as words.

`styled()` keeps the numbers as numbers (so a column still sorts numerically when its header is
clicked) and changes only how they are displayed: floats to three significant figures, missing
measurements as 'not measured', missing configuration fields as 'not stated', and never 'None';
times to the second.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import polars as pl

from explorer.text import NOT_MEASURED, TIME_FORMAT, sig


def styled(frame: pl.DataFrame, *, digits: int = 3, not_stated: Iterable[str] = ()) -> Any:
    """A pandas Styler of `frame` for st.dataframe (float columns: significant figures and
    'not measured'; integer columns: 'not stated' when missing; text: empty when missing)."""
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
    return styler
