"""The serve-bench client's own lag (issue 38): each point stores its send lag (actual - scheduled send) and its event
loop's CPU wait and use; a point whose send lag p99 is past 5 % of its TTFT p50 or 10 ms is flagged client_bound,
graded C, and the CLI's summary says so. The flags the hardened client sets are graded and worded."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from db import Store
from decision.text import flag_text
from energy.grades import RunFacts, grade_run
from runner.clock import REAL_CLOCK
from runner.serve_bench import bench
from runner.serve_bench.lag import (
    CLIENT_BOUND_MS,
    FLAG_CLIENT_BOUND,
    ClientLag,
    CpuMark,
    CpuUse,
    run_delay_s,
    send_lags_ms,
)
from runner.serve_bench.load import drive_rate
from runner.serve_bench.result import RequestResult
from runner.serve_bench.run import summary
from tests.hostile_server import HostileServer
from tests.test_serve_bench import _args


def test_the_threshold_is_5_percent_of_ttft_p50_or_10_ms_whichever_is_smaller() -> None:
    lag = ClientLag(tuple(float(x) for x in [0.5] * 98 + [3.0, 3.0]), None)
    assert lag.p50_ms == 0.5 and lag.p99_ms == pytest.approx(3.0) and lag.max_ms == 3.0
    assert lag.threshold_ms(40.0) == (pytest.approx(2.0), "5 % of its TTFT p50 40 ms")
    assert lag.bound(40.0)  # 3 ms against a 2 ms share of a 40 ms TTFT
    assert not lag.bound(100.0)  # 3 ms against 5 ms
    assert lag.threshold_ms(1000.0)[0] == CLIENT_BOUND_MS and not lag.bound(1000.0)  # 50 ms would be > 10 ms
    assert lag.threshold_ms(None)[0] == CLIENT_BOUND_MS  # TTFT withheld: 10 ms alone
    late = ClientLag((1.0,) * 90 + (25.0,) * 10, CpuUse(2.0, 0.4, 0.5, 6.3))
    assert late.bound(None) and late.bound(1000.0)
    note = late.note(1000.0)
    assert "p99 25 ms" in note and "client-bound" in note and "above 10 ms" in note
    assert "busy 20 % of one core, 25 % of it waiting for a CPU (load average 6.30" in note
    assert late.metrics() == {"client_send_lag_p50_ms": 1.0, "client_send_lag_p99_ms": pytest.approx(25.0),
                              "client_send_lag_max_ms": 25.0, "client_cpu_wait_pct": 25.0,
                              "client_cpu_busy_pct": 20.0}
    closed = ClientLag((), CpuUse(1.0, 0.1, None))  # a closed loop: no schedule; a kernel that does not say
    assert closed.p99_ms is None and not closed.bound(1.0)
    assert closed.metrics() == {"client_cpu_busy_pct": 10.0} and "not readable here" in closed.note(None)


def test_requests_held_for_a_concurrency_slot_are_not_the_clients_lag() -> None:
    """max_concurrency 1 and requests of 50 ms every 10 ms: all but the first wait for the slot, on purpose."""
    results = [RequestResult(i, 8, 4) for i in range(5)]
    held: set[int] = set()

    async def send(i: int, planned: float | None) -> None:
        results[i].planned_s, results[i].sent_s = planned, REAL_CLOCK.now()
        await asyncio.sleep(0.05)

    async def main() -> float:
        start = REAL_CLOCK.now() + 0.01
        await drive_rate([0.0, 0.01, 0.02, 0.03, 0.04], send, clock=REAL_CLOCK, start_s=start, max_concurrency=1,
                         held=held)
        return start

    start = asyncio.run(main())
    assert held == {1, 2, 3, 4}
    lags = send_lags_ms(results, start, held)
    assert len(lags) == 1 and lags[0] < 50  # the first: no slot to wait for
    assert max(send_lags_ms(results, start, set())) > 100  # the held ones waited for the slot


def test_the_event_loop_cpu_is_its_threads_busy_and_waiting_time() -> None:
    mark = CpuMark.now()
    end = time.perf_counter() + 0.3
    while time.perf_counter() < end:  # a spin: on a CPU or waiting for one the whole time
        pass
    spin = CpuUse.between(mark, CpuMark.now())
    assert spin.busy_pct is not None and spin.busy_pct > 10
    if run_delay_s() is not None:  # Linux: the run-queue wait is readable, and busy + waiting is the whole spin
        assert spin.wait_pct is not None and 80 <= spin.busy_pct + spin.wait_pct <= 110
    mark = CpuMark.now()
    time.sleep(0.2)
    idle = CpuUse.between(mark, CpuMark.now())
    assert idle.busy_pct is not None and idle.busy_pct < 20  # asleep: neither running nor waiting


def test_a_client_that_falls_behind_is_flagged_graded_c_and_the_summary_says_so(
        tmp_path: Path, bare_template: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The client's loop blocked 30 ms at each send (a stand-in for a machine without a free CPU): each send of a
    constant 20/s schedule is 30 ms late, past 10 ms; the point is stored flagged, with its lag, and graded C."""
    from runner.serve_bench.cli import options_from
    from runner.serve_bench.run import serve_bench

    real = bench.stream_request

    async def stalled(*args: Any, **kwargs: Any) -> None:
        time.sleep(0.03)  # blocks the event loop, as a process without a CPU is blocked
        await real(*args, **kwargs)

    monkeypatch.setattr(bench, "stream_request", stalled)
    db = tmp_path / "store.duckdb"
    shutil.copy(bare_template, db)
    with HostileServer("honest") as server:
        opts = options_from(_args(target=server.url, rate="20", arrival="constant", requests=30.0, output_tokens="4",
                                  prompt_tokens="8", out=tmp_path / "serve.json", request_timeout=10.0), str(db))
        result = serve_bench(opts)
    assert result.exit_code == 0
    (run,) = json.loads(Path(result.out_path).read_text())["runs"]
    m = run["metrics"]
    assert FLAG_CLIENT_BOUND in run["flags"] and m["client_send_lag_p50_ms"] >= 30
    assert m["client_send_lag_max_ms"] >= m["client_send_lag_p99_ms"] >= m["client_send_lag_p50_ms"]
    assert "client send lag (actual - scheduled send) over" in run["notes"] and "client-bound" in run["notes"]
    assert m["client_cpu_busy_pct"] > 0
    graded = grade_run(RunFacts.from_result_run(run, origin_kind="local"))
    assert any(r.check == "client" and r.cap == "C" for r in graded.reasons) and graded.grade in ("C", "D")
    with Store.open_read_only(db) as store:
        row = store.query("SELECT flags, trust_reasons, client_send_lag_p99_ms, client_cpu_busy_pct FROM runs WHERE "
                          "workload = 'serve-bench'").row(0, named=True)
    assert FLAG_CLIENT_BOUND in row["flags"] and row["client_send_lag_p99_ms"] == m["client_send_lag_p99_ms"]
    assert any(r.startswith("[C] client: the client fell behind its schedule") for r in row["trust_reasons"])
    err = capsys.readouterr().err
    # on a busy machine the server falls behind too: the point is then also overloaded, and says both
    assert re.search(r"20/s +ok (overloaded )?client-bound", err), err
    assert "20/s: client-bound: the client's send lag p99" in err


def test_the_summary_names_a_client_bound_point_and_its_figures() -> None:
    run = {"status": "ok", "flags": [FLAG_CLIENT_BOUND], "config": {"load_kind": "rate", "request_rate_per_s": 20.0},
           "metrics": {"requests_completed": 80, "ttft_p90_ms": 41.0, "client_send_lag_p99_ms": 12.5,
                       "client_send_lag_max_ms": 30.0, "client_cpu_wait_pct": 41.0, "client_cpu_busy_pct": 12.0}}
    text = summary([run])
    assert "ok client-bound" in text and "send lag p99 ms" in text
    assert ("20/s: client-bound: the client's send lag p99 12.5 ms (max 30 ms) is past 5 % of TTFT p50 or 10 ms; "
            "its event loop waited 41 % of the load for a CPU and ran 12 %") in text
    quiet = {**run, "flags": []}
    assert "client-bound" not in summary([quiet])


GOOD: dict[str, Any] = {"status": "ok", "origin_kind": "local", "duration_s": 60.0, "energy_j": 6000.0,
                        "energy_boundary": "gpu_board", "energy_method": "counter", "sensor_update_period_s": 0.1,
                        "energy_disagreement_pct": 1.0, "warmup_steady": True, "power_drift_pct": 0.5,
                        "requests_completed": 500.0, "requests_failed": 0.0}


@pytest.mark.parametrize(("flag", "cap", "check", "words"), [
    ("client_bound", "C", "client", "fell behind its schedule"),
    ("usage_disagrees_with_stream", "D", "flags", "were not believed: the figures use the client's count"),
    ("prompt_tokens_differ_from_server", "C", "flags", "the prompt length is uncertain"),
])
def test_the_clients_flags_cap_the_grade(flag: str, cap: str, check: str, words: str) -> None:
    assert grade_run(RunFacts.from_fields(GOOD)).grade == "A"
    graded = grade_run(RunFacts.from_fields({**GOOD, "flags": [flag]}))
    assert graded.grade == cap
    (limiting,) = graded.limiting
    assert limiting.check == check and words in limiting.text
    failed = grade_run(RunFacts.from_fields({**GOOD, "status": "failed", "flags": [flag]}))
    assert not any(words in r.text for r in failed.reasons)  # a failed run is graded on its outcome


def test_counted_by_the_client_limits_nothing_and_every_flag_reads_as_a_sentence() -> None:
    graded = grade_run(RunFacts.from_fields({**GOOD, "flags": ["output_tokens_counted_by_client"]}))
    assert graded.grade == "A"
    for flag in ("client_bound", "usage_disagrees_with_stream", "prompt_tokens_differ_from_server",
                 "output_tokens_counted_by_client"):
        text = flag_text(flag)
        assert "_" not in text and text != flag.replace("_", " ") and len(text) > 30, flag
    assert "client" in flag_text("client_bound") and "client's counts" in flag_text("usage_disagrees_with_stream")
