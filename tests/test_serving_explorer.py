"""Serving in the explorer (issue 26 items 4-6, issue 28 item 6 for tokens): serve-bench sweeps compared like
for like, the latency-throughput curve, Decide's answer from the sweeps, New run's serve-bench, a Jetson meter.

The sweeps are result files written as serve-bench writes them (runner.record.RunRecord, serve-bench's config
fields), imported into a real DuckDB. Llama-3.1-8B, prompt 512 + 128 output tokens, engine vllm, rate sweeps:

  H100 80GB        offered 1, 2, 4, 8 requests/s: sustained 1, 2, 3.9, 5 requests/s; J/token 0.5, 0.3, 0.2, 0.15;
                   TPOT p90 20, 30, 45 ms and the 8/s point overloaded (no latency). Price 30,000 USD (entered here).
  Jetson AGX Orin  offered 0.5, 1, 2: sustained 0.5, 0.98, 1.2 requests/s; J/token 0.12, 0.09, 0.08; TPOT p90 35,
                   48, 90 ms. No price in the catalog.
  A100 40GB        imported, means only: rate 1 at prompt 540 + 120 (5.5 % and 6.25 % from 512 + 128: compared),
                   0.4 J/token, TPOT 25 ms; rate 2 at prompt 589 + 128 (15 %: left out).
  H100 80GB        an offline batch run by the runner (llm-8b, batch 8, 512 + 128): 0.05 J/token, never compared.

By hand, at TPOT p90 <= 50 ms (USD 0.15 per kWh, PUE 1, 3 years, 50 % utilisation):
  Orin sustains 0.98 requests/s (125.44 tokens/s) at 0.09 J/token: electricity 0.09 x 1e6 / 3.6e6 x 0.15 = 0.00375 USD
  per 1M output tokens, hardware not known (no price);
  H100 sustains 3.9 requests/s (499.2 tokens/s) at 0.2 J/token: electricity 0.2 / 3.6 x 0.15 = 0.008333 USD, hardware
  30,000 / (499.2 x 3 x 365.25 x 86,400 x 0.5) x 1e6 = 1.2696 USD.
"""

from __future__ import annotations

import http.server
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from db import Store, queries
from db import serving as serving_db
from decision import token_target
from decision.markdown import plain
from decision.money import CostSettings, Rates
from ingest import import_file
from joulebench.resultfile import dump_bytes, new_document
from runner.record import Fields, RunRecord
from tests.helpers import local_http_server
from tests.test_browser import page  # noqa: F401  (the real browser's fixture)

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
H100, ORIN, A100 = "H100 80GB", "Jetson AGX Orin", "A100 40GB"
SERVING_SHAPE = "llama-3.1-8b, prompt 512 + 128 new tokens, online serving (requests at a set rate), engine vllm"
YEAR_S = 365.25 * 24 * 3600


def _point(device: str, kind: str, rate: float, rps: float, j_token: float, tpot: float | None, *,
           overloaded: bool = False, requested: bool = True, prompt: float = 512, output: float = 128) -> dict:
    done = round(rps * 60)
    tokens = done * output
    config: dict[str, Any] = {"workload": "serve-bench", "model": MODEL, "task": "text-generation", "mode": "infer",
                              "load_kind": "rate", "request_rate_per_s": rate, "arrival": "poisson", "seed": 0,
                              "engine": "vllm", "repeat_index": 0}
    if requested:
        config.update(prompt_tokens_requested=prompt, output_tokens_requested=output,
                      length_distribution=f"prompt {prompt:g}; output {output:g}")
    metrics: dict[str, Any] = {
        "duration_s": 60.0, "examples": done, "throughput_sps": rps, "sample_unit": "request",
        "energy_j": j_token * tokens, "avg_power_w": j_token * tokens / 60, "j_per_sample": j_token * output,
        "energy_boundary": "jetson_module" if kind == "jetson" else "gpu_board", "energy_method": "sampled",
        "output_tokens": tokens, "tokens_per_s": rps * output, "j_per_token": j_token, "requests_per_s": rps,
        "requests_completed": done, "requests_failed": 0, "j_per_request": j_token * output,
        "prompt_tokens_mean": prompt, "output_tokens_mean": output}
    if tpot is not None:
        metrics.update(tpot_p90_ms=tpot, itl_p90_ms=tpot * 0.9, ttft_p90_ms=tpot * 3)
    return RunRecord(run_id=str(uuid.uuid4()), status="ok", device={"name": device, "kind": kind},
                     config=Fields(config, "config"), metrics=Fields(metrics, "metrics"),
                     started_at="2026-01-01T00:00:00+00:00", ended_at="2026-01-01T00:01:00+00:00",
                     flags=["overloaded"] if overloaded else []).to_json()


def _batch_run() -> dict:
    """The runner's offline batch generation on the H100: fewer J/token, and no queue in its latencies."""
    config = {"workload": "llm-8b", "model": MODEL, "task": "text-generation", "mode": "infer", "precision": "bf16",
              "batch_size": 8, "seq_len": 512, "max_new_tokens": 128, "repeat_index": 0}
    metrics = {"duration_s": 30.0, "examples": 240, "throughput_sps": 8.0, "energy_j": 1536.0, "avg_power_w": 51.2,
               "j_per_sample": 6.4, "energy_boundary": "gpu_board", "energy_method": "sampled",
               "output_tokens": 30720, "tokens_per_s": 1024.0, "j_per_token": 0.05, "itl_p90_ms": 8.0,
               "tpot_p90_ms": 8.0, "ttft_p90_ms": 40.0}
    return RunRecord(run_id=str(uuid.uuid4()), status="ok", device={"name": H100, "kind": "gpu"},
                     config=Fields(config, "config"), metrics=Fields(metrics, "metrics"),
                     started_at="2026-01-01T00:00:00+00:00", ended_at="2026-01-01T00:00:30+00:00").to_json()


def _write(path: Path, runs: list[dict]) -> Path:
    path.write_bytes(dump_bytes(new_document(runs, producer_version="test", created_at="2026-01-01T00:00:00Z"), path))
    return path


def import_sweeps(db: Path, tmp: Path) -> None:
    """The sweeps and the batch run as this machine's runner files; the A100's as an imported file."""
    local = [_point(H100, "gpu", 1, 1.0, 0.5, 20), _point(H100, "gpu", 2, 2.0, 0.3, 30),
             _point(H100, "gpu", 4, 3.9, 0.2, 45), _point(H100, "gpu", 8, 5.0, 0.15, None, overloaded=True),
             _point(ORIN, "jetson", 0.5, 0.5, 0.12, 35), _point(ORIN, "jetson", 1, 0.98, 0.09, 48),
             _point(ORIN, "jetson", 2, 1.2, 0.08, 90), _batch_run()]
    assert import_file(_write(tmp / "serve-sweeps.json", local), db=db, source_kind="local").status == "imported"
    imported = [_point(A100, "gpu", 1, 1.0, 0.4, 25, requested=False, prompt=540, output=120),
                _point(A100, "gpu", 2, 2.0, 0.35, 30, requested=False, prompt=589, output=128)]
    assert import_file(_write(tmp / "vllm-a100.json", imported), db=db).status == "imported"
    from db import catalog_edits

    with Store.open(db) as store:
        catalog_edits.update_devices(store, pl.DataFrame({"device_name": [H100], "price_amount": ["30000"],
                                                          "price_currency": ["USD"]}))


@pytest.fixture
def sweeps(db: Path, tmp_path: Path) -> Path:
    import_sweeps(db, tmp_path)
    return db


def _decide(db: Path, devices: list[str], target: token_target.Target, shape: str | None = None
            ) -> token_target.TokenDecision:
    with Store.open_reading(db) as store:
        configs = token_target.with_serving(queries.configurations(store), serving_db.serving_configs(store))
        catalog, rates = queries.devices(store), Rates.from_frame(queries.exchange_rates(store))
    return token_target.decide(configs, devices, shape, target, catalog, rates, CostSettings())


def test_the_curve_has_one_point_per_load(sweeps: Path) -> None:
    from explorer import serving_charts
    from joulebench.metrics import TPOT

    found = _decide(sweeps, [H100, ORIN], token_target.Target(tpot_p90_ms=50))
    assert found.shape == SERVING_SHAPE
    curve = found.curve
    assert curve.filter(pl.col("device_name") == H100)["load"].to_list() == [1, 2, 4, 8]
    assert curve.filter(pl.col("device_name") == ORIN)["load"].to_list() == [0.5, 1, 2]
    assert curve.filter(pl.col("overloaded"))["load"].to_list() == [8]  # one point flagged, still a load point
    fig = serving_charts.latency_throughput(curve, TPOT.p90, 50)
    lines = {t.name: (list(t.x), list(t.y)) for t in fig.data}
    # the overloaded point has no steady-state latency: the H100's line has its 3 others
    assert lines[H100] == ([128.0, 256.0, pytest.approx(499.2)], [20.0, 30.0, 45.0])
    assert lines[ORIN][1] == [35.0, 48.0, 90.0]
    assert [s.y0 for s in fig.layout.shapes] == [50]  # the limit drawn as a line
    energy = {t.name: (list(t.x), list(t.y)) for t in serving_charts.j_per_token_by_load(curve).data}
    assert energy[H100] == ([1, 2, 4, 8], [0.5, 0.3, 0.2, 0.15])


def test_decide_answers_from_the_sweeps_with_the_cost_split(sweeps: Path) -> None:
    found = _decide(sweeps, [H100, ORIN, A100], token_target.Target(tpot_p90_ms=50))
    assert [(a.device, a.status) for a in found.answers] == [(ORIN, "meets"), (H100, "meets"), (A100, "meets")]
    first, second = (plain(line) for line in found.sentences[:2])
    assert first.startswith(f"At TPOT p90 ≤ 50 ms ({SERVING_SHAPE}), {ORIN} sustains 0.98 requests/s "
                            "(125 output tokens/s) at 0.09 J/token (offered load 1 requests/s")
    assert "cost per 1M output tokens 0.00375 USD electricity (hardware not known: no device price in USD" in first
    assert second.startswith(f"{H100} sustains 3.9 requests/s (499 output tokens/s) at 0.2 J/token (offered load 4")
    hardware = 30_000 / (499.2 * 3 * YEAR_S * 0.5) * 1e6
    assert hardware == pytest.approx(1.2696, abs=1e-4)
    assert "0.00833 USD electricity + 1.27 USD hardware = 1.28 USD" in second
    rows = {r["Device"]: r for r in found.table.iter_rows(named=True)}
    assert rows[ORIN]["Electricity per 1M output tokens (USD)"] == pytest.approx(0.09 / 3.6 * 0.15)
    assert rows[ORIN]["Hardware per 1M output tokens (USD)"] is None
    assert rows[ORIN]["Cost per 1M output tokens (USD)"] is None  # no total without a price; electricity shown
    assert rows[H100]["Electricity per 1M output tokens (USD)"] == pytest.approx(0.2 / 3.6 * 0.15)
    assert rows[H100]["Hardware per 1M output tokens (USD)"] == pytest.approx(hardware)
    assert rows[H100]["Cost per 1M output tokens (USD)"] == pytest.approx(0.2 / 3.6 * 0.15 + hardware)
    assert rows[H100]["Requests completed per second"] == 3.9 and rows[H100]["Output tokens/s"] == pytest.approx(499.2)
    # a tighter limit: the H100 sustains less; the Orin's 0.5/s point is the only one under 40 ms
    tight = _decide(sweeps, [H100, ORIN], token_target.Target(tpot_p90_ms=40))
    assert {a.device: a.best["requests_per_s_mean"] for a in tight.answers if a.best} == {H100: 2.0, ORIN: 0.5}


def test_a_batch_run_is_never_compared_with_serving(sweeps: Path) -> None:
    found = _decide(sweeps, [H100, ORIN], token_target.Target(tpot_p90_ms=50))
    h100 = next(a for a in found.answers if a.device == H100)
    assert h100.best is not None and h100.best["j_per_token_mean"] == 0.2  # not the batch run's 0.05
    assert (f"{H100}: 1 configuration left out: offline batch, not online serving (a batch's latencies leave out "
            "the queue a served request waits in)") in [plain(line) for line in found.left_out]
    batch = next(s for s in found.shapes if "offline batch" in s)
    assert batch == "llama-3.1-8b, prompt 512 + 128 new tokens, offline batch, engine transformers (JouleBench's " \
                    "built-in loop)"
    alone = _decide(sweeps, [H100, ORIN], token_target.Target(tpot_p90_ms=50), batch)
    assert [a.status for a in alone.answers] == ["meets", "not known"] and alone.curve.is_empty()
    assert any(plain(line).startswith(f"{H100}: 4 configurations left out: online serving, not offline batch")
               for line in alone.left_out)


def test_mean_lengths_within_10_percent_compare_and_15_percent_do_not(sweeps: Path) -> None:
    found = _decide(sweeps, [H100, ORIN, A100], token_target.Target(tpot_p90_ms=50))
    a100 = next(a for a in found.answers if a.device == A100)
    assert a100.best is not None and a100.best["request_rate_per_s"] == 1.0  # 540 + 120: within 10 %
    row = next(r for r in found.table.iter_rows(named=True) if r["Device"] == A100)
    assert row["Why"].endswith("; prompt mean 540 + 120 new tokens (means), within 10 % of prompt 512 + 128 new "
                               "tokens")
    assert f"{A100}: 1 configuration left out: prompt mean 589 tokens is 15 % from 512 (more than 10 %)" \
        in [plain(line) for line in found.left_out]


def test_the_command_line_gives_the_same_sweep_answer(sweeps: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    assert main(["decide", "--device", H100, "--device", ORIN, "--mode", "infer", "--tpot-p90", "50", "--json",
                 "--db", str(sweeps)]) == 0
    said = json.loads(capsys.readouterr().out)["tokens"]
    assert said["shape"] == SERVING_SHAPE
    assert plain(said["sentences"][0]).startswith(f"At TPOT p90 ≤ 50 ms ({SERVING_SHAPE}), {ORIN} sustains 0.98")
    assert any(plain(line).startswith(f"{H100}: 1 configuration left out: offline batch") for line in said["left_out"])
    assert len(said["curve"]) == 7


# --- a tiny OpenAI-compatible server: serve-bench end to end without an engine -------------------------------


class _TinyOpenAI(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    tokens, gap_s = 3, 0.02

    def do_GET(self) -> None:
        if self.path != "/v1/models":
            self.send_error(404)
            return
        body = json.dumps({"object": "list", "data": [{"id": "tiny", "object": "model", "owned_by": "test"}]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        asked = json.loads(self.rfile.read(int(self.headers["content-length"])))
        n = int(asked.get("max_tokens") or self.tokens)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for _ in range(n):
            time.sleep(self.gap_s)
            self.wfile.write(f"data: {json.dumps({'choices': [{'index': 0, 'text': ' x'}]})}\n\n".encode())
            self.wfile.flush()
        usage = {"choices": [], "usage": {"prompt_tokens": 8, "completion_tokens": n, "total_tokens": 8 + n}}
        self.wfile.write(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode())
        self.wfile.flush()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def tiny_server() -> Iterator[str]:
    with local_http_server(_TinyOpenAI) as url:
        yield url


def test_serve_bench_measures_with_a_jetsons_module_power(tiny_server: str, tmp_path: Path) -> None:
    """Item 6: serve-bench picks its meter as `joulebench run` does (runner.sensors.detect_meter): on a Jetson,
    for --device cuda or cpu, the INA3221 module rail; its runs carry the Jetson module's energy."""
    from runner.sampler import SensorMeter
    from runner.sensors import detect_meter
    from runner.sensors.jetson import Ina3221Sensor
    from runner.serve_bench.cli import options_from
    from runner.serve_bench.run import serve_bench
    from tests.test_sensors import nano_tree
    from tests.test_serve_bench import _args

    root = nano_tree(tmp_path / "jetson")
    for device in ("cuda", "cpu"):
        chosen = detect_meter(device, root=root).meter
        try:
            assert isinstance(chosen, SensorMeter) and isinstance(chosen.sensor, Ina3221Sensor)
        finally:
            chosen.close()
    opts = options_from(_args(target=tiny_server, concurrency="2", requests=12.0, output_tokens="3",
                              warmup_requests=0.0, out=tmp_path / "jetson-serve.json"), None)
    meter = SensorMeter(Ina3221Sensor(root=root), rate_hz=200.0)
    result = serve_bench(opts, meter=meter, ingest=False)
    meter.close()
    (run,) = result.runs
    m = run["metrics"]
    assert run["status"] == "ok" and m["energy_boundary"] == "jetson_module"
    assert m["output_tokens"] == m["requests_completed"] * 3
    # the simulated module draws 2.793 W (POM_5V_IN): J/token is that power over the steady state's tokens
    assert m["j_per_token"] == pytest.approx(2.793 * m["duration_s"] / m["output_tokens"], rel=0.05)


def test_new_run_starts_a_serve_bench_against_a_url(db: Path, tiny_server: str) -> None:
    """New run's serve-bench form: the options and the server checked in a child process first (a bad URL is
    refused in the form's words, nothing started), then `joulebench serve-bench` runs as a child and its runs
    land in the database."""
    from streamlit.testing.v1 import AppTest

    from explorer import jobs
    from joulebench.errors import RunConfigError
    from tests.test_new_run import APP, _wait

    with pytest.raises(RunConfigError) as refused:
        jobs.start(db, jobs.ServeBenchRequest(target="http://127.0.0.1:9", concurrency="2"))
    assert "Server URL: cannot reach http://127.0.0.1:9" in refused.value.format_message()
    assert jobs.current(db) is None
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/new_run.py").run()
    at.text_input(key="sb_target").set_value(tiny_server)
    at.text_input(key="sb_concurrency").set_value("1,2")
    at.text_input(key="sb_output").set_value("3")
    at.number_input(key="sb_requests").set_value(8)
    next(b for b in at.button if b.label == "Start serve-bench").click().run()
    assert not at.exception and not at.error
    state = _wait(db, lambda s: not s.running)
    assert state.job.exit_code == 0 and state.job.planned_runs == 2
    assert [(r["config"]["load_kind"], r["config"]["max_concurrency"], r["status"]) for r in state.runs] == [
        ("concurrency", 1, "ok"), ("concurrency", 2, "ok")]
    assert [row["Load"] for row in jobs.summary_rows(state.runs)] == ["concurrency 1", "concurrency 2"]
    with Store.open(db) as store:
        stored = store.query("SELECT max_concurrency, output_tokens_mean FROM runs WHERE workload = 'serve-bench' "
                             "ORDER BY max_concurrency")
    assert stored.rows() == [(1, 3.0), (2, 3.0)]


@pytest.mark.browser
def test_decide_gives_the_sweep_answer_in_a_real_browser(seeded_db: Path, tmp_path: Path, page,  # type: ignore[no-untyped-def]  # noqa: F811
                                                         output_dir: Path) -> None:
    import os

    from tests.test_browser import _body, _settled, _shot, _wait_text, app_server

    import_sweeps(seeded_db, tmp_path)
    env = dict(os.environ, JOULEBENCH_DB=str(seeded_db), HF_HUB_OFFLINE="1")
    with app_server([], env, tmp_path) as url:
        page.goto(f"{url}/decide?device=H100+80GB&device=Jetson+AGX+Orin&mode=infer&tpot=50")
        _wait_text(page, "sustains 0.98 requests/s")
        _settled(page)
        body = _body(page)
        assert f"At TPOT p90 ≤ 50 ms ({SERVING_SHAPE}), {ORIN} sustains 0.98 requests/s (125 output tokens/s) at " \
               "0.09 J/token" in body
        assert f"{H100} sustains 3.9 requests/s (499 output tokens/s) at 0.2 J/token" in body
        assert "0.00833 USD electricity + 1.27 USD hardware = 1.28 USD" in body
        assert "Left out of this comparison (1): not like for like" in body
        for title in ("Latency against throughput", "Energy per output token against load"):  # drawn after the text
            page.locator(".gtitle", has_text=title).first.wait_for(state="attached", timeout=60_000)
        titles = page.locator(".gtitle").all_text_contents()
        assert any(t.startswith("Latency against throughput") for t in titles), titles
        assert any(t.startswith("Energy per output token against load") for t in titles), titles
        _shot(page, output_dir / "decide-serving-sweep.png")
