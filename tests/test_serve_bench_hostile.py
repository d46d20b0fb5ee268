"""serve-bench against a hostile server (tests/hostile_server.py), in this process: no traceback, no hang past
the stated deadlines, no lie stored unflagged, a server without `usage` still measured (issue 40). The
subprocess runs (memory, signals, a kill) are in test_serve_bench_hostile_process.py.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runner.serve_bench import counts, measure
from runner.serve_bench.options import ServeBenchError
from runner.serve_bench.result import RequestResult
from tests.helpers import count_good
from tests.hostile_server import EVIL_MODEL, USAGE_KINDS, HostileServer, bomb
from tests.test_serve_bench import _args


def strings(value: Any) -> Iterator[str]:
    """Every string in a run (keys and values, nested)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


@pytest.fixture(scope="module", autouse=True)
def _bombs() -> None:
    bomb("models")  # built once, before any server answers with them
    bomb("stream")


@pytest.fixture
def hostile(request: pytest.FixtureRequest) -> Iterator[HostileServer]:
    with HostileServer(request.param) as server:
        yield server


def measured(server: HostileServer, tmp_path: Path, **over: Any) -> dict[str, Any]:
    """One concurrency-2 point of 6 requests (1 warm-up, 4 tokens asked) against the server: its run as written."""
    from runner.serve_bench.cli import options_from
    from runner.serve_bench.run import serve_bench

    settings: dict[str, Any] = dict(target=server.url, concurrency="2", requests=6.0, warmup_requests=1.0,
                                    output_tokens="4", prompt_tokens="8", request_timeout=3.0,
                                    out=tmp_path / "serve.json")
    settings.update(over)
    result = serve_bench(options_from(_args(**settings), None), ingest=False)
    (run,) = result.runs
    return run


@pytest.mark.parametrize("hostile", ["usage_lie"], indirect=True)
def test_a_server_claiming_10000_tokens_for_3_events_is_flagged_and_measured_by_the_stream(
        hostile: HostileServer, tmp_path: Path) -> None:
    run = measured(hostile, tmp_path, slo="tpot_p90=1ms")
    m = run["metrics"]
    assert run["status"] == "ok" and counts.FLAG_USAGE_DISAGREES in run["flags"]
    assert m["output_tokens_mean"] == 3 and m["tokens_per_s"] == pytest.approx(m["output_tokens"] / m["duration_s"])
    assert m["tokens_per_s"] < 3 * m["requests_per_s"] * 1.01  # never 10,000 per request
    # goodput takes each request's TPOT over the 2 gaps the stream carried (the server sends them ~5 ms apart), not
    # over 9,999 claimed tokens, which would make every request good. Beside busy processes the client can read the
    # 3 events at once and measure gaps under 1 ms: those requests are rightly good, so the count is recomputed
    # here from the requests, by the stream's count
    completed, good = count_good(run["requests"], {"tpot": 1.0})
    assert f"goodput: {good} of {completed} completed steady requests met every SLO term" in run["notes"]
    assert m["goodput_requests_per_s"] == pytest.approx(good / m["duration_s"])
    assert "usage 10000 output tokens where the stream carried 3 text events" in run["notes"]


@pytest.mark.parametrize("hostile", ["no_usage", *(f"usage_{k}" for k in USAGE_KINDS)], indirect=True)
def test_a_missing_or_malformed_usage_never_loses_the_point(hostile: HostileServer, tmp_path: Path) -> None:
    run = measured(hostile, tmp_path)
    m = run["metrics"]
    assert run["status"] == "ok", run.get("error")
    assert m["output_tokens_mean"] == 3 and m["requests_completed"] >= 2
    assert m["tokens_per_s"] > 0 and math.isfinite(m["tokens_per_s"])
    if hostile.mode == "usage_zero":  # a whole number, but fewer tokens than the text events that came
        assert counts.FLAG_USAGE_DISAGREES in run["flags"]
    else:
        assert counts.FLAG_COUNTED_BY_CLIENT in run["flags"]
        assert "no usable output count in usage" in run["notes"]


@pytest.mark.parametrize("hostile", ["delta_str"], indirect=True)
def test_fields_of_the_wrong_type_are_not_believed_and_raise_nothing(hostile: HostileServer, tmp_path: Path) -> None:
    run = measured(hostile, tmp_path)
    assert run["status"] == "ok" and run["metrics"]["output_tokens_mean"] == 3
    assert run["metrics"]["requests_failed"] == 0
    assert "malformed event(s) in" in run["notes"] and "were not believed" in run["notes"]


@pytest.mark.parametrize("hostile", ["slow_headers", "slow_body"], indirect=True)
def test_one_deadline_covers_headers_and_body(hostile: HostileServer, tmp_path: Path) -> None:
    """Headers or events one every 2 s: each request ends at --request-timeout (2 s), the warm-up's too."""
    started = time.monotonic()
    run = measured(hostile, tmp_path, request_timeout=2.0, requests=2.0)
    took_s = time.monotonic() - started
    assert run["status"] == "failed" and "within --request-timeout 2 s" in run["error"]
    assert took_s < 2 * 2.0 + 6.0, took_s  # the warm-up's deadline, one round of 2 in parallel, and the setup


@pytest.mark.parametrize("hostile, message", [
    ("gzip_stream", "bytes decompressed"), ("long_line", "a line of the stream passed 1,048,576 bytes"),
    ("many_events", "more than 80 events for 4 tokens")], indirect=["hostile"])
def test_bounds_refuse_a_reply_per_request(hostile: HostileServer, message: str, tmp_path: Path) -> None:
    started = time.monotonic()
    run = measured(hostile, tmp_path, request_timeout=20.0, requests=2.0, warmup_requests=0.0)
    assert time.monotonic() - started < 15.0  # refused at the bound, long before the deadline
    assert run["status"] == "failed" and message in run["error"]
    assert "2 too large" in run["notes"]


@pytest.mark.parametrize("hostile", ["slow_models", "gzip_models"], indirect=True)
def test_the_probe_is_bounded_in_time_and_size(hostile: HostileServer) -> None:
    from runner.serve_bench.probe import probe

    started = time.monotonic()
    with pytest.raises(ServeBenchError) as refused:
        probe(hostile.url, None, None, timeout_s=3.0)
    assert time.monotonic() - started < 3.0 + 2.0
    text = refused.value.format_message()
    expected = "did not answer GET /v1/models within 3 s" if hostile.mode == "slow_models" else "bytes decompressed"
    assert expected in text


@pytest.mark.parametrize("hostile", ["slow_models"], indirect=True)
def test_the_new_run_form_says_why_within_its_limit(hostile: HostileServer, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from explorer import jobs
    from joulebench.errors import RunConfigError

    monkeypatch.setattr(jobs, "SERVE_CHECK_TIMEOUT_S", 4.0)
    started = time.monotonic()
    with pytest.raises(RunConfigError) as refused:
        jobs.ServeBenchRequest(target=hostile.url, concurrency="1").plan(tmp_path / "jb.duckdb")
    assert time.monotonic() - started < 4.0 + 3.0
    assert "the server did not answer the check" in refused.value.format_message()


@pytest.mark.parametrize("hostile", ["control_names"], indirect=True)
def test_names_and_errors_from_the_server_are_cleaned(hostile: HostileServer, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    run = measured(hostile, tmp_path)
    printed = capsys.readouterr()
    assert run["config"]["model"] == "evil[31mmodel" and run["config"]["engine"] == "Evil[2J"
    assert run["config"]["engine_version"] == "6.6"
    for text in (*strings(run), printed.err, printed.out):
        assert not any(c in text for c in ("\x1b", "\u202e", "\x00")), text[:300]
    assert "the server sent an error: boom[2J[31mdone" in run["notes"]
    assert "model id: 3 control or format character(s) removed" in run["notes"]


@pytest.mark.parametrize("hostile", ["transformers"], indirect=True)
def test_transformers_serve_is_recognised(hostile: HostileServer) -> None:
    from runner.serve_bench.probe import probe

    info = probe(hostile.url, None, None)
    assert info.engine == "transformers-serve" and info.model == "hostile-model"


def test_the_model_id_is_sent_as_the_server_spelled_it() -> None:
    with HostileServer("control_names") as server:
        from runner.serve_bench.probe import probe

        info = probe(server.url, None, None)
    assert info.model == EVIL_MODEL and info.label == "evil[31mmodel"


# --- counts and an overloaded point, without a server -------------------------------------------------------


def _request(i: int, sent: float, tokens: list[float], usage: int | None, text_bytes: int = 30) -> RequestResult:
    r = RequestResult(i, 8, 16, sent_s=sent, token_s=tokens, end_s=tokens[-1], usage_output_tokens=usage,
                      text_bytes=text_bytes)
    return r


def test_usage_within_the_streams_bounds_is_believed() -> None:
    # 5 events for 9 tokens (a server that sends several tokens per event): inside [5, min(31, 16)]
    packed = [_request(0, 0.0, [0.1, 0.2, 0.3, 0.4, 0.5], 9), _request(1, 0.0, [0.1, 0.2], 2)]
    found = counts.reconcile(packed, None)
    assert [r.output_tokens for r in packed] == [9, 2] and found.flags == []
    # one request claiming more than its bytes allow: the point flagged, no request's usage believed
    lying = [_request(0, 0.0, [0.1, 0.2, 0.3], 3), _request(1, 0.0, [0.1, 0.2, 0.3], 40, text_bytes=12)]
    found = counts.reconcile(lying, None)
    assert found.flags == [counts.FLAG_USAGE_DISAGREES] and [r.output_tokens for r in lying] == [3, 3]
    assert counts.bounds(lying[1]) == (3, 13) and counts.tolerance(13) == 1


def test_an_overloaded_point_reports_what_was_served() -> None:
    """Every request queued (sent before the first completes): tokens/s and requests/s are the tokens that
    arrived and the requests that completed inside the steady state, over its length."""
    queued = [_request(i, i * 0.01, [1.0 + i + k * 0.1 for k in range(4)], 4) for i in range(8)]
    for r in queued:
        r.output_tokens = 4
    steady = measure.Steady(0.0, 4.05, queued, "test")  # the interval ends before most requests complete
    steady_from = measure.steady_interval(queued, "rate", None)
    assert steady_from is not None and steady_from.saturated
    out, load, notes = measure.figures(queued, measure.Steady(0.0, 4.05, queued, "test", saturated=True), "rate", [])
    assert load.overloaded
    # requests 0-2 ended by 4.05 (last tokens at 1.3, 2.3, 3.3); request 3's tokens at 4.0 only: 13 tokens
    assert out["requests_completed"] == 3 and out["output_tokens"] == 13
    assert out["tokens_per_s"] == pytest.approx(13 / 4.05) and out["requests_per_s"] == pytest.approx(3 / 4.05)
    assert "what was served inside it" in notes[-1]
    assert steady.duration_s == pytest.approx(4.05)
