"""Issue 39, eighth held-out set (files and attribution in tests/fixtures/formats/SOURCES.md): a JSON Lines record
longer than the sniffed head, a statistics object, per-request rates beside their percentiles, throughputs and
lengths without units, an energy written as 0.0000, an operating system in a device column, a Max-Q workstation
card, a context-length setting, a time in a sentence, AMD uProf's power report, an MLPerf log's SYSJSON. Each rule
on the file's own numbers, with its negative case."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from importers import load
from importers.table_fields import measure_field
from ingest.device_names import canonical_name, parse
from tests.helpers import load_fixture as _load
from tests.helpers import refusal

FORMATS = Path(__file__).parent / "fixtures" / "formats"
GENERAL = FORMATS / "general_table"
PD = FORMATS / "sglang" / "sglang-benchmark-pd-inter-node-gh200-a100-bench_serving-infinity.jsonl"
AGG = FORMATS / "sglang" / "sglang-pd-agg-local-bench_serving-flat-server-info.jsonl"
SYSJSON = FORMATS / "mlperf_training" / "nemo-llama31-8b-h100nvl-slurm-sysjson-result_0.txt"
UPROF = FORMATS / "power_logs_uprof" / "amd-uprof-ryzen-ai-resnet50-npu-power_balanced_longer.csv"
STATS = GENERAL / "ryzen-ai-npu-loadgen-resnet50-performance_stats.json"
SMOKE = GENERAL / "trtllm-serve-openai-stream-rtx6000ada-smoke_results.csv"
OLLAMA = GENERAL / "ollama-nvml-rtx-pro-6000-maxq-benchmark_results.json"
OLLAMA_LOG = FORMATS / "text_figures" / "ollama-nvml-gpt-oss-console-benchmark.log"
MLX = GENERAL / "mlx-distributed-405b-m3-ultra-benchmark-results.csv"
GGUF = GENERAL / "llamacpp-gguf-rtx4090-summary.csv"
SWEEP = GENERAL / "trtllm-bench-sweep-throughput_summary.csv"
CANDLE = FORMATS / "text_figures" / "candle-moe-rust-prefill-decode-parts-benchmark.log"
TRTLLM = FORMATS / "trtllm_bench" / "trtllm-bench-0.16-llama-3.1-70b-tp8-fp8-result_1024_1024_3000.txt"


def _rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(path.read_text().splitlines()))


def test_a_json_lines_record_longer_than_the_sniffed_head_goes_to_its_tool() -> None:
    line = json.loads(PD.read_text().splitlines()[0], parse_constant=lambda _: math.inf)
    assert len(PD.read_bytes()) > 16_384  # one line, past what a sniffer reads
    (run,), fmt, _ = _load(PD)
    assert fmt == "sglang-bench" and run["config"]["engine"] == "sglang"
    assert run["metrics"]["tokens_per_s"] == pytest.approx(line["output_throughput"])
    assert run["metrics"]["ttft_p99_ms"] == pytest.approx(line["p99_ttft_ms"])
    assert run["config"]["model"] == "Qwen/Qwen2.5-3B-Instruct"  # both servers of the pair state it
    assert "engine_version" not in run["config"] or run["config"]["engine_version"] is None  # they differ: none
    assert run["config"]["tag"].endswith("pd_inter_node")  # the bench's own tag keeps setups apart
    (agg,), _, _ = _load(AGG)
    assert agg["config"]["engine_version"] == "0.5.5.post3" and agg["config"]["max_concurrency"] == 200


def test_an_mlperf_log_names_its_accelerators_in_sysjson() -> None:
    (run,), fmt, _ = _load(SYSJSON)
    assert fmt == "mlperf-training"
    assert run["device"]["name"] == "NVIDIA H100 NVL" and run["config"]["gpu_count"] == 4
    without = "\n".join(x for x in SYSJSON.read_text().splitlines() if ":::SYSJSON" not in x)
    (bare,) = load(without.encode(), "result_0.txt")[0].runs
    assert bare["device"] is None and bare["config"]["gpu_count"] is None  # not stated: asked for, nothing guessed


def test_amd_uprof_power_report_is_a_cpu_package_trace() -> None:
    (run,), fmt, _ = _load(UPROF)
    assert fmt == "amd-uprof"
    lines = UPROF.read_text().splitlines()
    start = lines.index("PROFILE RECORDS") + 1
    records = list(csv.DictReader(lines[start:]))
    package = np.array([float(r["socket0-package-power"]) for r in records])
    assert len(records) == 195
    m = run["metrics"]
    assert m["energy_boundary"] == "cpu_package" and m["duration_s"] == pytest.approx(19.777, abs=1e-3)
    assert m["avg_power_w"] == pytest.approx(package.mean(), rel=0.01)
    assert m["energy_j"] == pytest.approx(m["avg_power_w"] * m["duration_s"], rel=1e-6)
    assert {t["domain"] for t in run["power_traces"]} >= {"socket0-package-power", "core11-power"}
    no_units = "\n".join(x.replace(",Power,W,", ",Power,,") for x in lines)  # the counters table states no unit
    assert "no power counter" in refusal(no_units.encode(), "power.csv")


def test_a_statistics_object_is_the_figure_it_names_not_a_record() -> None:
    (run,), fmt, warnings = _load(STATS)
    doc = json.loads(STATS.read_text())
    assert fmt == "general-table"
    assert run["metrics"]["throughput_sps"] == pytest.approx(doc["throughput_samples_per_second"])
    assert run["metrics"]["duration_s"] == pytest.approx(doc["test_duration_seconds"])
    assert "latency_avg_ms" not in run["metrics"]  # its unit is written nowhere: left out, and said
    assert any("latency_stats.p99 (no unit" in w for w in warnings)
    records = {"runs": {"a": {"latency_ms": 5.0, "tokens_per_s": 10.0}, "b": {"latency_ms": 6.0, "tokens_per_s": 9.0}}}
    assert len(load(json.dumps(records).encode(), "r.json")[0].runs) == 2  # records of figures stay records


def test_a_per_request_rate_beside_its_percentiles_is_not_the_runs_throughput() -> None:
    runs, _, warnings = _load(SMOKE)
    rows = _rows(SMOKE)
    for run, row in zip(runs, rows, strict=True):
        total = float(row["total_output_tokens"]) / float(row["total_time_s"])
        assert run["metrics"]["tokens_per_s"] == pytest.approx(total)  # 1074 tok/s at concurrency 4, not 285
        assert run["config"]["max_concurrency"] == int(row["concurrency"])
        assert run["metrics"]["ttft_p99_ms"] == pytest.approx(float(row["ttft_p99_ms"]))
    assert any(w.startswith("columns not read") and "tps_mean (a rate per request" in w for w in warnings)
    alone = load(b"tps_mean,ttft_mean_ms\n320.5,13\n", "t.csv")[0].runs  # no percentile beside it: the run's rate
    assert alone[0]["metrics"]["tokens_per_s"] == 320.5


def test_an_operating_system_is_no_device_and_a_max_q_workstation_card_is_no_laptop() -> None:
    runs, _, warnings = _load(OLLAMA)
    assert {r["device"]["name"] for r in runs} == {"NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition"}
    assert any("system_info.platform (an operating system" in w for w in warnings)
    only_os = load(b"platform,tokens_per_second\nLinux,160\n", "t.csv")[0].runs
    assert only_os[0]["device"] is None  # not stated: asked for
    card = parse("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition")
    assert card.form == "maxq" and canonical_name("", card) == "RTX PRO 6000 Max-Q"
    assert parse("NVIDIA GeForce RTX 4090 Max-Q").form == "laptop"  # a Max-Q laptop part is still a laptop part
    assert parse("NVIDIA RTX PRO 6000 Blackwell Workstation Edition").power_class != card.power_class


def test_a_context_length_column_keeps_configurations_apart() -> None:
    runs, _, _ = _load(MLX)
    rows = [r for r in _rows(MLX) if r["generation_tps"]]
    assert len(runs) == len(rows)
    for run, row in zip(runs, rows, strict=True):
        assert run["config"]["seq_len"] == int(row["context_tokens"])
        assert run["metrics"]["decode_tokens_per_s"] == pytest.approx(float(row["generation_tps"]))
    assert measure_field("context_tokens")[0] is None  # a setting (a label), never a figure


def test_an_energy_written_as_zero_is_not_measured_and_a_cards_vram_is_not_memory_used() -> None:
    runs, _, warnings = _load(GGUF)
    rows = _rows(GGUF)
    assert len(runs) == len(rows) == 509
    for run, row in zip(runs, rows, strict=True):
        wh = float(row["total_energy_wh"] or "nan")
        if wh > 0:
            assert run["metrics"]["energy_j"] == pytest.approx(wh * 3600)
        else:
            assert "energy_j" not in run["metrics"]
        assert "mem_used_device_mb" not in run["metrics"]  # gpu_vram_mb is the card's 24564 MB
    assert any("0.0000 read as not measured" in w for w in warnings)
    used = load(b"gpu_mem_used_mb,tokens_per_s\n900,10\n", "t.csv")[0].runs
    assert used[0]["metrics"]["mem_used_device_mb"] == 900


def test_throughputs_and_lengths_without_units() -> None:
    runs, _, _ = _load(SWEEP)
    rows = _rows(SWEEP)
    for run, row in zip(runs, rows, strict=True):
        m = run["metrics"]
        assert m["tokens_per_s"] == pytest.approx(float(row["Token_Throughput"]))
        assert m["requests_per_s"] == pytest.approx(float(row["Request_Throughput"]))
        assert m["output_tokens_mean"] == pytest.approx(float(row["Avg_Output_Len"]))
        assert run["config"]["prompt_tokens_requested"] == int(row["ISL"])
    assert measure_field("Throughput")[0] is None  # of what, not said
    assert measure_field("Token Throughput p99")[0] is None  # a percentile of a rate


def test_a_time_in_a_sentence_and_a_rate_written_alone_make_a_run() -> None:
    runs, fmt, _ = _load(OLLAMA_LOG)
    assert fmt == "text-figures"
    assert [r["metrics"]["tokens_per_s"] for r in runs] == [160.94, 162.63, 162.22, 161.72, 163.28]
    assert runs[0]["metrics"]["latency_avg_ms"] == pytest.approx(10710)
    assert "holds no benchmark figures" in refusal(b"Model loaded in 3.2 seconds\nDone.\n", "log.txt")


def test_trtllm_bench_states_its_quantization() -> None:
    (run,), _, _ = _load(TRTLLM)
    assert run["config"]["quantization"] == "FP8" and run["config"]["gpu_count"] == 8
    assert run["metrics"]["tokens_per_s"] == pytest.approx(10893.8728)


def test_a_part_titled_with_a_phase_gives_its_figures_that_phase() -> None:
    runs, _, _ = _load(CANDLE)
    prefill = {r["metrics"].get("prompt_tokens_per_s") for r in runs} - {None}
    assert prefill == {10882.9, 12556.9}  # under '--- Prefill ---' 'Throughput:' is the prompt's rate
    assert all("tokens_per_s" not in r["metrics"] for r in runs)  # never stored as the output rate
    assert {r["metrics"].get("decode_tokens_per_s") for r in runs} - {None} == {465.9, 298.3}
    # the summaries' 'Backend:' lines keep the two backends' figures apart (the engine is a setting)
    assert {r["config"].get("engine") for r in runs} - {None} == {"Original (slow)", "Optimized (fast)"}
    plain = load(b"=== Summary ===\n--- Totals ---\nThroughput: 120 tok/s\nTotal time: 2 s\n", "log.txt")[0].runs
    assert plain[0]["metrics"]["tokens_per_s"] == 120  # a part naming no phase changes nothing
