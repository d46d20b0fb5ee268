"""Issue 39, twenty-first held-out set (files and attribution in tests/fixtures/formats/SOURCES.md), counted unaided
at 86e19ad: a per-experiment table of GEMM shapes whose shape columns (`I`, `J`, `K`) tell the rows apart, with a
latency in seconds and a power in mW named in the general vocabulary; and the names that are no measurement of the
run (a rate per watt, a pause between runs, a percentile of power, an injected I/O delay, a latency of 0). Each rule on
the file's own numbers, with its negative case."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers.table_fields import measure_field
from tests.helpers import load_fixture as _load

FORMATS = Path(__file__).parent / "fixtures" / "formats" / "experiment_csv"
NX = FORMATS / "tegrapower-xavier-nx-gemm-shapes-energy-j-power-mw.csv"
ORIN = FORMATS / "tegrapower-orin-gemm-shapes-energy-no-unit.csv"
A100 = FORMATS / "gpu_power_benchmark-A100-aggregated-per-config.csv"


def _setups(runs: list[dict]) -> set[tuple]:
    return {(r["config"]["model"], r["config"]["batch_size"], r["config"]["tag"]) for r in runs}


def test_gemm_shapes_are_setups_not_repeats() -> None:
    runs, fmt, warnings = _load(NX)
    assert fmt == "experiment-table" and len(runs) == 5
    assert len(_setups(runs)) == 5  # five shapes of one model name: never averaged as repeats of one
    first = runs[0]
    assert first["config"]["tag"] == "J 2560, K 2560"  # I is 512 in every row: it tells no row apart
    m = first["metrics"]
    assert m["latency_avg_ms"] == pytest.approx(12.046)  # latency_sec: seconds, stored in ms
    assert m["avg_power_w"] == pytest.approx(12.623959)  # Avg_Power_mW: milliwatts, stored in W
    assert m["energy_j"] == pytest.approx(19.00019)
    assert any("J, K tell the rows apart" in w for w in warnings)


def test_an_energy_without_its_unit_is_left_out_and_the_rest_is_read() -> None:
    runs, _, warnings = _load(ORIN)
    assert len(runs) == 23 and len(_setups(runs)) == 23
    assert all("energy_j" not in r["metrics"] for r in runs)  # 'Energy': J in the code, no unit in the file
    assert any("Energy" in w and "--unit Energy=" in w for w in warnings)
    bert = next(r for r in runs if r["config"]["tag"] == "I 3072, J 3024, K 1024")
    assert bert["metrics"]["avg_power_w"] == pytest.approx(40.366268)


def test_a_table_of_settings_keeps_them_apart_and_reads_no_injected_delay() -> None:
    runs, _, _ = _load(A100)
    assert len(_setups(runs)) > 22  # context_window and warmup settings were pooled before
    assert all("latency_avg_ms" not in r["metrics"] for r in runs)  # io_latency_*: a delay the test injects


@pytest.mark.parametrize(("name", "why"), [
    ("fps_per_watt", "a rate per watt"), ("Tokens/s per W", "a rate per watt"), ("TOPS/W", "a rate per watt"),
    ("cooldown_seconds", "a pause"), ("sample_interval_ms", "a pause"), ("p95_power_w", "a median or percentile"),
    ("median_power_w", "a median or percentile"), ("io_latency_actual_ms_mean", "I/O or of a delay injected"),
])
def test_names_that_are_no_measurement_of_the_run(name: str, why: str) -> None:
    field, _, reason = measure_field(name)
    assert field is None and why in reason


@pytest.mark.parametrize(("name", "key"), [
    ("Power / W", "avg_power_w"), ("average_gpu_power_median_watts", "avg_power_w"), ("Avg_Power_mW", "avg_power_w"),
    ("energy_infer_duration_s", "duration_s"), ("latency_sec", "latency_avg_ms"),
])
def test_names_that_are_measurements(name: str, key: str) -> None:
    field, _, _ = measure_field(name)
    assert field is not None and field.key == key
