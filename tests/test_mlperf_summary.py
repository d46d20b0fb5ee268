"""MLPerf Inference summary.csv (importers.mlperf_summary), on a real v5.0 submission's file: Result in each row's
Units, the system's accelerators as the device and its count, an LLM's result in a unit other than tokens/s left out,
and a power row joined to its performance row."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import load
from tests.helpers import load_fixture

SUMMARY = Path(__file__).parent / "fixtures" / "formats" / "mlperf_inference" / "gigacomputing-v5.0-summary-h200x8.csv"


def test_results_in_their_rows_units() -> None:
    runs, fmt, warnings = load_fixture(SUMMARY)
    assert fmt == "mlperf-summary" and len(runs) == 27
    by = {(r["config"]["model"], r["config"]["tag"].split(",")[0]): r for r in runs}
    llama = by[("llama2-70b-99", "Offline")]
    assert llama["metrics"]["tokens_per_s"] == 34889.5 and llama["config"]["gpu_count"] == 8
    assert llama["device"]["name"] == "NVIDIA H200-SXM-141GB"
    assert by[("resnet50", "Server")]["metrics"]["throughput_sps"] == 676219.0
    assert ("llama3_1-405b", "Offline") not in by  # 558.526 'Samples/s' are its tokens/s: never stored as samples
    assert sum("MLPerf states an LLM's result in tokens/s" in w for w in warnings) == 2


def test_a_power_row_joins_its_performance_row() -> None:
    head = SUMMARY.read_text().splitlines()
    row = head[3]  # rgat Offline: 418270.0 Samples/s
    power = row.replace(",418270.0,", ",1523.4,").replace(",Samples/s,", ",Watts,").replace(",False,", ",True,")
    run = load("\n".join([head[0], row, power]).encode(), "summary.csv")[0].runs[0]
    assert run["metrics"]["throughput_sps"] == 418270.0 and run["metrics"]["avg_power_w"] == pytest.approx(1523.4)
    assert run["metrics"]["energy_boundary"] == "wall"
