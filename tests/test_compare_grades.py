"""Compare on real H100 repeats (tests/fixtures/h100, written by JouleBench on an H100): one bar
per configuration with its 95 % interval and n, ratios that carry their interval and say when a
difference is within the noise, trust grades with a legend, and a warning on low-grade ratios."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from ingest import import_file
from tests.helpers import shown

REPO = Path(__file__).resolve().parent.parent
H100 = Path(__file__).parent / "fixtures" / "h100"
DEVICE = "H100 SXM"  # the catalog entry of nvidia-smi's "NVIDIA H100 80GB HBM3" (HBM3: the SXM part)


def _file_values(name: str, metric: str) -> list[float]:
    """The metric of every measured run in a fixture, read from the file itself."""
    doc = json.loads((H100 / name).read_text())
    return [r["metrics"][metric] for r in doc["runs"] if r["config"]["workload"] != "idle"]


def _array(value: object) -> list:
    """A plotly JSON array: a list, or numbers packed as {"dtype", "bdata"} (plotly 6)."""
    if isinstance(value, dict) and "bdata" in value:
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).tolist()
    return list(value)  # type: ignore[call-overload]


@pytest.fixture
def db(seeded_db: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("repeats-short-windows.json", "repeats-10s-windows.json"):
        import_file(H100 / name, db=seeded_db)
    monkeypatch.setenv("JOULEBENCH_DB", str(seeded_db))
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    return seeded_db


def _h100_bars(db: Path, metric_key: str):  # type: ignore[no-untyped-def]
    import polars as pl

    from explorer import compare, data

    runs = data.runs(str(db)).filter((pl.col("device_name") == DEVICE) & (pl.col("workload") == "bert-large-squad")
                                     & (pl.col("precision") == "fp16") & (pl.col("batch_size") == 8))
    labelled, _ = compare.with_labels(runs.filter(pl.col("mode") != "idle"))
    metric = compare.METRICS[metric_key]
    return compare.bars(labelled, metric), metric


def test_each_configuration_is_one_bar_with_its_interval_n_and_grade(db: Path) -> None:
    bars, _ = _h100_bars(db, "j_per_sample")
    rows = {r["series"]: r for r in bars.iter_rows(named=True)}
    short, long = rows[f"{DEVICE} · tag short"], rows[f"{DEVICE} · tag long"]  # never pooled into one bar
    for row, name in ((short, "repeats-short-windows.json"), (long, "repeats-10s-windows.json")):
        values = _file_values(name, "j_per_sample")
        assert row["n"] == len(values) and row["value"] == pytest.approx(sum(values) / len(values))
        assert row["ci_low"] < row["value"] < row["ci_high"]
    assert (short["grade"], long["grade"]) == ("D", "A")  # too short for the sensor vs decision grade
    # the short windows scatter: their interval is wider than the 10 s repeats'
    assert short["ci_high"] - short["ci_low"] > 2 * (long["ci_high"] - long["ci_low"])


def test_a_ratio_carries_its_interval_and_says_when_it_is_within_the_noise(db: Path) -> None:
    bars, metric = _h100_bars(db, "j_per_sample")
    from explorer import compare_ratios

    ratios = compare_ratios.ratio_table(bars, metric)
    assert ratios.height == 1  # each pair stated once, from the better side
    row = ratios.row(0, named=True)
    short, long = _file_values("repeats-short-windows.json", "j_per_sample"), \
        _file_values("repeats-10s-windows.json", "j_per_sample")
    expected = (sum(short) / len(short)) / (sum(long) / len(long))
    assert row["A"].endswith("tag short") and row["Ratio (A ÷ B)"] == pytest.approx(expected, abs=1e-3)
    # 5 scattered short windows cannot show the 10 % difference: the interval holds 1x
    assert row["Within the noise"].startswith("yes") and row["Trust grade"] == "D"
    low, high = (float(x.rstrip("x")) for x in row["95 % interval"].split(" to "))
    assert low < 1 < high and low < expected < high
    assert "within the noise" in row["Statement"] and f"{expected:.2f}x ({low:.2f}-{high:.2f})" in row["Statement"]
    warning = compare_ratios.low_grade_note(ratios) or ""
    assert "A ratio here rests on figures graded D" in warning and "tag short vs" in warning


def test_a_clear_difference_is_stated_with_its_interval() -> None:
    import polars as pl

    from explorer import compare, compare_ratios

    # two configurations' repeats, far apart: 2x with a tight interval
    bars = pl.DataFrame({"series": ["A100", "V100"], "config": ["batch 8", "batch 8"],
                         "values": [[200.0, 202.0, 198.0], [100.0, 101.0, 99.0]], "grade": ["A", "B"]})
    row = compare_ratios.ratio_table(bars, compare.METRICS["throughput"]).row(0, named=True)
    assert (row["A"], row["B"], row["Within the noise"], row["Trust grade"]) == ("A100", "V100", "no", "B")
    low, high = (float(x.rstrip("x")) for x in row["95 % interval"].split(" to "))
    assert 1.9 < low < 2.0 < high < 2.1
    assert row["Statement"] == f"A100 is 2.00x ({low:.2f}-{high:.2f}) faster than V100"
    single = bars.with_columns(pl.Series("values", [[200.0], [100.0]]))
    row = compare_ratios.ratio_table(single, compare.METRICS["throughput"]).row(0, named=True)
    assert row["Statement"] == "A100 is 2.0x faster than V100 (single runs: no interval)"
    assert row["Within the noise"] == "unknown: single runs"


def test_compare_page_draws_error_bars_grades_and_the_legend(db: Path) -> None:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.switch_page("pages/compare.py")
    at.query_params.update({"device": [DEVICE], "workload": ["bert-large-squad"], "precision": ["fp16"],
                            "batch": ["8"], "metric": ["j_per_sample"]})
    at.run()
    assert not at.exception, at.exception
    traces = {t["name"]: t for t in json.loads(at.get("plotly_chart")[0].proto.spec)["data"]}
    short = traces[f"{DEVICE} · tag short"]
    plus, minus = _array(short["error_y"]["array"]), _array(short["error_y"]["arrayminus"])
    assert plus[0] > 0 and minus[0] > 0  # the 95 % interval
    assert list(_array(short["text"])) == ["grade D"]
    assert list(_array(traces[f"{DEVICE} · tag long"]["text"])) == ["grade A"]
    assert "What the grades mean" in [e.label for e in at.expander]
    statements = " ".join(shown(m.value) for m in at.markdown)
    assert "within the noise" in statements and "0.90x (" in statements
    assert any("A ratio here rests on figures graded D" in shown(w.value) for w in at.warning)
    captions = " ".join(shown(c.value) for c in at.caption)
    assert "95 % confidence interval" in captions and "trust grade" in captions
    table = next(df.value for df in at.dataframe if "Trust grade" in df.value and "Runs" in df.value)
    assert sorted(set(table["Trust grade"])) == ["A", "D"]
    assert not math.isnan(table["Runs"].sum())


def test_the_selection_csv_carries_each_runs_grade_and_reasons(db: Path) -> None:
    import csv
    import io

    import polars as pl

    from explorer import data

    runs = data.runs(str(db)).filter(pl.col("source_file") == "repeats-short-windows.json")
    rows = list(csv.DictReader(io.StringIO(data.selection_csv(runs).decode())))
    measured = [r for r in rows if r["mode"] != "idle"]
    assert len(measured) == 5 and {r["trust_grade"] for r in measured} == {"D"}
    assert all("window" in r["trust_reasons"] for r in measured)  # why: too short for the sensor
    assert {r["config_grade"] for r in measured} == {"D"}
