"""Issue 26: why a serving point's latency is missing shows wherever the figure would be, a sweep's points are
linked by the sweep's id, and a Jetson's serve-bench stores the module it measured.

The points are measured by serve-bench itself (runner.serve_bench.run.serve_bench, ingested as `joulebench
serve-bench` does) against a slow OpenAI-compatible server on localhost: at 4 requests/s it keeps up; at
1000 requests/s every request is sent before the first completes (overloaded: the latency percentiles are
withheld, with the reason). The device's files are a recorded Jetson tree (tests.test_sensors), the power a
simulated INA3221 module rail or a real tegrastats log re-stamped to the run's minutes.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from db import Store, queries
from db import serving as serving_db
from decision import token_target
from decision.markdown import plain
from decision.money import CostSettings, Rates
from tests.helpers import local_http_server
from tests.test_sensors import FORMATS, nano_tree
from tests.test_serve_bench import _args
from tests.test_serving_explorer import _TinyOpenAI

APP = str(Path(__file__).resolve().parent.parent / "app.py")
NANO_MODEL = "NVIDIA Jetson Nano Developer Kit"
XAVIER_LOG = FORMATS / "jetson" / "tegra_burn-xavier-nx-tegrastats-ts.log"


class _Slow(_TinyOpenAI):
    gap_s = 0.1  # 3 tokens: 0.3 s a request


@pytest.fixture
def slow_server() -> Iterator[str]:
    with local_http_server(_Slow) as url:
        yield url


def jetson_root(root: Path, model: str) -> Path:
    """A Jetson's files: the L4T release, the device-tree model and (Nano) the INA3221 rails."""
    nano_tree(root)
    (root / "etc").mkdir(parents=True, exist_ok=True)
    (root / "etc/nv_tegra_release").write_text("# R32 (release), REVISION: 7.1\n")
    (root / "proc/device-tree").mkdir(parents=True, exist_ok=True)
    (root / "proc/device-tree/model").write_text(model + "\x00")
    return root


def _bench(url: str, tmp: Path, db: Path, root: Path, **over: object) -> list[dict]:
    from runner.sampler import SensorMeter
    from runner.sensors.jetson import Ina3221Sensor
    from runner.serve_bench.cli import options_from
    from runner.serve_bench.run import serve_bench

    opts = options_from(_args(target=url, output_tokens="3", warmup_requests=0.0, out=tmp / "serve.json",
                              **over), str(db))
    meter = None if over.get("power_log") else SensorMeter(Ina3221Sensor(root=root), rate_hz=200.0)
    try:
        result = serve_bench(opts, meter=meter, root=root)
    finally:
        if meter is not None:
            meter.close()
    assert result.ingest is not None and result.ingest.status == "imported", result.ingest
    return list(result.runs)


@pytest.fixture(scope="module")
def measured(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A 2-point rate sweep on the Jetson's module power, stored in a seeded database (measured once for the
    module): 4/s kept up, 1000/s overloaded."""
    tmp = tmp_path_factory.mktemp("overloaded")
    db = tmp / "measured.duckdb"
    shutil.copy(seeded_template, db)
    root = jetson_root(tmp / "jetson", NANO_MODEL)
    with local_http_server(_Slow) as url:
        runs = _bench(url, tmp, db, root, rate="4,1000", requests=12.0)
    assert [r["status"] for r in runs] == ["ok", "ok"]
    with Store.open_reading(db) as store:
        stored = store.query("SELECT run_id, device_name, request_rate_per_s, latency_missing_reason, ttft_p90_ms, "
                             "tpot_p90_ms, j_per_token, sweep_id, flags FROM runs WHERE workload = 'serve-bench' "
                             "ORDER BY request_rate_per_s").to_dicts()
    return {"db": db, "runs": stored}


@pytest.fixture
def overloaded(measured: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """The measured database, copied for one test and opened by the app's pages (JOULEBENCH_DB)."""
    db = tmp_path / "jb.duckdb"
    shutil.copy(measured["db"], db)
    monkeypatch.setenv("JOULEBENCH_DB", str(db))
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    return {**measured, "db": db}


def test_the_stored_overloaded_point_keeps_its_reason_and_its_sweep(overloaded: dict) -> None:
    kept, over = overloaded["runs"]
    assert kept["latency_missing_reason"] is None and kept["tpot_p90_ms"] > 0
    assert "overloaded" in over["flags"] and over["ttft_p90_ms"] is None and over["j_per_token"] > 0
    assert over["latency_missing_reason"].startswith("overloaded: arrivals outpaced completions")
    # one invocation, one sweep: both points carry its id
    assert kept["sweep_id"] and kept["sweep_id"] == over["sweep_id"]
    # the device is the Jetson module measured, not the client's CPU
    assert "Jetson Nano" in kept["device_name"]


def test_run_detail_shows_why_the_latency_is_missing(overloaded: dict) -> None:
    over = overloaded["runs"][1]
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"run_id": over["run_id"]})
    at.run()
    at.switch_page("pages/run_detail.py").run()
    assert not at.exception, at.exception
    assert any("Latency percentiles (TTFT, ITL, TPOT, end-to-end) withheld: overloaded: arrivals outpaced"
               in plain(w.value) for w in at.warning), [w.value for w in at.warning]
    rows = {field: value for df in at.dataframe if "Field" in df.value.columns
            for field, value in zip(df.value["Field"], df.value["Value"])}
    latency = {f: v for f, v in rows.items() if re.match(r"(TTFT|ITL|TPOT|End-to-end|E2E)", f, re.I)}
    assert len(latency) >= 20, sorted(rows)  # mean and p50-p99 of TTFT, ITL, TPOT and end-to-end
    for field, value in latency.items():
        assert value.startswith("withheld: overloaded: arrivals outpaced completions"), (field, value)
    # a serving point's headline is its serving figures (tokens/s, J/token, TTFT ...), each latency withheld with why
    labels = [m.label for m in at.metric]
    assert "Output tokens/s" in labels and "Throughput (samples/s)" not in labels, labels
    headline = next(m for m in at.metric if m.label == "Time to first token p90 (ms)")
    assert headline.value == "withheld" and "overloaded" in (headline.help or "")


def _decide(db: Path, devices: list[str], target: token_target.Target) -> token_target.TokenDecision:
    with Store.open_reading(db) as store:
        configs = token_target.with_serving(queries.configurations(store), serving_db.serving_configs(store))
        catalog, rates = queries.devices(store), Rates.from_frame(queries.exchange_rates(store))
    return token_target.decide(configs, devices, None, target, catalog, rates, CostSettings())


def test_decide_names_the_withheld_point_and_why(overloaded: dict) -> None:
    from explorer import serving_charts
    from joulebench.metrics import TPOT

    device = overloaded["runs"][0]["device_name"]
    found = _decide(overloaded["db"], [device], token_target.Target(tpot_p90_ms=10_000))
    assert found.curve["load"].to_list() == [4, 1000]
    (line,) = serving_charts.withheld(found.curve)
    assert line.startswith(f"{device}, load 1000: latency withheld: overloaded: arrivals outpaced completions")
    fig = serving_charts.latency_throughput(found.curve, TPOT.p90, 10_000)
    assert [len(t.x) for t in fig.data] == [1]  # the overloaded point is not drawn at 0 ...
    assert f"not drawn (latency withheld, reasons below): {device}, load 1000" in fig.layout.title.text  # ... but named
    hover = serving_charts.j_per_token_by_load(found.curve).data[0].text
    assert hover[1].startswith("latency withheld: overloaded") and hover[0] == ""
    # a target only the lightest load could meet: the answer says why the heavier point is out
    (a,) = found.answers
    assert a.status == "meets" and a.best is not None and a.best["request_rate_per_s"] == 4
    tight = _decide(overloaded["db"], [device], token_target.Target(tpot_p90_ms=0.001))
    assert tight.answers[0].status == "misses"
    # a withheld figure is never "no TPOT in its runs": the stored reason is said
    status, why = token_target._status({"latency_missing_reason": "too few requests in the steady state: 4 "
                                        "completed"}, token_target.Target(tpot_p90_ms=50))
    assert (status, why) == ("not known", "TPOT p90 withheld: too few requests in the steady state: 4 completed")
    status, why = token_target._status({"overloaded": True, "latency_missing_reason": "overloaded: x"},
                                       token_target.Target(tpot_p90_ms=50))
    assert (status, why) == ("misses", "overloaded at this load: latency withheld: overloaded: x")


def test_decide_page_shows_the_reason_under_the_latency_chart(overloaded: dict) -> None:
    device = overloaded["runs"][0]["device_name"]
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params.update({"device": [device, "H100 80GB"], "mode": "infer", "tpot": "10000"})
    at.run()
    at.switch_page("pages/decide.py").run()
    assert not at.exception, at.exception
    captions = [plain(c.value) for c in at.caption]
    assert f"{device}, load 1000: latency withheld: overloaded: arrivals outpaced completions; the percentiles " \
           "would describe a queue growing without end, not a steady state" in captions, captions


def test_compare_table_says_why_a_points_latency_is_missing(overloaded: dict) -> None:
    """Compare's all-devices table, with TPOT p90 chosen: the overloaded point's TPOT cell is empty and its row
    says why, beside the point that kept up (no reason)."""
    device = overloaded["runs"][0]["device_name"]
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params.update({"device": device, "metric": "tpot_p90"})
    at.run()
    at.switch_page("pages/compare.py").run()
    assert not at.exception, at.exception
    table = next(df.value for df in at.dataframe if "Why no latency figures" in df.value.columns)
    table = table.data if hasattr(table, "data") else table  # a Styler: its frame
    rows = {rate: why for rate, why in zip(table["Requests arriving per second"], table["Why no latency figures"])}
    assert str(rows[1000.0]).startswith("overloaded: arrivals outpaced completions"), rows
    assert rows[4.0] == "", rows  # kept up: its figures are there, nothing to explain


def test_two_sweeps_of_one_device_in_one_source_stay_two_curves() -> None:
    import polars as pl

    from explorer import serving_charts
    from joulebench.metrics import TPOT

    points = pl.DataFrame({
        "device_name": ["Orin"] * 5, "load_kind": ["rate"] * 5, "load": [1.0, 2.0, 4.0, 1.5, 3.0],
        "tokens_per_s_mean": [10.0, 20.0, 38.0, 15.0, 29.0], "tpot_p90_ms_mean": [20.0, 30.0, 45.0, 60.0, 80.0],
        "j_per_token_mean": [0.5, 0.3, 0.2, 0.6, 0.4], "overloaded": [False] * 5,
        "latency_missing_reason": [None] * 5,
        "sweep_id": ["aaaaaaaa-1", "aaaaaaaa-1", "aaaaaaaa-1", "bbbbbbbb-2", "bbbbbbbb-2"]})
    lines = {t.name: list(t.y) for t in serving_charts.latency_throughput(points, TPOT.p90, None).data}
    assert lines == {"Orin · sweep aaaaaaaa": [20.0, 30.0, 45.0], "Orin · sweep bbbbbbbb": [60.0, 80.0]}
    energy = {t.name: list(t.x) for t in serving_charts.j_per_token_by_load(points).data}
    assert energy == {"Orin · sweep aaaaaaaa": [1.0, 2.0, 4.0], "Orin · sweep bbbbbbbb": [1.5, 3.0]}
    # no sweep stated: one curve per device, named by the device alone
    alone = points.with_columns(pl.lit(None, pl.String).alias("sweep_id"))
    assert [t.name for t in serving_charts.latency_throughput(alone, TPOT.p90, None).data] == ["Orin"]


def test_two_serve_bench_sweeps_in_one_database_are_two_curves(slow_server: str, tmp_path: Path,
                                                                bare_template: Path) -> None:
    """The same device and shape swept twice at different rates: the curve follows each sweep's id."""
    db = tmp_path / "jb.duckdb"
    shutil.copy(bare_template, db)
    root = jetson_root(tmp_path / "jetson", NANO_MODEL)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = _bench(slow_server, tmp_path / "a", db, root, rate="6,12", requests=8.0)
    second = _bench(slow_server, tmp_path / "b", db, root, rate="8", requests=8.0)
    assert first[0]["config"]["sweep_id"] == first[1]["config"]["sweep_id"] != second[0]["config"]["sweep_id"]
    with Store.open_reading(db) as store:
        (device,) = store.query("SELECT DISTINCT device_name FROM runs WHERE workload = 'serve-bench'").to_series()
    found = _decide(db, [device], token_target.Target())
    sweeps = found.curve.group_by("sweep_id", maintain_order=True).agg("load")
    assert sorted(sweeps["load"].to_list()) == [[6.0, 12.0], [8.0]], found.curve


def _restamped_log(tmp_path: Path) -> Path:
    """The real Xavier NX tegrastats log, its lines re-stamped one second apart from 5 s ago (the run's power is
    cut from the log by time). Its stamps are whole seconds: a run meant to be measured from it sends 120 requests
    (about 4 s), so its steady state always holds several samples (40 requests, 1.2 s, held one or two)."""
    start = time.time() - 5
    lines = [ln for ln in XAVIER_LOG.read_text().splitlines() if ln.strip()]
    log = tmp_path / "tegrastats.log"
    log.write_text("".join(datetime.fromtimestamp(start + k).strftime("%m-%d-%Y %H:%M:%S") + ln[19:] + "\n"
                           for k, ln in enumerate(lines)))
    return log


def test_a_jetson_serve_bench_from_a_tegrastats_log_stores_the_module(tiny_server_fast: str, tmp_path: Path,
                                                                       bare_template: Path) -> None:
    """Item 6 on a Jetson whose power comes from tegrastats --logfile (a real Xavier NX log, re-stamped to now, 1 s
    a line): the module's input rail VDD_IN is the energy, the run's device the Jetson module, not the CPU."""
    root = jetson_root(tmp_path / "jetson", "NVIDIA Jetson Xavier NX Developer Kit")
    log, db = _restamped_log(tmp_path), tmp_path / "jb.duckdb"
    shutil.copy(bare_template, db)
    (run,) = _bench(tiny_server_fast, tmp_path, db, root, concurrency="2", requests=120.0, power_log=log)
    m = run["metrics"]
    assert run["status"] == "ok" and run["device"] == {"name": "Jetson Xavier NX Developer Kit", "kind": "jetson"}
    assert m["energy_boundary"] == "jetson_module" and m["energy_j"] > 0
    # VDD_IN of this log is 5.5-13.8 W: the steady state's mean power lies between them
    assert 5.5 <= m["energy_j"] / m["duration_s"] <= 13.9
    with Store.open_reading(db) as store:
        kind = store.query("SELECT d.kind FROM runs r JOIN devices d USING (device_name) "
                           "WHERE r.workload = 'serve-bench'").item()
    assert kind == "jetson"


def test_a_server_on_another_machine_is_stored_as_the_device_its_log_measured(tiny_server_fast: str, tmp_path: Path,
                                                                              bare_template: Path) -> None:
    """The client on an ordinary machine, the server on a Jetson whose tegrastats log is given (--power-log) with
    its device (--server-device): the runs are the Jetson's, not the client's CPU, and the client's software is
    not recorded as the server's."""
    log, db = _restamped_log(tmp_path), tmp_path / "jb.duckdb"
    shutil.copy(bare_template, db)
    client = tmp_path / "client"  # no Jetson files: an ordinary machine
    client.mkdir()
    (run,) = _bench(tiny_server_fast, tmp_path, db, client, concurrency="2", requests=120.0, power_log=log,
                    server_device="Jetson Xavier NX")
    assert run["device"] == {"name": "Jetson Xavier NX", "kind": "jetson"} and run["environment"] == {}
    assert run["metrics"]["energy_boundary"] == "jetson_module" and "served on another machine" in run["notes"]


@pytest.fixture
def tiny_server_fast() -> Iterator[str]:
    with local_http_server(_TinyOpenAI) as url:
        yield url
