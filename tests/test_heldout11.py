"""Issue 39, eleventh held-out set (files and attribution in tests/fixtures/formats/SOURCES.md): SGLang's one-batch
server benchmark, an nvidia-smi log of two GPUs without an index column and with a killed writer's NUL tail, a
Chinese report's headers, and a table turned on its side. Each rule on the file's own numbers, with its negative
case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from importers import load
from tests.helpers import load_fixture as _load
from tests.helpers import refusal

FORMATS = Path(__file__).parent / "fixtures" / "formats"
ONE_BATCH_SERVER = FORMATS / "sglang" / "qwen3-4b-a100-bench_one_batch_server-quantization-variants.jsonl"
TWO_GPUS = FORMATS / "nvidia_smi" / "titanx-2gpu-no-index-killed-writer-nul-tail.csv"
CHINESE = FORMATS / "general_table" / "vllm-bench-kunlun-p800-minimax-chinese-report.md"
ON_ITS_SIDE = FORMATS / "general_table" / "vllm-bench-h100-minimax-concurrency-transposed.csv"


def test_sglang_one_batch_server_lines_give_the_batchs_output_rate_and_its_repeats() -> None:
    runs, fmt, _ = _load(ONE_BATCH_SERVER)
    assert fmt == "sglang-bench" and len(runs) == 147
    lines = [json.loads(line) for line in ONE_BATCH_SERVER.read_text().splitlines() if line.strip()]
    for run, line in zip(runs, lines, strict=True):
        m = run["metrics"]
        assert m["tokens_per_s"] == pytest.approx(line["batch_size"] * line["output_len"] / line["latency"])
        assert m["decode_tokens_per_s"] == line["output_throughput"] and m["duration_s"] == line["latency"]
    # 7 variants x 7 workloads, 3 runs each: the run number is the repeat, not the setup
    assert len({r["config"]["tag"] for r in runs}) == 49
    assert {r["config"]["repeat_index"] for r in runs} == {0, 1, 2}
    assert all("overall_throughput" in r["notes"] for r in runs)  # total tokens/s: said, never stored as output
    # a bench_one_batch (no server) line is still read as that tool's
    one = {"run_name": "x", "batch_size": 1, "input_len": 8, "output_len": 8, "prefill_latency": 0.1,
           "prefill_throughput": 80.0, "median_decode_latency": 0.01, "median_decode_throughput": 100.0,
           "total_latency": 0.2, "overall_throughput": 80.0}
    assert load(json.dumps(one).encode(), "r.jsonl")[0].runs[0]["metrics"]["decode_tokens_per_s"] == 100.0


def test_two_gpus_without_an_index_are_told_apart_by_their_order_and_a_nul_tail_is_left_out() -> None:
    runs, fmt, warnings = _load(TWO_GPUS)
    assert fmt == "nvidia-smi" and runs[0]["config"]["gpu_count"] == 2
    traces = runs[0]["power_traces"]
    assert len(traces) == 2 and abs(len(traces[0]["power_w"]) - len(traces[1]["power_w"])) <= 1
    mean = [sum(tr["power_w"]) / len(tr["power_w"]) for tr in traces]
    assert mean[0] == pytest.approx(109.8, abs=0.1) and mean[1] == pytest.approx(104.9, abs=0.1)
    assert runs[0]["metrics"]["avg_power_w"] == pytest.approx(215.4, abs=0.5)  # the two GPUs added, not averaged
    assert any("2533 NUL bytes at the end left out" in w for w in warnings)
    # a NUL inside the log is damage, refused
    data = TWO_GPUS.read_bytes().rstrip(b"\x00")
    said = refusal(data[:400] + b"\x00" + data[400:], "gpu.csv")
    assert "NUL bytes inside the log" in said or "binary data" in said
    # one GPU sampled evenly is one GPU
    even = "timestamp, power.draw [W]\n" + "".join(f"2025/12/10 16:48:{10 + i * 0.1:06.3f}, {100 + i % 2} W\n"
                                                       for i in range(40))
    assert load(even.encode(), "g.csv")[0].runs[0]["config"]["gpu_count"] == 1


def test_chinese_headers_read_as_their_english_words() -> None:
    runs, _, warnings = _load(CHINESE)
    assert len(runs) == 10  # one run per concurrency ('并发数'), not a run per throughput column
    first = runs[0]
    assert first["config"]["max_concurrency"] == 1 and first["metrics"]["tokens_per_s"] == 37.20
    assert first["metrics"]["ttft_p99_ms"] == 921.76 and first["metrics"]["requests_per_s"] == 0.15
    # '总Token吞吐量' is the total (prompt and output) rate: never the output tokens/s
    assert any("总Token吞吐量 (tok/s) (prompt and output tokens together" in w for w in warnings)
    assert [r["config"]["max_concurrency"] for r in runs] == [1, 2, 4, 8, 10, 16, 32, 64, 80, 128]
    # the detail tables on their side ('指标 | 1 并发 | 2 并发', '平均 TTFT (ms)', '中位 TTFT (ms)'), joined to the rows
    assert (first["metrics"]["ttft_avg_ms"], first["metrics"]["ttft_p50_ms"]) == (898.33, 901.43)
    assert first["metrics"]["duration_s"] == 2115.85 and runs[-1]["metrics"]["itl_p50_ms"] == 65.31


def test_a_table_on_its_side_is_read_as_a_row_per_setup() -> None:
    runs, fmt, warnings = _load(ON_ITS_SIDE)
    assert fmt == "general-table" and len(runs) == 10
    first = runs[0]
    assert first["config"]["max_concurrency"] == 1 and first["metrics"]["tokens_per_s"] == 115.31
    assert first["metrics"]["duration_s"] == 710.45 and first["metrics"]["output_tokens"] == 81920
    assert first["metrics"]["ttft_p99_ms"] == 286.01 and not first.get("flags")  # 81920 / 710.45 = 115.31
    assert runs[-1]["config"]["max_concurrency"] == 128
    assert any("a table on its side" in w for w in warnings)
    # a table of runs whose columns are figures is no table on its side
    upright = "Metric,latency_ms,tokens_per_s\nrun a,10,100\nrun b,12,90\n"
    assert len(load(upright.encode(), "t.csv")[0].runs) == 2


MATRIX = FORMATS / "general_table" / "ollama-benchmarks-readme-models-by-machine-units-row.md"


def test_a_units_row_under_the_header_and_a_column_per_machine() -> None:
    runs, fmt, warnings = _load(MATRIX)
    assert fmt == "general-table"
    cells = {(r["config"]["tag"].split(" / ")[-1]): r["metrics"]["tokens_per_s"] for r in runs}
    # every number in a machine's column is its own run, the machine in the tag
    assert cells["Qwen2.5:0.5b, Raspberry Pi 5"] == 20.35 and cells["Qwen2.5:0.5b, 4060Ti"] == 201.73
    assert cells["Llama3.3:70b, 2xP40"] == 5.40 and cells["Llama3.2:1b, Raspberry Pi 4"] == 2.55
    assert len(runs) == 66 and not any("N/A" in str(r["metrics"]) for r in runs)
    assert any("one figure per setup (Raspberry Pi 4, Raspberry Pi 5, 4060Ti" in w for w in warnings)
    # two columns of one figure that differ in a device's number are no setups: the first is read, the other said
    gpus = "| step | GPU 0 (W) | GPU 1 (W) |\n|---|---|---|\n| a | 100 | 110 |\n| b | 120 | 130 |\n"
    imported = load(gpus.encode(), "p.md")[0]
    assert len(imported.runs) == 2 and any("GPU 1 (W) left out" in w for w in imported.warnings)
