"""The general table reader reads a unit before a qualifier ('measure_seconds_actual'), keeps a run's whole figure
where a table gives it beside its parts, and never reads two windows of one run ('time_s', 'energy_infer_duration_s')
as two setups. On real files (attribution in tests/fixtures/formats/SOURCES.md) and tables made to differ in one
thing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from importers import Hints
from importers.base import Conversion, Source
from importers.general_table import GeneralTableImporter
from importers.table_fields import measure_field
from importers.table_setups import _differing

FORMATS = Path(__file__).parent / "fixtures" / "formats"


def _general(data: bytes, name: str) -> tuple[list[dict[str, Any]], list[str]]:
    importer = GeneralTableImporter()
    conv = Conversion(source=Source.single(data, name), hints=Hints(), importer=importer)
    return importer.convert(conv)["runs"], conv.warnings


def test_the_whole_energy_beside_its_parts_is_the_runs() -> None:
    path = FORMATS / "experiment_csv" / "energy-pipeline-rtx4090-inference-kwh-phase-named.csv"
    runs, warnings = _general(path.read_bytes(), path.name)
    assert len(runs) == 4  # one a model: the two time columns are one run's windows, not setups
    assert runs[0]["config"]["model"] == "DistilBERT" and not runs[0]["config"].get("tag")
    assert runs[0]["metrics"]["energy_j"] == pytest.approx(2.5755270161317904e-05 * 3.6e6)  # never the CPU's part
    assert any("energy_infer_kwh read as energy_j (the whole)" in w for w in warnings)


def test_parts_without_a_whole_add_up_and_a_lone_part_is_no_whole() -> None:
    table = b"model,time_s,energy_cpu_j,energy_gpu_j\nbert,2.0,10.0,30.0\nt5,4.0,20.0,50.0\n"
    runs, _ = _general(table, "parts.csv")
    assert [r["metrics"]["energy_j"] for r in runs] == [pytest.approx(40.0), pytest.approx(70.0)]
    table = b"model,time_s,energy_j,energy_step_j\nbert,2.0,10.0,30.0\n"  # no part named: not a whole and its part
    runs, warnings = _general(table, "two.csv")
    assert [r["metrics"]["energy_j"] for r in runs] == [10.0] and not any("(the whole)" in w for w in warnings)


def test_measurement_words_are_no_setup_names() -> None:
    assert _differing("time_s", "energy_infer_duration_s") is None
    assert _differing("infer_time_s", "infer_duration_s") is None
    assert _differing("ar_tok_s", "k5_tok_s") == ("ar", "k5")
    assert _differing("vllm_ms", "sglang_ms") == ("vllm", "sglang")


def test_a_qualifier_after_the_unit_keeps_the_unit() -> None:
    path = FORMATS / "experiment_csv" / "neural-operator-jetson-benchmark-orin-nano-super-fno-energy-summary.csv"
    runs, _ = _general(path.read_bytes(), path.name)
    first = runs[0]["metrics"]
    assert first["duration_s"] == pytest.approx(120.00029510213062)  # measure_seconds_actual
    assert first["throughput_sps"] == pytest.approx(282.6993047902736)  # throughput_inf_s: inferences a second
    assert measure_field("duration_seconds_total")[0].key == "duration_s"  # type: ignore[union-attr]
    assert measure_field("cooldown_seconds_actual")[0] is None  # a pause stays no duration, qualified or not
