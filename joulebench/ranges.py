"""One set of ranges for every value a person types: the result schema's physical ranges.

The importers validate files against `result_schema_v1.json`; every edit path (Devices, exchange
rates, `joulebench label`, the Upload review, Run detail) checks a typed value here, so a value
the schema would refuse in a file is refused in a form too, with the field and the range named.

    check("config", "batch_size", "1000000000000", label="batch size")
        -> RangeError("batch size: 1,000,000,000,000 is above the maximum 1,000,000,000 ...")
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from joulebench.errors import JouleBenchError
from joulebench.resultfile import FREE_TEXT_FIELDS, MAX_RUNS_PER_FILE, schema
from joulebench.text import NAME_CHARS, TEXT_CHARS, text_problem


class RangeError(JouleBenchError, ValueError):
    """A typed value outside its field's range or not a number; the message names the field and
    the range. Edit paths collect these into InvalidEditError or LabelError."""

    exit_code = 2
    title = "Value out of range"


@dataclass(frozen=True)
class Range:
    """A field's physical range: `low` exclusive when `low_open`; `integer` when only whole numbers
    are allowed."""

    low: float | None
    high: float | None
    low_open: bool = False
    integer: bool = False
    least: float | None = None  # with an open low: the smallest value that is not a typo (1e-320 is "above 0")

    def describe(self) -> str:
        kind = "a whole number" if self.integer else "a number"
        if self.low is not None and self.high is not None:
            op = "above" if self.low_open else "from"
            to = "up to" if self.low_open else "to"
            least = f" (at least {_num(self.least)})" if self.least is not None else ""
            return f"{kind} {op} {_num(self.low)} {to} {_num(self.high)}{least}"
        if self.low is not None:
            return f"{kind} {'above' if self.low_open else 'of at least'} {_num(self.low)}"
        if self.high is not None:
            return f"{kind} of at most {_num(self.high)}"
        return kind

    def contains(self, value: float) -> bool:
        if not math.isfinite(value):
            return False
        if self.integer and value != int(value):
            return False
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        if self.least is not None and value < self.least:
            return False
        return not (self.high is not None and value > self.high)


def _num(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.6g}"


# Values a person edits that the result schema does not hold: 1 unit of one currency in another
# spans about 1e-6 (a strong currency in a weak one's inverse) to 1e6 (the reverse); a rate below
# that (1e-320 is "above 0") is a typo, not a currency.
_EXTRA = {
    ("exchange_rate", "rate"): Range(0.0, 1_000_000.0, low_open=True, least=1e-6),
}


def field_range(definition: str, field: str) -> Range:
    """The range of `field` in the schema's `$defs[definition]` (or one of the few edited values
    the schema does not hold); KeyError for a field without one."""
    if (definition, field) in _EXTRA:
        return _EXTRA[(definition, field)]
    spec: dict[str, Any] = schema()["$defs"][definition]["properties"][field]
    kinds = spec.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if "exclusiveMinimum" in spec:
        low, low_open = float(spec["exclusiveMinimum"]), True
    elif "minimum" in spec:
        low, low_open = float(spec["minimum"]), False
    else:
        low, low_open = None, False
    high = float(spec["maximum"]) if "maximum" in spec else None
    if low is None and high is None:
        raise KeyError(f"{definition}.{field} has no range in the schema")
    return Range(low, high, low_open, integer="integer" in kinds and "number" not in kinds)


_NUMBER = re.compile(r"[+-]?(\d[\d,_]*(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def parse_number(raw: Any, label: str) -> float | None:
    """A number from what a person typed: None for an empty entry; RangeError for text that is not
    a number (never a silent blank), inf or NaN."""
    if raw is None:
        return None
    if isinstance(raw, bool):
        raise RangeError(f"{label}: {raw!r} is not a number")
    if isinstance(raw, (int, float)):
        value = float(raw)
    else:
        text = str(raw).strip()
        if not text:
            return None
        if len(text) > 64 or not _NUMBER.fullmatch(text):
            shown = text if len(text) <= 40 else text[:40] + "..."
            raise RangeError(f"{label}: {shown!r} is not a number; type digits, e.g. 250 or 0.3")
        value = float(text.replace(",", "").replace("_", ""))
    if math.isnan(value):
        return None if not isinstance(raw, str) else _refuse_nan(label)
    return value


def _refuse_nan(label: str) -> float:
    raise RangeError(f"{label}: 'nan' is not a number; leave it empty for unknown")


def check(definition: str, field: str, raw: Any, *, label: str | None = None) -> float | int | None:
    """The typed value of `definition.field` checked against its range: None when empty, an int for
    whole-number fields; RangeError naming `label` (default: the field) and the range otherwise."""
    rng = field_range(definition, field)
    name = label or field.replace("_", " ")
    value = parse_number(raw, name)
    if value is None:
        return None
    if not rng.contains(value):
        shown = _num(value) if math.isfinite(value) and abs(value) < 1e18 else f"{value:g}"
        raise RangeError(f"{name}: {shown} is outside its range; enter {rng.describe()}")
    return int(value) if rng.integer else value


def check_date(raw: Any, label: str, *, latest: date | None = None) -> str | None:
    """An ISO date (YYYY-MM-DD, or YYYY-MM, or YYYY) from what a person typed: None when empty;
    RangeError for anything else ("tomorrow-ish") or a date after `latest` (default: none)."""
    if raw is None:
        return None
    text = str(raw).strip()
    if not text:
        return None
    m = re.fullmatch(r"(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?", text)
    if m is None or (m.group(3) and not m.group(2)):
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise RangeError(f"{label}: {shown!r} is not a date; write it as YYYY-MM-DD, e.g. 2024-03-01")
    year, month, day = int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1)
    try:
        parsed = date(year, month, day)
    except ValueError as e:
        raise RangeError(f"{label}: {text!r} is not a calendar date ({e}); write it as YYYY-MM-DD") from e
    if parsed.year < 1990:
        raise RangeError(f"{label}: {text} is before 1990; write the year of the price or rate, e.g. 2024-03-01")
    if latest is not None and parsed > latest:
        raise RangeError(f"{label}: {text} is in the future (after {latest.isoformat()}); give the date it held")
    return text


def check_text(raw: Any, label: str, *, max_chars: int = NAME_CHARS, multiline: bool = False) -> str | None:
    """Text a person typed, stripped: None when empty; RangeError naming `label` when it is longer
    than `max_chars` or holds control characters (a name is one line; `multiline` text such as
    notes may hold line breaks and tabs)."""
    if raw is None:
        return None
    text = str(raw).strip()
    if not text:
        return None
    problem = text_problem(text, max_chars=max_chars, multiline=multiline)
    if problem is not None:
        raise RangeError(f"{label}: {problem}")
    return text


def check_text_field(definition: str, field: str, raw: Any, *, label: str | None = None) -> str | None:
    """Text for `definition.field` checked with the result schema's bound for it (its maxLength;
    one line unless the field is free text: resultfile.FREE_TEXT_FIELDS), as a file's value is: for
    edit paths (the Devices page's text columns)."""
    spec: dict[str, Any] = schema()["$defs"][definition]["properties"][field]
    return check_text(raw, label or field.replace("_", " "), max_chars=int(spec.get("maxLength", NAME_CHARS)),
                      multiline=field in FREE_TEXT_FIELDS)


# --- `joulebench run`'s options (the CLI and the New run page, through `run --check`) -------------
# Each range is wider than any real run needs and narrow enough that nothing is allocated, waited
# for or written that no machine could finish; the message says why.
MAX_WINDOW_S = 86_400.0  # a measured window, or a serving run's expected arrivals: a day
MAX_RUNS_PER_SWEEP = MAX_RUNS_PER_FILE  # one sweep writes one result file, which must import


@dataclass(frozen=True)
class OptionRange:
    """An option's range, and why a value below or above it is refused (None: nothing to add)."""

    range: Range
    why_low: str | None = None
    why_high: str | None = None


_A_DAY = "a window longer than a day is a typo"
RUN_OPTIONS: dict[str, OptionRange] = {
    "--batch-size": OptionRange(Range(1, 65_536, integer=True), None,
                                "no device holds a larger batch of any workload; it would only run out of memory"),
    "--grad-accum": OptionRange(Range(1, 1_024, integer=True), None, "more micro-batches per step change nothing "
                                                                      "measured"),
    "--seq-len": OptionRange(Range(1, 1_048_576, integer=True), None, "no model takes a longer sequence"),
    "--image-size": OptionRange(Range(1, 16_384, integer=True), None, "no image model takes a larger side"),
    "--max-new-tokens": OptionRange(Range(1, 131_072, integer=True), None,
                                    "no model generates a longer output"),
    "--request-rate": OptionRange(Range(0.001, 1_000_000.0),
                                  "requests per second: at a lower rate the first request may not come for hours",
                                  "requests per second: no server takes more"),
    "--steps": OptionRange(Range(1, 1_000_000, integer=True), None,
                           "each step's time is kept: more would make a result file too large to import; "
                           "give --duration for a long window"),
    "--warmup": OptionRange(Range(0, 1_000_000, integer=True), None, "give auto to warm up until steady"),
    "--repeats": OptionRange(Range(1, 1_000, integer=True), None,
                             "the 95 % interval narrows as 1/√n: past a few repeats more add nothing"),
    "--duration": OptionRange(Range(0.0, MAX_WINDOW_S, low_open=True), None, _A_DAY),
    "--min-window": OptionRange(Range(0.0, MAX_WINDOW_S), None, _A_DAY),
    "--idle-seconds": OptionRange(Range(0.0, MAX_WINDOW_S, low_open=True), None, _A_DAY),
    "--settle": OptionRange(Range(0.0, 3_600.0), None, "a power setting settles within minutes"),
    "--sample-hz": OptionRange(Range(0.01, 1_000.0), None,
                               "no power sensor updates faster than 1 kHz"),
    "--tdp-w": OptionRange(Range(0.1, 100_000.0), "watts: a TDP under 0.1 W is a typo", "watts: no device draws more"),
    "--power-limit": OptionRange(Range(1.0, 10_000.0), "watts, e.g. 100,150: a limit under 1 W is a typo",
                                 "watts, e.g. 100,150: no card takes a higher limit"),
}


def _bound(rng: Range) -> str:
    kind = "a whole number" if rng.integer else "a number"
    low = f"{'above' if rng.low_open else 'of at least'} {_num(rng.low)}" if rng.low is not None else ""
    high = f"at most {_num(rng.high)}" if rng.high is not None else ""
    return f"{kind} {low}{' and ' if low and high else ''}{'of ' if high and not low else ''}{high}"


def option_problem(option: str, value: float | None, *, shown: str | None = None) -> str | None:
    """Why `value` is outside `option`'s range, or None: the message names the option, the value
    (as `shown`, default its shortest form), the range and why ('--repeats: 1000000000 is not valid;
    expected a whole number of at least 1 and at most 1,000 (the 95 % interval narrows ...)')."""
    if value is None:
        return None
    bound = RUN_OPTIONS[option]
    rng = bound.range
    number = float(value)
    if rng.contains(number):
        return None
    if shown is None:
        shown = (str(int(number)) if number.is_integer() and abs(number) < 1e18 else f"{number:g}") \
            if math.isfinite(number) else str(value)
    below = rng.low is not None and math.isfinite(number) and number <= rng.low
    why = bound.why_low if below else bound.why_high if math.isfinite(number) and number > (rng.high or math.inf) \
        else None
    return f"{option}: {shown} is not valid; expected {_bound(rng)}" + (f" ({why})" if why else "")


__all__ = ["MAX_RUNS_PER_SWEEP", "MAX_WINDOW_S", "NAME_CHARS", "RUN_OPTIONS", "TEXT_CHARS", "OptionRange", "Range",
           "RangeError", "check", "check_date", "check_text", "check_text_field", "field_range", "option_problem",
           "parse_number"]
