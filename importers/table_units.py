"""Units in a table's headers, in any language: `Energía (J)`, `TPOT (s/token)`, `Latenz (ms)`, `Leistung (W)`,
`Énergie (kJ)`, `Durée [s]`.

The unit in brackets decides the quantity (energy, power, time, tokens/s, energy per token or per item); the
words only say which time it is (TPOT, TTFT, ITL, a latency in several languages, else the run's duration) and
whether a power or energy is the GPU's. A column whose name is a score (accuracy, precision, F1, BLEU, in
several languages) or whose unit is a percentage is never taken as a measurement. Each recognised column is
renamed to the per-experiment table's own unit-named column (`energy_total_j`, `avg_power_w`, `duration_s`,
`latency_ms`, `tpot_ms`, `tokens_per_second`, ...) and its values converted to that unit, each step said
in a warning, so `experiment_table` reads it by its one set of rules.
"""

from __future__ import annotations

import re
import unicodedata

from importers.base import Conversion
from joulebench import units

_UNIT = re.compile(r"^(?P<name>.*?\S)\s*[\(\[](?P<unit>[^()\[\]]{1,20})[\)\]]\s*$")
# the units module's kinds, by the names this module gives them (factors to J, W, s, tokens/s, J per token or item)
_KINDS = {"energy": "energy", "power": "power", "time": "time", "time_per_token": "token_time", "token_rate": "tokens",
          "energy_per_token": "per_token", "energy_per_item": "per_item"}
_SCORES = {"accuracy", "acc", "precision", "precisión", "précision", "precisao", "precisão", "genauigkeit",
           "exactitud", "exactitude", "exatidão", "recall", "f1", "bleu", "rouge", "score", "puntuación", "punktzahl",
           "perplexity", "ppl", "wer", "cer", "map"}
_LATENCY = {"latency", "latenz", "latencia", "latence", "latenza", "latência", "latencja", "latentie"}
_GPU = {"gpu", "grafikkarte"}


def _words(name: str) -> set[str]:
    return {w for w in re.split(r"[^\w]+", name.lower()) if w}


def _plain(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def target(header: str) -> tuple[str, float] | None:
    """(the table's unit-named column, factor to its unit) for a header carrying its unit in brackets;
    None when it carries none, the unit is not one of a measurement, or the column is a score."""
    m = _UNIT.match(header.strip())
    if not m:
        return None
    name, unit = m.group("name"), m.group("unit").strip()
    found_unit = units.find_unit(unit) or units.find_unit(unit.rstrip("s"))
    found = ((_KINDS[found_unit.kind], found_unit.factor) if found_unit is not None and found_unit.kind in _KINDS
             else None)
    words = _words(name)
    if found is None or words & _SCORES or {_plain(w) for w in words} & {_plain(s) for s in _SCORES}:
        return None
    quantity, factor = found
    gpu = bool(words & _GPU)
    part = next((p for p in ("cpu", "ram", "dram", "mem") if p in words), None)  # 'CPU Energy (J)': a component's
    if quantity == "energy":
        return ("gpu_energy_j" if gpu else f"{part}_energy_j" if part else "energy_total_j"), factor
    if quantity == "power":
        return ("gpu_power_w_avg" if gpu else "avg_power_w"), factor
    if quantity == "tokens":
        return "tokens_per_second", factor
    if quantity == "per_token":
        return "energy_per_token_j", factor
    if quantity == "per_item":
        return "energy_per_sample_j", factor
    plain = {_plain(w) for w in words}
    column = next((c for k, c in _TOKEN_TIMES if k in words), None)
    if quantity == "token_time" or column:
        return column or "tpot_ms", factor * 1e3
    if plain & {_plain(w) for w in _LATENCY}:
        return "latency_ms", factor * 1e3
    return "duration_s", factor


_TOKEN_TIMES = (("tpot", "tpot_ms"), ("ttft", "ttft_ms"), ("itl", "itl_ms"))  # the table reader's column names


def with_header_units(conv: Conversion, header: list[str], rows: list[tuple[int, list[str]]]
                      ) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Columns whose header states a unit renamed to the table's unit-named column, values converted."""
    taken = {h.strip().lower() for h in header}
    header = list(header)
    scales: dict[int, float] = {}
    for i, h in enumerate(header):
        found = target(h)
        if found is None:
            continue
        name, factor = found
        if name in taken:
            conv.warn(f"{h} left out: {name} is already given by another column")
            continue
        taken.add(name)
        header[i] = name
        scales[i] = factor
        conv.warn(f"{h} read by the unit in its header, stored as {name}")
    return header, scaled_rows(rows, scales, decimal_comma=True)


def scaled_rows(rows: list[tuple[int, list[str]]], scales: dict[int, float], *, decimal_comma: bool = False
                ) -> list[tuple[int, list[str]]]:
    """The rows with column i's numbers multiplied by scales[i] (a decimal comma read as a point where
    `decimal_comma`); a cell that is not a number is left as written, for the importer to name."""
    if not scales:
        return rows
    out = []
    for lineno, row in rows:
        row = list(row)
        for i, factor in scales.items():
            if i < len(row) and row[i].strip():
                cell = row[i]
                if decimal_comma and cell.count(",") == 1 and "." not in cell:
                    cell = cell.replace(",", ".")
                try:
                    row[i] = repr(float(cell) * factor)
                except ValueError:
                    pass
        out.append((lineno, row))
    return out


def canonical_header(header: list[str]) -> list[str]:
    """The header as `with_header_units` renames it (for sniffing, nothing converted)."""
    seen: set[str] = {h.strip().lower() for h in header}
    out = []
    for h in header:
        found = target(h)
        if found and found[0] not in seen:
            seen.add(found[0])
            out.append(found[0])
        else:
            out.append(h)
    return out


_DATE_TIME = re.compile(r"^\d{4}[-/.]\d{1,2}[-/.]\d{1,2}[T ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?"
                        r"(?:Z|[+-]\d{2}:?\d{2})?$")
_NOT_AVAILABLE = {"[n/a]", "n/a", "[not supported]", "[unknown error]", "nan", "-"}


def value_kind(cell: str) -> str | None:
    """'time' for a date-time cell, the unit's kind for a number with a unit ('11.64 W': power), 'number' for a bare
    number, 'missing' for a tool's 'not available'; None for text (a name, a header)."""
    text = cell.strip().strip('"')
    if _DATE_TIME.match(text):
        return "time"
    if text.lower() in _NOT_AVAILABLE:
        return "missing"
    try:
        q = units.parse(text)
    except units.UnitError:
        return None
    if q is None:
        return None
    return q.unit.kind if q.unit is not None else "number"


def data_row(cells: list[str]) -> bool:
    """Whether a table's first row is data, not a header (`nvidia-smi --format=csv,noheader`: '2026/04/25
    16:06:06.780, 0 %, 2 MiB, 27, 11.64 W'): most cells are values and one is a date-time or carries a unit. A
    header names its columns: no header cell is a number with a unit or a date-time."""
    kinds = [value_kind(c) for c in cells if c.strip()]
    if len(kinds) < 2:
        return False
    values = [k for k in kinds if k is not None]
    return len(values) * 2 > len(kinds) and any(k not in ("number", "missing") for k in values)


_GROUPED_CELL = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?=$|[^\d,.])")  # '23,197', '1,011 tokens'
_POINT_DECIMAL = re.compile(r"-?\d+\.\d+(?=$|[^\d,.])")  # '0.58s', '12.5'
_COMMA_DECIMAL = re.compile(r"-?\d+,(?:\d{1,2}|\d{4,})(?=$|[^\d,.])")  # '1,5', '0,5832': never a group of three


def decimal_marks(rows: list[tuple[int, list[str]]], delimiter: str) -> list[tuple[int, list[str]]]:
    """The rows with one decimal mark: with ';' between cells a lone comma is the decimal mark ('1,5' is 1.5); in a
    table whose numbers take a point for the decimal mark and never a comma, a comma groups thousands ('23,197' is
    23197, as a script's display format writes it). Anything else is left as written, for the importer to name."""
    if delimiter == ";":
        return [(n, [c.replace(",", ".") if c.count(",") == 1 and "." not in c else c for c in r]) for n, r in rows]
    cells = [c.strip() for _, r in rows[:2000] for c in r]
    grouped = any(_GROUPED_CELL.match(c) for c in cells)
    if not grouped or any(_COMMA_DECIMAL.match(c) for c in cells) or not any(_POINT_DECIMAL.match(c) for c in cells):
        return rows
    return [(n, [_GROUPED_CELL.sub(lambda m: m.group(0).replace(",", ""), c, count=1) if _GROUPED_CELL.match(
        c.strip()) else c for c in r]) for n, r in rows]


def delimiter_of(head: str) -> str:
    """The cell delimiter of a table's first line: the most frequent of ',', tab and ';' (',' when none)."""
    first = head.split("\n", 1)[0]
    counts = {d: first.count(d) for d in (",", "\t", ";")}
    return max(counts, key=lambda d: counts[d]) if any(counts.values()) else ","
