from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")


@pytest.fixture
def app(seeded_db: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("JOULEBENCH_DB", str(seeded_db))
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    return AppTest.from_file(APP, default_timeout=60)


def test_overview_shows_reference_data(app: AppTest) -> None:
    app.run()
    assert not app.exception
    assert app.title[0].value == "JouleBench"
    metrics = {m.label: m.value for m in app.metric}
    assert int(metrics["Runs"]) > 150
    assert int(metrics["Devices in catalog"]) >= 5
    charts = app.get("plotly_chart")
    assert len(charts) == 2
    headline = charts[0].proto.spec
    for device in ("A100 40GB", "Tesla T4", "Tesla V100 16GB"):
        assert device in headline


def test_overview_on_an_empty_database_explains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from db import Store

    empty = tmp_path / "empty.duckdb"
    Store.open(empty, seed_reference=False).close()
    monkeypatch.setenv("JOULEBENCH_DB", str(empty))
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert "No runs match the headline comparison" in at.info[0].value


def test_busy_database_shows_an_error_not_a_traceback(seeded_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.helpers import database_held_by_another_process

    monkeypatch.setenv("JOULEBENCH_DB", str(seeded_db))
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    with database_held_by_another_process(seeded_db):
        at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert "held by another process" in at.error[0].value
