"""serve-bench keeps every request of a point (issue 38): its result file carries them, its figures are
joulebench.requests.aggregate's over the requests it counts (the steady state's, or what an overloaded point
served), and a store that imported the file gives every stored figure back from the stored requests.

Against tests/hostile_server.py (an OpenAI-compatible server in this process: 3 text events 5 ms apart and a
usage) for speed; test_serve_bench.py runs serve-bench against a real engine.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

import db.requests as db_requests
import joulebench.requests as jr
from db import Store
from energy.grades import RunFacts, grade_run
from joulebench.metrics import E2E, ITL, TPOT, TTFT, Percentiles
from runner.serve_bench import counts, measure, records
from runner.serve_bench.result import RequestResult
from tests.hostile_server import HostileServer
from tests.test_serve_bench import _args

LATENCY = {m.name for d in (TTFT, ITL, TPOT, E2E) for m in d.metrics()}
FROM_REQUESTS = ("requests_completed", "requests_failed", "prompt_tokens_mean", "output_tokens_mean")


def _sweep(server: HostileServer, tmp_path: Path, bare_template: Path, **over: Any) -> tuple[Path, dict[str, Any]]:
    """A serve-bench sweep against the server, imported into a copy of the bare store: (the store, the file)."""
    from runner.serve_bench.cli import options_from
    from runner.serve_bench.run import serve_bench

    db = tmp_path / "store.duckdb"
    shutil.copy(bare_template, db)
    settings: dict[str, Any] = dict(target=server.url, rate="30,60", requests=45.0, warmup_requests=1.0,
                                    output_tokens="4", prompt_tokens="8", request_timeout=10.0,
                                    out=tmp_path / "serve.json", slo="ttft_p90=500ms")
    settings.update(over)
    result = serve_bench(options_from(_args(**settings), str(db)))
    assert result.exit_code == 0, result
    return db, json.loads(Path(result.out_path).read_text())


def _stored(db: Path) -> dict[str, dict[str, Any]]:
    with Store.open_read_only(db) as store:
        rows = store.query("SELECT * FROM runs WHERE workload = 'serve-bench'")
    return {r["run_id"]: r for r in rows.iter_rows(named=True)}


def test_every_request_is_written_and_every_stored_figure_is_recomputed_from_the_stored_requests(
        tmp_path: Path, bare_template: Path) -> None:
    with HostileServer("honest") as server:  # rates the in-process server keeps up with on a busy machine
        db, doc = _sweep(server, tmp_path, bare_template, rate="10,20")
    stored = _stored(db)
    assert len(doc["runs"]) == 2 and set(stored) == {r["run_id"] for r in doc["runs"]}
    checked = 0
    expected = 0  # an overloaded point withholds its latencies (checked above as withheld): its counts remain
    with Store.open_read_only(db) as store:
        for run in doc["runs"]:
            assert run["status"] == "ok", run.get("error")
            items = run["requests"]
            assert [r["index"] for r in items] == list(range(45)) and "requests_total" not in run  # every one sent
            counted = [r for r in items if r.get("counted", True)]
            assert 2 <= len(counted) < 45  # the ramp (before the first completion) is not counted
            assert all(r["scheduled_send_s"] <= r["send_s"] for r in items)
            rows = db_requests.read(store, [run["run_id"]])
            assert rows.height == 45
            row = stored[run["run_id"]]
            fresh = jr.aggregate(rows).metrics
            flat = db_requests.aggregate(store.con, run["run_id"]).metrics  # the store's own path: gaps read flat
            assert fresh.keys() == flat.keys()
            for name, value in fresh.items():
                assert flat[name] == pytest.approx(value, rel=1e-12), name
                if name in LATENCY and row["latency_missing_reason"] is not None:
                    assert row[name] is None, name  # withheld, with the reason; never another figure
                    continue
                assert row[name] == pytest.approx(value, rel=1e-12), (run["run_id"], name)
                assert run["metrics"][name] == pytest.approx(value, rel=1e-12), name  # the file's, too
                checked += 1
            assert all(name in fresh for name in FROM_REQUESTS)
            # requests/s and the token count rest on the same counted requests; an overloaded point's tokens are
            # those that arrived inside its window (measure.figures: its requests' own are the offered load), which
            # its notes state beside the requests completed
            ok = rows.filter(rows["counted"] & (rows["status"] == "ok"))
            assert row["requests_per_s"] == pytest.approx(ok.height / row["duration_s"])
            if measure.FLAG_OVERLOADED in run["flags"]:
                basis = f"{ok.height} requests completed and {row['output_tokens']} output tokens arrived"
                assert basis in run["notes"]
            else:
                assert row["output_tokens"] == ok["output_tokens_server"].fill_null(ok["output_tokens_client"]).sum()
            # the send lag stored is that of the requests sent in the steady state (those counted, unless the
            # point was overloaded): actual - scheduled send, recomputed from the stored rows
            if "overloaded" not in run["flags"]:
                counted_rows = rows.filter(rows["counted"])
                lags = [(s - p) * 1000 for s, p in zip(counted_rows["send_s"], counted_rows["scheduled_send_s"],
                                                       strict=True)]
                found = Percentiles.of(lags)
                assert found is not None
                assert row["client_send_lag_p50_ms"] == pytest.approx(found.p50, abs=1e-6)
                assert row["client_send_lag_p99_ms"] == pytest.approx(found.p99, abs=1e-6)
                assert row["client_send_lag_max_ms"] == pytest.approx(max(lags), abs=1e-6)
            assert row["client_cpu_busy_pct"] is not None and 0 < row["client_cpu_busy_pct"] <= 110
            expected += len(FROM_REQUESTS) + (0 if row["latency_missing_reason"] else 15)
    assert checked >= expected >= 2 * len(FROM_REQUESTS)  # the latencies of every point that states them


def test_a_usage_the_stream_contradicts_is_not_kept_as_the_servers_count(tmp_path: Path,
                                                                         bare_template: Path) -> None:
    with HostileServer("usage_lie") as server:  # 3 events, usage claiming 10,000 tokens
        db, doc = _sweep(server, tmp_path, bare_template, rate="30", requests=30.0)
    (run,) = doc["runs"]
    assert counts.FLAG_USAGE_DISAGREES in run["flags"]
    ok = [r for r in run["requests"] if r["status"] == "ok"]
    assert ok and all("output_tokens_server" not in r and r["output_tokens_client"] == 3 for r in ok)
    assert all(r["prompt_tokens_server"] == 8 for r in ok)  # the prompt count was not contradicted: kept
    assert run["metrics"]["output_tokens_mean"] == 3
    (row,) = _stored(db).values()
    assert row["output_tokens_mean"] == 3 and row["trust_grade"] == "D"
    assert any(r.startswith("[D] flags: the server's token counts disagreed") for r in row["trust_reasons"])
    graded = grade_run(RunFacts.from_result_run(run, origin_kind="local"))
    assert graded.grade == "D"


# --- the population counted, without a server ---------------------------------------------------------------


def _request(i: int, sent: float, tokens: list[float], n: int | None = None) -> RequestResult:
    r = RequestResult(i, 8, len(tokens), sent_s=sent, token_s=tokens, end_s=tokens[-1] if tokens else sent)
    r.output_tokens, r.prompt_tokens = n or len(tokens), 8
    return r


def test_an_overloaded_point_counts_what_it_served_and_its_requests_give_its_figures() -> None:
    queued = [_request(i, i * 0.01, [1.0 + i + k * 0.1 for k in range(4)]) for i in range(8)]
    failed = RequestResult(8, 8, 4, sent_s=0.09, end_s=2.0, error="HTTP 503", error_kind="refused")
    results = [*queued, failed]
    steady = measure.Steady(0.0, 4.05, results, "test", saturated=True)
    out, load, _ = measure.figures(results, steady, "rate", [])
    assert load.overloaded
    counted = {r.index for r in measure.population(results, steady, load)}
    assert counted == {0, 1, 2, 8}  # the three whose last token came inside it, and the one that failed inside it
    reqs = records.point_requests(results, counted, 0.0)
    agg = jr.aggregate(jr.frame(reqs)).metrics
    assert out["requests_completed"] == agg["requests_completed"] == 3
    assert out["requests_failed"] == agg["requests_failed"] == 1
    assert out["output_tokens_mean"] == agg["output_tokens_mean"] == 4
    assert "ttft_p50_ms" not in out and out["latency_missing_reason"].startswith("overloaded")
    assert [r.status for r in reqs].count("refused") == 1


def test_figures_are_the_one_aggregation_of_the_counted_requests() -> None:
    """TTFT/TPOT/E2E per request, ITL pooled over every gap: percentiles of the pooled requests, never a mean of
    per-request percentiles; tokens as the counts decided (the server's only where believed)."""
    reqs = [_request(i, i * 0.1, [i * 0.1 + 0.02 + 0.01 * (i % 3) + k * (0.004 + 0.002 * (i % 4))
                                  for k in range(2 + i % 5)], n=2 + i % 5 + (i % 2)) for i in range(20)]
    for r in reqs:
        r.count_source = "usage" if r.index % 2 else "stream"
        r.output_tokens_client = len(r.token_s)
    steady = measure.Steady(0.0, 2.0, reqs, "test")
    out, _, _ = measure.figures(reqs, steady, "concurrency", [])
    gaps = [g for r in reqs for g in r.gaps_ms()]
    import numpy as np

    assert out["itl_p90_ms"] == pytest.approx(float(np.percentile(gaps, 90)))
    per_request_p90 = np.mean([np.percentile(r.gaps_ms(), 90) for r in reqs if len(r.token_s) > 1])
    assert out["itl_p90_ms"] != pytest.approx(per_request_p90)  # not a mean of percentiles
    tpot = [r.tpot_ms for r in reqs if r.tpot_ms is not None]
    assert out["tpot_p99_ms"] == pytest.approx(float(np.percentile(tpot, 99)))
    assert out["output_tokens_mean"] == pytest.approx(np.mean([r.output_tokens for r in reqs]))
    stored = records.point_requests(reqs, None, 0.0)
    by_server = [s for s in stored if s.output_tokens_server is not None]
    assert {s.index for s in by_server} == {r.index for r in reqs if r.count_source == "usage"}
    assert all(s.output_tokens == r.output_tokens for s, r in zip(stored, reqs, strict=True))


class _Tokenizer:
    """Counts words: a stand-in for --tokenizer (counts.client_output_tokens only calls encode)."""

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return list(range(len(text.split())))


def test_the_prompt_count_is_the_servers_where_it_agrees_with_the_tokenizer_else_the_clients() -> None:
    def point(server_prompt: int) -> list[RequestResult]:
        out = []
        for i in range(4):
            r = _request(i, 0.0, [0.1, 0.2])
            r.prompt_tokens_client, r.usage_prompt_tokens, r.usage_output_tokens = 20, server_prompt, 2
            out.append(r)
        return out

    agreeing = point(20)
    found = counts.reconcile(agreeing, _Tokenizer())
    assert counts.FLAG_PROMPT_DIFFERS not in found.flags
    assert all(r.prompt_source == "usage" and r.prompt_tokens == 20 for r in agreeing)
    assert all(s.prompt_tokens_server == 20 and s.prompt_tokens_client == 20
               for s in records.point_requests(agreeing, None, 0.0))
    differing = point(31)
    found = counts.reconcile(differing, _Tokenizer())
    assert counts.FLAG_PROMPT_DIFFERS in found.flags
    assert all(r.prompt_source == "client" and r.prompt_tokens == 20 for r in differing)
    stored = records.point_requests(differing, None, 0.0)
    assert all(s.prompt_tokens_server is None and s.prompt_tokens_client == 20 for s in stored)
    assert jr.aggregate(jr.frame(stored)).metrics["prompt_tokens_mean"] == 20  # the client's, as the figures


def test_the_runs_columns_hold_the_client_lag(bare_template: Path) -> None:
    con = duckdb.connect(str(bare_template), read_only=True)
    try:
        names = {r[0] for r in con.execute("SELECT column_name FROM information_schema.columns WHERE "
                                           "table_name = 'runs'").fetchall()}
    finally:
        con.close()
    assert {"client_send_lag_p50_ms", "client_send_lag_p99_ms", "client_send_lag_max_ms", "client_cpu_wait_pct",
            "client_cpu_busy_pct"} <= names


def test_a_point_that_served_nothing_inside_its_steady_state_is_failed_not_a_rate_of_zero() -> None:
    """Every completion came before the steady state opened or after it closed (a client stalled in bursts): no
    requests/s of 0 (the result file refuses it), a failed point with why; its requests are still kept."""
    from energy import EnergyReading
    from runner.environment import Captured
    from runner.serve_bench.bench import Point, point_run
    from runner.serve_bench.cli import options_from
    from runner.serve_bench.counts import Counted
    from runner.serve_bench.result import ServerInfo

    # request 0 ends at 0.5 (the steady state opens there, its last token before); 8 more are sent by 0.9 and end
    # after 5: overloaded, and nothing was served inside [0.5, 0.9]
    results = [_request(0, 0.0, [0.2, 0.4])]
    results[0].end_s = 0.5
    results += [_request(i, 0.5 + 0.05 * i, [5.0 + i, 5.1 + i]) for i in range(1, 9)]
    for r in results:
        r.planned_s = r.sent_s
    opts = options_from(_args(target="http://127.0.0.1:9", rate="10", requests=9.0), None)
    info = ServerInfo(models=["m"], model="m", engine=None, engine_version=None)
    point = Point(results, EnergyReading(), None, 6.0, None, None, Counted(), start_s=0.0)
    run = point_run(opts, info, 10.0, 0, 0, point, Captured({"name": "CPU", "kind": "cpu"}, {}),
                    "2026-01-01T00:00:00+00:00")
    assert run["status"] == "failed" and run["error"].startswith("no request completed inside the steady state")
    assert run["metrics"]["requests_completed"] == 0 and "requests_per_s" not in run["metrics"]
    assert "overloaded" in run["flags"] and len(run["requests"]) == 9
    assert not any(r.get("counted", True) for r in run["requests"])  # nothing was served inside it
    assert jr.aggregate(jr.frame([jr.from_json(r) for r in run["requests"]])).metrics["requests_completed"] == 0
