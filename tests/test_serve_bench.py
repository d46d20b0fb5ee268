"""serve-bench against a real engine: `transformers serve --continuous-batching` on the CPU with a 2-layer,
64-wide random-weight Llama and a tokenizer trained here (no download), one server for the session on a
free localhost port, stopped by its PID. Arrival and percentile definitions are checked without one.
"""

from __future__ import annotations

import http.server
import json
import math
import os
import random
import signal
import statistics
import threading
from collections.abc import Iterator
from pathlib import Path

import duckdb
import httpx
import pytest

from joulebench.metrics import E2E, ITL, TPOT, TTFT
from runner.serve_bench import measure
from runner.serve_bench.load import gaps_s, schedule_s
from runner.serve_bench.options import ServeBenchError, parse_slo
from runner.serve_bench.result import RequestResult
from tests.helpers import free_port, local_http_server
from tests.serve_engine import Server, model_dir, server  # noqa: F401 - the session's engine, shared


def bench(*args: str, db: Path) -> int:
    from cli.main import main

    return main(["serve-bench", *args, "--db", str(db)])


def not_refused(cases: list[tuple[list[str], str]], db: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The cases whose arguments were not refused (exit 2) with their message, each with what was printed; and
    'stored' when anything was (a database or a result file): [] when every case was refused and nothing kept."""
    wrong = []
    for args, message in cases:
        code = bench(*args, db=db)
        err = capsys.readouterr().err
        if code != 2 or message not in err:
            wrong.append(f"{args}: exit {code}, expected {message!r}: {err}")
    if db.exists() or (db.parent / "results").exists():
        wrong.append("stored")
    return wrong


def runs_in(db: Path) -> list[dict]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        cur = con.execute("SELECT * FROM runs WHERE workload = 'serve-bench' ORDER BY request_rate_per_s, "
                          "max_concurrency, started_at")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur.fetchall()]
    finally:
        con.close()


# --- against the engine -------------------------------------------------------------------------------


def test_rate_sweep_lands_in_the_database_with_the_servers_token_counts(server: Server, model_dir: Path,  # noqa: F811
                                                                        tmp_path: Path) -> None:
    # the server generates exactly max_tokens (a random model that never stops early): its own usage says so
    reply = httpx.post(server.url + "/v1/completions", json={"model": str(model_dir), "prompt": "the fox",
                                                             "max_tokens": 8}, timeout=60).json()
    assert reply["usage"]["completion_tokens"] == 8
    db = tmp_path / "jb.duckdb"
    code = bench("--target", server.url, "--rate", "1,2,5000", "--requests", "8", "--prompt-tokens", "16",
                 "--output-tokens", "8", "--tokenizer", str(model_dir), "--warmup-requests", "1",
                 "--slo", "ttft_p90=2s,tpot_p90=500ms", "--engine", "transformers-serve", db=db)
    assert code == 0
    runs = runs_in(db)
    assert [r["request_rate_per_s"] for r in runs] == [1.0, 2.0, 5000.0]
    for r in runs:
        assert r["status"] == "ok"
        assert r["load_kind"] == "rate" and r["arrival"] == "poisson" and r["seed"] == 0
        assert r["engine"] == "transformers-serve" and r["model"] == str(model_dir)
        # token figures are the server's usage: 8 per request, the prompt exactly 16 by the local tokenizer
        assert r["output_tokens_mean"] == 8 and r["prompt_tokens_mean"] == 16
        assert r["prompt_tokens_requested"] == 16 and r["output_tokens_requested"] == 8
        assert r["requests_completed"] >= 2 and r["requests_failed"] == 0
        assert r["tokens_per_s"] == pytest.approx(r["requests_per_s"] * 8)
        if r["energy_j"] is None:  # a steady state shorter than the sampler resolves (a loaded machine): missing
            assert r["j_per_token"] is None and r["energy_missing_reason"], r
        else:
            assert r["j_per_token"] == pytest.approx(r["energy_j"] / (r["requests_completed"] * 8))
        assert r["goodput_slo"] == "ttft_p90<=2000ms,tpot_p90<=500ms"
    low, _, high = runs
    assert "overloaded" not in low["flags"] and low["ttft_p90_ms"] > 0 and low["itl_p50_ms"] > 0
    assert low["tpot_p90_ms"] > 0 and low["e2e_latency_p99_ms"] >= low["ttft_p99_ms"]
    # 5,000/s: all 8 sent within 2 ms, before the first completes (10 ms or more, even on a quiet machine; at
    # 200/s a fast server finished the first after 4 sends, too few in the steady state to show a queue):
    # overloaded, no latency percentiles, the evidence kept
    assert "overloaded" in high["flags"]
    assert high["ttft_p90_ms"] is None and high["tpot_p90_ms"] is None and high["itl_p90_ms"] is None
    assert "overloaded: arrivals outpaced completions" in high["notes"]


def test_a_refused_request_is_counted(server: Server, model_dir: Path) -> None:  # noqa: F811
    import torch

    from runner.environment import capture
    from runner.sensors import detect
    from runner.serve_bench.bench import measure_point, plan_requests, point_run
    from runner.serve_bench.cli import options_from
    from runner.serve_bench.lengths import PromptBuilder
    from runner.serve_bench.probe import probe

    args = _args(target=server.url, concurrency="2", requests=8.0, output_tokens="4", request_timeout=60.0)
    opts = options_from(args, None)
    info = probe(server.url, None, None)
    builder = PromptBuilder(None)
    planned = plan_requests(opts, 2, 0, builder)
    planned[3][0].model = "a-model-it-lacks"  # the server refuses it (HTTP 400)
    meter = detect("cpu")
    try:
        point = measure_point(opts, info, 2, 0, builder, meter, planned=planned)
        run = point_run(opts, info, 2, 0, 0, point, capture(torch.device("cpu")), "2026-01-01T00:00:00+00:00")
    finally:
        meter.close()
    refused = [r for r in point.results if r.error_kind == "refused"]
    assert [r.index for r in refused] == [3] and "HTTP 400" in (refused[0].error or "")
    assert run["status"] == "ok"
    assert run["metrics"]["requests_failed"] + run["metrics"]["requests_completed"] == len(
        measure.steady_interval(point.results, "concurrency", 2).requests)
    assert "1 refused" in run["notes"]


def test_length_distribution_is_honoured_and_seeded(server: Server, model_dir: Path) -> None:  # noqa: F811
    from runner.sensors import detect
    from runner.serve_bench.bench import measure_point, plan_requests
    from runner.serve_bench.cli import options_from
    from runner.serve_bench.lengths import PromptBuilder
    from runner.serve_bench.probe import probe

    args = _args(target=server.url, concurrency="4", requests=16.0, prompt_tokens="mean=24,stdev=6,min=12,max=40",
                 output_tokens="3", tokenizer=model_dir, seed=7.0)
    opts = options_from(args, None)
    builder = PromptBuilder(model_dir)
    # the lengths drawn independently: a normal of mean 24, sd 6, rounded and cut to [12, 40], seed 7
    rng = random.Random(7)
    expected = [min(40, max(12, round(rng.gauss(24, 6)))) for _ in range(16)]
    planned = plan_requests(opts, 4, 7, builder)
    assert [r.prompt_tokens_requested for r, _ in planned] == expected
    assert [r.prompt_tokens_requested for r, _ in plan_requests(opts, 4, 8, builder)] != expected  # next repeat
    meter = detect("cpu")
    try:
        point = measure_point(opts, probe(server.url, None, None), 4, 7, builder, meter, planned=planned)
    finally:
        meter.close()
    assert all(r.ok for r in point.results)
    # the server counted each prompt as exactly the length asked for
    assert sorted((r.index, r.prompt_tokens) for r in point.results) == list(enumerate(expected))
    assert all(r.output_tokens == 3 for r in point.results)


# --- bad input: a clear error and nothing stored --------------------------------------------------------


class _NotOpenAI(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<html>hello</html>"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def not_openai() -> Iterator[str]:
    with local_http_server(_NotOpenAI) as url:
        yield url


def test_bad_input_is_refused_and_nothing_is_stored(server: Server, not_openai: str, tmp_path: Path,  # noqa: F811
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "jb.duckdb"
    ok = ["--target", server.url, "--rate", "1", "--requests", "3"]
    cases = [
        (["--target", f"http://127.0.0.1:{free_port()}", "--rate", "1"], "cannot reach"),
        (["--target", not_openai, "--rate", "1"], "is not an OpenAI-compatible server"),
        ([*ok, "--model", "no-such-model"], "does not serve 'no-such-model'"),
        (["--target", server.url, "--rate", "0"], "--rate: 0 is not valid"),
        (["--target", server.url, "--rate", "-2"], "--rate: -2 is not valid"),
        (["--target", server.url, "--rate", "nan"], "--rate: nan is not valid"),
        (["--target", server.url, "--concurrency", "0"], "--concurrency: 0 is not valid"),
        ([*ok, "--output-tokens", "-5"], "--output-tokens: -5 is not valid"),
        ([*ok, "--burstiness", "nan", "--arrival", "gamma"], "--burstiness: nan is not valid"),
        ([*ok, "--slo", "ttft=fast"], "--slo: 'ttft=fast' does not parse"),
        ([*ok, "--slo", "tpot_p90=-1ms"], "does not parse"),
        (["--target", server.url], "give one of --rate"),
        (["--target", "localhost:8000", "--rate", "1"], "is not an http(s) URL"),
        # a server elsewhere: this machine's sensors would measure the client
        (["--target", "http://198.51.100.7:8000", "--rate", "1"], "is another machine, so this machine's sensors"),
        (["--target", "http://198.51.100.7:8000", "--rate", "1", "--power-log", str(tmp_path / "p.csv")],
         "name the device its power log measured (--server-device NAME"),
        ([*ok, "--server-device", "Jetson AGX Orin"], "give --power-log FILE too"),
    ]
    assert not_refused(cases, db, capsys) == []


def test_every_bad_number_is_refused_before_the_server_is_asked(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The options' own checks come first (no server answers at this URL): NaN, infinite, negative and zero
    values of every option, a length distribution or a lengths CSV with one, and an SLO value that is not a
    number; each refused with the option's name, nothing stored."""
    db = tmp_path / "jb.duckdb"
    bad_csv = tmp_path / "lengths.csv"
    bad_csv.write_text("prompt_tokens,output_tokens\n16,8\nnan,-3\n")
    ok = ["--target", f"http://127.0.0.1:{free_port()}", "--rate", "1"]
    cases = [
        ([*ok[:2], "--rate", "inf"], "--rate: inf is not valid"),
        ([*ok[:2], "--concurrency", "nan"], "--concurrency: nan is not valid"),
        ([*ok, "--seed", "-1"], "--seed: -1 is not valid"),
        ([*ok, "--repeats", "0"], "--repeats: 0 is not valid"),
        ([*ok, "--request-timeout", "nan"], "--request-timeout: nan is not valid"),
        ([*ok, "--warmup-requests", "-1"], "--warmup-requests: -1 is not valid"),
        ([*ok, "--prompt-tokens", "mean=nan,stdev=2,min=1,max=9"], "--prompt-tokens mean: nan is not valid"),
        ([*ok, "--prompt-tokens", "mean=10,stdev=-2,min=1,max=9"], "--prompt-tokens stdev: '-2' is not valid"),
        ([*ok, "--lengths-csv", str(bad_csv)], "--lengths-csv row 3 prompt tokens: nan is not valid"),
        ([*ok, "--slo", "ttft_p90=nanms"], "--slo: 'ttft_p90=nanms' does not parse"),
        ([*ok, "--sample-hz", "0"], "--sample-hz: 0 is not valid"),
        ([*ok, "--tdp-w", "nan"], "--tdp-w: nan is not valid"),
        ([*ok, "--arrival", "gamma", "--burstiness", "-1"], "--burstiness: -1 is not valid"),
    ]
    assert not_refused(cases, db, capsys) == []


def test_a_server_killed_mid_run_gives_an_interrupted_run(model_dir: Path, tmp_path: Path) -> None:  # noqa: F811
    own = Server(model_dir, tmp_path / "serve.log")
    try:
        threading.Timer(4.0, lambda: os.kill(own.proc.pid, signal.SIGKILL)).start()
        db = tmp_path / "jb.duckdb"
        code = bench("--target", own.url, "--concurrency", "2,4", "--requests", "400", "--output-tokens", "24",
                     "--prompt-tokens", "16", "--warmup-requests", "0", "--request-timeout", "20", db=db)
    finally:
        own.stop()
    assert code == 1
    (run,) = runs_in(db)  # the second point never ran
    assert run["status"] == "interrupted" and "the server stopped answering" in run["error"]
    assert run["requests_completed"] > 0 and run["requests_failed"] >= 1
    assert "measured until the stop" in run["notes"]


# --- without a server -----------------------------------------------------------------------------------


def test_arrivals_keep_their_mean_rate_and_burstiness() -> None:
    for arrival, shape, cv2 in (("poisson", 1.0, 1.0), ("gamma", 0.25, 4.0), ("gamma", 4.0, 0.25)):
        gaps = gaps_s(8.0, 40_000, arrival=arrival, burstiness=shape, rng=random.Random(1))
        mean = statistics.fmean(gaps)
        assert mean == pytest.approx(1 / 8.0, rel=0.03)
        assert statistics.pvariance(gaps) / mean**2 == pytest.approx(cv2, rel=0.08)  # gamma: CV^2 = 1/shape
    assert gaps_s(4.0, 3, arrival="constant") == [0.25] * 3
    assert schedule_s(2.0, 50, seed=3) == schedule_s(2.0, 50, seed=3) != schedule_s(2.0, 50, seed=4)
    assert schedule_s(2.0, 3, arrival="constant") == [0.0, 0.5, 1.0]


def _request(i: int, sent: float, tokens: list[float], output_tokens: int) -> RequestResult:
    r = RequestResult(i, 8, output_tokens, sent_s=sent, token_s=tokens, end_s=tokens[-1])
    r.output_tokens, r.prompt_tokens = output_tokens, 8
    return r


def test_latency_definitions_are_vllms(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    monkeypatch.setattr(measure, "MIN_LATENCY_REQUESTS", 2)  # the definitions, on two requests

    a = _request(0, 0.0, [0.1, 0.15, 0.35], 3)  # TTFT 100, gaps 50 and 200, e2e 350, TPOT (350-100)/2
    b = _request(1, 1.0, [1.3, 1.32, 1.34, 1.36, 1.38], 9)  # 5 events for 9 tokens: TPOT uses the usage
    assert a.ttft_ms == pytest.approx(100) and a.e2e_ms == pytest.approx(350) and a.tpot_ms == pytest.approx(125)
    assert b.tpot_ms == pytest.approx(80 / 8)
    steady = measure.Steady(0.0, 1.0, [a, b], "test")
    out, load, _ = measure.figures([a, b], steady, "concurrency", parse_slo("ttft_p90=150ms"))
    gaps = [50, 200, 20, 20, 20, 20]
    assert out["itl_avg_ms"] == pytest.approx(np.mean(gaps))
    for q in (50, 90, 95, 99):
        stat = "p" + str(q)
        assert out[ITL.stat(stat).name] == pytest.approx(np.percentile(gaps, q))  # pooled over every gap
        assert out[TTFT.stat(stat).name] == pytest.approx(np.percentile([100, 300], q))
        assert out[TPOT.stat(stat).name] == pytest.approx(np.percentile([125, 10], q))
        assert out[E2E.stat(stat).name] == pytest.approx(np.percentile([350, 380], q))
    assert out["output_tokens"] == 12 and out["tokens_per_s"] == 12 and out["goodput_requests_per_s"] == 1
    assert not load.overloaded


def test_slo_parsing() -> None:
    terms = parse_slo("ttft_p90=500ms, tpot_p90=0.05s,e2e=3s")
    assert [(t.metric, t.percentile, t.limit_ms) for t in terms] == [("ttft", 90, 500), ("tpot", 90, 50),
                                                                      ("e2e", None, 3000)]
    for bad in ("ttft_p90=500", "ttft_p42=5ms", "ttft=inf ms", "ttft=1ms,ttft=2ms", "power=3ms", "ttft=0ms"):
        with pytest.raises(ServeBenchError):
            parse_slo(bad)
    assert math.isfinite(terms[0].limit_ms) and json.dumps(terms[0].text()) == '"ttft_p90<=500ms"'


def _args(**over: object) -> object:
    import argparse

    base: dict[str, object] = dict(target="", model=None, api="completions", rate=None, concurrency=None,
                                   max_concurrency=None, arrival="poisson", burstiness=1.0, requests=None,
                                   duration=None, warmup_requests=0.0, prompt_tokens="16", output_tokens="8",
                                   lengths_csv=None, tokenizer=None, slo=None, engine=None, seed=0.0, repeats=1.0,
                                   request_timeout=60.0, device="cpu", out=None, tag=None, power_log=None,
                                   power_log_boundary=None, tdp_w=None, sample_hz=10.0)
    base.update(over)
    return argparse.Namespace(**base)
