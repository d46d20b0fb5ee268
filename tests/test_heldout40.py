"""Result files of held-out sets 40 to 46 (counted unaided before they were added: tests/fixtures/formats/SOURCES.md,
section heldout40_46), each with what went wrong before and a case that must stay as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers.table_fields import measure_field
from tests.helpers import load_fixture, refusal

HELD = Path(__file__).parent / "fixtures" / "formats" / "heldout40_46"


def test_windows_1252_markdown_is_read_and_said() -> None:
    runs, _, warnings = load_fixture(HELD / "facial-detectors-cp1252-resultados.md")
    assert {r["config"]["model"]: r["metrics"]["throughput_sps"] for r in runs} == {
        "HOG": pytest.approx(29.0239), "HAAR": pytest.approx(28.9879), "MTCNN": pytest.approx(6.36675)}
    assert any("Windows-1252" in w for w in warnings)


def test_binary_data_that_is_not_utf8_is_not_read_as_windows_1252() -> None:
    assert "not UTF-8" in refusal(b"Concurrency,fps\n1,\x81\x02\x03\x04 12\n", "bin.csv")


def test_a_tab_separated_summary_with_spanish_statistics() -> None:
    runs, _, warnings = load_fixture(HELD / "facial-detectors-tab-summary.txt")
    assert {r["config"]["model"]: r["metrics"]["throughput_sps"] for r in runs} == {
        "CNN": 1.02, "DLIB": 5.67, "HAAR": 14.78, "HOG": 14.83, "MFN": 14.81}
    assert any("FPS Max (" in w and "spread" in w for w in warnings)  # the maximum is no run's rate


@pytest.mark.parametrize(("header", "key"), [
    ("FPS Promedio", "throughput_sps"), ("FPS moyen", "throughput_sps"), ("Tiempo promedio (ms)", "latency_avg_ms"),
    ("Latencia media (ms)", "latency_avg_ms"), ("Zeit Mittelwert (ms)", "latency_avg_ms"),
    ("FPS Máximo", None), ("media_duration_s", None), ("tiempo total (s)", "duration_s")])
def test_statistics_named_in_spanish_french_and_german(header: str, key: str | None) -> None:
    found = measure_field(header)[0]
    assert (found.key if found else None) == key


def test_records_with_list_values_are_read_not_crashed_on() -> None:
    runs, _, warnings = load_fixture(HELD / "finetune-bench-a10-amp-vs-fp32-runs.json")
    assert len(runs) == 12 and {r["device"]["name"] for r in runs} == {"NVIDIA A10"}
    first = runs[0]
    assert first["config"]["precision"] == "fp32" and first["metrics"]["duration_s"] == pytest.approx(212.0)
    # the mean time of an epoch is a part of the run, never its window
    assert any("epoch_mean_time_s (a time per epoch" in w for w in warnings)
    runs, _, _ = load_fixture(HELD / "ollama-api-timings-ns.json")
    assert runs and all(r["metrics"].get("tokens_per_s") for r in runs)
