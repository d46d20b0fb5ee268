"""Issue 39, ninth held-out set (files and attribution in tests/fixtures/formats/SOURCES.md): a LoadGen detail log
alone, a Unix time in milliseconds, macOS powermetrics, ranges written in cells and a power mode in the notes,
llama-benchy's JSON report, a trimmed vLLM result with unit-less latencies, statistics of resources beside timed
ones, and a server log's set-up progress bars. Each rule on the file's own numbers, with its negative case."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from importers.base import Source
from importers.json_text import key_value_object
from joulebench import units
from tests.helpers import load_fixture as _load
from tests.helpers import refusal

FORMATS = Path(__file__).parent / "fixtures" / "formats"
DETAIL = FORMATS / "mlperf_loadgen_detail" / "loadgen-5.1-pysut-server-8xh200-mlperf_log_detail.txt"
ENERGIBRIDGE = FORMATS / "power_logs_energibridge" / "energibridge-m2-macbook-ollama-llama3.1-8b-run8.csv"
POWERMETRICS = FORMATS / "power_logs_macos" / "powermetrics-m2-macbook-pro-ollama-llama3.1-8b-run8.txt"
RANGES = FORMATS / "general_table" / "jetson-orin-nano-llamacpp-benchmark-table-ranges.md"
YOLO = FORMATS / "general_table" / "yolov8n-rtx4050-laptop-benchmark_report_gpu-statistics.json"
KEY_VALUE = FORMATS / "general_table" / "yolov8n-jetson-orin-nano-cpu-benchmark_report-key-value.csv"
BENCHY = FORMATS / "llama_bench" / "llama-benchy-0.4.0-lmstudio-qwen3.5-9b-pp2048-tg64.json"
SIDE_BY_SIDE = FORMATS / "general_table" / "exllamav3-gb10-ar-vs-k5-speculative-bench-8k-matched.json"
TOTAL_RATE = FORMATS / "text_figures" / "llama31-8b-h100-pci-parallel-tokens-run1-output_summary.txt"
TRIMMED_VLLM = FORMATS / "vllm_bench" / "vllm-serving-fork-glm5-fp8-tp8-unitless-latencies-conc64.json"


def _mllog(path: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for line in path.read_text().splitlines():
        if line.startswith(":::MLLOG"):
            entry = json.loads(line[len(":::MLLOG"):])
            out.setdefault(entry["key"], entry["value"])
    return out


def test_a_loadgen_detail_log_alone_is_read_as_its_summary_would_be() -> None:
    log = _mllog(DETAIL)
    (run,), fmt, _ = _load(DETAIL)
    m = run["metrics"]
    assert fmt == "mlperf-inference" and run["config"]["tag"] == "MLPerf Server"
    assert m["tokens_per_s"] == pytest.approx(log["result_completed_tokens_per_second"])
    assert m["requests_per_s"] == pytest.approx(log["result_completed_samples_per_sec"])
    assert m["ttft_p99_ms"] == pytest.approx(log["result_first_token_99.00_percentile_latency_ns"] / 1e6)
    assert m["tpot_p50_ms"] == pytest.approx(log["result_time_per_output_token_50.00_percentile_ns"] / 1e6)
    # token latencies make it an LLM run: a sample's latency is its request's end to end, not a query's
    assert m["e2e_latency_p50_ms"] == pytest.approx(log["result_50.00_percentile_latency_ns"] / 1e6)
    assert "latency_p50_ms" not in m
    assert 1.72611e-08 not in m.values()  # LoadGen's `result_token_throughput` is tokens per ns: never stored
    assert m["examples"] == log["result_query_count"]
    # an accuracy run's detail log has no performance result to import
    accuracy = DETAIL.read_text().replace('"key": "effective_test_mode", "value": "PerformanceOnly"',
                                          '"key": "effective_test_mode", "value": "AccuracyOnly"')
    assert accuracy != DETAIL.read_text()
    assert "accuracy run" in refusal(accuracy.encode(), DETAIL.name)


def test_a_unix_time_in_milliseconds_is_told_by_its_size() -> None:
    (run,), fmt, warnings = _load(ENERGIBRIDGE)
    assert fmt == "power-table"
    assert run["metrics"]["duration_s"] == pytest.approx((1728308756701 - 1728308741682) / 1000)
    assert run["metrics"]["energy_j"] == pytest.approx(572.2, abs=1)  # EnergiBridge's own total: 570.4 J
    assert run["started_at"].startswith("2024-10-07T13:45:41.682")
    assert any("Unix time in milliseconds" in w for w in warnings)
    seconds = b"Time,Power (W)\n1728308741.0,30\n1728308742.0,40\n1728308743.0,50\n"
    (plain,), _, said = _load_bytes(seconds)
    assert plain["metrics"]["duration_s"] == pytest.approx(2.0)
    assert not any("milliseconds" in w for w in said)
    assert "too large for a Unix time" in refusal(b"Time,Power (W)\n1e21,30\n2e21,40\n3e21,50\n", "huge.csv")


def _load_bytes(data: bytes, name: str = "power.csv") -> tuple[list[dict], str, tuple[str, ...]]:
    from importers import load

    imported, fmt = load(data, name)
    return imported.runs, fmt, imported.warnings


def _powermetrics_energy(text: str) -> tuple[float, float]:
    """(J, s) by hand: each block's combined power times its window."""
    blocks = re.split(r"^\*\*\* Sampled system activity", text, flags=re.MULTILINE)[1:]
    joules = seconds = 0.0
    for block in blocks:
        elapsed = float(re.search(r"\(([\d.]+)ms elapsed\)", block).group(1)) / 1000  # type: ignore[union-attr]
        combined = float(re.search(r"Combined Power \(CPU \+ GPU \+ ANE\): (\d+) mW", block).group(1)) / 1000  # type: ignore[union-attr]
        joules, seconds = joules + combined * elapsed, seconds + elapsed
    return joules, seconds


def test_macos_powermetrics_gives_the_socs_energy_window_by_window() -> None:
    joules, seconds = _powermetrics_energy(POWERMETRICS.read_text())
    (run,), fmt, _ = _load(POWERMETRICS)
    m = run["metrics"]
    assert fmt == "powermetrics"
    assert m["energy_j"] == pytest.approx(joules, rel=1e-6) and m["duration_s"] == pytest.approx(seconds)
    assert m["energy_boundary"] == "cpu_package"
    assert {t["domain"] for t in run["power_traces"]} == {"CPU Power", "GPU Power", "ANE Power",
                                                          "Combined Power (CPU + GPU + ANE)"}
    assert not (run["device"] or {}).get("name")  # Mac14,7 is a model identifier: the device is asked for
    one_block = POWERMETRICS.read_text().split("*** Sampled system activity")[:2]
    assert "fewer than 2 sample blocks" in refusal("*** Sampled system activity".join(one_block).encode(),
                                                   POWERMETRICS.name)


def test_a_range_is_no_figure_and_a_power_mode_in_the_notes_is_the_setting() -> None:
    runs, fmt, warnings = _load(RANGES)
    assert fmt == "general-table" and len(runs) == 5
    prompt = [r["metrics"].get("prompt_tokens_per_s") for r in runs]
    assert prompt == [257.0, None, None, None, None]  # '70-85', 'n/a', '171–205', '122–126': none is one figure
    assert sum("is a range, not one figure" in w for w in warnings) == 3
    bonsai = [r for r in runs if r["config"]["model"] == "Ternary-Bonsai-8B"]
    assert [r["config"].get("power_mode") for r in bonsai] == ["MAXN_SUPER", "15W"]  # two setups, never pooled
    assert [r["metrics"]["decode_tokens_per_s"] for r in bonsai] == [12.12, 7.37]
    assert units.is_range("70-85") and units.is_range("171–205") and units.is_range("2 to 3 s")
    assert not units.is_range("85-70") and not units.is_range("-5") and not units.is_range("2025-05-06")


def test_statistics_of_resources_and_the_warm_up_are_no_runs() -> None:
    doc = json.loads(YOLO.read_text())
    runs, fmt, warnings = _load(YOLO)
    assert fmt == "general-table"
    assert sorted(r["config"]["tag"] for r in runs) == ["Inference Statistics", "Latency Statistics",
                                                        "Postprocess Statistics", "Preprocess Statistics"]
    latency = next(r for r in runs if r["config"]["tag"] == "Latency Statistics")
    assert latency["metrics"]["throughput_sps"] == pytest.approx(doc["Latency Statistics"]["Average FPS"])
    said = " ".join(warnings)
    for name in ("CPU Statistics", "RAM Statistics", "Confidence Statistics", "Warmup Statistics"):
        assert f"{name} left out" in said


def test_llama_benchys_json_report_gives_a_prefill_and_a_generation_run() -> None:
    doc = json.loads(BENCHY.read_text())
    bench = doc["benchmarks"][0]
    (pp, tg), fmt, _ = _load(BENCHY)
    assert fmt == "llama-bench"
    assert pp["metrics"]["prompt_tokens_per_s"] == pytest.approx(bench["pp_throughput"]["mean"])
    assert pp["metrics"]["ttft_avg_ms"] == pytest.approx(bench["e2e_ttft"]["mean"])
    assert tg["metrics"]["tokens_per_s"] == pytest.approx(bench["tg_throughput"]["mean"])
    assert (pp["config"]["tag"], tg["config"]["tag"]) == ("pp2048", "tg64")
    assert tg["config"]["max_concurrency"] == 1 and tg["config"]["quantization"] == "q4_K_M"
    # at concurrency 4 the run's rate is all requests together, never one request's
    four = {**doc, "benchmarks": [{**bench, "concurrency": 4,
                                   "tg_req_throughput": {**bench["tg_req_throughput"], "mean": 25.0}}]}
    (_, tg4), _, _ = _load_bytes(json.dumps(four).encode(), BENCHY.name)
    assert tg4["metrics"]["tokens_per_s"] == pytest.approx(bench["tg_throughput"]["mean"])
    assert tg4["config"]["max_concurrency"] == 4 and "4 concurrent requests together" in tg4["notes"]


def test_a_trimmed_vllm_result_is_vllms_and_its_unitless_latencies_are_not_guessed() -> None:
    doc = json.loads(TRIMMED_VLLM.read_text())
    (run,), fmt, warnings = _load(TRIMMED_VLLM)
    assert fmt == "vllm-bench"
    assert run["metrics"]["tokens_per_s"] == pytest.approx(doc["output_throughput"])
    assert run["metrics"]["duration_s"] == pytest.approx(doc["duration"])
    assert not any(k.startswith(("ttft", "tpot", "e2e")) for k in run["metrics"])
    assert any("median_ttft" in w and "without a unit" in w for w in warnings)
    partial = {k: v for k, v in doc.items() if k not in ("tokenizer_id", "total_input_tokens")}
    _, other, _ = _load_bytes(json.dumps(partial).encode(), TRIMMED_VLLM.name)
    assert other != "vllm-bench"  # neither the backend nor the run's own keys: not taken for vLLM's


# three lines of an SGLang server log (see SOURCES.md): every completed bar sets the server up
SERVER_LOG = ("Loading safetensors checkpoint shards: 100% Completed | 163/163 [00:17<00:00,  9.33it/s]\n"
              "Cloning 8 replicas of the shared expert into MoE: 100%|██████████| 58/58 [00:00<00:00, 16419.39it/s]\n"
              "100%|██████████| 33/33 [00:00<00:00, 10135.62it/s]\n")


def test_set_up_progress_bars_of_a_server_log_are_no_runs() -> None:
    said = refusal(SERVER_LOG.encode(), "sglang_server.log")
    assert "no completed progress bar of a workload" in said and "Loading safetensors checkpoint shards" in said
    assert "1 bar(s) that finished inside their first second" in said
    training = SERVER_LOG + ("Epoch 1: 100%|██████████| 500/500 [00:50<00:00, 10.00it/s]\n"
                             "Epoch 2: 100%|██████████| 500/500 [00:49<00:00, 10.20it/s]\n"
                             "Evaluating: 100%|██████████| 100/100 [00:05<00:00, 20.00it/s]\n")
    runs, fmt, _ = _load_bytes(training.encode(), "train.log")
    assert fmt == "tqdm"
    assert [(r["config"]["tag"], r["config"]["repeat_index"]) for r in runs] == [
        ("Epoch", 0), ("Epoch", 1), ("Evaluating", 0)]  # the epochs are passes of one setup; evaluating is not
    assert runs[0]["metrics"]["iterations_per_s"] == pytest.approx(10.0)


def test_a_figure_given_per_setup_in_columns_is_a_run_per_setup() -> None:
    doc = json.loads(SIDE_BY_SIDE.read_text())
    runs, fmt, _ = _load(SIDE_BY_SIDE)
    assert fmt == "general-table"
    got = [(r["config"]["tag"], r["metrics"]["tokens_per_s"]) for r in runs]
    assert got == [(f"{w}, {s}", doc[w][f"{s}_tok_s"]) for w in ("structured", "code", "prose") for s in ("ar", "k5")]
    # columns of one field that differ in a device's number or a statistic are no setups: the first is read
    gpus = b"model,gpu0_tok_s,gpu1_tok_s\nm,10,12\n"
    (one,), _, said = _load_bytes(gpus, "gpus.csv")
    assert one["metrics"]["tokens_per_s"] == 10 and any("gpu1_tok_s left out" in w for w in said)
    stats = b"model,mean_ttft_ms,median_ttft_ms\nm,40,38\n"
    (only,), _, _ = _load_bytes(stats, "stats.csv")
    assert only["config"].get("tag") is None


def test_a_table_of_keys_and_values_is_read_as_the_object_it_flattens() -> None:
    rows = dict(line.rsplit(",", 1) for line in KEY_VALUE.read_text().splitlines()[1:] if line.count(",") == 1)
    runs, fmt, warnings = _load(KEY_VALUE)
    assert fmt == "general-table" and "a table of keys and values" in " ".join(warnings)
    assert [r["config"]["tag"] for r in runs] == ["Latency Statistics", "Preprocess Statistics",
                                                  "Inference Statistics", "Postprocess Statistics"]
    assert runs[0]["metrics"]["throughput_sps"] == pytest.approx(float(rows["Latency Statistics.Average FPS"]))
    assert key_value_object(Source.single(KEY_VALUE.read_bytes(), KEY_VALUE.name)) is not None
    twice = b"Parameter,Value\nLatency.Mean,5\nLatency.Mean,6\n"  # a key given twice: no object
    both = b"Parameter,Value\nLatency,5\nLatency.Mean,6\n"  # a value and a parent at once
    for data in (twice, both):
        assert key_value_object(Source.single(data, "kv.csv")) is None


def test_a_token_rate_of_prompt_and_output_tokens_together_is_not_the_output_rate() -> None:
    (run,), fmt, warnings = _load(TOTAL_RATE)
    assert fmt == "text-figures"
    assert run["metrics"]["output_tokens"] == 400_775  # '400,775': a thousands group in a figure's line
    assert run["metrics"]["tokens_per_s"] == pytest.approx(400_775 / 2341.25)  # not the stated 174.8
    assert any("174.8 tokens/s is Total Tokens (409,242) / Total time" in w for w in warnings)
    output_rate = TOTAL_RATE.read_text().replace("Token throughput: 174.8", "Token throughput: 171.2")
    (kept,), _, said = _load_bytes(output_rate.encode(), TOTAL_RATE.name)
    assert kept["metrics"]["tokens_per_s"] == 171.2 and not any("prompt and output" in w for w in said)
    from importers.text_lines import figure

    decimal = figure(1, "Energie: 0,775 kWh")  # a leading 0 is no thousands group: never 775
    assert decimal is None or decimal.value != 775
