"""Units a table's own numbers prove, for the general reader (`importers.general_table`): a time and a rate that
state no unit (`p50`, `throughput`) are read when, in every row, rate x time / batch is 1 (the time in seconds) or
1000 (in milliseconds), the rate then per second: the writer computed one from the other (`throughput = batch /
(p50 / 1000)`), so the file itself says the units. The other unit-less times of the same table (`p95`, `p99`, `mean`
beside `p50`) are read in the same unit. Nothing is read on a guess: with fewer than two rows, or one row off by more
than 2 %, the columns stay unread and the table is offered to the mapping step as before."""

from __future__ import annotations

from functools import lru_cache

from importers.table_fields import Field, FieldError, label_field, measure_field, words_of
from importers.table_long import head_rows
from joulebench import units

_TIME_WORDS = {"latency", "time", "p50", "p90", "p95", "p99", "mean", "avg", "median", "average", "duration"}
_RATE_WORDS = {"throughput", "fps", "qps", "ips", "sps"}
_SCALES = ((1.0, "s"), (1000.0, "ms"))
NO_UNIT = "no unit in its name or cells"


def _numbers(rows: list[tuple[int, list[str]]], i: int) -> list[float] | None:
    out = []
    for _, row in rows:
        try:
            value = units.value_in(row[i], None) if i < len(row) else None
        except units.UnitError:
            return None
        if value is None or value <= 0:
            return None
        out.append(value)
    return out


def proven_units(header: list[str], rows: list[tuple[int, list[str]]], unread: list[int], batch: int | None
                 ) -> tuple[dict[int, tuple[Field, units.Unit]], str] | None:
    """({column: (field, unit)}, what proved it) for the unit-less time and rate columns `unread` whose product over
    the batch size (the column `batch`, else 1) is 1 or 1000 in every row; None when no pair is."""
    if len(rows) < 2:
        return None
    times = [i for i in unread if words_of(header[i]) & _TIME_WORDS]
    rates = [i for i in unread if words_of(header[i]) & _RATE_WORDS and not words_of(header[i]) & {"token", "tokens"}]
    sizes = _numbers(rows, batch) if batch is not None else [1.0] * len(rows)
    if not times or not rates or sizes is None:
        return None
    for r in rates:
        rate = _numbers(rows, r)
        for t in times:
            time = _numbers(rows, t)
            if rate is None or time is None:
                continue
            for scale, symbol in _SCALES:
                if all(abs(x * y / b - scale) <= 0.02 * scale for x, y, b in zip(rate, time, sizes, strict=True)):
                    found = _read(header, [r], "items/s") | _read(header, [i for i in times if _numbers(rows, i)],
                                                                   symbol)
                    said = (f"{header[r][:30]} x {header[t][:30]}" + (f" / {header[batch][:30]}" if batch is not None
                                                                      else "") + f" = {scale:g} in every row")
                    return (found, said) if r in found and t in found else None
    return None


def _read(header: list[str], columns: list[int], symbol: str) -> dict[int, tuple[Field, units.Unit]]:
    out: dict[int, tuple[Field, units.Unit]] = {}
    for i in columns:
        try:
            field, unit, _ = measure_field(f"{header[i]} ({symbol})")
        except FieldError:
            continue
        if field is not None and unit is not None:
            out[i] = (field, unit)
    return out


@lru_cache(maxsize=32)
def head_proves_units(head: str, delimiter: str) -> bool:
    """Whether the first lines of a CSV are a table whose unit-less time and rate columns the rows prove the units
    of (`proven_units`), so the general reader takes a table no header names a unit in (asked by more than one
    reader's sniff for one file: answered once)."""
    lines = head_rows(head, delimiter)
    if len(lines) < 3:
        return False
    header = lines[0]
    rows = [(n, r) for n, r in enumerate(lines[1:], start=2) if len(r) == len(header)]
    unread = [i for i, name in enumerate(header) if label_field(name) is None and units.header_unit(name)[1] is None]
    batch = next((i for i, name in enumerate(header) if (f := label_field(name)) is not None
                  and f.key == "batch_size"), None)
    return proven_units(header, rows, unread, batch) is not None
