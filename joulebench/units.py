"""Units, in one place: a value with a unit ("250 mW", "0.5 kWh", "1,234.5 tokens/s") or a header that
carries one ("Total Energy (Wh)", "prefill_gpu_median_ms", "decode_tps", "Potencia (W)") is converted here
into the project's stored units: J, W, s (durations), ms (latencies), tokens/s, items/s, J/token, J/item, MB,
MHz and %.

Every unit has a quantity kind (energy, power, time, ...). A value is converted only between units of one
kind, so a unit that does not fit a field (W for a J/token field, ms for an energy) is refused with a
`UnitError` that names the value and the unit expected; a caller adds the file and the column.

Parsing is linear in the input: each regular expression here is anchored with no nested repetition, and a
cell is looked at only up to `MAX_CELL_CHARS`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

MAX_CELL_CHARS = 80  # a number with a unit is never longer; a longer cell is not a quantity


class UnitError(ValueError):
    """A value whose unit does not fit the quantity asked for (or is not known: `UnknownUnit`)."""


class UnknownUnit(UnitError):
    """A number followed by text that is no unit this module knows ('12 apples')."""


@dataclass(frozen=True)
class Unit:
    symbol: str  # as stored in this table ("mW", "kWh")
    kind: str  # energy | power | time | token_rate | item_rate | energy_per_token | energy_per_item | ...
    factor: float  # value in this unit * factor = value in the kind's base unit

    def to(self, other: Unit, value: float) -> float:
        if other.kind != self.kind:
            raise UnitError(f"{self.symbol} is a unit of {KIND_WORDS[self.kind]}, not of {KIND_WORDS[other.kind]} "
                            f"({other.symbol})")
        plain = value * self.factor / other.factor
        ratio = self.factor / other.factor
        whole = round(1 / ratio) if ratio < 1 else round(ratio)
        if not whole or abs((1 / ratio if ratio < 1 else ratio) - whole) >= 1e-9 * whole:
            return plain
        # a power of ten or 3600 apart: of the ways to scale, the one written shortest is the value without float
        # noise (1933.44637 us is 1.93344637 ms, never 1.9334463699999997; 1.5331832 s is 1533.1832 ms)
        inverse = other.factor / self.factor
        exact = (value / whole, value / inverse) if ratio < 1 else (value * whole, value / inverse)
        return min((plain, *exact), key=lambda x: len(repr(x)))


# quantity kind -> words for a person, and its base unit (factor 1)
KIND_WORDS = {
    "energy": "energy", "power": "power", "time": "time", "token_rate": "token rate",
    "item_rate": "rate of items (samples, queries, images or iterations per second)",
    "energy_per_token": "energy per token", "energy_per_item": "energy per item", "time_per_token": "time per token",
    "memory": "memory size", "frequency": "frequency", "percent": "percentage", "tokens": "count of tokens",
    "tokens_per_energy": "tokens per energy (the inverse of energy per token)",
}
BASE = {"energy": "J", "power": "W", "time": "s", "token_rate": "tokens/s", "item_rate": "items/s",
        "energy_per_token": "J/token", "energy_per_item": "J/item", "time_per_token": "s/token", "memory": "MB",
        "frequency": "MHz", "percent": "%", "tokens": "tokens", "tokens_per_energy": "tokens/J"}

_TABLE: tuple[tuple[str, float, tuple[str, ...]], ...] = (
    # kind, factor to base, symbols (case matters: mW is not MW; lower-case spellings are added below)
    ("energy", 1.0, ("J", "joule", "joules", "Joule", "Joules")),
    ("energy", 1e3, ("kJ",)), ("energy", 1e6, ("MJ",)), ("energy", 1e-3, ("mJ",)),
    ("energy", 3600.0, ("Wh",)), ("energy", 3.6e6, ("kWh",)), ("energy", 3.6, ("mWh",)),
    ("power", 1.0, ("W", "watt", "watts", "Watt", "Watts")), ("power", 1e-3, ("mW", "milliwatt", "milliwatts")),
    ("power", 1e3, ("kW",)), ("power", 1e-6, ("µW", "uW")),
    # the time of one item or step ('198.3 ms/doc', 's/it') is a time: its name says of what
    ("time", 1.0, ("s", "sec", "secs", "second", "seconds", "seg", "Sek", "秒", "s/img", "s/image", "s/it", "s/iter",
                   "s/batch", "s/step", "s/sample")),
    ("time", 1e-3, ("ms", "msec", "millis", "毫秒", "ms/img", "ms/image", "ms/doc", "ms/sample", "ms/item", "ms/iter",
                    "ms/it", "ms/batch", "ms/step", "ms/frame")),
    ("time", 1e-6, ("us", "µs", "μs", "usec")), ("time", 1e-9, ("ns", "nsec")),
    ("time", 60.0, ("min", "mins", "minutes")), ("time", 3600.0, ("h", "hr", "hrs", "hours")),
    ("token_rate", 1.0, ("tokens/s", "token/s", "tok/s", "t/s", "T/s", "tps", "tokens/sec", "tok/sec",
                         "tokens per second", "tokens-per-sec")),  # tokens-per-sec: mlx-lm's generate
    ("token_rate", 1e3, ("tokens/ms",)),
    ("item_rate", 1.0, ("items/s", "samples/s", "sample/s", "qps", "QPS", "it/s", "img/s", "images/s", "image/s",
                        "fps", "FPS", "req/s", "requests/s", "inferences/s", "inf/s", "sps", "queries/s", "infer/s",
                        "infer/sec", "inferences/sec", "docs/s", "doc/s", "documents/s", "sentences/s", "texts/s",
                        "examples/s", "example/s",
                        "seq/s", "seqs/s", "sequences/s",
                        "frames/s", "predictions/s", "embeddings/s", "embedding/s",
                        "emb/s")),  # Triton Model Analyzer's 'infer/sec'
    ("energy_per_token", 1.0, ("J/token", "J/tok", "J/tokens")), ("energy_per_token", 1e-3, ("mJ/token", "mJ/tok")),
    ("energy_per_token", 3600.0, ("Wh/token",)),
    ("energy_per_token", 1e-3, ("J/1k tokens", "J/1k tok", "J/1000 tokens")),
    ("energy_per_token", 1e-6, ("J/1M tokens", "J/Mtok")),
    ("energy_per_token", 3.6, ("Wh/1k tokens", "Wh/1k tok", "Wh/1000 tokens")), ("energy_per_token", 3.6e-3, (
        "Wh/Mtok", "Wh/1M tokens")), ("energy_per_token", 3.6e3, ("kWh/1k tokens",)),
    ("energy_per_item", 1.0, ("J/item", "J/request", "J/req", "J/prompt", "J/image", "J/sample", "J/inference",
                              "J/query", "J/img")),
    ("energy_per_item", 1e-3, ("mJ/request", "mJ/sample", "mJ/image", "mJ/inference", "mJ/query")),
    ("energy_per_item", 1e3, ("kJ/request",)), ("energy_per_item", 3600.0, ("Wh/request",)),
    ("time_per_token", 1.0, ("s/token", "s/tok")), ("time_per_token", 1e-3, ("ms/token", "ms/tok")),
    # tokens per joule: read as energy per token, its inverse (importers.general_table)
    ("tokens_per_energy", 1.0, ("tokens/J", "tok/J", "token/J", "tokens/joule")),
    ("tokens_per_energy", 1 / 3600.0, ("tokens/Wh", "tok/Wh")), ("tokens_per_energy", 1 / 3.6e6, ("tokens/kWh",
                                                                                                  "tok/kWh")),
    ("memory", 1.0, ("MB",)), ("memory", 1.048576, ("MiB",)), ("memory", 1e3, ("GB",)),
    ("memory", 1073.741824, ("GiB",)), ("memory", 1e-3, ("kB", "KB")), ("memory", 1.024e-3, ("KiB",)),
    ("memory", 1e-6, ("B", "bytes")),
    ("frequency", 1.0, ("MHz",)), ("frequency", 1e3, ("GHz",)), ("frequency", 1e-3, ("kHz",)),
    ("percent", 1.0, ("%", "％", "pct", "percent")),
    ("tokens", 1.0, ("tokens", "token", "token(s)", "tok")),
    ("tokens", 1e3, ("k tokens", "ktokens", "ktok", "K tokens")),  # a length in thousands ('context_length_k')
)
UNITS: dict[str, Unit] = {}
for _kind, _factor, _symbols in _TABLE:
    for _s in _symbols:
        UNITS[_s] = Unit(_symbols[0], _kind, _factor)
# lower-case spellings ("mw", "kwh", "sec, mw" headers): only those that name one unit
_LOWER: dict[str, Unit] = {}
for _s, _u in UNITS.items():
    _LOWER.setdefault(_s.lower(), _u)
for _ambiguous in ("mj",):  # mJ or MJ: lower case means milli in practice (a column 'energy_mj')
    _LOWER[_ambiguous] = UNITS["mJ"]


def unit(symbol: str) -> Unit:
    """The unit written `symbol` (spaces around a slash and plural/case variants allowed); UnitError if unknown."""
    found = find_unit(symbol)
    if found is None:
        raise UnknownUnit(f"{symbol[:30]!r} is not a unit JouleBench converts")
    return found


def find_unit(symbol: str) -> Unit | None:
    text = symbol.strip()[:40]
    text = re.sub(r"\s*/\s*|\s+per\s+(?=[A-Za-z])", "/", text)  # 'ms per frame' is 'ms/frame'
    if text in UNITS:
        return UNITS[text]
    for variant in (text.replace("/second", "/s").replace("/sec", "/s"),
                    text.replace("per second", "/s").replace(" ", "")):
        if variant in UNITS:
            return UNITS[variant]
    if text != text.lower():  # 'MW' is no 'mW': a case-insensitive match only for a unit written in lower case,
        # or a count spelled in words ('Tokens/s', 'FPS', 'Tokens/Second')
        wordy = _LOWER.get(re.sub(r"/sec(?:ond)?$", "/s", text.lower()))
        return wordy if wordy is not None and wordy.kind in _WORDY and re.search(r"[a-z]{3}", text.lower()) else None
    return _LOWER.get(text) or _LOWER.get(text.replace("/sec", "/s"))


_WORDY = ("token_rate", "item_rate", "tokens", "energy_per_token", "time_per_token", "energy_per_item")


def factor_of(symbol: str, kinds: tuple[str, ...]) -> tuple[str, float] | None:
    """(kind, factor to the kind's base unit) of a unit written `symbol` when it is of one of `kinds`; None
    otherwise (an unknown unit, or one of another quantity)."""
    found = find_unit(symbol)
    return (found.kind, found.factor) if found is not None and found.kind in kinds else None


def convert(value: float, from_unit: str, to_unit: str) -> float:
    """`value` in `from_unit` expressed in `to_unit`; UnitError when they are of different kinds."""
    return unit(from_unit).to(unit(to_unit), value)


# --- cells ---------------------------------------------------------------------------------

_NUMBER = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_GROUPED = re.compile(r"^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")  # 1,234.5 / 12,345,678
# thousands set apart by a space, as SI and most of Europe write them ('2 486', '12 345.6'), a cell's whole number
_SPACED = re.compile(r"[-+]?\d{1,3}(?:[ \u00a0\u202f\u2009]\d{3})+(?:[.,]\d+)?(?=\s*[^\d\s.,]|\s*$)")
_COUNTED = re.compile(r"\s?(?:tokens?|tok)\s*$")  # '1,024 tokens': a count has no decimal comma
# a spread written after a mean ('127.73±0.21', '5.1 +- 0.3', '14.8 ± 0.0 ms'): the cell's value is the mean
_SPREAD_AFTER = re.compile(r"^\s*(?:±|\+/-|\+-)\s*(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


# a range written where one figure belongs ('70-85', '171–205 tok/s', '2 to 3 s', '4 ~ 5'): no single value
_RANGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:-|–|—|~|～|to)\s*(\d+(?:\.\d+)?)\s*([^\d\s].{0,30})?$")  # '4 ~ 5'


def is_range(text: str) -> bool:
    """Whether a cell gives a range of two figures, low to high, not one ('70-85', '171–205')."""
    m = _RANGE.match(text)
    return m is not None and float(m.group(1)) < float(m.group(2))


_APPROX_MARKS = "~≈～"  # a figure written as about so much
_ESTIMATE = re.compile(rf"(?i)\s*(?:[{_APPROX_MARKS}]|ca\.|approx\.?|about\s)|"
                       r".*(?:\(\s*est\b|\best\.|\bestimated?\b|\bapprox)")


_ABOUT = re.compile(rf"\s*[{_APPROX_MARKS}]\s*(?=\d)")  # the marks alone, before the figure


def is_estimate(text: str) -> bool:
    """Whether a cell says its figure is an estimate ('~15', '≈ 2.1 GB', '~15-20 (est)', '120 (estimated)'): no
    measurement."""
    return _ESTIMATE.match(text[:80]) is not None


_RATIO = re.compile(r"\s{0,4}[-+]?\d{1,12}(?:[.,]\d{1,12})?\s{0,2}[x×]\s{0,4}")


def unit_of_cells(values: list[str]) -> Unit | None:
    """The one kind of unit a column's (or a row's) cells carry ('250 mW', '1.2 kW': power), in its base unit; None
    when they carry none, several, or a unit none converts."""
    found = set()
    for v in values[:200]:
        if isinstance(v, str) and (m := _ABOUT.match(v)) is not None:
            v = v[m.end():]  # '~27.96 tokens/sec': an estimate's unit is still the column's (its value is not read)
        try:
            q = parse(v) if isinstance(v, str) else None
        except UnitError:
            return None
        if q is not None and q.unit is not None:
            found.add(q.unit.kind)
    return unit(BASE[found.pop()]) if len(found) == 1 else None


def is_ratio(text: str) -> bool:
    """Whether a cell gives a ratio of two figures ('5.23×', '1.5x'): a comparison, no figure of a run."""
    return _RATIO.fullmatch(text[:40]) is not None


# a duration written in parts, as Go's time.Duration and `time` print it ('2m23s', '1h2m3.5s', '97.885315ms')
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?)(h|ms|m|µs|us|μs|ns|s)")
_DURATION_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "µs": 1e-6, "μs": 1e-6, "us": 1e-6, "ns": 1e-9}


def duration_s(text: str) -> float | None:
    """The seconds of a duration written in parts ('1m13.81s', '2m23s', '350ms'); None when the text is not one."""
    text = text.strip()[:MAX_CELL_CHARS]
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(a + b for a, b in parts) != text:
        return None
    return sum(float(v) * _DURATION_UNIT_S[u] for v, u in parts)


@dataclass(frozen=True)
class Quantity:
    value: float
    unit: Unit | None  # None: a bare number
    written: str  # the unit as written ('' for a bare number)


def parse(text: str) -> Quantity | None:
    """A number and an optional unit from one cell ('250 mW', '1,234.5 tokens/s', '2.1s', '35'); None when the
    cell is not a number (with a unit this module knows, or none). Thousands separators are read only in
    groups of three before a decimal point or in several groups (a lone '1,234' could be a decimal comma)."""
    cell = text.strip()
    if not cell or len(cell) > MAX_CELL_CHARS:
        return None
    if cell[-1:] == "s" and cell[:1].isdigit() and len(_DURATION_PART.findall(cell)) > 1 and (
            seconds := duration_s(cell)) is not None:  # '2m23s', '1h5m0s': one duration in parts
        return Quantity(seconds, UNITS["s"], "s")
    parts = re.split(r"\s+\+\s+", cell) if " +" in cell else [cell]  # a cheap test first: parse reads every cell
    if 2 <= len(parts) <= 16:  # '81W + 86W' (one card and another): their sum, when all are of one unit
        terms = [parse(p) for p in parts]
        if any(t is None for t in terms):
            return None  # 'pp512 + tg128': words, not a sum
        if len({t.unit for t in terms if t is not None}) != 1:
            raise UnknownUnit(f"{cell!r} is not one number: its terms are in different units")
        first = terms[0]
        assert first is not None
        return Quantity(sum(t.value for t in terms if t is not None), first.unit, first.written)
    if (spaced := _SPACED.match(cell)) is not None:  # '2 486 tokens/s': 2486
        cell = re.sub(r"[ \u00a0\u202f\u2009](?=\d{3})", "", spaced.group(0)).replace(",", ".") + cell[spaced.end():]
    m = _GROUPED.match(cell)
    if m and ("." in m.group(0) or m.group(0).count(",") > 1 or _COUNTED.match(cell[m.end():])):
        number = m.group(0).replace(",", "")
    else:
        m = _NUMBER.match(cell)
        if m is None:
            return None
        number = m.group(0)
    try:
        value = float(number)
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    rest = _SPREAD_AFTER.sub("", cell[m.end():]).strip()  # '127.73±0.21': the mean, its spread after it
    rest = rest.rstrip("*†‡§¹²³⁴").strip()  # '188*', '22.1 ms†': a footnote's mark, no unit
    if not rest:
        return Quantity(value, None, "")
    found = find_unit(rest)
    if found is None and (plain := re.sub(r"\s*[(\[][^()\[\]]{1,40}[)\]]$", "", rest)) != rest:
        if not plain:  # '500 (50 × 10)': the figure, a note after it
            return Quantity(value, None, "")
        found, rest = find_unit(plain), plain  # '931 ms (median)'
    if found is None:
        raise UnknownUnit(f"{cell!r} is not a number (the unit {rest[:20]!r} is not one JouleBench converts)")
    return Quantity(value, found, rest)


def to_stored(value: float, unit: Unit, stored: str | None) -> float:
    """`value` in `unit` as a field stores it (its unit `stored`), converted in one step (175 ms stays 175.0, never
    175.00000000000003 by way of seconds); a rate of tokens per joule is stored as its inverse, J/token."""
    if unit.kind == "tokens_per_energy":  # 2.82 tok/J is 1 / 2.82 J/token; 0 tokens per joule is no figure
        return 1.0 / (value * unit.factor) if value > 0 else 0.0
    target = find_unit(stored) if stored else None
    if target is not None and target.kind == unit.kind:
        return unit.to(target, value)
    base = value * unit.factor
    return base * 1e3 if stored == "ms" else base


def value_in(text: str, expected: str | None) -> float | None:
    """The cell's number in the unit `expected`: converted when the cell carries a unit of the same kind,
    as written when it carries none. UnitError when its unit does not fit, or when it carries a unit and
    the caller said none (a bare number was expected: '250 mW' is never 250); None when not a number."""
    q = parse(text)
    if q is None:
        return None
    if q.unit is None:
        return q.value
    if expected is None:
        raise UnitError(f"{text.strip()[:40]!r} carries the unit {q.written!r}, where a plain number was expected; "
                        "state which unit the figure is stored in")
    target = unit(expected)
    if q.unit.kind == "tokens" and target.kind == "tokens":
        return q.value
    if q.unit.kind == "time" and target.kind == "time_per_token":  # 'Latency per Token' over '65.06 ms': the
        return q.value * q.unit.factor / target.factor  # column says per token, the cell its unit of time
    try:
        return q.unit.to(target, q.value)
    except UnitError as e:
        raise UnitError(f"{text.strip()[:40]!r}: {e}") from e


# --- headers -------------------------------------------------------------------------------

_BRACKET = re.compile(r"^(?P<name>[^()\[\]]*?)\s*[\(\[](?P<unit>[^()\[\]]{1,24})[\)\]]\s*$")
_LAST_BRACKET = re.compile(r"^(?P<name>[^()\[\]]{1,80}\([^()\[\]]{1,24}\))\s*\((?P<unit>[^()\[\]]{1,24})\)\s*$")
# a unit written as the last word of a snake_case or spaced name: prefill_gpu_median_ms, decode_tps, power_mw
_SUFFIXES: dict[str, str] = {
    "j": "J", "joules": "J", "kj": "kJ", "wh": "Wh", "kwh": "kWh", "mwh": "mWh", "mj": "mJ",
    "w": "W", "watts": "W", "watt": "W", "mw": "mW", "kw": "kW",
    "s": "s", "sec": "s", "secs": "s", "seconds": "s", "ms": "ms", "us": "us", "ns": "ns", "min": "min",
    "tps": "tokens/s", "mb": "MB", "mib": "MiB", "gb": "GB", "gib": "GiB", "mhz": "MHz", "ghz": "GHz",
    "pct": "%", "percent": "%", "qps": "qps", "fps": "fps", "sps": "sps", "ips": "items/s", "rps": "requests/s",
}
_STAT_RATE = re.compile(r"(?:.*[_\s-])?(?P<what>tok|toks|tokens|img|imgs|images|samples|reqs?|requests)_"
                        r"(?P<stat>min|max|med|median|mean|avg|p50|p90|p95|p99)_s")
_PHRASES: tuple[tuple[str, str], ...] = (  # spelled-out units at the end of a name
    ("throughput_hz", "items/s"), ("inference_hz", "items/s"), ("inferences_hz", "items/s"),  # runs a second
    ("tokens_per_second", "tokens/s"), ("tokens_per_sec", "tokens/s"), ("tokens_per_s", "tokens/s"),
    ("tok_per_s", "tokens/s"), ("tok_per_sec", "tokens/s"), ("toks_per_s", "tokens/s"),
    ("toks_per_sec", "tokens/s"), ("tokens/s", "tokens/s"), ("tok/s", "tokens/s"),
    ("tokens/sec", "tokens/s"), ("tok/sec", "tokens/s"), ("tokens_sec", "tokens/s"), ("tok_sec", "tokens/s"),
    ("tokens_s", "tokens/s"), ("toks_s", "tokens/s"), ("tok_s", "tokens/s"),  # pp_tok_s: a rate, never seconds
    ("img_s", "images/s"), ("imgs_s", "images/s"), ("images_s", "images/s"), ("samples_s", "samples/s"),
    ("seqs_s", "samples/s"), ("frames_s", "frames/s"), ("reqs_s", "requests/s"), ("docs_s", "items/s"),
    ("documents_s", "items/s"), ("sentences_s", "items/s"), ("texts_s", "items/s"), ("embeddings_s", "items/s"),
    ("req_s", "requests/s"), ("requests_s", "requests/s"),  # throughput_img_s: images a second, never seconds
    ("samples_per_second", "samples/s"), ("samples_per_s", "samples/s"), ("images_per_second", "images/s"),
    ("requests_per_second", "requests/s"), ("requests_per_s", "requests/s"), ("req_per_s", "requests/s"),
    ("queries_per_second", "queries/s"), ("j_per_token", "J/token"), ("joules_per_token", "J/token"),
    ("mj_per_token", "mJ/token"), ("wh_per_token", "Wh/token"), ("wh_per_1k_tokens", "Wh/1k tokens"),
    ("wh_per_1k_tok", "Wh/1k tokens"), ("wh_per_1000_tokens", "Wh/1k tokens"), ("kwh_per_1k_tokens", "kWh/1k tokens"),
    ("wh_per_mtok", "Wh/Mtok"), ("wh_per_1m_tokens", "Wh/Mtok"), ("ms_per_token", "ms/token"),
    ("ms_per_tok", "ms/token"), ("s_per_token", "s/token"),
    ("j_per_request", "J/request"), ("j_per_sample", "J/sample"), ("j_per_image", "J/image"),
    ("j_per_query", "J/query"), ("j_per_inference", "J/inference"),
    ("tokens_per_joule", "tokens/J"), ("tokens_per_j", "tokens/J"), ("tok_per_j", "tokens/J"), ("tok/j", "tokens/J"),
    ("tokens/j", "tokens/J"), ("tokens_per_kwh", "tokens/kWh"), ("tokens/kwh", "tokens/kWh"),
    ("tokens_per_wh", "tokens/Wh"), ("tokens/wh", "tokens/Wh"),
)

# energy per token spelled out at the end of a name ('joules_per_output_token'), or an energy unit after 'per ...
# token' ('energy_per_completion_token_J'): J/token, never a total energy. Bounded repetitions: linear in the name.
_PER_TOKEN_UNITS = {"j": "J/token", "joule": "J/token", "joules": "J/token", "mj": "mJ/token", "wh": "Wh/token"}
_PER_TOKEN_END = re.compile(r"(?:^|_)(?P<unit>joules?|j|mj|wh)_per_(?:[a-z]{1,20}_){0,2}tokens?$")
# a phase of generation before '_t_s' (llama.cpp's t/s): 'tg_t_s' is tokens/s where a bare 't_s' is a time in seconds
_TOKEN_PHASES = {"pp", "tg", "pg", "gen", "generation", "prompt", "prefill", "decode", "eval", "output", "input"}
# a count of items per second spelled out at the end of a name ('throughput_samples_per_sec', 'frames_per_s',
# 'throughput_samples_sec'): a rate, never a time in seconds
_PER_SECOND_END = re.compile(r"(?:^|_)(?P<what>samples?|examples?|images?|imgs?|frames?|items?|inferences?|"
                             r"predictions?|requests?|reqs?|queries|query|sentences?|sent|docs?|documents?|texts?|embeddings?|"
                             r"utterances?|steps?|iters?|iterations?)_(?:per_(?:second|sec|s)|sec|second)$")
_QUANTITY_WORDS = {"time", "duration", "latency", "runtime", "elapsed", "power", "energy", "avg power", "t", "p", "e"}
_DATA_UNITS = {"b", "kb", "mb", "gb", "tb", "kib", "mib", "gib", "bytes", "byte", "mbit", "gbit"}
_PER_TOKEN_NAME = re.compile(r"per_(?:(?P<scale>1k|1000|1m|1000000|k|m)_)?(?:[a-z]{1,20}_){0,2}tok(?:en)?s?(?:_|$)")
_PER_SCALED_TOKENS = {("J/token", "k"): "J/1k tokens", ("J/token", "m"): "J/1M tokens",
                      ("Wh/token", "k"): "Wh/1k tokens", ("Wh/token", "m"): "Wh/Mtok"}


_PER_DEVICE = re.compile(r"(?:\s*/\s*|[\s_-]+per[\s_-]+)(gpu|device|card|chip)s?(?![a-z])", re.IGNORECASE)


SPACED_SLASH = re.compile(r"(?<=\w)[ \t]{1,8}/[ \t]{1,8}(?=\w)")


def header_unit(header: str) -> tuple[str, Unit | None, str]:
    """(the name without its unit, the unit, the unit as written) of a column header: a unit in brackets
    ('Total Energy (Wh)', 'Potencia [W]'), a spelled-out ending ('tokens_per_second'), or a last word
    ('prefill_gpu_median_ms', 'decode_tps', 'power_mw'). (header, None, '') when it states none."""
    text = SPACED_SLASH.sub("/", header.strip()[:200])  # 'Tokens / sec / GPU' as 'Tokens/sec/GPU'
    each = _PER_DEVICE.search(text)
    if each is not None:  # 'Tokens/GPU/Second', 'img/s per GPU': a rate of each GPU, named so ('per gpu')
        name, found, written = header_unit(text[: each.start()] + text[each.end():])
        if found is not None and found.kind in ("token_rate", "item_rate"):
            return f"{name} per {each.group(1).lower()}", found, f"{written} per {each.group(1)}"
    m = _BRACKET.match(text) or _LAST_BRACKET.match(text)  # 'FTL(ave)(s)': a statistic in brackets, then the unit
    if m:
        written = m.group("unit").strip()
        found = find_unit(written) or find_unit(written.split()[0] if written.split() else "")
        if found is not None:  # 'J/token gen': the first unit token is the unit, the rest says of what
            return m.group("name").strip(), found, written
        name = m.group("name").strip()
        if written.lower() == "s/s" and re.search(r"(?i)^(?:thru|throughput|tput)\b", name):  # 'Thru(s/s)': samples
            return name, UNITS["samples/s"], written  # per second (a second per second is no throughput)
        if name and (before := find_unit(name)) is not None and before.kind in ("token_rate", "item_rate"):
            if written.lower() in ("total", "all", "sum", "aggregate", "system"):  # 't/s (total)': over all streams
                return name, before, name
            return f"{name} {written}", before, name  # 'tok/s (req)': each request's rate
        return text, None, ""
    tail = re.split(r"[-_\s]", text)[-1]  # 'avg-token/s', 'decode_tok/s': a rate's unit after its name
    if "/" in tail and tail != text and (found := find_unit(tail)) is not None and found.kind in (
            "token_rate", "item_rate", "energy_per_token", "energy_per_item"):
        return text[: -len(tail)].rstrip(" _-"), found, tail
    low = text.lower().replace(" ", "_").replace("-", "_").replace(".", "_")  # a dotted path: 'throughput.fps'
    per_token = _PER_TOKEN_END.search(low)
    if per_token:  # joules_per_output_token, j_per_completion_token, wh_per_generated_token
        symbol = _PER_TOKEN_UNITS[per_token.group("unit")]
        return text[: per_token.start()].rstrip(" _-") or text, UNITS[symbol], symbol
    per_second = _PER_SECOND_END.search(low)
    if per_second:
        symbol = "requests/s" if per_second.group("what").startswith("req") else "items/s"
        return text[: per_second.start()].rstrip(" _-") or text, UNITS[symbol], symbol
    stat_rate = _STAT_RATE.fullmatch(low)
    if stat_rate:  # 'tok_med_s', 'img_p90_s': a rate's statistic written between its items and '_s'
        symbol = "tokens/s" if stat_rate.group("what").startswith("tok") else "items/s"
        return f"{text[: stat_rate.start('what')]}{stat_rate.group('what')} {stat_rate.group('stat')}".strip(
            " _-"), UNITS[symbol], symbol
    for phrase, symbol in _PHRASES:
        if phrase.endswith("_s") and re.search(r"per[ _-]*$", low[: -len(phrase)]):
            continue  # 'time_per_img_s': seconds per image, not images a second
        if low.endswith(phrase) and (len(low) == len(phrase) or not low[-len(phrase) - 1].isalnum()):
            return text[: len(text) - len(phrase)].rstrip(" _-") or text, UNITS[symbol], symbol
    parts = re.split(r"[_\s-]+", low)
    glued = re.fullmatch(r"(?P<phase>gen|prompt|eval|decode|prefill|pp|tg)tps", parts[-1])
    if glued:  # 'gentps', 'prompttps': a phase's tokens/s written as one word
        return " ".join([*parts[:-1], glued.group("phase")]), UNITS["tokens/s"], "tokens/s"
    phase_rate = re.fullmatch(r"(?P<phase>[a-z]+)\d{0,6}_?(?:t|tok|tokens)?/s(?:ec)?", low)
    if phase_rate and phase_rate.group("phase") in _TOKEN_PHASES:  # llama.cpp's 'PP/s', 'TG/s', 'tg128 t/s'
        return text[: text.index("/")].rstrip(" _-"), UNITS["tokens/s"], "tokens/s"
    if len(parts) >= 3 and parts[-2:] == ["t", "s"] and parts[-3] in _TOKEN_PHASES:  # tg_t_s: t/s, never seconds
        return " ".join(parts[:-2]), UNITS["tokens/s"], "tokens/s"
    if len(parts) >= 2 and parts[-1] in _SUFFIXES:
        symbol = _SUFFIXES[parts[-1]]
        if symbol == "s" and parts[-2] in _DATA_UNITS:  # 'avg_io_throughput_mb_s': bytes a second, no unit stored
            return text, None, ""
        if symbol == "s" and {"throughput", "thruput"} & set(parts[:-1]):  # 'throughput_inf_s': inferences a
            symbol = "requests/s" if {"req", "reqs", "requests"} & set(parts) else "items/s"  # second, never seconds
            return " ".join(parts[:-1]), UNITS[symbol], symbol
        if UNITS[symbol].kind == "energy" and (per := _PER_TOKEN_NAME.search(low)):  # energy_per_completion_token_J
            symbol = _PER_TOKEN_UNITS.get(parts[-1], "J/token")
            if scale := per.group("scale"):  # 'energy_per_1k_tokens_j': J per thousand tokens
                scaled = _PER_SCALED_TOKENS.get((symbol, "k" if scale in ("1k", "1000", "k") else "m"))
                if scaled is None:
                    return text, None, ""
                symbol = scaled
            return " ".join(parts[:-1]), UNITS[symbol], symbol
        return " ".join(parts[:-1]), UNITS[symbol], symbol
    rate = _SUFFIXES.get(parts[0]) if 2 <= len(parts) <= 3 and " " not in text else None  # a code's name only
    if rate in ("tokens/s", "qps", "fps", "sps"):  # a rate's unit first, where it ran after: 'fps_gpu', 'tps_decode'
        return " ".join(parts[1:]), UNITS[rate], rate
    if low in _SUFFIXES and low not in ("s", "w", "j"):  # a lone 'mw', 'tps' header ('sec, mw')
        return text, UNITS[_SUFFIXES[low]], _SUFFIXES[low]
    if "/" in low and len(low) <= 16 and (alone := find_unit(text)) is not None:  # a unit alone: 't/s' (llama.cpp),
        return text, alone, text  # 'J/Token', 'img/s'; never a bare 's' or 'W', which name other things too
    slashed = re.fullmatch(r"(?P<name>[a-z][a-z _]{1,30}?)\s?/\s?(?P<unit>[a-zµ]{1,5})", low)
    if slashed and (quantity := find_unit(text.strip()[slashed.start("unit"):])) is not None and quantity.kind in (
            "time", "power", "energy") and slashed.group("name").strip() in _QUANTITY_WORDS:
        return text.strip()[:slashed.end("name")].strip(), quantity, quantity.symbol  # 'time/s', 'power/W' (a
        # quantity over its unit, as a physics table writes it)
    if low in ("sec", "secs", "seconds", "ms", "mw", "watts"):
        return text, UNITS[_SUFFIXES[low]], _SUFFIXES[low]
    return text, None, ""


def fits(found: Unit, expected: str) -> bool:
    """Whether a value in `found` can be stored in the unit `expected`."""
    return found.kind == unit(expected).kind


def refuse_unit(column: str, found: str, expected: str) -> str:
    """The sentence for a column whose unit does not fit its field (W as J/token)."""
    exp = unit(expected)
    return (f"column {column[:80]!r} is in {found}, a unit of {KIND_WORDS[unit(found).kind]}, but the field it "
            f"names holds {KIND_WORDS[exp.kind]} ({exp.symbol}): rename the column or correct its unit")
