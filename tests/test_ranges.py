"""joulebench.ranges: the one check every edit path applies, with the schema's ranges."""

import datetime as dt

import pytest

from joulebench.ranges import RangeError, check, check_date, field_range


@pytest.mark.parametrize(("definition", "field", "raw", "words"), [
    ("config", "batch_size", "1000000000000", "from 1 to 1,000,000,000"),
    ("config", "batch_size", "8.5", "whole number"),
    ("catalog_device", "tdp_w", "-50", "above 0 up to 100,000"),
    ("catalog_device", "tdp_w", "abc", "not a number"),
    ("catalog_device", "tdp_w", 1e308, "outside its range"),
    ("catalog_device", "tdp_w", float("inf"), "outside its range"),
    ("catalog_device", "memory_gb", "1e12", "above 0 up to 100,000"),
    ("exchange_rate", "rate", "-2", "above 0 up to 1,000,000"),
    ("exchange_rate", "rate", "nan", "not a number"),
])
def test_out_of_range_or_not_a_number_is_refused_naming_field_and_range(definition, field, raw, words):
    with pytest.raises(RangeError) as e:
        check(definition, field, raw, label="the field")
    assert e.value.format_message().startswith("the field: ")
    assert words in e.value.format_message()


def test_values_in_range_are_typed_and_empty_is_none():
    assert check("config", "batch_size", "8") == 8 and isinstance(check("config", "batch_size", "8"), int)
    assert check("catalog_device", "tdp_w", " 250.5 ") == 250.5
    assert check("catalog_device", "price_amount", "1,299") == 1299.0
    assert check("catalog_device", "tdp_w", "") is None and check("catalog_device", "tdp_w", None) is None


def test_ranges_come_from_the_schema():
    rng = field_range("config", "batch_size")
    assert (rng.low, rng.high, rng.integer) == (1, 1_000_000_000, True)


def test_dates_are_iso_and_not_in_the_future():
    today = dt.date(2026, 11, 24)
    assert check_date("2024-03-01", "date", latest=today) == "2024-03-01"
    assert check_date("", "date") is None
    for bad in ("tomorrow-ish", "2024-13-01", "2027-01-01", "1900-01-01"):
        with pytest.raises(RangeError, match="^date: "):
            check_date(bad, "date", latest=today)
