"""Sixth held-out set, text captures (files and attribution in tests/fixtures/formats/SOURCES.md): Ollama's Go
benchmark with metrics whose units name what they measure, mlx-lm's verbose lines pasted into notes, carbontracker's
console output pasted into Markdown. Each rule is checked on the file's own numbers and has its negative case."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from importers import load
from tests.helpers import load_fixture as _load
from tests.helpers import readers_of_other_fixtures, refusal

FORMATS = Path(__file__).parent / "fixtures" / "formats"
OLLAMA_GO = FORMATS / "text_figures" / "local-llm-benchmark-m4-max-ollama-go-bench-qwen3-8b.txt"
MLX_NOTES = FORMATS / "text_figures" / "coco-apple-silicon-ollama-mlx-lm-verbose-observations.md"
CARBONTRACKER = FORMATS / "carbontracker" / "carbon-cost-kaggle-a30-a100-carbontracker-results.md"


# 1. a Go metric whose unit is a name with a unit is read as that column would be; Ollama's case names its model -----

def _go_lines(text: str) -> list[tuple[str, dict[str, float]]]:
    out = []
    for line in text.splitlines():
        if line.startswith("Benchmark"):
            cells = line.split()
            out.append((cells[0], {unit: float(value) for value, unit in zip(cells[2::2], cells[3::2], strict=True)}))
    return out


def test_ollama_go_benchmark_reads_its_reported_metrics_and_model() -> None:
    runs, fmt, warnings = _load(OLLAMA_GO)
    lines = _go_lines(OLLAMA_GO.read_text())
    assert fmt == "text-figures" and len(runs) == len(lines) == 6
    for run, (name, said) in zip(runs, lines, strict=True):
        m = run["metrics"]
        assert m["latency_avg_ms"] == pytest.approx(said["ns/op"] / 1e6)  # 2372110709 ns/op
        assert m["decode_tokens_per_s"] == pytest.approx(said["gen_tok/s"])  # 66.80 gen_tok/s (eval count / time)
        assert m["prompt_tokens_per_s"] == pytest.approx(said["prompt_tok/s"])  # 60.08 prompt_tok/s
        assert m["ttft_avg_ms"] == pytest.approx(said["ttft_ms"])  # 874.0 ttft_ms
        assert m["output_tokens"] == said["gen_tokens"]  # 100.0 gen_tokens
        assert m["prompt_tokens_mean"] == said["prompt_tokens"]  # 12.00 prompt_tokens
        assert "tokens_per_s" not in m
        config = run["config"]
        assert config["model"] == config["workload"] == "qwen3:8b"  # BenchmarkColdStart/qwen3:8b/cold/...
        assert config["tag"] == name  # cold or warm and the prompt stay in the tag
        assert run["device"] is None and "cpu Apple M4 Max" in run["notes"]  # the host's CPU: notes only
    assert len({r["config"]["tag"] for r in runs}) == 6
    assert runs[0]["metrics"]["ttft_avg_ms"] == 874.0 and runs[3]["metrics"]["ttft_avg_ms"] == 33.0  # cold vs warm
    unread = next(w for w in warnings if w.startswith("figures not read"))
    assert "load_ms" in unread and "MB/s" in unread


def test_a_go_case_names_no_model_outside_ollamas_package_and_an_unknown_unit_stays_unread() -> None:
    text = OLLAMA_GO.read_text()
    other = text.replace("pkg: github.com/ollama/ollama/benchmark", "pkg: example.com/llm/bench")
    runs = load(other.encode(), "bench.txt")[0].runs
    assert all(r["config"]["model"] is None and r["config"]["workload"] == "unknown" for r in runs)
    assert runs[0]["metrics"]["decode_tokens_per_s"] == 66.8  # the unit rule is Go's, not Ollama's
    shape = ("pkg: github.com/ollama/ollama/benchmark\n"
             "BenchmarkLoad/qwen3:8b-16  1  2372110709 ns/op  66.80 gen_tok/s  3.0 widgets\n")
    imported, _ = load(shape.encode(), "bench.txt")
    run = imported.runs[0]
    assert run["config"]["model"] is None  # not a '<model>/cold|warm/<prompt>' case: no model read from the name
    assert "widgets (a unit JouleBench does not convert)" in next(w for w in imported.warnings if "not read" in w)


# 2. mlx-lm's verbose lines: both figures of a Prompt / Generation line, and its peak memory -----------------------

_MLX = re.compile(r"(Prompt|Generation): (\d+) tokens, ([\d.]+) tokens-per-sec")


def test_mlx_lm_lines_give_counts_rates_and_peak_memory() -> None:
    runs, fmt, _ = _load(MLX_NOTES)
    assert fmt == "text-figures" and len(runs) == 10
    text = MLX_NOTES.read_text()
    said = _MLX.findall(text)
    prompts = [(int(n), float(r)) for phase, n, r in said if phase == "Prompt"]
    generations = [(int(n), float(r)) for phase, n, r in said if phase == "Generation"]
    mlx = [r for r in runs if r["config"]["model"] == "mlx-community/Meta-Llama-3.1-8B-Instruct-4bit"]
    assert len(mlx) == len(prompts) == len(generations) == 5  # one run per block, never a run per line
    for run, (p_n, p_rate), (g_n, g_rate) in zip(mlx, prompts, generations, strict=True):
        m = run["metrics"]
        assert m["prompt_tokens_mean"] == p_n == 7 and m["prompt_tokens_per_s"] == pytest.approx(p_rate)
        assert m["output_tokens"] == g_n == 256 and m["decode_tokens_per_s"] == pytest.approx(g_rate)
        assert m["mem_used_device_mb"] == pytest.approx(5990.0)  # Peak memory: 5.990 GB
        assert run["config"]["mode"] == "infer" and run["device"] is None
    assert [r["metrics"]["decode_tokens_per_s"] for r in mlx][:2] == [7.932, 7.728]
    ollama = [r for r in runs if r not in mlx]  # the Ollama stats beside them read as before
    assert [r["metrics"]["prompt_tokens_per_s"] for r in ollama] == [22.61, 214.29, 146.34, 159.29, 189.47]


def test_a_peak_memory_line_of_another_text_is_not_device_memory_and_old_mlx_lines_give_rates() -> None:
    other = "## Run\nThroughput: 12.5 tokens/s\nLatency: 80 ms\nPeak memory: 5.990 GB\n"
    imported, _ = load(other.encode(), "notes.md")
    assert "mem_used_device_mb" not in imported.runs[0]["metrics"]
    assert any("Peak memory" in w for w in imported.warnings if w.startswith("figures not read"))
    old = "## mlx\nPrompt: 6.657 tokens-per-sec\nGeneration: 7.932 tokens-per-sec\n"  # before the counts were printed
    m = load(old.encode(), "notes.md")[0].runs[0]["metrics"]
    assert m["prompt_tokens_per_s"] == 6.657 and m["decode_tokens_per_s"] == 7.932 and "output_tokens" not in m
    apart = "## mlx\nGeneration: 256 tokens, 7.932 tokens-per-sec\nsome text\nPeak memory: 5.990 GB\n"
    assert "mem_used_device_mb" not in load(apart.encode(), "notes.md")[0].runs[0]["metrics"]


# 3. carbontracker: each Actual block a training run; the predicted blocks never ----------------------------------

_ACTUAL = re.compile(r"Actual consumption for (\d+) epoch\(s\):\n\s+Time:\s+(\d+):(\d\d):(\d\d)\n"
                     r"\s+Energy:\s+([\d.]+) kWh")


def test_carbontracker_actual_blocks_are_training_runs() -> None:
    runs, fmt, warnings = _load(CARBONTRACKER)
    text = CARBONTRACKER.read_text()
    actual = _ACTUAL.findall(text)
    assert fmt == "carbontracker" and len(runs) == len(actual) == 14
    for run, (epochs, h, mi, s, kwh) in zip(runs, actual, strict=True):
        m = run["metrics"]
        assert m["duration_s"] == int(h) * 3600 + int(mi) * 60 + int(s)  # Time: 8:00:33 -> 28833 s
        assert m["energy_j"] == pytest.approx(float(kwh) * 3.6e6)  # Energy: 2.800010 kWh
        assert m["energy_boundary"] == "estimated" and m["energy_method"] == "reported"
        assert "avg_power_w" not in m and "PUE" in m["avg_power_missing_reason"]
        assert run["config"]["mode"] == "train" and f"for {epochs} epoch(s)" in run["notes"]
    assert runs[0]["metrics"]["duration_s"] == 28833 and runs[0]["metrics"]["energy_j"] == pytest.approx(10080036.0)
    assert "CO2eq 299.601022 g" in runs[0]["notes"]
    devices = [r["device"]["name"] if r["device"] else None for r in runs]
    assert devices[:3] == [None, None, None]  # 'Using config file: cait_pretraining `job.126331.out`': no GPU
    assert devices[3:9] == ["NVIDIA A30"] * 6  # '... desktop18 NVIDIA A30 GPU'
    assert devices[9:11] == ["NVIDIA A100-PCIE-40GB"] * 2  # '... desktop22 NVIDIA A100-PCIE-40GB'
    assert len({r["config"]["tag"] for r in runs}) == 14 and runs[0]["config"]["tag"].startswith(
        "Kaggle > Pipeline1/pretraining > Using config file: cait_pretraining")
    predicted = next(w for w in warnings if "Predicted consumption" in w)
    assert "14 'Predicted consumption' block(s)" in predicted and "left out" in predicted
    assert all(r["metrics"]["duration_s"] < 100_000 for r in runs)  # never a forecast's '111:11:54'


def test_carbontracker_log_lines_name_the_gpus_and_timedelta_days_are_read() -> None:
    log = ("2023-05-02 10:00:00 - CarbonTracker: The following components were found: GPU with device(s) "
           "NVIDIA A100-SXM4-40GB, NVIDIA A100-SXM4-40GB. CPU with device(s) cpu:0, cpu:1.\n"
           "2023-05-03 12:03:04 - CarbonTracker: \nActual consumption for 2 epoch(s):\n\tTime:\t1 day, 2:03:04\n"
           "\tEnergy:\t12.500000 kWh\n\tCO2eq:\t1000.000000 g\n"
           "2023-05-03 12:03:04 - CarbonTracker: Predicted consumption for 10 epoch(s):\n\tTime:\t130:15:20\n"
           "\tEnergy:\t62.500000 kWh\n\tCO2eq:\t5000.000000 g\n")
    imported, fmt = load(log.encode(), "123.root_2023-05-02T100000Z_carbontracker_output.log")
    assert fmt == "carbontracker" and len(imported.runs) == 1
    run = imported.runs[0]
    assert run["device"]["name"] == "NVIDIA A100-SXM4-40GB" and run["config"]["gpu_count"] == 2
    assert run["metrics"]["duration_s"] == 86400 + 2 * 3600 + 3 * 60 + 4
    assert run["metrics"]["energy_j"] == pytest.approx(12.5 * 3.6e6)
    one_line = "CarbonTracker: Actual consumption:\n\tTime:\t0:10:00\n\tEnergy:\t0.010000 kWh\n\tCO2eq:\t1.0 g\n"
    run = load(one_line.encode(), "ct_output.log")[0].runs[0]  # no prediction asked for: no epoch count printed
    assert run["metrics"]["duration_s"] == 600 and "epochs monitored (not stated)" in run["notes"]
    assert run["device"] is None


def test_only_predicted_consumption_is_refused_and_a_heading_without_a_gpu_names_none() -> None:
    only = ("CarbonTracker:\nPredicted consumption for 5 epoch(s):\n\tTime:\t40:02:47\n\tEnergy:\t14.000048 kWh\n"
            "\tCO2eq:\t1126.210028 g\n")
    message = refusal(only.encode(), "ct.log")
    assert "predicted consumption" in message and "not a measurement" in message
    text = ("## desktop18 GPU\nUsing config file: a `job.1.out` desktop18 NVIDIA A30 and NVIDIA A100-PCIE-40GB\n"
            "```\nActual consumption for 1 epoch(s):\n\tTime:\t0:52:31\n\tEnergy:\t0.170745 kWh\n"
            "\tCO2eq:\t6.787123 g\n```\n")
    run = load(text.encode(), "results.md")[0].runs[0]
    assert run["device"] is None  # two GPUs in the line, none in the heading: not stated, never guessed
    assert run["metrics"]["duration_s"] == 3151


def test_the_carbontracker_reader_takes_no_other_formats_file() -> None:
    assert readers_of_other_fixtures({"carbontracker"}, {"carbontracker"}) == []
