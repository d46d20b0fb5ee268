"""AppTest for every page against a seeded fixture database, asserting on what is shown."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from db import Store
from ingest import import_file
from tests.helpers import shown

REPO = Path(__file__).resolve().parent.parent
APP = str(REPO / "app.py")
FIXTURES = Path(__file__).parent / "fixtures"


def _page(page: str, **query: str | list[str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(query)
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def _reference(file: str) -> list[dict[str, str]]:
    with open(REPO / "sample_data" / file, newline="") as f:
        return list(csv.DictReader(f))


def _frame(at: AppTest, *columns: str):  # type: ignore[no-untyped-def]
    """The first dataframe on the page that has all `columns` (pandas, as AppTest gives it)."""
    for df in at.dataframe:
        value = df.value
        data = getattr(value, "data", value)  # a Styler holds its frame in .data
        if set(columns) <= set(data.columns):
            return data
    raise AssertionError(f"no dataframe with columns {columns!r}")


def _plotted(chart) -> list[float]:  # type: ignore[no-untyped-def]
    """Every y value of a plotly chart on the page (plotly sends arrays base64-encoded)."""
    import base64
    import json

    import numpy as np

    values: list[float] = []
    for trace in json.loads(chart.proto.spec)["data"]:
        y = trace.get("y")
        if isinstance(y, dict) and "bdata" in y:
            values += np.frombuffer(base64.b64decode(y["bdata"]), dtype=np.dtype(y["dtype"])).tolist()
        elif isinstance(y, list):
            values += [v for v in y if isinstance(v, (int, float))]
    return values


def test_compare_a100_vs_t4_bert_large_inference(db: Path) -> None:
    at = _page("compare", workload="bert-large-squad", mode="infer", precision="fp16", seq="384",
               device=["A100 40GB", "Tesla T4"])
    table = _frame(at, "Throughput (samples/s)", "Batch")
    assert sorted(table["Batch"].unique().tolist()) == ["1", "2", "4", "8"]
    assert {"p99 latency per batch (ms)", "Energy per example (J)", "Cost per 1M samples (USD)"} <= set(table.columns)
    rows = [r for r in _reference("runs_nvidia_bert_inference.csv")
            if (r["workload"], r["precision"], r["seq_len"]) == ("bert-large-squad", "fp16", "384")]
    a100 = {r["batch_size"]: float(r["throughput_sps"]) for r in rows if r["device_name"] == "A100 40GB"}
    t4 = {r["batch_size"]: float(r["throughput_sps"]) for r in rows if r["device_name"] == "Tesla T4"}
    expected = math.exp(sum(math.log(a100[b] / t4[b]) for b in t4) / len(t4))
    statement = _frame(at, "Statement")["Statement"].iloc[0]
    assert statement.startswith("A100 40GB") and f"is {expected:.1f}x faster than Tesla T4" in statement
    assert "over 4 like-for-like configurations" in statement  # batch 1, 2, 4, 8: same seq, same precision
    assert at.get("plotly_chart")
    assert at.query_params["device"] == ["A100 40GB", "Tesla T4"]  # the selection is in the URL


def test_compare_a100_vs_t4_link_shows_a_multi_metric_table_relative_to_t4(db: Path) -> None:
    at = _page("compare", device=["A100 40GB", "Tesla T4"], ref="Tesla T4")
    table = _frame(at, "Throughput relative to Tesla T4 (×)")
    assert {"Throughput (samples/s)", "p99 latency per batch (ms)", "Runs", "Sequence length"} <= set(table.columns)
    t4 = table[table["Device"] == "Tesla T4"]["Throughput relative to Tesla T4 (×)"].dropna()
    assert len(t4) > 0 and all(abs(v - 1) < 1e-9 for v in t4)  # T4 against itself
    a100 = table[(table["Device"] == "A100 40GB") & (table["Precision"] == "FP16")
                 & (table["Workload"] == "bert-large-squad")]
    assert (a100["Throughput relative to Tesla T4 (×)"].dropna() > 1).all()
    tf32 = table[(table["Device"] == "A100 40GB") & (table["Precision"] == "TF32")]
    assert tf32["Throughput relative to Tesla T4 (×)"].isna().all()  # the T4 has no TF32: no like-for-like pair
    assert not at.info  # no dead end


def test_compare_blog_joules_per_example_with_boundary(db: Path) -> None:
    at = _page("compare", device=["GeForce RTX 3060", "Jetson AGX Xavier"], mode="infer", metric="j_per_sample")
    table = _frame(at, "Energy per example (J)", "Power setting")
    energy = table.dropna(subset=["Energy per example (J)"])
    assert sorted(energy["Energy per example (J)"]) == [6.9, 11.5]
    assert set(energy["Energy measured at"]) == {"at the wall"}
    assert "1.7x better" in " ".join(_frame(at, "Statement")["Statement"])


def test_compare_rtx3060_vs_agx_shows_data_and_the_stated_findings(db: Path) -> None:
    at = _page("compare", device=["GeForce RTX 3060", "Jetson AGX Xavier"])
    assert not [i for i in at.info if "No run" in i.value]  # no dead end with only the devices picked
    assert at.get("plotly_chart")
    said = " ".join(shown(m.value) for m in at.markdown)
    assert "GeForce RTX 3060 (BERT-Large CoNLL-2003 FP16 training, default PL 170 W) has 3x the throughput of " \
           "Jetson AGX Xavier" in said
    assert "Blog post (2021): RTX 3060 vs Jetson AGX Xavier for BERT-Large training · Performance Analysis" in said
    coverage = _frame(at, "Stated findings")
    assert set(coverage["Device"]) == {"GeForce RTX 3060", "Jetson AGX Xavier"}
    j_it = at.selectbox(key="metric").set_value("j_per_iteration").run()
    assert not j_it.exception and not j_it.info
    assert sorted(_plotted(j_it.get("plotly_chart")[0])) == [283.0, 420.0]  # J/iteration, charted


def test_compare_narrows_nothing_unseen(db: Path) -> None:
    at = _page("compare")
    assert "350 of 350 runs" in shown(at.caption[0].value) or "no filter, every run" in shown(at.caption[0].value)
    coverage = _frame(at, "Stated findings")
    assert {"A100 40GB", "GeForce RTX 3060", "Jetson AGX Xavier", "Tesla T4"} <= set(coverage["Device"])
    assert "bert-large-ner" in set(coverage["Workload"]) and "bert-large-squad" in set(coverage["Workload"])


def test_compare_reports_unknown_link_values(db: Path) -> None:
    at = _page("compare", device=["Tesla T4", "Nonexistent GPU"], metric="bogus")
    warned = shown(at.warning[0].value)
    assert "'Nonexistent GPU'" in warned and "'bogus'" in warned
    assert at.multiselect(key="f_device").value == ["Tesla T4"]  # what is applied is in the filter


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
    assert not at.error
    assert at.success[0].value == "Status: ok"
    assert {m.label: m.value for m in at.metric}["Throughput (samples/s)"] == "615.4"
    assert len(at.get("plotly_chart")) == 2
    assert "the measured window is short for the power sensor's update period" in shown(at.warning[0].value)
    tables = " ".join(str(df.value.to_dict()) for df in at.dataframe)
    assert fixture_file.name in tables and "estimated" in tables
    oom = _page("run_detail", run_id=report.run_ids[1])
    assert oom.error[0].value.startswith("Status: oom")
    assert {m.label: m.value for m in oom.metric}["Energy per example (J)"] == "not measured"


def test_run_detail_reports_an_unknown_run_id_instead_of_showing_another(db: Path) -> None:
    at = _page("run_detail", run_id="no-such-run")
    assert "No run with id no-such-run" in shown(at.error[0].value)
    assert at.selectbox(key="run").value is None
    assert not at.metric  # no other run's figures


def test_upload_previews_and_imports_good_and_refuses_bad(db: Path, fixture_file: Path) -> None:
    at = _page("upload")
    at.file_uploader[0].upload(fixture_file.name, fixture_file.read_bytes())
    at.file_uploader[0].upload("broken.json", b'{"format": "joulebench-result", "schema_version": 1, "runs": [{}]}')
    at.run()
    assert "broken.json: runs[0]" in shown(at.error[0].value)
    assert any("2 runs" in m.value for m in at.markdown)
    at.button[0].click().run()
    assert "result_v1_cpu_runs.json: 2 runs added" in shown(at.success[0].value)
    with Store.open(db) as store:
        assert store.query("SELECT count(*) AS n FROM sources WHERE file_name = 'broken.json'")["n"][0] == 0


def test_cost_ranking_moves_with_electricity_price(db: Path) -> None:
    import_file(FIXTURES / "result_v1_cost_tradeoff.json", db=db)
    at = _page("cost")
    at.selectbox(key="workload").set_value("bert-base-squad").run()
    at.selectbox(key="mode").set_value("infer").run()

    def order() -> list[str]:
        ranked = _frame(at, "Rank")
        return [d for d in ranked["Device"] if d.startswith("Test GPU")]

    at.number_input(key="kwh").set_value(0.10).run()
    assert order() == ["Test GPU Frugal", "Test GPU Efficient"]
    at.number_input(key="kwh").set_value(1.50).run()
    assert order() == ["Test GPU Efficient", "Test GPU Frugal"]
    assert "3,600,000" in at.code[0].value
    assert "Cheapest: Test GPU Efficient** at " in shown(at.markdown[0].value)
    assert " USD per 1M samples" in shown(at.markdown[0].value)  # the currency with the figure
    assert at.query_params["kwh"] == "1.5" and at.query_params["workload"] == "bert-base-squad"  # kept in the URL
    at.number_input(key="max_power").set_value(100.0).run()
    assert order() == ["Test GPU Efficient"]


def test_cost_ranks_only_what_has_a_cost_in_one_currency(db: Path) -> None:
    blog = _page("cost", workload="bert-large-ner", mode="infer", currency="USD")
    assert "nothing can be ranked" in blog.info[0].value  # J/example but no throughput: no rank 1 and 2
    why = _frame(blog, "Why not ranked")
    assert set(why["Device"]) >= {"GeForce RTX 3060", "Jetson AGX Xavier"}
    assert all("no throughput" in w for w in why["Why not ranked"])
    estimated = _page("cost", workload="bert-large-ner", mode="infer", tdp="1")
    ranked = _frame(estimated, "Rank")
    assert list(ranked["Device"]) == ["GeForce RTX 3060", "Jetson AGX Xavier"]  # 6.9 vs 11.5 J/example, estimated
    assert set(ranked["Throughput basis"]) == {"estimate: power cap ÷ J/example"}
    assert set(ranked["Energy basis"]) == {"reference table · at the wall"}
    import_file(FIXTURES / "result_v1_cost_tradeoff.json", db=db)
    at = _page("cost", workload="bert-base-squad", mode="infer")
    ranked = _frame(at, "Rank")
    assert set(ranked["Device"]) == {"Test GPU Frugal", "Test GPU Efficient"}
    assert ranked["Cost (USD per 1M samples)"].notna().all()  # nothing without a cost is ranked
    assert "A100 40GB" in set(_frame(at, "Why not ranked")["Device"])
    at.number_input(key="util").set_value(10).run()
    assert not at.exception and at.query_params["util"] == "0.1"


def test_cost_settings_come_from_the_link(db: Path) -> None:
    import_file(FIXTURES / "result_v1_cost_tradeoff.json", db=db)
    at = _page("cost", workload="bert-base-squad", mode="infer", kwh="0.3", util="0.9", currency="CAD")
    assert at.number_input(key="kwh").value == 0.3 and at.number_input(key="util").value == 90
    assert at.selectbox(key="currency").value == "CAD"
    assert "Cost (CAD per 1M samples)" in _frame(at, "Rank").columns  # USD prices converted at the stored rate
    bad = _page("cost", kwh="-3", currency="XYZ")
    warned = shown(bad.warning[0].value)
    assert "kwh='-3'" in warned and "'XYZ'" in warned


H100 = "H100 SXM"  # nvidia-smi's "NVIDIA H100 80GB HBM3" in the catalog (HBM3: the SXM part)


def test_cost_ranking_shows_each_rows_grade_and_warns_when_it_rests_on_low_grades(db: Path) -> None:
    """The real H100 runs: 30-step windows grade D (the ranking warns, naming the device, the grade and
    the run that would settle it); 10 s windows with 3 repeats grade A (no warning)."""
    import_file(FIXTURES / "h100" / "repeats-short-windows.json", db=db)
    at = _page("cost", workload="bert-large-squad", mode="infer")
    assert "Trust grade" not in " ".join(w.value for w in at.warning)  # no price yet: nothing ranked, no warning
    at.number_input(key=f"price_USD_{H100}").set_value(30000.0).run()
    assert not at.exception
    ranked = _frame(at, "Rank", "Trust grade")
    row = ranked[ranked["Device"] == H100].iloc[0]
    assert row["Trust grade"] == "D" and row["Energy basis"] == "imported · GPU board"
    warned = [shown(w.value) for w in at.warning if "Low trust grades" in w.value]
    assert len(warned) == 1
    assert f"**{H100}** (grade D)" in warned[0] and "This ranking rests on figures graded D" in warned[0]
    assert "windows of at least 10 s, 3 repeats" in warned[0]
    assert "trust grade D" in shown(at.markdown[0].value)  # the cheapest, with its grade
    legend = _frame(at, "Grade", "Meaning")
    assert list(legend["Grade"]) == ["A", "B", "C", "D"]
    assert any("steady state, repeats and their spread" in c.value for c in at.caption)  # the checks, in words

    import_file(FIXTURES / "h100" / "repeats-10s-windows.json", db=db)  # shows on the next rerun
    at.run()
    ranked = _frame(at, "Rank", "Trust grade")
    # the cheapest H100 run is still a 30-step one (its short window under-reads the energy): still flagged
    assert list(ranked.loc[ranked["Device"] == H100, "Trust grade"]) == ["D"]
    assert any(f"**{H100}** (grade D)" in shown(w.value) for w in at.warning)


def test_cost_ranking_on_decision_grade_runs_does_not_warn(db: Path) -> None:
    import_file(FIXTURES / "h100" / "repeats-10s-windows.json", db=db)
    at = _page("cost", workload="bert-large-squad", mode="infer")
    at.number_input(key=f"price_USD_{H100}").set_value(30000.0).run()
    ranked = _frame(at, "Rank", "Trust grade")
    assert list(ranked.loc[ranked["Device"] == H100, "Trust grade"]) == ["A"]
    assert not [w for w in at.warning if "Low trust grades" in w.value]


def test_devices_catalog_and_edit_persists(db: Path) -> None:
    import polars as pl

    from db import queries
    from explorer import data, edits

    at = _page("devices")
    with (Path(__file__).parent.parent / "sample_data" / "devices.csv").open(newline="") as f:
        catalog = list(csv.DictReader(f))
    assert f"{len(catalog)} devices" in at.caption[0].value
    modes = _frame(at, "Mode ID", "Power budget (W)")
    assert len(modes) >= 16 and "Jetson AGX Xavier" in set(modes["Device name"])
    with Store.open(db) as store:
        before = queries.devices(store)
    is_t4 = pl.col("device_name") == "Tesla T4"
    edited = before.with_columns(pl.when(is_t4).then(2199.0).otherwise(pl.col("price_amount")).alias("price_amount"),
                                 pl.when(is_t4).then(pl.lit("USD")).otherwise(pl.col("price_currency"))
                                 .alias("price_currency"))
    changed = data.changed_rows(before, edited)
    assert changed["device_name"].to_list() == ["Tesla T4"]
    edits.save_device_edits(str(db), changed)
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
    assert any("jtop" in m.value and "1 run" in m.value for m in at.markdown)
    at.button[0].click().run()
    assert f"{log.name}: 1 run added" in shown(at.success[0].value)
    with Store.open(db) as store:
        row = store.query("SELECT device_name, mode FROM runs WHERE origin_format = 'jtop'").row(0)
        supplied = store.query("SELECT label, value, origin, via FROM run_labels ORDER BY label").rows()
    assert row == ("Jetson AGX Orin", "infer")
    assert ("device", "Jetson AGX Orin", "user", "import") in supplied
    assert ("mode", "infer", "user", "import") in supplied


def test_upload_a_result_file_with_its_power_log(db: Path) -> None:
    from tests.test_import_attach import GTX_SWEEP, NVIDIA_SMI

    at = _page("upload")
    at.file_uploader(key="files").upload("sweep.json", GTX_SWEEP)
    at.file_uploader(key="power_log").upload(NVIDIA_SMI.name, NVIDIA_SMI.read_bytes())
    at.run()
    assert not at.error
    assert any("power log" in shown(c.value) and "attached to 2 of 4 run(s)" in shown(c.value) for c in at.caption)
    at.button[0].click().run()
    assert "sweep.json + fletcher-io-gtx1650_gpu_power.csv: 4 runs added" in shown(at.success[0].value)
    with Store.open(db) as store:
        run = store.query("SELECT energy_j, energy_boundary, energy_method FROM runs WHERE run_id = 'a'").row(0)
    assert run[0] == pytest.approx(9.94284, rel=1e-6) and run[1:] == ("gpu_board", "sampled")  # awk, see there


def test_devices_refuses_a_tdp_of_zero_or_a_negative_price_and_keeps_a_history(db: Path) -> None:
    import polars as pl

    from db import queries
    from explorer import edits
    from joulebench.errors import InvalidEditError

    with Store.open(db) as store:
        before = queries.devices(store)
    t4 = pl.col("device_name") == "Tesla T4"
    for column, value in (("tdp_w", 0.0), ("tdp_w", -5.0), ("price_amount", -1.0), ("memory_gb", 0.0)):
        bad = before.filter(t4).with_columns(pl.lit(value).alias(column), pl.lit("USD").alias("price_currency"))
        with pytest.raises(InvalidEditError, match="Tesla T4"):
            edits.save_device_edits(str(db), bad)
    with Store.open(db) as store:
        assert queries.devices(store).filter(t4)["tdp_w"].to_list() == before.filter(t4)["tdp_w"].to_list()
        assert queries.device_edits(store).is_empty()  # nothing of a refused edit is kept
    good = before.filter(t4).with_columns(pl.lit(70.0).alias("tdp_w"), pl.lit(" usd ").alias("price_currency"),
                                          pl.lit(2199.0).alias("price_amount"))
    edits.save_device_edits(str(db), good)
    with Store.open(db) as store:
        history = queries.device_edits(store)
        row = queries.devices(store).filter(t4).row(0, named=True)
    assert (row["tdp_w"], row["price_currency"]) == (70.0, "USD")
    assert sorted(history["column_name"].to_list()) == ["price_amount", "price_currency", "price_date", "tdp_w"]
    assert history.filter(pl.col("column_name") == "tdp_w")["new_value"].to_list() == ["70.0"]
    at = _page("devices")
    assert not at.exception and "Edit history" in [e.label for e in at.expander]


def test_exchange_rates_are_stored_with_date_and_source_and_checked(db: Path) -> None:
    import polars as pl

    from explorer import data, edits
    from joulebench.errors import InvalidEditError

    rates = data.exchange_rates(str(db))
    assert rates.select("from_currency", "to_currency", "rate_date").row(0) == ("CAD", "USD", "2021-03-16")
    assert rates["source"][0]
    table = pl.DataFrame({"from_currency": ["CAD", "eur"], "to_currency": ["USD", "USD"], "rate": [0.75, 1.1],
                          "rate_date": ["2024-05-01", "2024-05-01"], "source": ["my bank", "my bank"]})
    edits.save_exchange_rates(str(db), table)
    assert data.rates(str(db)).convert(100.0, "EUR", "CAD").amount == pytest.approx(110 / 0.75)
    for bad in (table.with_columns(pl.lit(0.0).alias("rate")), table.with_columns(pl.lit("").alias("source")),
                table.with_columns(pl.lit("DOLLARS").alias("to_currency"))):
        with pytest.raises(InvalidEditError):
            edits.save_exchange_rates(str(db), bad)
    assert data.exchange_rates(str(db))["rate"].to_list() == [0.75, 1.1]  # a refused edit changes nothing


def test_upload_without_labels_imports_then_the_review_fills_them(db: Path) -> None:
    log = FIXTURES / "formats" / "jetson" / "agentmesh-agx-orin_jtop_log.csv"
    at = _page("upload")
    at.file_uploader[0].upload(log.name, log.read_bytes())
    at.run()
    assert not at.error  # a log does not say which device ran or what: imported anyway, the gap shown
    captions = " ".join(shown(c.value) for c in at.caption)
    assert "Not stated in this file: device (its run), mode (its run), precision (its run), batch size" in captions
    at.button[0].click().run()
    assert f"{log.name}: 1 run added" in shown(at.success[0].value)
    assert at.subheader[0].value == "Review: what the imported files do not state"
    device_input = next(w for w in at.text_input if str(w.key).startswith("label_source_")
                        and str(w.key).endswith("_device"))
    form = str(device_input.key).removesuffix("_device")
    device_input.set_value("V100")  # a name the catalog holds in two sizes: offered, not created
    next(b for b in at.button if b.label == "Save labels").click().run()
    assert "Did you mean Tesla V100 16GB or Tesla V100 32GB?" in shown(at.error[0].value)
    at.text_input(key=f"{form}_device").set_value("Jetson AGX Orin 64GB")
    at.checkbox(key=f"{form}_new").check()  # not in the catalog: said to be new
    at.selectbox(key=f"{form}_mode").set_value("idle")
    next(b for b in at.button if b.label == "Save labels").click().run()
    assert not at.exception and not at.error
    done = shown(at.success[-1].value)
    assert "device = Jetson AGX Orin 64GB (1 filled)" in done and "mode = idle (1 filled)" in done
    assert "Every label is now stated or supplied" in done  # an idle run takes no precision or batch size
    with Store.open(db) as store:
        run = store.query("SELECT r.device_name, r.mode, d.kind FROM runs r JOIN devices d USING (device_name) "
                          "WHERE origin_format = 'jtop'").row(0)
        supplied = store.query("SELECT label, origin, via FROM run_labels ORDER BY label").rows()
    assert run == ("Jetson AGX Orin 64GB", "idle", "jetson")  # kind from the name: a new catalog entry
    assert supplied == [("device", "user", "upload_page"), ("mode", "user", "upload_page")]


def _section(at: AppTest, field: str) -> dict[str, str]:
    """The Run detail section (a Field/Value table) that shows `field`, as a dict; the page's other
    tables (the grade's reasons, the configuration's repeats) have other columns."""
    frame = next(df.value for df in at.dataframe if "Field" in df.value and field in set(df.value["Field"]))
    return dict(zip(frame["Field"], frame["Value"]))


def test_run_detail_fills_what_its_file_did_not_state(db: Path) -> None:
    report = import_file(FIXTURES / "formats" / "codecarbon" / "jetson-nano-edgeai_emissions.csv", db=db)
    at = _page("run_detail", run_id=report.run_ids[0])
    assert at.subheader[0].value == "Not stated by its file"
    fields = _section(at, "Device name")
    assert fields["Device name"] == "not stated" and fields["Mode"] == "not stated"
    at.text_input(key="label_run_source_device").set_value("Jetson Nano 4GB")
    next(b for b in at.button if b.label == "Save labels").click().run()
    assert "Did you mean Jetson Nano?" in shown(at.error[0].value)  # the catalog's name offered
    at.text_input(key="label_run_source_device").set_value("Jetson Nano")
    at.selectbox(key="label_run_source_mode").set_value("infer")
    at.selectbox(key="label_run_source_precision").set_value("fp32")
    next(b for b in at.button if b.label == "Save labels").click().run()
    assert not at.exception and not at.error
    assert "Still not stated: batch size 1" in shown(at.success[-1].value)
    fields = _section(at, "Device name")
    assert fields["Device name"].startswith("Jetson Nano (not in the file: supplied by ")
    assert "on Run detail" in fields["Mode"] and fields["Batch size"] == "not stated"


def test_run_detail_shows_a_corrected_figure_beside_what_the_source_printed(db: Path) -> None:
    at = _page("run_detail", run_id="ref:runs_nvidia_bert_training:dgx1-16gb-squad-g4-fp16")
    assert any("Weak scaling 3.27, corrected: the source printed 3.62" in shown(c.value) for c in at.caption)
    fields = _section(at, "Weak scaling")
    assert fields["Weak scaling"] == "3.27 (corrected; the source printed 3.62, see the notes)"
    assert "Weak scaling as printed" not in fields


def test_compare_shows_runs_whose_file_did_not_state_the_device(db: Path) -> None:
    log = FIXTURES / "formats" / "codecarbon" / "jetson-nano-edgeai_emissions.csv"
    import_file(log, db=db)
    at = _page("compare", mode="not stated", metric="power")
    assert "not stated" in at.multiselect(key="f_mode").options
    table = _frame(at, "Average power (W)", "Power setting")
    assert table["Device"].tolist() == [f"not stated ({log.name})"] and table["Batch"].tolist() == ["not stated"]
    assert at.get("plotly_chart")  # its power is charted, not hidden


def test_every_page_opens_with_runs_whose_labels_are_not_stated(db: Path) -> None:
    import_file(FIXTURES / "formats" / "codecarbon" / "jetson-nano-edgeai_emissions.csv", db=db)  # no device, mode
    overview = _page("overview")
    sources = _frame(overview, "Not stated", "File")
    assert "device 1, mode 1, precision 1, batch size 1" in set(sources["Not stated"])
    workloads = _frame(overview, "Workload", "Mode")
    assert "not stated" in set(workloads["Mode"])
    for page in ("compare", "cost", "devices", "run_detail", "upload", "new_run", "power_settings", "decide"):
        assert not _page(page).exception, page


def test_compare_unfiltered_opens_on_a_readable_chart(db: Path) -> None:
    """Issue 17: the unfiltered chart drew 40 configurations with truncated labels under the legend;
    it now opens on each device's best configuration, with a switch for all of them."""
    import json

    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.switch_page("pages/compare.py")
    at.run()
    assert not at.exception, at.exception

    def bars() -> int:
        chart = at.get("plotly_chart")[0]
        assert json.loads(chart.proto.spec)["layout"]["legend"]["y"] > 1  # above the plot, clear of the labels
        return len(_plotted(chart))

    shown = bars()
    assert 0 < shown <= 12
    cut = [c.value for c in at.caption if "best configuration" in c.value]
    assert cut and f"{shown} of " in cut[0]
    total = int(cut[0].split(" of ")[1].split(" ")[0].replace(",", ""))
    at.toggle(key="all_bars").set_value(True).run()
    assert bars() == total > 12
