"""Linux perf stat's RAPL counts (importers.perf_stat): a real interval capture of the cores alone, and the summary
display perf prints at the end of a command; the package and the memory are the energy, the cores and the
integrated GPU parts of the package, never added."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import load
from importers.perf_stat import joules
from tests.helpers import load_fixture

PERF = Path(__file__).parent / "fixtures" / "formats" / "perf_stat"
SUMMARY = """
 Performance counter stats for 'system wide':

         1.310,43 Joules power/energy-pkg/
            81,20 Joules power/energy-ram/
           900,00 Joules power/energy-cores/

      43,825457077 seconds time elapsed
"""


def test_intervals_of_the_cores_alone_state_no_package_energy() -> None:
    runs, fmt, _ = load_fixture(PERF / "rapl-cores-interval-1s-decimal-comma.txt")
    assert fmt == "perf-stat" and len(runs) == 1
    m = runs[0]["metrics"]
    assert m["duration_s"] == pytest.approx(43.825, abs=1e-3) and "energy_j" not in m
    assert "only the CPU cores (PP0, inside the package)" in m["energy_missing_reason"]
    trace = runs[0]["power_traces"][0]
    assert trace["domain"] == "cores" and len(trace["t_s"]) == 44
    assert trace["power_w"][0] == pytest.approx(18.14 / 1.000119947)  # '18,14' Joules over its interval
    assert "1,310.43 J" in runs[0]["notes"]  # the cores' count over the 44 intervals


def test_the_summary_is_the_package_and_the_memory() -> None:
    imported, fmt = load(SUMMARY.encode(), "perf.txt")
    m = imported.runs[0]["metrics"]
    assert fmt == "perf-stat" and m["energy_j"] == pytest.approx(1310.43 + 81.20)
    assert m["energy_boundary"] == "cpu_package" and m["duration_s"] == pytest.approx(43.825457077)
    assert "parts of the package, not added" in imported.runs[0]["notes"]


@pytest.mark.parametrize(("text", "value"), [("18,14", 18.14), ("1,310.43", 1310.43), ("1.310,43", 1310.43),
                                             ("1,310", 1310.0), ("35.43", 35.43)])
def test_counts_in_any_locale(text: str, value: float) -> None:
    assert joules(text) == pytest.approx(value)
