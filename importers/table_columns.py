"""JSON tables written column by column: each figure an object of one value per setup, as pandas' `to_dict()` writes
a frame and as scripts keep results (`"results": {"ms_per_iter": {"flex": 10.5, "sdpa": 4.4}, "tokens_per_s":
{"flex": 390618, "sdpa": 928877}}`). Turned into one record per setup (`setup` its name), so the general reader
reads them as it reads rows."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

SETUP_KEY = "setup"  # the record's name: the key each column gives its value under
MAX_SETUPS = 1_000
_MIN_FIGURES = 2  # a single object of numbers is one record's figures ('{"p50": 1, "p99": 2}'), not a column
# keys naming a statistic: a figure's distribution ('{"p50": 1, "p99": 2}'), never a setup's name
_STATISTIC = re.compile(r"(?i)p\d{1,3}(?:\.\d)?|mean|avg|average|median|min|max|std|stdev|stddev|sum|count|total|n")


def _column(value: Any) -> bool:
    return isinstance(value, dict) and 2 <= len(value) <= MAX_SETUPS and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) or v is None for v in value.values())


def column_records(doc: dict[str, Any], is_figure: Callable[[str], bool]) -> tuple[str, list[dict[str, Any]]] | None:
    """(where the columns are, one record per setup) of the object or one of its members holding two or more figure
    columns over the same setups; None for any other object. The setups' names must not be figures themselves
    (then the object is one record's nested figures, read elsewhere)."""
    for where, node in [("(top)", doc), *((str(k), v) for k, v in list(doc.items())[:400] if isinstance(v, dict))]:
        columns = {str(k): v for k, v in node.items() if _column(v) and is_figure(str(k)[:100])}
        if len(columns) < _MIN_FIGURES:
            continue
        setups = list(next(iter(columns.values())))
        if any(list(v) != setups for v in columns.values()) or any(
                is_figure(str(s)[:100]) or _STATISTIC.fullmatch(str(s)) for s in setups):
            continue
        return where, [{SETUP_KEY: str(s)[:200], **{name: col[s] for name, col in columns.items()}} for s in setups]
    return None
