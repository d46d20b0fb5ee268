"""Issue 39, seventeenth held-out set (files and attribution in tests/fixtures/formats/SOURCES.md), counted unaided at
186c23f: a file's own labels in a 'meta' object with rows run on the CPU and on the named GPU, a token rate given as
a mean and a median over requests, a whole system's energy and power named with 'system', the batch size and the
precision in nested keys, and a console table whose names sit one space apart over a line of units. Each rule on
the file's own numbers, with its negative case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from importers.table_order import distributions_of
from tests.helpers import load_fixture as _load
from tests.helpers import refusal

FORMATS = Path(__file__).parent / "fixtures" / "formats"
VISION = FORMATS / "general_table" / "efficient-vision-rtx3060-laptop-cpu-and-cuda-latency.json"
PER_REQUEST = FORMATS / "general_table" / "llm-inference-bench-vllm-qwen2-0.5b-concurrency-per-request-rates.csv"
EDGE = FORMATS / "experiment_csv" / "edge-llm-orin-server-gguf-system-energy.csv"
KEYS = FORMATS / "general_table" / "inference-optimization-distilbert-batch-precision-keys.json"
CONSOLE = FORMATS / "general_table" / "ane-hybrid-prefill-qwen3.5-0.8b-console-table.txt"
LAPTOP = "NVIDIA GeForce RTX 3060 Laptop GPU"


def test_the_meta_objects_gpu_is_the_cuda_rows_device_never_the_cpu_rows(tmp_path: Path) -> None:
    runs, fmt, warnings = _load(VISION)
    assert fmt == "general-table" and len(runs) == 18
    gpu = next(r for r in runs if r["config"]["model"] == "efficientvit_m0" and r["config"]["tag"] == "latency_gpu")
    cpu = next(r for r in runs if r["config"]["model"] == "efficientvit_m0" and r["config"]["tag"] == "latency_cpu")
    assert gpu["device"]["name"] == LAPTOP and gpu["metrics"]["latency_p50_ms"] == 29.19
    assert cpu["device"] is None and cpu["metrics"]["latency_p50_ms"] == 31.88  # not stated: asked for
    assert sum((r["device"] or {}).get("name") == LAPTOP for r in runs) == 9
    assert any("run on 'cpu' did not run on the NVIDIA GeForce RTX 3060" in w for w in warnings)
    # a meta object's figures are no record's: a total beside the records is not read into each
    doc = {"meta": {"gpu_name": "NVIDIA A10", "total_energy_j": 9.0},
           "models": {"a": {"latency_ms": 1.0}, "b": {"latency_ms": 2.0}}}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    runs, _, _ = _load(path)
    assert {r["device"]["name"] for r in runs} == {"NVIDIA A10"} and all("energy_j" not in r["metrics"] for r in runs)


def test_a_rate_given_as_a_mean_and_a_median_is_per_request() -> None:
    runs, _, warnings = _load(PER_REQUEST)
    assert len(runs) == 6 and all("tokens_per_s" not in r["metrics"] for r in runs)
    first = runs[0]
    assert first["config"]["max_concurrency"] == 1
    assert first["metrics"]["ttft_p50_ms"] == pytest.approx(56.43324399989069)
    assert any("throughput_tokens_per_s_mean (a rate per request" in w for w in warnings)
    # an aggregated table's mean beside its spread (no median) stays the mean over repeats
    assert distributions_of(["tokens_per_s_mean", "tokens_per_s_std"]) == set()
    assert distributions_of(["tokens_per_s_mean", "tokens_per_s_median"]) == {0, 1}


def test_a_systems_energy_and_power_and_a_j_per_token_over_all_tokens() -> None:
    runs, fmt, warnings = _load(EDGE)
    assert fmt == "general-table" and len(runs) == 36  # 'tokens_per_second_decode': the general reader's
    first = runs[0]
    assert first["device"]["name"] == "Orin"
    m = first["metrics"]
    assert m["energy_j"] == pytest.approx(58022.2473895751) and m["avg_power_w"] == pytest.approx(24.1367242236025)
    assert m["decode_tokens_per_s"] == pytest.approx(6.71777349754364)
    # 'energy_per_token_system_J' is the energy over total_tokens, prompt tokens among them: no J per output token
    assert "j_per_token" not in m
    assert any("J/token is the energy over all 265,236 tokens" in w for w in warnings)
    assert "tokens_per_s" not in m  # 'tokens_per_second_total' counts the prompt's tokens too


def test_the_batch_size_and_precision_in_nested_keys(tmp_path: Path) -> None:
    runs, _, _ = _load(KEYS)
    assert len(runs) == 12
    fp16 = next(r for r in runs if r["config"]["tag"] == "batch_16/fp16_gpu")
    assert (fp16["config"]["batch_size"], fp16["config"]["precision"]) == (16, "fp16")
    assert fp16["metrics"]["latency_avg_ms"] == pytest.approx(5.01, abs=0.005)  # one forward pass of the batch
    int8 = next(r for r in runs if r["config"]["tag"] == "batch_1/int8_cpu")
    assert int8["config"].get("quantization") == "int8" and int8["config"]["precision"] is None
    path = tmp_path / "k.json"  # a key that only looks like a batch names none
    path.write_text(json.dumps({"batch_x": {"latency_ms": 1.0}, "batch_y": {"latency_ms": 2.0}}))
    assert all(r["config"]["batch_size"] is None for r in _load(path)[0])


def test_a_console_table_with_names_one_space_apart_and_a_line_of_units() -> None:
    runs, fmt, warnings = _load(CONSOLE)
    assert fmt == "general-table" and len(runs) == 9
    first = runs[0]
    assert first["config"]["tag"] == "Prompt short, Mode ane"  # 'Mode' names setups, not train or infer
    m = first["metrics"]
    assert (m["prompt_tokens_per_s"], m["decode_tokens_per_s"], m["output_tokens"]) == (148.7, 17.6, 9)
    assert m["duration_s"] == pytest.approx(2.931)
    assert "tokens_per_s" not in m  # 'Total ms' holds more than the generation: no rate over it
    assert any("Decode (tok/s) read as decode_tokens_per_s" in w for w in warnings)
    hybrid = runs[2]["metrics"]
    assert hybrid["duration_s"] == pytest.approx(6.05)  # the notes after it ('save=11ms ...') are their own column


def test_a_log_opening_with_a_bracket_is_no_json() -> None:
    said = refusal(b"[1/2] warm-up\nall done\n", "run.log")
    assert "JSON" not in said


def test_an_energy_named_for_the_whole_system_states_its_boundary(tmp_path: Path) -> None:
    table = tmp_path / "runs.csv"
    table.write_text("model,duration_s,avg_power_system_W,total_energy_system_J\nm,10,20,200\n")
    runs, fmt, _ = _load(table)
    assert fmt == "experiment-table"
    assert (runs[0]["metrics"]["energy_j"], runs[0]["metrics"]["energy_boundary"]) == (200.0, "system")
    table.write_text("model,duration_s,total_energy_j\nm,10,200\n")  # no word for where: not stated
    assert _load(table)[0][0]["metrics"].get("energy_boundary") is None
