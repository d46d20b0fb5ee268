"""Run detail (AppTest): the trust grade badge, its reasons and legend, and the configuration's
repeats with their 95 % intervals, on the H100 evidence."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from db import Store
from ingest import import_file

APP = str(Path(__file__).resolve().parent.parent / "app.py")
H100 = Path(__file__).parent / "fixtures" / "h100"


@pytest.fixture
def db(seeded_db: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("JOULEBENCH_DB", str(seeded_db))
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    for name in ("repeats-short-windows.json", "repeats-10s-windows.json"):
        import_file(H100 / name, db=seeded_db)
    return seeded_db


def _first_run(db: Path, file_name: str) -> str:
    with Store.open_read_only(db) as store:
        return str(store.query("SELECT run_id FROM runs WHERE origin_file_name = ? AND workload != 'idle' "
                               "ORDER BY started_at LIMIT 1", [file_name]).item())


def _detail(run_id: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"run_id": run_id})
    at.run()
    at.switch_page("pages/run_detail.py").run()
    assert not at.exception, at.exception
    return at


def _text(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown) + "\n" + "\n".join(c.value for c in at.caption)


def _tables(at: AppTest) -> list[dict[str, list]]:
    return [{k: list(v.values()) for k, v in df.value.to_dict().items()} for df in at.dataframe]


def test_a_short_window_shows_grade_d_with_its_reasons_and_the_legend(db: Path) -> None:
    at = _detail(_first_run(db, "repeats-short-windows.json"))
    text = _text(at)
    assert ":red-badge[Trust grade D]" in text  # the badge
    assert "**D**: unreliable" in text
    tables = _tables(at)
    why = next(t for t in tables if t.get("Check") and "window" in t["Check"])
    caps = dict(zip(why["Check"], why["Best grade it allows"]))
    assert caps["window"] == "C" and caps["steady state"] == "D" and caps["agreement"] == "D"
    assert any("updates of a sensor" in w for w in why["Why"])
    legend = next(t for t in tables if "Meaning" in t)
    assert legend["Grade"] == ["A", "B", "C", "D"] and legend["Meaning"][0].startswith("decision grade")
    # the configuration: five repeats, J/sample 0.579 with its interval, aggregate D
    assert any(s.value == "This configuration: 5 of 5 runs ok" for s in at.subheader)
    assert ":red-badge[Aggregate trust grade D]" in text
    figures = next(t for t in tables if "Figure" in t)
    row = figures["Figure"].index("Energy per example (J)")
    assert figures["Repeats (n)"][row] == 5 and figures["Mean"][row] == "0.579"
    assert " to " in figures["95 % interval"][row]
    assert "configuration: 0.5789 ± 0.076 (n 5)" in text


def test_a_ten_second_repeat_shows_grade_a(db: Path) -> None:
    at = _detail(_first_run(db, "repeats-10s-windows.json"))
    text = _text(at)
    assert ":green-badge[Trust grade A]" in text and ":green-badge[Aggregate trust grade A]" in text
    assert "configuration: 0.6430 ± 0.029 (n 3)" in text
    assert "grade A" in at.selectbox(key="run").format_func(at.selectbox(key="run").value)
