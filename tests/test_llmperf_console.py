"""LLMPerf's console summary (importers.llmperf): what token_benchmark_ray.py prints after its progress bars, read by
the same mapping as its *_summary.json, on two real captures (tests/fixtures/formats/SOURCES.md): a fork's stdout and
stderr redirected to a file (tokenizer and Ray warnings, a tqdm line of carriage returns) and DeepSparse's README with
the output pasted under the command that made it. Every expected figure was read off the file by hand."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from importers import load
from tests.helpers import ingest_runs, load_fixture, mutated, readers_of_other_fixtures, refusal, runs_or_refusal

LLMPERF = Path(__file__).parent / "fixtures" / "formats" / "llmperf"
SGLANG = LLMPERF / "hongxuanzhang-llmperf-sglang-gpu2-tp2-requests_8_tokens_1000-console.txt"
DEEPSPARSE = LLMPERF / "deepsparse-examples-llmperf-README-tinystories-console.md"


def _block(name: str, mean: float, indent: str = "    ") -> str:
    stats = dict(p25=mean * 0.9, p50=mean, p75=mean * 1.1, p90=mean * 1.2, p95=mean * 1.3, p99=mean * 1.4, mean=mean,
                 min=mean * 0.5, max=mean * 1.5, stddev=mean * 0.1)
    return name + "\n" + "".join(f"{indent}{k} = {v}\n" for k, v in stats.items())


def _summary(model: str = "m", *, completed: int = 32, errors: int = 0, tput: float = 400.0, indent: str = "    ",
             header: str = "\\Results for token benchmark for {model} queried with the openai api.\n\n") -> str:
    blocks = "".join(_block(n, m, indent) for n, m in (("inter_token_latency_s", 0.02), ("ttft_s", 0.5),
                                                       ("end_to_end_latency_s", 3.0),
                                                       ("request_output_throughput_token_per_s", 50.0),
                                                       ("number_input_tokens", 550.0), ("number_output_tokens", 150.0)))
    return (header.format(model=model) + blocks + f"Number Of Errored Requests: {errors}\n"
            f"Overall Output Throughput: {tput}\nNumber Of Completed Requests: {completed}\n"
            f"Completed Requests Per Minute: {completed * 2.5}\n")


# --- the real captures ---------------------------------------------------------------------------------------------
def test_a_redirected_fork_log_is_llmperfs_not_a_tqdm_bar(tmp_path: Path, bare_template: Path) -> None:
    runs, fmt, _ = load_fixture(SGLANG)
    assert fmt == "llmperf" and len(runs) == 1  # before: tqdm, one meaningless 'iterations/s' run of its bar
    (row,) = ingest_runs(tmp_path / "llm.duckdb", bare_template, SGLANG)
    assert row["origin_format"] == "llmperf" and row["device_name"] is None  # only the folder says GPU2_TP2
    assert row["model"] == "llama2-7b-chat"  # '\Results for token benchmark for llama2-7b-chat queried with ...'
    assert row["tokens_per_s"] == pytest.approx(414.5526564245765)  # Overall Output Throughput (all requests / wall)
    assert row["ttft_avg_ms"] == pytest.approx(456.40018259473436)  # ttft_s mean = 0.45640018259473436
    assert row["ttft_p50_ms"] == pytest.approx(582.1714625053573)  # ttft_s p50
    assert row["ttft_p99_ms"] == pytest.approx(682.5752008811106)  # ttft_s p99
    assert row["e2e_latency_avg_ms"] == pytest.approx(2555.779160846214)  # end_to_end_latency_s mean
    assert row["e2e_latency_p90_ms"] == pytest.approx(2831.5677685663103)  # end_to_end_latency_s p90
    assert row["requests_completed"] == 32 and row["requests_failed"] == 0
    assert row["requests_per_s"] == pytest.approx(166.933955607212 / 60)  # Completed Requests Per Minute
    assert row["prompt_tokens_mean"] == pytest.approx(1012.53125) and row["output_tokens_mean"] == 149.0
    # inter_token_latency_s 0.01715 s = every chunk gap with the TTFT / output tokens: neither ITL nor TPOT
    assert row["itl_avg_ms"] is None and row["itl_p50_ms"] is None and row["tpot_avg_ms"] is None
    assert "inter_token_latency_s mean 17.1 ms" in row["notes"]
    # request_output_throughput_token_per_s mean 58.77: one request's rate, never the system's
    assert "per-user output 58.77 tokens/s" in row["notes"]
    # the console states no load and no lengths asked for (the script's 8 and 1000 are in its file name only)
    assert row["max_concurrency"] is None and row["load_kind"] is None
    assert row["prompt_tokens_requested"] is None and "concurrency not in the text" in row["notes"]
    assert row["energy_j"] is None and row["energy_missing_reason"] == "LLMPerf does not measure energy"


def test_the_captured_command_line_gives_the_settings() -> None:
    runs, fmt, warnings = load_fixture(DEEPSPARSE)
    assert fmt == "llmperf" and len(runs) == 1
    (run,) = runs
    config, metrics = run["config"], run["metrics"]
    assert config["model"] == "hf:mgoin/TinyStories-1M-ds" and run["device"] is None
    # python token_benchmark_ray.py --mean-input-tokens 100 --stddev-input-tokens 50 --mean-output-tokens 100
    # --stddev-output-tokens 50 --max-num-completed-requests 50 --num-concurrent-requests 1
    assert config["max_concurrency"] == 1 and config["load_kind"] == "concurrency"
    assert config["prompt_tokens_requested"] == 100 and config["output_tokens_requested"] == 100
    assert config["length_distribution"] == "normal: prompt mean 100 sd 50, output mean 100 sd 50"
    assert "--max-num-completed-requests 50" in run["notes"]
    assert metrics["tokens_per_s"] == pytest.approx(343.3687633083576)  # Overall Output Throughput
    assert metrics["ttft_p95_ms"] == pytest.approx(229.12864976096892)  # ttft_s p95 = 0.22912864976096892
    assert metrics["requests_completed"] == 52  # 52 of the 50 asked for: the version of 2023-12 overshot
    assert "itl_avg_ms" not in metrics and "per-user output 147.9 tokens/s" in run["notes"]
    # the README's second, truncated output (4 concurrent, 50.65 tokens/s) has no header: not read, and said
    assert any("line 185: LLMPerf totals without their 'Results for token benchmark for' header" in w
               for w in warnings)


def test_the_given_fixtures_stay_with_their_readers() -> None:
    assert readers_of_other_fixtures({"llmperf"}, {"llmperf"}) == []


# --- what forks and pastes change ----------------------------------------------------------------------------------
def test_crlf_a_glued_bar_and_terminal_escapes_are_read() -> None:
    bar = " 97%|#########7| 31/32 [00:11<00:00]\r100%|##########| 32/32 [00:11<00:00,  2.78it/s]"
    text = "\x1b[36m(pid=1)\x1b[0m warming up\n" + bar + _summary("llama").replace("\n", "\r\n")
    (run,) = load(text.encode(), "run.log")[0].runs
    assert run["config"]["model"] == "llama" and run["metrics"]["tokens_per_s"] == 400.0
    assert run["metrics"]["ttft_p50_ms"] == pytest.approx(500.0)


def test_a_paste_without_indents_with_blank_lines_and_a_forks_extra_total() -> None:
    text = _summary("NousResearch/Llama-2-13b-chat-hf", indent="").replace("\nttft_s", "\n\nttft_s")
    text += "Launched Requests Per Minute: 35.987575600993196\n```\n\nSome prose: 166 tokens/second.\n"
    (run,) = load(text.encode(), "README.md")[0].runs
    assert run["metrics"]["ttft_avg_ms"] == pytest.approx(500.0) and run["metrics"]["requests_completed"] == 32
    assert "launched requests per minute 35.9876" in run["notes"]


def test_sambanovas_fork_prints_its_workers_and_errors_are_counted() -> None:
    text = _summary(errors=3).replace("Overall Output", "Error Code Frequency\n{429: 3}\nOverall Output")
    text = text.replace("Completed Requests Per", "Number Of Concurrent Workers: 4\nCompleted Requests Per")
    (run,) = load(text.encode(), "samba.txt")[0].runs
    assert run["config"]["max_concurrency"] == 4 and run["metrics"]["requests_failed"] == 3
    assert "error codes {429: 3}" in run["notes"]


def test_every_request_refused_is_a_failed_run() -> None:
    text = _summary(completed=0, errors=150, tput=0.0)
    for name in ("ttft_s", "end_to_end_latency_s", "inter_token_latency_s"):  # pandas prints nan over no request
        block = _block(name, 1.0)
        text = text.replace(block, name + "\n" + "".join(f"    {line.split(' = ')[0].strip()} = nan\n"
                                                         for line in block.splitlines()[1:]))
    (run,) = load(text.encode(), "all429.txt")[0].runs
    assert run["status"] == "failed" and run["error"] == "no request completed (150 failed)"
    assert run["metrics"]["requests_failed"] == 150 and "tokens_per_s" not in run["metrics"]


def test_a_command_with_shell_variables_states_nothing() -> None:
    command = ("python3 token_benchmark_ray.py \\\n--model \"llama\" \\\n--mean-input-tokens $mean_input_tokens \\\n"
               "--num-concurrent-requests ${LLM_PERF_CONCURRENT} \\\n--mean-output-tokens 150\n")
    imported, _ = load((command + _summary("llama")).encode(), "run.txt")
    (run,) = imported.runs
    assert run["config"]["max_concurrency"] is None and run["config"]["prompt_tokens_requested"] is None
    assert run["config"]["output_tokens_requested"] == 150 and run["config"]["length_distribution"] is None
    said = "--num-concurrent-requests '${LLM_PERF_CONCURRENT}' is not a plain count"
    assert any(said in w for w in imported.warnings)


def test_two_sections_are_two_runs_each_with_its_command() -> None:
    text = ("python token_benchmark_ray.py --model a --num-concurrent-requests 2\n" + _summary("a", tput=100.0)
            + "python token_benchmark_ray.py --model a --num-concurrent-requests 8\n" + _summary("a", tput=300.0))
    runs = load(text.encode(), "sweep.txt")[0].runs
    assert [(r["config"]["max_concurrency"], r["metrics"]["tokens_per_s"]) for r in runs] == [(2, 100.0), (8, 300.0)]
    alike = load((_summary("a") + _summary("a", tput=9.0)).encode(), "twice.txt")[0].runs
    assert [r["config"]["tag"] for r in alike] == ["section at line 1", "section at line 73"]  # never pooled


# --- refusals, the source code itself, bounded work ------------------------------------------------------------------
def test_a_malformed_figure_is_refused_naming_its_line() -> None:
    said = refusal(_summary().replace("p50 = 0.5\n", "p50 = fast\n").encode(), "bad.txt")
    assert "bad.txt" in said and "line 16 (ttft_s p50)" in said and "'fast' is not a number" in said
    said = refusal(b"\\Results for token benchmark for m queried with the openai api.\n\nttft_s\n"
                   b"Traceback (most recent call last):\nOverall Output Throughput: ", "cut.txt")
    assert "line 1" in said and "paste the whole summary" in said


def test_the_tools_source_is_no_capture() -> None:
    source = ('    print(f"\\Results for token benchmark for {model} queried with the {llm_api} api.\\n")\n'
              '    print(f"Overall Output Throughput: {overall_output_throughput}")\n')
    from importers.base import Source
    from importers.llmperf import LlmPerfImporter

    assert not LlmPerfImporter().sniff(Source.single(source.encode(), "token_benchmark_ray.py"))


def test_hostile_input_is_bounded() -> None:
    header = "\\Results for token benchmark for m queried with the openai api.\n"
    junk = header + "ttft_s\n" + "    p50 = 1\n" * 200_000 + "Results for token benchmark for " * 30_000
    started = time.monotonic()
    runs_or_refusal(junk.encode(), "junk.txt")
    assert time.monotonic() - started < 20


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut=st.floats(0, 1), at=st.floats(0, 1),
       junk=st.sampled_from([b"nan", b"-5", b"0", b"1e400", b"\r", b"\n", b"= =", b"p50 = x\n", b"\x1b[0m", b"\x00",
                             b"\\Results for token benchmark for x queried with the openai api.\n"]))
def test_mutated_captures_import_or_refuse_naming_the_file(cut: float, at: float, junk: bytes) -> None:
    for run in runs_or_refusal(mutated(SGLANG.read_bytes(), cut, at, junk), SGLANG.name):
        for key, value in run["metrics"].items():
            assert not isinstance(value, float) or (value == value and abs(value) != float("inf")), key
        assert all(run["metrics"].get(k, 1) > 0 for k in ("tokens_per_s", "requests_per_s"))
