"""Issue 37's units bullet and issue 39: one units module; a value with a unit is converted where it is read, and
`importers.base.num()` never drops a unit it does not convert ('250 mW' was 250.0, '0.5 kWh' 0.5)."""

from __future__ import annotations

import time

import pytest

from importers.base import Conversion, Hints, Importer, Source, num
from joulebench import units
from joulebench.errors import ResultFileError


def _conv() -> Conversion:
    return Conversion(source=Source.single(b"x", "results.csv"), hints=Hints(), importer=Importer())


@pytest.mark.parametrize(("cell", "unit", "expected"), [
    ("250 mW", "W", 0.25), ("0.5 kWh", "J", 1.8e6), ("1.2 kW", "W", 1200.0), ("35 ms", "ms", 35.0),
    ("2.1 s", "ms", 2100.0), ("2.1s", "s", 2.1), ("1,234.5 tokens/s", "tokens/s", 1234.5), ("12 Wh", "J", 43200.0),
    ("81090 MiB", "MB", 85030.0), ("2.505 GHz", "MHz", 2505.0), ("0.35 J/token", "J/token", 0.35),
    ("350 mJ/token", "J/token", 0.35), ("35", "W", 35.0), ("1e3 mW", "W", 1.0),
])
def test_a_cell_with_a_unit_is_converted_to_the_unit_asked_for(cell: str, unit: str, expected: float) -> None:
    assert num(cell, unit=unit) == pytest.approx(expected, rel=1e-4)
    assert units.value_in(cell, unit) == pytest.approx(expected, rel=1e-4)


@pytest.mark.parametrize("cell", ["250 mW", "0.5 kWh", "35 ms", "12 %"])
def test_num_without_an_expected_unit_refuses_a_unit_rather_than_dropping_it(cell: str) -> None:
    with pytest.raises(units.UnitError, match="plain number was expected"):
        num(cell)
    with pytest.raises(ResultFileError) as e:
        num(cell, "line 3: power", _conv())
    message = e.value.format_message()
    assert message.startswith("results.csv: line 3: power:") and repr(cell) in message


def test_a_unit_of_another_kind_is_refused_naming_both() -> None:
    with pytest.raises(units.UnitError, match="W is a unit of power, not of energy per token"):
        num("3 W", unit="J/token")
    with pytest.raises(ResultFileError, match="line 2: j_per_token: '5 ms'"):
        num("5 ms", "line 2: j_per_token", _conv(), unit="J")


def test_plain_numbers_and_empty_cells_read_as_before() -> None:
    assert num("35") == 35.0 and num(" 1.5e-3 ") == 0.0015 and num(7) == 7.0
    assert num("") is None and num("N/A") is None and num("[Not Supported]") is None and num(None) is None
    assert num(float("nan")) is None and num(True) is None
    assert num("12 apples") is None  # not a number, as any malformed cell without `conv`
    with pytest.raises(ResultFileError, match="not a number"):
        num("12 apples", "line 4: energy", _conv())
    assert num("1,234") is None  # a lone comma group could be a decimal comma: never guessed


@pytest.mark.parametrize(("header", "name", "symbol"), [
    ("Total Energy (Wh)", "Total Energy", "Wh"), ("prefill_gpu_median_ms", "prefill gpu median", "ms"),
    ("decode_tps", "decode", "tokens/s"), ("Energy per Token (J/token)", "Energy per Token", "J/token"),
    ("Energy per Second (W)", "Energy per Second", "W"), ("Power (mW)", "Power", "mW"),
    ("Potencia (W)", "Potencia", "W"), ("Energía (J)", "Energía", "J"), ("Timestamp (s)", "Timestamp", "s"),
    ("mw", "mw", "mW"), ("sec", "sec", "s"), ("tokens_per_second", "tokens_per_second", "tokens/s"),
    ("Durée [s]", "Durée", "s"), ("throughput_inf_s", "throughput inf", "items/s"),  # a throughput: never seconds
    ("throughput_req_s", "throughput", "requests/s"), ("infer_s", "infer", "s"),
])
def test_a_header_gives_its_unit(header: str, name: str, symbol: str) -> None:
    found_name, unit, written = units.header_unit(header)
    assert found_name == name and unit is not None and unit.symbol == units.unit(symbol).symbol


def test_a_header_without_a_unit_states_none() -> None:
    for header in ("model", "throughput", "Energía", "gpu", "batch_size", "s", "w"):
        assert units.header_unit(header)[1] is None, header


def test_every_unit_has_a_kind_and_converts_within_it_only() -> None:
    for symbol, unit in units.UNITS.items():
        assert unit.kind in units.KIND_WORDS, symbol
        assert units.unit(units.BASE[unit.kind]).factor == 1.0
    assert units.convert(1.0, "kWh", "J") == 3.6e6
    with pytest.raises(units.UnitError):
        units.convert(1.0, "W", "J")
    assert units.find_unit("MW") is None and units.unit("mw").symbol == "mW"  # megawatts are no benchmark unit


def test_hostile_cells_are_read_in_bounded_time() -> None:
    started = time.perf_counter()
    for cell in ("1" * 100_000 + " mW", "1," * 50_000 + "5 W", "9" * 79 + "e", " " * 100_000, "1 " + "m" * 100_000,
                 "(" * 50_000 + "W", "a_" * 50_000 + "ms"):
        try:
            assert units.parse(cell) is None or isinstance(units.parse(cell), units.Quantity)
        except units.UnitError:
            pass  # a number followed by what is no unit: refused, quickly
        assert units.header_unit(cell)[0] is not None
        assert num(cell) is None
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(("cell", "symbol", "value"), [
    ("1020 ms per frame", "ms", 1020.0), ("3 J per image", "J/item", 3.0), ("5 ms per token", "ms/token", 5.0),
    ("28 tokens per second", "tokens/s", 28.0),
])
def test_a_unit_written_with_per_is_the_unit_written_with_a_slash(cell: str, symbol: str, value: float) -> None:
    q = units.parse(cell)
    assert q is not None and q.unit is not None and (q.unit.symbol, q.value) == (symbol, value)


def test_an_estimates_unit_is_its_columns_but_its_value_is_no_measurement() -> None:
    assert units.unit_of_cells(["~27.96 tokens/sec", "16.35 tokens/sec"]) == units.unit("tokens/s")
    assert units.is_estimate("~27.96 tokens/sec") and units.parse("~27.96 tokens/sec") is None
