"""Units a table's own numbers prove, for the general reader (`importers.general_table`): a time and a rate that
state no unit (`p50`, `throughput`) are read when, in every row, rate x time / batch is 1 (the time in seconds) or
1000 (in milliseconds), the rate then per second: the writer computed one from the other (`throughput = batch /
(p50 / 1000)`), so the file itself says the units. The other unit-less times of the same table (`p95`, `p99`, `mean`
beside `p50`) are read in the same unit.

A count and a time prove the time's unit against a rate whose unit is stated: `total_tokens / total_time` equal to
`tokens_per_second` in every row puts `total_time` in seconds. A proven time proves the times that add up to it
(`preprocess_time + generation_time = total_time`), and a unit-less speed that is a count over a proven time
(`generation_speed = response_tokens / generation_time`) is that count per second.

Nothing is read on a guess: every row must agree, within 2 % for rate x time and 0.5 % for the identities of counts
(a single record, a JSON summary, is proven by counts only); else the columns stay unread and the table is offered
to the mapping step as before."""

from __future__ import annotations

from functools import lru_cache

from importers.table_fields import Field, FieldError, measure_field, words_of
from importers.table_labels import label_field
from importers.table_long import head_rows
from joulebench import units

_TIME_WORDS = {"latency", "time", "p50", "p90", "p95", "p99", "mean", "avg", "median", "average", "duration"}
_TOKEN_WORDS = {"tokens", "token", "tok", "toks"}
_ITEM_WORDS = {"requests", "request", "reqs", "images", "samples", "frames", "queries", "prompts", "items"}
_SPEED_WORDS = {"speed", "tps", "rate", "throughput", "fps", "qps", "velocidad"}
_SPAN_WORDS = {"time", "duration", "elapsed", "took", "runtime", "wall", "latency", "seconds", "secs"}
_PROMPT_WORDS = {"prompt", "input", "prefill", "preprocess", "context"}
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
    if not rows:
        return None
    if len(rows) < 2:
        return _counted(header, rows, unread)
    times = [i for i in unread if words_of(header[i]) & _TIME_WORDS]
    rates = [i for i in unread if words_of(header[i]) & _RATE_WORDS and not words_of(header[i]) & {"token", "tokens"}]
    rates += [i for i in range(len(header)) if i not in unread and (u := units.header_unit(header[i])[1]) is not None
              and u.kind == "item_rate" and u.factor == 1.0]  # 'img/s' beside a unit-less 'time': proves the time
    sizes = _numbers(rows, batch) if batch is not None else [1.0] * len(rows)
    if not times or not rates or sizes is None:
        return _counted(header, rows, unread)
    for r in rates:
        rate = _numbers(rows, r)
        for t in times:
            time = _numbers(rows, t)
            if rate is None or time is None:
                continue
            for scale, symbol in _SCALES:
                if all(abs(x * y / b - scale) <= 0.02 * scale for x, y, b in zip(rate, time, sizes, strict=True)):
                    found = _read(header, [r], "items/s") | _read(header, [i for i in times if _numbers(rows, i)],
                                                                   symbol, per_batch=True)
                    said = (f"{header[r][:30]} x {header[t][:30]}" + (f" / {header[batch][:30]}" if batch is not None
                                                                      else "") + f" = {scale:g} in every row")
                    return (found, said) if (r in found or r not in unread) and t in found else None
    return _counted(header, rows, unread)


def _agree(xs: list[float], ys: list[float]) -> bool:
    """Whether two columns of figures are one figure, row by row, within 0.5 % (a figure computed from the others,
    printed rounded; a total of prompt and output tokens over the decode time alone is 1 % or more off)."""
    tolerance = 0.005
    return all(abs(x - y) <= tolerance * abs(y) for x, y in zip(xs, ys, strict=True))


def _counted(header: list[str], rows: list[tuple[int, list[str]]], unread: list[int]
             ) -> tuple[dict[int, tuple[Field, units.Unit]], str] | None:
    """The units of unit-less times and speeds that counts prove (see the module's doc); None when none is."""
    def words(i: int) -> set[str]:
        return words_of(header[i])

    def kind_of(i: int) -> str | None:  # 'tokens' or 'items': what a count or a rate counts
        return "tokens" if words(i) & _TOKEN_WORDS else "items" if words(i) & _ITEM_WORDS else None

    values = {i: v for i in range(len(header)) if (v := _numbers(rows, i)) is not None}
    stated = {i: u for i in values if (u := units.header_unit(header[i])[1]) is not None}
    counts = [i for i in values if kind_of(i) and not words(i) & (_SPAN_WORDS | _SPEED_WORDS | {"per", "s"})
              and stated.get(i, units.UNITS["tokens"]) == units.UNITS["tokens"]]
    spans = [i for i in unread if i in values and words(i) & _SPAN_WORDS and not words(i) & _SPEED_WORDS]
    rates = {i: u for i, u in stated.items() if u.kind in ("token_rate", "item_rate")}
    seconds: dict[int, float] = {}  # a time column -> the factor that puts it in seconds
    said: list[str] = []
    for t in spans:
        for c in counts:
            for r, unit in rates.items():
                if kind_of(c) != ("tokens" if unit.kind == "token_rate" else "items") or t in seconds:
                    continue
                for scale in (1.0, 1e-3):
                    if _agree([n / (x * scale) for n, x in zip(values[c], values[t], strict=True)],
                              [v * unit.factor for v in values[r]]):
                        seconds[t] = scale
                        said.append(f"{header[c][:30]} / {header[t][:30]} = {header[r][:30]}")
    for total in list(seconds):
        parts = [i for i in spans if i not in seconds]
        for a in parts:
            for b in parts:
                if a < b and _agree([x + y for x, y in zip(values[a], values[b], strict=True)], values[total]):
                    seconds[a] = seconds[b] = seconds[total]
                    said.append(f"{header[a][:30]} + {header[b][:30]} = {header[total][:30]}")
    speeds: dict[int, tuple[str, bool]] = {}  # a unit-less speed -> (its unit, whether it counts prompt tokens)
    for s in (i for i in unread if i in values and words(i) & _SPEED_WORDS and i not in seconds):
        for c in counts:
            for t, scale in seconds.items():
                if s not in speeds and _agree(values[s], [n / (x * scale) for n, x in zip(values[c], values[t],
                                                                                            strict=True)]):
                    speeds[s] = ("tokens/s" if kind_of(c) == "tokens" else "items/s", bool(words(c) & _PROMPT_WORDS))
                    said.append(f"{header[s][:30]} = {header[c][:30]} / {header[t][:30]}")
    found = _read(header, list(seconds), "s", scales=seconds)
    for s, (symbol, prompt) in speeds.items():
        found |= _read(header, [s], symbol, prefix="prompt " if prompt and symbol == "tokens/s" else "")
    return (found, "; ".join(said)) if found else None


def _read(header: list[str], columns: list[int], symbol: str, scales: dict[int, float] | None = None,
          prefix: str = "", per_batch: bool = False) -> dict[int, tuple[Field, units.Unit]]:
    """The fields of columns whose unit is proven; `per_batch`: times the rate is the batch over, each a batch's
    latency (a bare 'time' of 1457 ms is no run's duration)."""
    out: dict[int, tuple[Field, units.Unit]] = {}
    for i in columns:
        written = "ms" if scales is not None and scales[i] != 1.0 else symbol
        latency = per_batch and not words_of(header[i]) & (_TIME_WORDS - {"time", "duration"})
        try:
            field, unit, _ = measure_field(f"{prefix}{header[i]}{' latency' if latency else ''} ({written})")
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
