"""Issue 39: a DataFrame printed by pandas (`print(df)`, `df.to_string(index=False)`) pasted into a log or notes is a
table: every column right-aligned to its name's end, a value reaching left past a short name one space from the
column before ('192.3 NVIDIA A10'), the index's row numbers left of the first name. Printed here by pandas itself."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from importers import load
from joulebench import units
from tests.helpers import refusal

FRAME = pd.DataFrame({"model": ["resnet50", "resnet50", "vit_b_16"], "batch_size": [1, 8, 8],
                      "latency_ms": [5.2, 18.4, 40.1], "throughput_img_s": [192.3, 434.8, 199.5],
                      "gpu": ["NVIDIA A10", "NVIDIA A10", "NVIDIA A10"]})


@pytest.mark.parametrize("printed", [str(FRAME), "Results:\n" + FRAME.to_string(index=False)],
                         ids=["with its index", "without"])
def test_a_pandas_printout_is_read_column_by_column(printed: str) -> None:
    assert "192.3 NVIDIA A10" in printed or "192.3  NVIDIA A10" in printed  # a value one space from its neighbour
    imported, fmt = load((printed + "\n").encode(), "bench.txt")
    assert fmt == "general-table"
    runs = imported.runs
    assert [r["metrics"]["throughput_sps"] for r in runs] == [192.3, 434.8, 199.5]
    assert [r["metrics"]["latency_avg_ms"] for r in runs] == [5.2, 18.4, 40.1]
    assert [r["config"]["batch_size"] for r in runs] == [1, 8, 8]
    assert {r["device"]["name"] for r in runs} == {"NVIDIA A10"}
    assert [r["config"]["model"] for r in runs] == ["resnet50", "resnet50", "vit_b_16"]


def test_a_row_reaching_past_the_headers_end_is_no_pandas_table() -> None:
    printed = FRAME.to_string(index=False).splitlines()
    printed[1] = printed[1] + "  extra"  # a row longer than its header: not right-aligned, not read as pandas'
    said = refusal(("\n".join(printed) + "\n").encode(), "bench.txt")
    assert "'192.3 NVIDIA A10' is not a number" in said  # read left-aligned, the joined cell refused, named


@pytest.mark.parametrize(("header", "kind"), [("throughput_img_s", "item_rate"), ("samples_s", "item_rate"),
                                              ("time_per_img_s", "time"), ("latency_per_sample_s", "time"),
                                              ("runtime_s", "time")])
def test_items_a_second_written_as_a_suffix(header: str, kind: str) -> None:
    unit = units.header_unit(header)[1]
    assert unit is not None and unit.kind == kind


def test_a_markdown_table_is_offered_to_the_mapping_step() -> None:
    """A text whose one table no reader can read (figures without units) is mapped like a CSV: its columns are the
    table's, not one column of the whole line."""
    from importers.base import Source
    from importers.mapping import read_table
    from importers.mapping_guess import guess

    text = "| model | 1 | 2 |\n|---|---:|---:|\n| phi-2 | 171.5 | 90.2 |\n| starcoder | 32.5 | 44.1 |\n"
    table = read_table(Source.single(text.encode(), "pivot.md"))
    assert table.header == ["model", "1", "2"] and len(table.rows) == 2
    assert guess(table)["model"] == ("model", None)
    assert "holds no benchmark figures" in refusal(text.encode(), "pivot.md")  # unaided: no unit, so refused


UNITLESS = (Path(__file__).parent / "fixtures" / "formats" / "general_table"
            / "inference-lab-distilbert-unitless-latency-throughput.csv")


def test_units_the_rows_prove_throughput_times_latency_over_batch() -> None:
    """`p50,p95,p99,mean,...,batch_size,...,throughput` with no unit anywhere: throughput x p50 / batch_size is 1000 in
    every row, so p50 is in ms and the throughput per second, and its sibling times (p95, p99, mean) in ms too."""
    imported, fmt = load(UNITLESS.read_bytes(), UNITLESS.name)
    assert fmt == "general-table" and len(imported.runs) == 36
    first = imported.runs[0]["metrics"]
    assert first["latency_p50_ms"] == pytest.approx(34.83186895027757)
    assert first["throughput_sps"] == pytest.approx(28.709340903512764)
    assert first["latency_p99_ms"] == pytest.approx(36.962770856916904)
    assert any("= 1000 in every row" in w for w in imported.warnings)


def test_units_the_rows_do_not_prove_are_not_read() -> None:
    rows = UNITLESS.read_text().splitlines()
    cells = rows[3].split(",")
    cells[-1] = str(float(cells[-1]) * 1.05)  # one row 5 % off: the writer did not compute one from the other
    rows[3] = ",".join(cells)
    assert "map its columns" in refusal(("\n".join(rows) + "\n").encode(), "t.csv")
    seconds = b"model,latency,throughput\na,0.5,2.0\nb,0.25,4.0\nc,0.2,5.0\n"  # 1 in every row: seconds, per second
    imported, _ = load(seconds, "s.csv")
    assert [r["metrics"]["latency_avg_ms"] for r in imported.runs] == [500.0, 250.0, 200.0]
