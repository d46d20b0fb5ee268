"""Generation workloads (issue 19): a real tiny decoder generating on this CPU, prefill and decode apart.

The run goes through the whole runner (sweep, result file, ingest, grades); the figures are checked
against each other and against the token times the window recorded, so a wrong formula fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from db import Store
from energy import EnergyReading
from joulebench.errors import RunConfigError
from joulebench.metrics import ITL, TPOT, TTFT
from runner import SweepOptions, run_sweep, workloads
from runner.generation import GenerationWindows, generation_figures
from runner.measure import Window
from runner.options import from_strings

BATCH, PROMPT, NEW = 4, 24, 12


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], Path]:
    """Two repeats of llm-tiny, each window 0.4 s so the CPU estimate (10 ms ticks) moves."""
    tmp = tmp_path_factory.mktemp("gen")
    db = tmp / "gen.duckdb"
    opts = SweepOptions(workloads=["llm-tiny"], batch_sizes=[BATCH], seq_lens=[PROMPT], max_new_tokens=[NEW],
                        warmup=2, duration_s=0.4, repeats=2, db=str(db), out=tmp / "gen.json", idle=False)
    records = run_sweep(opts).runs
    return records, db


def test_every_token_figure_is_present_and_consistent(generated: tuple[list[dict[str, Any]], Path]) -> None:
    records, _ = generated
    assert len(records) == 2
    for run in records:
        assert run["status"] == "ok", run.get("error")
        c, m = run["config"], run["metrics"]
        assert c["task"] == "text-generation" and c["seq_len"] == PROMPT and c["max_new_tokens"] == NEW
        steps = c["measured_steps"]
        # exactly NEW tokens per request: no early stop
        assert m["examples"] == steps * BATCH and m["sample_unit"] == "request"
        assert m["output_tokens"] == steps * BATCH * NEW
        assert m["tokens_per_s"] == pytest.approx(m["output_tokens"] / m["duration_s"])
        assert m["throughput_sps"] == pytest.approx(m["examples"] / m["duration_s"])
        # decoding happens inside the window, so its rate over the decoded tokens (all but each request's first,
        # which the prefill gives) is at least those tokens over the whole window; it need not beat the end-to-end
        # rate when the prefills are short (a busy machine gave 1,039 against 1,044 tokens/s)
        assert m["decode_tokens_per_s"] >= m["tokens_per_s"] * (NEW - 1) / NEW * (1 - 1e-9)
        # a request's first token comes with its prefill: TTFT is below the request's whole latency
        assert 0 < m["ttft_p50_ms"] < m["latency_p50_ms"]
        for p in (TTFT, ITL, TPOT):
            assert 0 < m[p.p50.name] <= m[p.p90.name] <= m[p.p95.name] <= m[p.p99.name]
        # a request = TTFT + (NEW - 1) gaps, so the mean latency is TTFT + (NEW - 1) x TPOT
        assert m["latency_avg_ms"] == pytest.approx(m["ttft_avg_ms"] + (NEW - 1) * m["tpot_avg_ms"], rel=0.05)
        # energy: the CPU estimate, split into prefill and decode; the parts add up to the window's
        assert m["energy_boundary"] == "estimated" and m["energy_j"] > 0
        assert m["j_per_token"] == pytest.approx(m["energy_j"] / m["output_tokens"])
        assert m["j_per_sample"] == pytest.approx(m["energy_j"] / m["examples"])  # J per request
        decode_tokens = steps * BATCH * (NEW - 1)
        assert m["prefill_j_per_request"] * m["examples"] + m["decode_j_per_token"] * decode_tokens == \
            pytest.approx(m["energy_j"])
        assert "energy split:" in run["notes"] and "per request's prefill" in run["notes"]


def test_generation_runs_are_stored_and_graded(generated: tuple[list[dict[str, Any]], Path]) -> None:
    records, db = generated
    store = Store.open_read_only(db)
    try:
        rows = store.query("SELECT max_new_tokens, output_tokens, decode_j_per_token, tpot_p90_ms, trust_grade, "
                           "config_key FROM runs WHERE workload = 'llm-tiny'").rows()
    finally:
        store.close()
    assert len(rows) == 2 and {r[0] for r in rows} == {NEW}
    assert {r[1] for r in rows} == {run["metrics"]["output_tokens"] for run in records}
    assert all(r[2] is not None and r[3] is not None for r in rows)
    assert {r[4] for r in rows} == {"D"}  # estimated energy: graded, and graded unreliable
    assert len({r[5] for r in rows}) == 1  # the two repeats are one configuration


def _window(steps: int, energy_j: float | None, duration_s: float = 1.0) -> Window:
    return Window(steps=steps, duration_s=duration_s, step_times_ms=[], energy=EnergyReading(energy_j=energy_j))


def test_the_split_formulas() -> None:
    """2 batches of 2 requests, 3 tokens each: first tokens at 10 and 12 ms, then gaps of 2, 4 and 3, 3 ms."""
    gen = GenerationWindows(_window(2, 12.0), [[10.0, 12.0, 16.0], [12.0, 15.0, 18.0]], prefill=_window(5, 2.0))
    figures, note = generation_figures(gen, batch_size=2, prompt_tokens=100, max_new_tokens=3, energy_j=12.0)
    m = figures.columns()
    assert m["output_tokens"] == 12 and m["tokens_per_s"] == 12.0
    assert m["ttft_avg_ms"] == 11.0 and m["itl_avg_ms"] == 3.0  # gaps 2, 4, 3, 3 (each for both requests)
    assert m["decode_tokens_per_s"] == pytest.approx(2 * 2 * 2 / ((6 + 6) / 1000))  # 8 tokens in 12 ms
    assert m["prompt_tokens_per_s"] == pytest.approx(2 * 2 * 100 / ((10 + 12) / 1000))
    assert m["prefill_j_per_request"] == pytest.approx(2.0 / 10)  # 5 batches of 2 requests took 2 J
    assert m["decode_j_per_token"] == pytest.approx((12.0 - 4 * 0.2) / 8)
    assert m["j_per_token"] == 1.0 and "12 J - 4 x 0.2 J" in (note or "")


def test_a_split_that_would_go_negative_is_missing_with_its_reason() -> None:
    gen = GenerationWindows(_window(1, 1.0), [[5.0, 6.0]], prefill=_window(1, 5.0))
    m = generation_figures(gen, batch_size=1, prompt_tokens=8, max_new_tokens=2, energy_j=1.0)[0].columns()
    assert "decode_j_per_token" not in m and "too short for the sensor" in m["energy_split_missing_reason"]
    m = generation_figures(GenerationWindows(_window(1, None), [[5.0, 6.0]]), batch_size=1, prompt_tokens=8,
                           max_new_tokens=2, energy_j=None)[0].columns()
    assert "j_per_token" not in m and m["tokens_per_s"] == 2.0  # no energy: timing figures only, never a 0


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"workload": "bert-tiny", "max_new_tokens": "8"}, "--max-new-tokens applies to generation workloads only"),
    ({"workload": "llm-tiny", "mode": "train"}, "--mode train: llm-tiny generate text"),
    ({"workload": "llm-tiny", "max_new_tokens": "0"}, "--max-new-tokens: 0 is not valid"),
    ({"workload": "llm-tiny", "seq_len": "2000", "max_new_tokens": "100"}, "exceed llm-tiny's 2048 positions"),
])
def test_bad_generation_options_are_refused_before_anything_runs(kwargs: dict[str, str], expected: str) -> None:
    with pytest.raises(RunConfigError) as e:
        from_strings(device="cpu", **kwargs)
    assert expected in str(e.value)


def test_a_sweep_over_output_lengths_is_one_run_per_length() -> None:
    runs = from_strings(workload="llm-tiny", max_new_tokens="4,8", device="cpu", repeats=1).expand()
    assert [(r.size, r.max_new_tokens) for r in runs] == [(32, 4), (32, 8)]
    assert runs[0].label() == "llm-tiny infer fp32 batch 8 prompt 32 + 4 new tokens"


@pytest.mark.parametrize(("name", "billions"), [("llm-0.5b", 0.494), ("llm-1b", 1.236), ("llm-3b", 3.213),
                                                ("llm-8b", 8.030)])
def test_the_shipped_shapes_have_their_models_parameter_counts(name: str, billions: float) -> None:
    """Qwen2.5-0.5B 0.49B, Llama-3.2-1B 1.24B, Llama-3.2-3B 3.21B, Llama-3.1-8B 8.03B (tied embeddings
    counted once), counted on the meta device: nothing allocated."""
    assert workloads.get(name).parameter_count() / 1e9 == pytest.approx(billions, rel=0.01)


# --- serving: Poisson arrivals, batches of up to batch_size ---------------------------------------

def test_arrivals_are_poisson_and_replayable() -> None:
    from runner.serving import arrivals

    times = arrivals(8.0, 4000)
    assert times == arrivals(8.0, 4000)  # seeded: a repeat replays the same arrivals
    gaps = [b - a for a, b in zip([0.0, *times], times)]
    mean = sum(gaps) / len(gaps)
    assert mean == pytest.approx(1 / 8.0, rel=0.05)
    # exponential gaps: the standard deviation equals the mean
    sd = (sum((g - mean) ** 2 for g in gaps) / (len(gaps) - 1)) ** 0.5
    assert sd == pytest.approx(mean, rel=0.1)


def _serve(rate: float, **kw: Any) -> dict[str, Any]:
    from runner.execute import execute
    from runner.options import RunConfig

    cfg = RunConfig("llm-tiny", "infer", "fp32", BATCH, 1, PROMPT, "cpu", False, 1, kw.get("steps"),
                    kw.get("duration_s"), 0, max_new_tokens=NEW, request_rate_per_s=rate)
    run = execute(cfg).record
    assert run["status"] == "ok", run.get("error")
    return run


def test_a_saturated_server_reports_the_steady_state_of_full_batches() -> None:
    run = _serve(100_000.0, duration_s=0.004)  # every request arrives at once: 400 requests, all batches full
    m, c = run["metrics"], run["config"]
    assert c["request_rate_per_s"] == 100_000.0 and m["examples"] == 400
    assert m["output_tokens"] == 400 * NEW and c["measured_steps"] == 100  # 100 batches of 4
    assert m["throughput_sps"] == pytest.approx(400 / m["duration_s"])
    # queueing: batch k's requests waited for the k - 1 before them, so the p99 request (batch ~99) waited for
    # about 49 batches more than the median one (batch ~50), each taking (NEW - 1) decode steps. Those 49 are the
    # run's second half: on a machine whose load changes during the run they may decode faster than the run's
    # median request (beside two CPU hogs and a test suite: 2.27 s where 20 median batches would take 2.47 s), so
    # the bound asks for 5 median batches' time, where a TTFT timed from the batch's start, not the request's
    # arrival, gives about none. A ratio of p99 to p50 is no law: a stall before the first batch (a busy machine)
    # adds the same wait to every request and pulls the ratio towards 1 (1.02 beside two CPU hogs)
    assert m["ttft_p99_ms"] - m["ttft_p50_ms"] > 5 * (NEW - 1) * m["tpot_p50_ms"]
    assert m["ttft_p50_ms"] > 0.3 * m["duration_s"] * 1000
    assert "100 of them full" in run["notes"] and "cut from the power trace" in run["notes"]
    assert m["j_per_token"] > 0 and m["tokens_per_s"] > 0


def test_a_server_that_never_fills_a_batch_has_no_steady_state() -> None:
    run = _serve(20.0, steps=1)  # 4 requests 50 ms apart, each served alone
    m = run["metrics"]
    assert m["examples"] == BATCH and "0 of them full" in run["notes"]
    assert "j_per_token" not in m and "tokens_per_s" not in m
    assert "the target concurrency was never in flight" in m["energy_split_missing_reason"]
    assert m["ttft_p50_ms"] > 0 and m["energy_j"] > 0  # the window's own figures are there


def test_serving_options_are_checked() -> None:
    with pytest.raises(RunConfigError) as e:
        from_strings(workload="bert-tiny", request_rate="4", device="cpu")
    assert "--request-rate applies to generation workloads only" in str(e.value)
    with pytest.raises(RunConfigError) as e:
        from_strings(workload="llm-tiny", request_rate="0", device="cpu")
    assert "--request-rate: 0 is not valid" in str(e.value)
    runs = from_strings(workload="llm-tiny", request_rate="2,8", device="cpu", repeats=1).expand()
    assert [r.request_rate_per_s for r in runs] == [2.0, 8.0]


def test_the_new_run_form_passes_the_generation_options() -> None:
    from explorer.jobs import RunRequest, in_form_words

    argv = RunRequest(workload="llm-1b", precision="bf16", batch_size="1,8,32", max_new_tokens="128",
                      request_rate=" 4 ").argv(Path("db.duckdb"), Path("out.json"))
    assert argv[argv.index("--max-new-tokens") + 1] == "128" and argv[argv.index("--request-rate") + 1] == "4"
    assert "--request-rate" not in RunRequest(workload="llm-1b").argv(Path("db.duckdb"), Path("out.json"))
    assert in_form_words("--max-new-tokens: 0 is not valid") == "Output tokens per request: 0 is not valid"


def test_a_steady_state_whose_trace_reads_no_energy_has_no_j_per_token_and_says_why() -> None:
    """A CPU-utilisation estimate can read 0 W around a steady state of a few milliseconds (a busy machine): the
    figures are missing with the reason, never 0 J/token (which the result file's own ranges then refuse)."""
    from energy import PowerTrace
    from runner.serving import Served, served_figures

    zero = EnergyReading(energy_j=1.0, boundary="estimated", method="estimated",
                         traces=[PowerTrace("cpu", "estimated", "estimated", [0.0, 0.1, 0.2], [0.0, 0.0, 0.0])])
    served = Served(Window(steps=2, duration_s=0.2, step_times_ms=[50.0, 50.0], energy=zero),
                    batches=[(0.05, 0.06, 4), (0.1, 0.11, 4)], requests=8, rate_per_s=1000.0)
    out, note = served_figures(served, batch_size=4, max_new_tokens=4)
    assert out.j_per_token is None and out.j_per_request is None
    assert out.energy_split_missing_reason is not None
    assert "0 J over the steady state's 0.02 s" in out.energy_split_missing_reason
    assert out.tokens_per_s == pytest.approx(32 / 0.02) and "cut from the power trace" not in note
