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
from joulebench.resultfile import schema


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

    def describe(self) -> str:
        kind = "a whole number" if self.integer else "a number"
        if self.low is not None and self.high is not None:
            op = "above" if self.low_open else "from"
            to = "up to" if self.low_open else "to"
            return f"{kind} {op} {_num(self.low)} {to} {_num(self.high)}"
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
        return not (self.high is not None and value > self.high)


def _num(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.6g}"


# Values a person edits that the result schema does not hold: 1 unit of one currency in another
# spans about 1e-6 (a strong currency in a weak one's inverse) to 1e6 (the reverse).
_EXTRA = {
    ("exchange_rate", "rate"): Range(0.0, 1_000_000.0, low_open=True),
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


__all__ = ["Range", "RangeError", "check", "check_date", "field_range", "parse_number"]
