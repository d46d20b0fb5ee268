"""The mapping pre-filled from a table's header and cells (`importers.mapping`): the field and unit each column's name
says as the general reader reads it (`importers.table_fields`), the abbreviations of home-grown headers ('tok_rate',
'lat_first'), and a power column's unit told by its values when no header states it. A guess is only offered: the
person chooses, and the recipe is checked before it is used (`importers.mapping.check`).
"""

from __future__ import annotations

from importers.general_table import states_a_mode
from importers.mapping import FIELDS, Table
from importers.table_fields import SPREAD, FieldError, measure_field, words_of
from importers.table_labels import label_field
from joulebench import units
from joulebench.metrics import LATENCY, TTFT


def guess(table: Table, reasons: dict[str, str] | None = None) -> dict[str, tuple[str | None, str | None]]:
    """{column: (field, unit)} as the header says it (importers.table_fields; the unit its cells carry when the
    header states none), with a few abbreviations read ('tok_rate', 'lat_first'); (None, None) when unsure.
    Of several columns of one field, the one named the total ('total_watts') is pre-filled. `reasons` gets, for a
    column left unmapped on purpose, why (a power whose values fit no unit, say)."""
    found: dict[str, tuple[str | None, str | None]] = {}
    for i, name in enumerate(table.header):
        label = label_field(name)
        values = table.column_values(i)
        if label is not None and label.key == "mode" and not any(states_a_mode(v) for v in values if v.strip()):
            found[name] = (None, None)  # 'Type: Local' is no mode: the mode is asked for instead
            if reasons is not None:
                reasons[name] = "its values name no mode (train, infer) nor a phase of generation"
            continue
        if label is not None and label.key in FIELDS:
            found[name] = (label.key, None)
            continue
        try:
            fld, unit, _ = measure_field(name, _cell_unit(values))
        except FieldError:
            fld, unit = None, None
        if fld is not None and fld.key in FIELDS:
            known = unit is not None and units.find_unit(unit.symbol) is not None
            found[name] = (fld.key, unit.symbol if known and unit is not None and unit.kind == FIELDS[fld.key].kind
                           else None)
        else:
            found[name] = _abbreviated(name, values, reasons)
    out: dict[str, tuple[str | None, str | None]] = {}
    taken: set[str] = set()
    order = sorted(table.header, key=lambda c: 0 if "total" in words_of(c) and found[c][0] is not None and sum(
        1 for v in found.values() if v[0] == found[c][0]) > 1 else 1)
    for name in order:
        guessed = found[name]
        if guessed[0] in taken:
            guessed = (None, None)
        if guessed[0] is not None:
            taken.add(guessed[0])
        out[name] = guessed
    return {name: out[name] for name in table.header}


def _cell_unit(values: list[str]) -> units.Unit | None:
    kinds = set()
    for v in values[:50]:
        try:
            q = units.parse(v)
        except units.UnitError:
            return None
        if q is not None and q.unit is not None:
            kinds.add(q.unit)
    return kinds.pop() if len(kinds) == 1 else None


_STAT_WORDS = {"p50": "p50", "median": "p50", "p90": "p90", "p95": "p95", "p99": "p99", "mean": "avg", "avg": "avg"}


def _abbreviated(name: str, values: list[str], reasons: dict[str, str] | None = None
                 ) -> tuple[str | None, str | None]:
    """The common abbreviations of home-grown headers ('tok_rate', 'joules_per_tok', 'lat_first', 'gpu_label');
    never a spread, a peak or an idle figure ('idle_power_W', 'latency_iqr')."""
    w = words_of(name)
    numeric = sum(1 for v in values[:20] if _quantity(v) is not None) >= max(1, len(values[:20]) // 2)
    filled = any(v.strip() for v in values[:20])
    if not numeric and filled and w & {"gpu", "device", "board", "hw", "hardware", "accelerator", "soc"}:
        return "device", None
    if not numeric or w & SPREAD:
        return None, None
    stat = next((s for word, s in _STAT_WORDS.items() if word in w), "avg")
    token = bool(w & {"tok", "toks", "token", "tokens"})
    if token and w & {"joule", "joules", "j", "energy"}:
        return "j_per_token", "J/token"
    if token and w & {"rate", "sec", "speed", "throughput", "tps", "s"}:
        return "tokens_per_s", "tokens/s"
    if w & {"lat", "latency"} and w & {"first", "ttft"}:
        return TTFT.stat(stat).name, "ms"
    if w & {"lat", "latency"}:
        return LATENCY.stat(stat).name, "ms"
    if w & {"watt", "watts", "pwr", "power"}:
        return _power_unit(name, values, reasons)
    return None, None


POWER_AS_W = 20_000.0  # above this a power column's median is no device's (nor a node's) in W
ONE_DEVICE_W = (0.5, 2_000.0)  # a Jetson module to a B200: where a power in mW or µW must land


def _power_unit(name: str, values: list[str], reasons: dict[str, str] | None) -> tuple[str | None, str | None]:
    """A power column without a unit: W, unless its values are far out of range for W (5.96e6 'W'); then the
    one of mW and µW that puts them at one device's power, else unmapped with the reason."""
    numbers = sorted(abs(q.value) for v in values[:200] if (q := _quantity(v)) is not None)
    median = numbers[len(numbers) // 2] if numbers else 0.0
    if median <= POWER_AS_W:
        return "avg_power_w", "W"
    fits = [symbol for symbol, factor in (("mW", 1e-3), ("µW", 1e-6))
            if ONE_DEVICE_W[0] <= median * factor <= ONE_DEVICE_W[1]]
    if len(fits) == 1:
        return "avg_power_w", fits[0]
    if reasons is not None:
        reasons[name] = (f"values about {median:.3g}: far too high for W, and " + (
            "both mW and µW fit; choose the unit" if fits else "neither mW nor µW puts them at one device's power"))
    return None, None


def _quantity(text: str) -> units.Quantity | None:
    try:
        return units.parse(text)
    except units.UnitError:
        return None
