"""Issue 39, held-out sets 107 to 110: files read wrong or refused unaided, each a fixture after it was counted
(tests/fixtures/formats/heldout107_110, SOURCES.md), with what it had been read as.
"""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

import pytest

from tests.helpers import unaided

HELD = Path(__file__).parent / "fixtures" / "formats" / "heldout107_110"

imp = partial(unaided, HELD)


def _first_table(name: str) -> list[list[str]]:
    """The rows of a Markdown file's first pipe table, its header first."""
    lines = (HELD / name).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| "))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines[start:end] if line.startswith("| ")]


def test_two_statistics_in_one_cell_are_split_into_a_column_each() -> None:
    f = imp("SUMMARY.md")  # had been refused: '199 / 221' is not a number
    rows = _first_table("SUMMARY.md")[1:]  # a second table repeats the runs
    assert len(f.runs) == len(rows) == 18
    for run, row in zip(f.runs, rows, strict=True):
        ttft = row[6]
        m = re.fullmatch(r"(\d+) / (\d+)", ttft)
        if m:
            assert (run["metrics"]["ttft_p50_ms"], run["metrics"]["ttft_p90_ms"]) == (float(m[1]), float(m[2]))
        else:  # '~74 (avg)': an estimate of another statistic, in neither column
            assert "ttft_p50_ms" not in run["metrics"] and "ttft_p90_ms" not in run["metrics"]
    assert f.runs[0]["metrics"]["latency_p90_ms"] == 318.0 and f.runs[0]["metrics"]["duration_s"] == pytest.approx(
        64.3 * 60)
    assert any("split into a column each" in w and "'~74 (avg)'" in w for w in f.warnings)


def test_the_device_a_title_names_before_what_was_measured() -> None:
    f = imp("SUMMARY.md")  # '# NVIDIA Jetson AGX Thor Developer Kit eval results'
    assert {r["device"]["name"] for r in f.runs} == {"NVIDIA Jetson AGX Thor Developer Kit"}
    assert {r["device"]["kind"] for r in f.runs} == {"jetson"}
