"""A read-only store never shows an edit control (issue 28 item 7): on a team store in the explorer the
Devices page offered its editable grid ('Editable: price...') and Run detail the 'Save labels' form, and
refused only after the click. On a team store they are shown as tables and text that say why; on a file
they are still offered."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from db.lake import LakeUrl
from db.push import push
from ingest.service import import_file
from tests.helpers import open_page, page_texts, shown

JTOP = Path(__file__).parent / "fixtures" / "formats" / "jetson" / "agentmesh-agx-orin_jtop_log.csv"


def _open(page: str, params: dict[str, Any]) -> Any:
    import streamlit as st

    st.cache_data.clear()  # the store changes between the tests' pages: nothing read before may be reused
    st.cache_resource.clear()
    return open_page(page, params)


def _controls(at: Any) -> dict[str, Any]:
    """What a person could edit or save on the page."""
    texts = " ".join(shown(t) for t in page_texts(at))
    return {"editors": len(at.get("arrow_data_frame")) + sum(1 for d in at.dataframe if d.proto.editing_mode),
            "save buttons": [b.label for b in at.button if "Save" in b.label],
            "label inputs": [w.key for w in at.text_input if str(w.key).startswith("label_")],
            "Editable:": "Editable:" in texts}


@pytest.fixture
def stores(seeded_template: Path, tmp_path: Path) -> tuple[Path, str, str]:
    """A runner's file holding a power log that states no device (so Run detail has labels to fill), and a
    team store it was pushed to."""
    local = tmp_path / "box-a.duckdb"
    shutil.copy(seeded_template, local)
    run_id = import_file(JTOP, db=local).run_ids[0]
    url = f"ducklake:sqlite:{tmp_path / 'team.sqlite'}"
    push(local, LakeUrl.parse(url), machine="box-a")
    return local, url, run_id


def test_a_team_store_offers_no_edit_control_and_a_file_still_does(stores: tuple[Path, str, str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    local, url, run_id = stores
    monkeypatch.setenv("JOULEBENCH_DB", str(local))
    monkeypatch.delenv("JOULEBENCH_STORE", raising=False)
    devices, detail = _open("devices", {}), _open("run_detail", {"run_id": run_id})
    assert _controls(devices)["Editable:"] and _controls(devices)["editors"] >= 2  # the catalog and the rates
    assert "Save labels" in _controls(detail)["save buttons"] and _controls(detail)["label inputs"]

    monkeypatch.setenv("JOULEBENCH_STORE", url)
    monkeypatch.setenv("JOULEBENCH_DB", str(local.with_name("never-created.duckdb")))
    devices, detail = _open("devices", {}), _open("run_detail", {"run_id": run_id})
    for at in (devices, detail):
        controls = _controls(at)
        assert controls == {"editors": 0, "save buttons": [], "label inputs": [], "Editable:": False}, controls
        assert not at.error, [e.value for e in at.error]
    said = " ".join(shown(t) for t in page_texts(devices))
    assert "Not editable here: the team store is read-only in the explorer" in said
    assert devices.dataframe and any("Tesla T4" in str(d.value) for d in devices.dataframe)  # shown, as a table
    said = " ".join(shown(t) for t in page_texts(detail))
    assert "Not stated in" in said and "Not editable here" in said  # what is missing, and where it is filled
