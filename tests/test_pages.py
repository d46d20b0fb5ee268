"""AppTest for every page against a seeded fixture database, asserting on what is shown."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from db import Store
from ingest import import_file

REPO = Path(__file__).resolve().parent.parent
APP = str(REPO / "app.py")
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def db(seeded_db: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("JOULEBENCH_DB", str(seeded_db))
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    return seeded_db


def _page(page: str, **query: str | list[str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(query)
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def _plain(markdown: str) -> str:
    """Text the pages escaped for Markdown (explorer.markdown.md), as it reads on screen."""
    return re.sub(r"\\(.)", r"\1", markdown)


def _reference(file: str) -> list[dict[str, str]]:
    with open(REPO / "sample_data" / file, newline="") as f:
        return list(csv.DictReader(f))


def test_compare_a100_vs_t4_bert_large_inference(db: Path) -> None:
    at = _page("compare", workload="bert-large-squad", mode="infer", precision="fp16", seq="384",
               device=["A100 40GB", "Tesla T4"])
    bars = at.dataframe[0].value
    assert sorted(bars["batch_size"].unique().tolist()) == [1, 2, 4, 8]
    rows = [r for r in _reference("runs_nvidia_bert_inference.csv")
            if (r["workload"], r["precision"], r["seq_len"]) == ("bert-large-squad", "fp16", "384")]
    a100 = {r["batch_size"]: float(r["throughput_sps"]) for r in rows if r["device_name"] == "A100 40GB"}
    t4 = {r["batch_size"]: float(r["throughput_sps"]) for r in rows if r["device_name"] == "Tesla T4"}
    expected = math.exp(sum(math.log(a100[b] / t4[b]) for b in t4) / len(t4))
    ratios = at.dataframe[1].value
    statement = ratios["statement"].iloc[0]
    assert statement.startswith("A100 40GB") and f"is {expected:.1f}x faster than Tesla T4" in statement
    assert at.get("plotly_chart")
    assert at.query_params["device"] == ["A100 40GB", "Tesla T4"]  # the selection is in the URL


def test_compare_blog_joules_per_example_with_boundary(db: Path) -> None:
    at = _page("compare", device=["GeForce RTX 3060", "Jetson AGX Xavier"], mode="infer", metric="j_per_sample")
    bars = at.dataframe[0].value
    by_series = dict(zip(bars["series"], bars["Energy per example (J)"]))
    assert any(v == 6.9 and "RTX 3060" in k for k, v in by_series.items())
    assert any(v == 11.5 and "AGX" in k for k, v in by_series.items())
    assert set(bars["boundary"]) == {"wall"} and set(bars["method"]) == {"reported"}
    assert "1.7x better" in " ".join(at.dataframe[1].value["statement"])


def test_compare_defaults_to_the_most_common_workload(db: Path) -> None:
    at = _page("compare")
    assert "workload bert-large-squad, mode infer (the most common)" in _plain(at.caption[0].value)
    devices = {label.split(" · ")[0] for label in at.dataframe[0].value["series"]}
    assert devices == {"A100 40GB", "Tesla T4", "Tesla V100 16GB", "Tesla V100 32GB"}


def test_compare_empty_selection_explains(db: Path) -> None:
    at = _page("compare", device="Tesla T4", mode="train")
    assert "No run in this selection" in at.info[0].value
    assert not at.get("plotly_chart")


def test_compare_warns_when_boundaries_mix(db: Path, fixture_file: Path) -> None:
    import_file(fixture_file, db=db)
    at = _page("compare", metric="j_per_sample", mode="infer", workload=["bert-tiny", "bert-large-ner"])
    assert "mixes measurement boundaries (estimated, wall)" in at.warning[0].value


def test_run_detail_shows_timeline_steps_and_provenance(db: Path, fixture_file: Path) -> None:
    report = import_file(fixture_file, db=db)
    at = _page("run_detail", run_id=report.run_ids[0])
    assert at.success[0].value == "Status: ok"
    assert {m.label: m.value for m in at.metric}["Throughput (samples/s)"] == "615.4"
    assert len(at.get("plotly_chart")) == 2
    assert "window_short_for_sensor" in _plain(at.warning[0].value)
    shown = " ".join(str(df.value.to_dict()) for df in at.dataframe)
    assert fixture_file.name in shown and "estimated" in shown
    oom = _page("run_detail", run_id=report.run_ids[1])
    assert oom.error[0].value.startswith("Status: oom")
    assert {m.label: m.value for m in oom.metric}["Energy per example (J)"] == "missing"


def test_upload_previews_and_imports_good_and_refuses_bad(db: Path, fixture_file: Path) -> None:
    at = _page("upload")
    at.file_uploader[0].upload(fixture_file.name, fixture_file.read_bytes())
    at.file_uploader[0].upload("broken.json", b'{"format": "joulebench-result", "schema_version": 1, "runs": [{}]}')
    at.run()
    assert "broken.json: runs[0]" in _plain(at.error[0].value)
    assert any("2 run(s)" in m.value for m in at.markdown)
    at.button[0].click().run()
    assert "result_v1_cpu_runs.json: 2 run(s) added" in _plain(at.success[0].value)
    with Store.open(db) as store:
        assert store.query("SELECT count(*) AS n FROM sources WHERE file_name = 'broken.json'")["n"][0] == 0


def test_cost_ranking_moves_with_electricity_price(db: Path) -> None:
    import_file(FIXTURES / "result_v1_cost_tradeoff.json", db=db)
    at = _page("cost")
    at.selectbox(key="workload").set_value("bert-base-squad").run()
    at.selectbox(key="mode").set_value("infer").run()

    def order() -> list[str]:
        ranked = at.dataframe[0].value
        return [d for d in ranked["device_name"] if d.startswith("Test GPU")]

    at.number_input(key="kwh").set_value(0.10).run()
    assert order() == ["Test GPU Frugal", "Test GPU Efficient"]
    at.number_input(key="kwh").set_value(1.50).run()
    assert order() == ["Test GPU Efficient", "Test GPU Frugal"]
    assert "3,600,000" in at.code[0].value
    at.number_input(key="max_power").set_value(100.0).run()
    assert order() == ["Test GPU Efficient"]


def test_devices_catalog_and_edit_persists(db: Path) -> None:
    import polars as pl

    from db import queries
    from explorer import data

    at = _page("devices")
    assert "29 devices" in at.caption[0].value
    modes = at.dataframe[-1].value
    assert len(modes) >= 16 and "Jetson AGX Xavier" in set(modes["device_name"])
    with Store.open(db) as store:
        before = queries.devices(store)
    is_t4 = pl.col("device_name") == "Tesla T4"
    edited = before.with_columns(pl.when(is_t4).then(2199.0).otherwise(pl.col("price_amount")).alias("price_amount"))
    changed = data.changed_rows(before, edited)
    assert changed["device_name"].to_list() == ["Tesla T4"]
    data.save_device_edits(str(db), changed)
    with Store.open(db) as store:
        row = queries.devices(store).filter(pl.col("device_name") == "Tesla T4").row(0, named=True)
    assert row["price_amount"] == 2199.0
    again = _page("devices")
    assert not again.exception


def test_upload_another_tools_file_with_a_device_hint(db: Path) -> None:
    log = FIXTURES / "formats" / "jetson" / "agentmesh-agx-orin_jtop_log.csv"
    at = _page("upload")
    at.file_uploader[0].upload(log.name, log.read_bytes())
    at.selectbox(key="h_mode").set_value("infer")
    at.text_input(key="h_device").set_value("Jetson AGX Orin").run()
    assert not at.error
    assert any("jtop" in m.value and "1 run(s)" in m.value for m in at.markdown)
    at.button[0].click().run()
    assert f"{log.name}: 1 run(s) added" in _plain(at.success[0].value)
    with Store.open(db) as store:
        row = store.query("SELECT device_name, mode FROM runs WHERE origin_format = 'jtop'").row(0)
        supplied = store.query("SELECT label, value, origin, via FROM run_labels ORDER BY label").rows()
    assert row == ("Jetson AGX Orin", "infer")
    assert ("device", "Jetson AGX Orin", "user", "import") in supplied
    assert ("mode", "infer", "user", "import") in supplied


def test_upload_without_labels_imports_then_the_review_fills_them(db: Path) -> None:
    log = FIXTURES / "formats" / "jetson" / "agentmesh-agx-orin_jtop_log.csv"
    at = _page("upload")
    at.file_uploader[0].upload(log.name, log.read_bytes())
    at.run()
    assert not at.error  # a log does not say which device ran or what: imported anyway, the gap shown
    shown = " ".join(_plain(c.value) for c in at.caption)
    assert "Not stated in this file: device (its run), mode (its run), precision (its run), batch size" in shown
    at.button[0].click().run()
    assert f"{log.name}: 1 run(s) added" in _plain(at.success[0].value)
    assert at.subheader[0].value == "Review: what the imported files do not state"
    device_input = next(w for w in at.text_input if str(w.key).startswith("label_source_"))
    form = str(device_input.key).removesuffix("_device")
    device_input.set_value("Jetson AGX Orin 64GB")
    at.selectbox(key=f"{form}_mode").set_value("idle")
    next(b for b in at.button if b.label == "Save labels").click().run()
    assert not at.exception and not at.error
    done = _plain(at.success[-1].value)
    assert "device = Jetson AGX Orin 64GB (1 filled)" in done and "mode = idle (1 filled)" in done
    assert "Every label is now stated or supplied" in done  # an idle run takes no precision or batch size
    with Store.open(db) as store:
        run = store.query("SELECT r.device_name, r.mode, d.kind FROM runs r JOIN devices d USING (device_name) "
                          "WHERE origin_format = 'jtop'").row(0)
        supplied = store.query("SELECT label, origin, via FROM run_labels ORDER BY label").rows()
    assert run == ("Jetson AGX Orin 64GB", "idle", "jetson")  # kind from the name: a new catalog entry
    assert supplied == [("device", "user", "upload_page"), ("mode", "user", "upload_page")]


def test_upload_a_result_file_with_its_power_log(db: Path) -> None:
    from tests.test_import_attach import GTX_SWEEP, NVIDIA_SMI

    at = _page("upload")
    at.file_uploader(key="files").upload("sweep.json", GTX_SWEEP)
    at.file_uploader(key="power_log").upload(NVIDIA_SMI.name, NVIDIA_SMI.read_bytes())
    at.run()
    assert not at.error
    assert any("power log" in c.value and "attached to 2 of 4 run(s)" in _plain(c.value) for c in at.caption)
    at.button[0].click().run()
    assert "sweep.json: 4 run(s) added" in _plain(at.success[0].value)
    with Store.open(db) as store:
        run = store.query("SELECT energy_j, energy_boundary, energy_method FROM runs WHERE run_id = 'a'").row(0)
    assert run[0] == pytest.approx(9.94284, rel=1e-6) and run[1:] == ("gpu_board", "sampled")  # awk, see there


def _section(at: AppTest, field: str) -> dict[str, str]:
    """The Run detail section (a field/value table) that shows `field`, as a dict; the page's other
    tables (the grade's reasons, the configuration's repeats) have other columns."""
    frame = next(df.value for df in at.dataframe if "field" in df.value and field in set(df.value["field"]))
    return dict(zip(frame["field"], frame["value"]))


def test_run_detail_fills_what_its_file_did_not_state(db: Path) -> None:
    report = import_file(FIXTURES / "formats" / "codecarbon" / "jetson-nano-edgeai_emissions.csv", db=db)
    at = _page("run_detail", run_id=report.run_ids[0])
    assert at.subheader[0].value == "Not stated by its file"
    shown = _section(at, "device_name")
    assert shown["device_name"] == "not stated" and shown["mode"] == "not stated"
    at.text_input(key="label_run_source_device").set_value("Jetson Nano 4GB")
    at.selectbox(key="label_run_source_mode").set_value("infer")
    at.selectbox(key="label_run_source_precision").set_value("fp32")
    next(b for b in at.button if b.label == "Save labels").click().run()
    assert not at.exception and not at.error
    assert "Still not stated: batch size 1" in _plain(at.success[-1].value)
    shown = _section(at, "device_name")
    assert shown["device_name"].startswith("Jetson Nano 4GB (not in the file: supplied by ")
    assert "on Run detail" in shown["mode"] and shown["batch_size"] == "not stated"


def test_run_detail_shows_a_corrected_figure_beside_what_the_source_printed(db: Path) -> None:
    at = _page("run_detail", run_id="ref:runs_nvidia_bert_training:dgx1-16gb-squad-g4-fp16")
    assert any("Weak scaling 3.27, corrected: the source printed 3.62" in _plain(c.value) for c in at.caption)
    shown = _section(at, "weak_scaling")
    assert shown["weak_scaling"] == "3.27 (corrected; the source printed 3.62, see the notes)"
    assert "weak_scaling_as_printed" not in shown


def test_compare_shows_runs_whose_file_did_not_state_the_device(db: Path) -> None:
    log = FIXTURES / "formats" / "codecarbon" / "jetson-nano-edgeai_emissions.csv"
    import_file(log, db=db)
    at = _page("compare", mode="not stated", metric="power")
    assert "not stated" in at.multiselect(key="f_mode").options
    bars = at.dataframe[0].value
    assert bars["series"].tolist() == [f"not stated ({log.name})"] and bars["batch_size"].isna().all()


def test_every_page_opens_with_runs_whose_labels_are_not_stated(db: Path) -> None:
    import_file(FIXTURES / "formats" / "codecarbon" / "jetson-nano-edgeai_emissions.csv", db=db)  # no device, mode
    overview = _page("overview")
    sources = overview.dataframe[-1].value
    assert "device 1, mode 1, precision 1, batch size 1" in set(sources["not_stated"])
    workloads = overview.dataframe[1].value
    assert "not stated" in set(workloads["mode"])
    for page in ("compare", "cost", "devices", "run_detail", "upload", "new_run"):
        assert not _page(page).exception, page
