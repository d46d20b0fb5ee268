"""serve-bench, issue 26 items 2, 3, 6: `--rate sweep` against the real engine (the session's one
`transformers serve`, tests/serve_engine.py), `--gpus 0,1` with NVML patched at its module boundary (two
simulated GPUs: no GPU here), goodput per joule, why latency percentiles are withheld, and bad input.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import duckdb
import pynvml as real_pynvml
import pytest

from runner.serve_bench import measure
from runner.serve_bench.bench import sweep_rates
from runner.serve_bench.options import ServeBenchError
from runner.serve_bench.result import RequestResult
from tests.serve_engine import Server, model_dir, server  # noqa: F401 - the session's engine, shared
from tests.test_serve_bench import bench, not_refused

GPU_W = {0: 150.0, 1: 250.0}  # the two simulated boards' constant power


def _rows(db: Path, sql: str) -> list[dict[str, Any]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        cur = con.execute(sql)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur.fetchall()]
    finally:
        con.close()


@pytest.fixture
def two_gpus() -> Iterator[Any]:
    """`runner.sensors.nvml.pynvml` patched (autospec, as tests/test_sensors.py does) with two GPUs of 150 and
    250 W: power in mW, energy counters in mJ advancing with the real clock the sampler reads."""
    t0 = time.monotonic()
    with mock.patch("runner.sensors.nvml.pynvml", autospec=True) as m:
        for name in dir(real_pynvml):  # exception classes and constants stay real
            if name.startswith(("NVMLError", "NVML_", "nvmlClocks")):
                setattr(m, name, getattr(real_pynvml, name))
        m.nvmlDeviceGetCount.return_value = 2
        m.nvmlDeviceGetHandleByIndex.side_effect = lambda i: i
        m.nvmlDeviceGetName.side_effect = lambda h: "NVIDIA H100 80GB HBM3"
        m.nvmlDeviceGetPowerUsage.side_effect = lambda h: round(GPU_W[h] * 1000)
        m.nvmlDeviceGetTotalEnergyConsumption.side_effect = lambda h: round(
            (1_000 + GPU_W[h] * (time.monotonic() - t0)) * 1000)
        m.nvmlDeviceGetFieldValues.side_effect = real_pynvml.NVMLError_NotSupported()
        m.nvmlDeviceGetClockInfo.return_value = 1500
        m.nvmlDeviceGetCurrentClocksEventReasons.return_value = 0
        yield m


# --- --rate sweep against the engine ------------------------------------------------------------------------


def test_rate_sweep_finds_saturation_then_sweeps_between_one_stream_and_it(server: Server,  # noqa: F811
                                                                           tmp_path: Path) -> None:
    db = tmp_path / "jb.duckdb"
    common = ["--target", server.url, "--rate", "sweep", "--sweep-points", "2", "--max-concurrency", "4",
              "--requests", "10", "--prompt-tokens", "16", "--output-tokens", "8", "--warmup-requests", "0",
              "--slo", "ttft_p90=10s", "--engine", "transformers-serve"]
    from cli.main import main

    assert main(["serve-bench", *common, "--check"]) == 0
    assert bench(*common, db=db) == 0
    runs = _rows(db, "SELECT * FROM runs WHERE workload = 'serve-bench' ORDER BY started_at")
    assert len({r["source_id"] for r in runs}) == 1  # one sweep: one result file, one source
    single, saturation, *rated = runs
    assert (single["load_kind"], single["max_concurrency"]) == ("concurrency", 1)
    assert (saturation["load_kind"], saturation["max_concurrency"]) == ("concurrency", 4)
    assert "the single-stream probe" in single["notes"] and "the saturation probe" in saturation["notes"]
    # the rates: evenly from one stream's requests/s to saturation's, the last at saturation
    r1, rmax = single["requests_per_s"], saturation["requests_per_s"]
    assert [r["request_rate_per_s"] for r in rated] == sweep_rates(r1, rmax, 2)
    assert rated[-1]["request_rate_per_s"] == pytest.approx(max(r1, rmax), rel=1e-3)
    for r in rated:
        assert r["load_kind"] == "rate" and r["status"] == "ok" and "rate sweep: rate" in r["notes"]
        assert f"{rmax:.4g} requests/s" in r["notes"]
    for r in runs:
        assert r["output_tokens_mean"] == 8 and r["goodput_slo"] == "ttft_p90<=10000ms"
        if r["energy_j"] is not None:  # goodput per joule: the good requests over the steady state's energy
            good = r["goodput_requests_per_s"] * r["duration_s"]
            assert r["goodput_requests_per_j"] == pytest.approx(good / r["energy_j"])
            assert 0 < r["goodput_requests_per_j"] <= r["requests_completed"] / r["energy_j"] * (1 + 1e-9)
        else:
            assert r["goodput_requests_per_j"] is None and r["energy_missing_reason"]
        # percentiles either given, or withheld with the reason in their place
        assert (r["ttft_p90_ms"] is None) == (r["latency_missing_reason"] is not None)


def test_sweep_rates_run_from_one_stream_to_saturation() -> None:
    assert sweep_rates(1.0, 5.0, 4) == [2.0, 3.0, 4.0, 5.0]
    assert sweep_rates(0.123456, 0.9, 1) == [0.9]
    assert sweep_rates(3.0, 2.0, 3) == [3.0]  # no gain past one stream: one rate, never a repeat or a lower one


# --- --gpus -------------------------------------------------------------------------------------------------


def test_gpus_are_summed_into_one_energy_with_each_trace_kept(two_gpus: Any) -> None:
    from runner.sampler import SensorMeter
    from runner.serve_bench.gpus import GpuSet, open_gpus

    sensor = open_gpus([0, 1])
    assert isinstance(sensor, GpuSet) and sensor.domains() == ["gpu0", "gpu1"] and sensor.has_counter
    meter = SensorMeter(sensor, rate_hz=50.0)
    try:
        with meter.window() as reading:
            time.sleep(0.4)
    finally:
        meter.close()
    assert reading.boundary == "gpu_board" and reading.method == "counter"
    assert reading.energy_j == pytest.approx(400.0 * reading.duration_s, rel=0.1)  # 150 W + 250 W
    traces = {t.domain: t for t in reading.traces}
    assert set(traces) == {"gpu0", "gpu1"} and all(t.boundary == "gpu_board" for t in traces.values())
    assert set(traces["gpu0"].power_w) == {150.0} and set(traces["gpu1"].power_w) == {250.0}
    one = open_gpus([1])  # one GPU: the plain NVML sensor of that index
    assert one.domains() == ["gpu1"]
    one.close()


def test_a_gpu_that_does_not_exist_is_refused(two_gpus: Any) -> None:
    from runner.serve_bench.gpus import open_gpus, parse_gpus

    with pytest.raises(ServeBenchError) as info:
        open_gpus([0, 2])
    assert "--gpus: GPU 2 does not exist: this machine has 2 NVIDIA GPU(s) (indices 0-1)" in info.value.format_message()
    for bad, why in (("0,x", "'x' is not a GPU index"), ("-1", "'-1' is not a GPU index"), ("1,1", "given twice")):
        with pytest.raises(ServeBenchError, match=why):
            parse_gpus(bad)


def test_no_gpu_to_read_is_refused_with_the_way_out() -> None:
    from runner.serve_bench.gpus import open_gpus

    with pytest.raises(ServeBenchError) as info:  # this machine: no NVML library
        open_gpus([0])
    assert "no NVIDIA GPU can be read on this machine" in info.value.format_message()
    assert "--device cpu" in info.value.format_message()


def test_serve_bench_on_two_gpus_stores_their_sum_and_both_traces(server: Server, two_gpus: Any,  # noqa: F811
                                                                 tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "jb.duckdb"
    base = ["--target", server.url, "--concurrency", "2", "--requests", "12", "--prompt-tokens", "8",
            "--output-tokens", "6", "--warmup-requests", "0"]
    assert bench(*base, "--gpus", "0,3", db=db) == 2  # GPU 3 does not exist: refused, nothing stored
    assert "--gpus: GPU 3 does not exist" in capsys.readouterr().err and not db.exists()
    assert bench(*base, "--gpus", "0,1", "--sample-hz", "50", db=db) == 0
    (run,) = _rows(db, "SELECT * FROM runs WHERE workload = 'serve-bench'")
    assert run["status"] == "ok" and run["gpu_count"] == 2 and run["energy_boundary"] == "gpu_board"
    traces = _rows(db, f"SELECT domain, boundary, sample_count FROM power_traces WHERE run_id = '{run['run_id']}' "
                       "ORDER BY domain")
    assert [(t["domain"], t["boundary"]) for t in traces] == [("gpu0", "gpu_board"), ("gpu1", "gpu_board")]
    powers = _rows(db, f"SELECT domain, min(power_w) AS lo, max(power_w) AS hi FROM power_samples WHERE run_id = "
                       f"'{run['run_id']}' GROUP BY domain ORDER BY domain")
    assert [(p["lo"], p["hi"]) for p in powers] == [(150.0, 150.0), (250.0, 250.0)]
    if run["energy_j"] is not None:  # the steady state's energy cut from the summed traces: 400 W over it
        assert run["energy_j"] == pytest.approx(400.0 * run["duration_s"], rel=0.05)
        assert run["j_per_token"] == pytest.approx(run["energy_j"] / run["output_tokens"])


# --- latency withheld, with the reason --------------------------------------------------------------------


def _request(i: int, sent: float, tokens: list[float]) -> RequestResult:
    r = RequestResult(i, 8, len(tokens), sent_s=sent, token_s=tokens, end_s=tokens[-1])
    r.output_tokens, r.prompt_tokens = len(tokens), 8
    return r


def test_withheld_percentiles_say_why() -> None:
    few = [_request(i, i * 0.1, [i * 0.1 + 0.05, i * 0.1 + 0.07]) for i in range(4)]
    out, _, _ = measure.figures(few, measure.Steady(0.0, 0.4, few, "test"), "concurrency", [])
    assert "ttft_p50_ms" not in out and "itl_p90_ms" not in out
    assert out["latency_missing_reason"].startswith("too few requests in the steady state: 4 completed")
    enough = few + [_request(4, 0.4, [0.45, 0.47])]
    out, _, _ = measure.figures(enough, measure.Steady(0.0, 0.5, enough, "test"), "concurrency", [])
    assert out["ttft_p90_ms"] > 0 and "latency_missing_reason" not in out
    queued = [_request(i, i * 0.01, [1.0 + i, 1.1 + i]) for i in range(8)]  # all sent before the first completes
    steady = measure.steady_interval(queued, "rate", None)
    assert steady is not None and steady.saturated
    out, load, _ = measure.figures(queued, steady, "rate", [])
    assert load.overloaded and out["latency_missing_reason"].startswith("overloaded")
    assert "ttft_p90_ms" not in out


def test_the_summary_shows_the_reason_where_the_percentiles_would_be() -> None:
    from runner.serve_bench.run import summary

    run = {"status": "ok", "flags": ["overloaded"], "config": {"load_kind": "rate", "request_rate_per_s": 50.0},
           "metrics": {"requests_completed": 8, "latency_missing_reason": "overloaded: arrivals outpaced completions",
                       "goodput_requests_per_j": 0.25}}
    text = summary([run])
    assert "withheld (overloaded)" in text and "goodput req/J" in text and "0.25" in text
    assert "50/s: latency percentiles withheld: overloaded: arrivals outpaced completions" in text


# --- bad input: a clear error, nothing stored ---------------------------------------------------------------


def test_bad_sweep_and_gpu_options_are_refused_and_nothing_is_stored(server: Server, tmp_path: Path,  # noqa: F811
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "jb.duckdb"
    ok = ["--target", server.url, "--rate", "sweep"]
    cases = [
        ([*ok, "--sweep-points", "0"], "--sweep-points: 0 is not valid"),
        ([*ok, "--sweep-points", "nan"], "--sweep-points: nan is not valid"),
        (["--target", server.url, "--rate", "1,2", "--sweep-points", "3"], "--sweep-points applies to --rate sweep"),
        ([*ok, "--requests", "10"], "--requests: 10 is too few for --rate sweep"),
        ([*ok, "--max-concurrency", "-3"], "--max-concurrency: -3 is not valid"),
        (["--target", server.url, "--rate", "swoop"], "--rate: 'swoop' is not a number"),
        (["--target", server.url, "--rate", "1", "--requests", "nan"], "--requests: nan is not valid"),
        (["--target", server.url, "--rate", "1", "--duration", "-1"], "--duration: -1 is not valid"),
        (["--target", server.url, "--rate", "1", "--gpus", "zero"], "--gpus: 'zero' is not a GPU index"),
        (["--target", server.url, "--rate", "1", "--gpus", "0", "--device", "cpu"], "leave out --device"),
        (["--target", server.url, "--rate", "1", "--gpus", "0"], "--gpus: no NVIDIA GPU can be read"),
    ]
    assert not_refused(cases, db, capsys) == []


def test_check_lists_the_sweeps_runs(server: Server, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    from cli.main import main

    capsys.readouterr()
    assert main(["serve-bench", "--target", server.url, "--rate", "sweep", "--sweep-points", "3", "--repeats",
                 "2", "--check"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert planned["measured_runs"] == 2 + 3 + 3  # the probes once, the rates per repeat
    assert planned["runs"][0].endswith("concurrency 1 (one stream) (repeat 0)")
    assert planned["runs"][1].endswith("concurrency 16 (saturation) (repeat 0)")
