"""Issue 39, fourth held-out set: the tables and records the general reader read wrong or refused (files and
attribution in tests/fixtures/formats/SOURCES.md; the refused one in tests/fixtures/general_table_refused/).
Each rule is checked against the file's own numbers, and each has its negative case: what it must not change.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from importers import load
from importers.table_fields import measure_field
from importers.table_text import approximate_column, text_tables
from tests.helpers import field_key as _key
from tests.helpers import refusal as _refusal

FIXTURES = Path(__file__).parent / "fixtures"
GENERAL = FIXTURES / "formats" / "general_table"
SUMMARY = GENERAL / "local-inference-ollama-llamacpp-vllm-summary.csv"
THOR = GENERAL / "jetsondlagreen-thor-p9-six-system-imagenette-gate.json"
CONSOLE = GENERAL / "jetson-orin-vs-rtx2070-ollama-bench-summary.md"
RANGES = FIXTURES / "general_table_refused" / "advantech-orin-nx-8gb-ollama-llm-performance-notes.md"
MIB = 1.048576  # MB


def _load(data: bytes, name: str) -> tuple[list[dict], str, tuple[str, ...]]:
    imported, fmt = load(data, name)
    return imported.runs, fmt, imported.warnings




# 1. a statistic after the unit: 'ttft_ms_p50' is TTFT's p50 in ms ----------------------------------------------

def test_a_percentile_after_the_unit_is_that_percentile_of_the_column() -> None:
    runs, fmt, warnings = _load(SUMMARY.read_bytes(), SUMMARY.name)
    with SUMMARY.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert fmt == "general-table" and len(runs) == len(rows) == 21
    for run, row in zip(runs, rows, strict=True):
        m, c = run["metrics"], run["config"]
        assert m["ttft_p50_ms"] == pytest.approx(float(row["ttft_ms_p50"]))
        assert m["ttft_p95_ms"] == pytest.approx(float(row["ttft_ms_p95"]))
        assert m["tpot_p50_ms"] == pytest.approx(float(row["tpot_ms_p50"]))
        assert m["tokens_per_s"] == pytest.approx(float(row["throughput_tok_s"]))
        assert c["engine"] == row["runtime"]  # llamacpp / ollama / vllm: engines, not a tag
        assert c["max_concurrency"] == int(row["concurrency"])
        assert c["prompt_tokens_requested"] == int(row["prompt_tokens"])
        assert c["output_tokens_requested"] == int(row["max_tokens"])
        assert c["mode"] == "infer" and run["device"] is None  # the README's GPU is not the file's: not stated
        assert m["mem_used_device_mb"] == pytest.approx(float(row["peak_vram_mib"]) * MIB)  # the peak the run used
        assert m["mem_peak_rss_mb"] == pytest.approx(float(row["peak_rss_mib"]) * MIB)
        assert "output_tokens" not in m and "output_tokens_mean" not in m  # a median count is neither
        assert row["scenario"] in c["tag"]
    four = next(r for r in runs if r["config"]["engine"] == "llamacpp" and r["config"]["max_concurrency"] == 4)
    assert four["metrics"]["ttft_p50_ms"] == pytest.approx(272.85, abs=0.01)
    said = " ".join(warnings)
    assert "ttft_ms_p50 read as ttft_p50_ms (in ms)" in said
    assert "vram_baseline_mib (a baseline" in said  # memory before the run: never the memory used
    assert "output_tokens_p50 (a median or percentile of a count of tokens" in said


def test_a_statistic_after_the_unit_keeps_the_aggregated_tables_rule() -> None:
    assert _key("ttft_ms_median") == "ttft_p50_ms" and _key("latency_s_p99") == "latency_p99_ms"
    assert _key("e2e_ms_p90") == "e2e_latency_p90_ms"
    _, _, why = measure_field("ttft_ms_mean")  # an aggregated table's '_mean': the mean over repeats, as before
    assert _key("ttft_ms_mean") == "ttft_avg_ms" and "over repeats" in why
    assert _key("latency_p95_ms_mean") == "latency_p95_ms"  # the mean over repeats of a p95
    assert _key("latency_ms_std") is None and _key("ttft_ms_p75") is None  # a spread, a percentile not stored
    assert _key("latency_p999_ms") is None  # never read as the mean
    assert _key("output_tokens_p50") is None and _key("vram_baseline_mib") is None and _key("baseline_power_w") is None
    assert _key("baseline_latency_ms") == "latency_avg_ms"  # a baseline system's latency is a measurement


# 2. records keyed by name: one run each, no record's figure standing for another's ------------------------------

def test_records_keyed_by_name_are_one_run_each() -> None:
    runs, fmt, warnings = _load(THOR.read_bytes(), THOR.name)
    doc = json.loads(THOR.read_text())
    assert fmt == "general-table"
    by_tag = {r["config"]["tag"]: r for r in runs}
    assert len(runs) == 7 and len(by_tag) == 7
    for name in ("QUIET", "NVIDIA MIG", "NVIDIA MPS", "XSched", "Orion", "Pantheon"):
        run = by_tag[f"systems/{name}"]
        assert run["metrics"]["latency_p99_ms"] == pytest.approx(doc["systems"][name]["p99_us"] / 1000)
        assert run["device"] is None and run["config"]["mode"] is None  # never guessed
    assert by_tag["systems/QUIET"]["metrics"]["latency_p99_ms"] == 1.93344637  # no float noise from us -> ms
    assert by_tag["systems/Orion"]["metrics"]["latency_p99_ms"] == pytest.approx(5.57320532)
    split = by_tag["partial_topology_comparisons/NVIDIA MIG (split 1g P + 2g C)"]
    assert split["metrics"]["latency_p99_ms"] == pytest.approx(1.65286092)
    said = " ".join(warnings)
    assert "already given" not in said  # no system's p99 stands for the others'
    assert "mig_topology_comparisons.split-critical-stages left out: every figure equals" in said  # listed twice
    assert "mig_topology_comparisons.colocated-critical-dag left out: every figure equals systems.NVIDIA MIG" in said
    assert "mig_topology_constraints not read" in said
    assert by_tag["systems/QUIET"]["config"]["workload"] == "resnet50-classification"  # the file's workload


def test_records_that_cannot_be_told_apart_are_refused_naming_them() -> None:
    two_kinds = {"gpus": {"0": {"power_w": 100.0, "util": 5}, "1": {"power_w": 120.0, "util": 7}},
                 "models": {"a": {"latency_ms": 1.5, "tokens_per_s": 30.0}, "b": {"latency_ms": 2.5,
                                                                                 "tokens_per_s": 20.0}}}
    said = _refusal(json.dumps(two_kinds).encode(), "two.json")
    assert "2 sets of records of different keys" in said and "gpus.0" in said and "models.a" in said
    unlike = {"runs": {"a": {"latency_ms": 1.5, "x_s": 1, "y_s": 2, "z_s": 3}, "b": {"latency_ms": 2.5}}}
    said = _refusal(json.dumps(unlike).encode(), "unlike.json")  # no set of records: flattened, then refused
    assert "runs.a.latency_ms and runs.b.latency_ms both give latency_avg_ms" in said


def test_records_keyed_by_name_negative_cases() -> None:
    same = {"systems": {"a": {"latency_ms": 5, "requests": 90}, "b": {"latency_ms": 5, "requests": 90}}}
    runs, _, _ = _load(json.dumps(same).encode(), "same.json")
    assert len(runs) == 2  # whole numbers equal by chance: two runs, never one dropped as listed twice
    total = {"energy_j": 500.0, "batch_size": 8, "systems": {"a": {"latency_ms": 1.5}, "b": {"latency_ms": 2.5}}}
    runs, _, _ = _load(json.dumps(total).encode(), "total.json")
    assert [r["metrics"]["latency_avg_ms"] for r in runs] == [1.5, 2.5]
    assert all("energy_j" not in r["metrics"] for r in runs)  # the file's total is no record's energy
    assert all(r["config"]["batch_size"] == 8 for r in runs)  # a setting beside the records applies to each
    assert [r["config"]["tag"] for r in runs] == ["a", "b"] and all(r["config"]["model"] is None for r in runs)
    models = {"models": {"qwen2.5:7b": {"tokens_per_s": 30.5}, "llama3:8b": {"tokens_per_s": 20.5}}}
    runs, _, _ = _load(json.dumps(models).encode(), "models.json")
    assert [r["config"]["model"] for r in runs] == ["qwen2.5:7b", "llama3:8b"]  # under 'models': the model


# 3. fixed-width console tables in text ---------------------------------------------------------------------------

def test_fixed_width_tables_in_markdown_are_read_like_a_csv() -> None:
    runs, fmt, warnings = _load(CONSOLE.read_bytes(), CONSOLE.name)
    assert fmt == "general-table" and len(runs) == 11
    jetson = [r for r in runs if r["device"] is None]
    rtx = [r for r in runs if r["device"] is not None]
    assert [r["config"]["model"] for r in jetson] == ["llama3.2:latest", "gemma3:latest", "gpt-oss:latest",
                                                      "gemma3:12b"]
    assert all(r["config"]["tag"] == "jetson orion" for r in jetson)  # 'orion': no device known by it, never guessed
    assert {r["device"]["name"] for r in rtx} == {"GeForce RTX 2070"} and len(rtx) == 7
    assert all(r["config"].get("tag") is None for r in rtx)  # a heading naming only a device is the machine's
    first, last = jetson[0]["metrics"], rtx[-1]["metrics"]
    assert first["decode_tokens_per_s"] == 21.25 and first["duration_s"] == 12.62  # 'gen tok/s', 'wall s'
    assert rtx[-1]["config"]["model"] == "gemma3:27b" and last["decode_tokens_per_s"] == 2.88
    assert last["duration_s"] == 89.95 and all(r["config"]["mode"] == "infer" for r in runs)
    said = " ".join(warnings)
    assert "line 59 (gemma3:27b) left out: its ok is 'no'" in said  # a failed row, named
    assert "2 fixed width tables read from the text" in said
    assert "GR3D (no unit in its name or cells)" in said  # '-' throughout: nothing read


def test_fixed_width_tables_negative_cases() -> None:
    tables, _ = text_tables(CONSOLE.read_text())
    assert [t.line for t in tables] == [53, 66]  # the glossary's header line with no rows is no table
    table = ("## My lab box\n\n```\nModel      gen tok/s   wall s   ok\n"
             "---------------------------------\nqwen:7b        12.50     3.10   yes\n```\n")
    runs, _, _ = _load(table.encode(), "lab.md")
    assert runs[0]["device"] is None and runs[0]["config"]["tag"] == "My lab box"
    assert runs[0]["metrics"]["decode_tokens_per_s"] == 12.5
    stated = table + "\nGeneration Speed: 13.55 tokens/sec\nPrompt Processing: 428.79 tokens/sec\n"
    _, fmt, _ = _load(stated.encode(), "stated.md")
    assert fmt == "text-figures"  # figures on lines of their own: the text is the reader of figures in text's
    one_row = "Model      gen tok/s   wall s\nqwen:7b        12.50     3.10\n"  # no rule, one row: no table
    assert text_tables(one_row)[0] == []
    prose = "This  line  has  double  spaces\nand  so  does  this  one  here\nbut  it  is  prose\n"
    assert text_tables(prose)[0] == []


# 4. approximate ranges: refused, saying so --------------------------------------------------------------------

def test_a_table_of_approximate_ranges_is_refused_naming_the_column() -> None:
    said = _refusal(RANGES.read_bytes(), RANGES.name)
    assert "approximate ranges" in said and "'Performance' column gives '~15-17 tokens/sec'" in said
    assert "not stored as figures" in said and "joulebench import --mapping RECIPE FILE" in said
    assert "holds no benchmark figures JouleBench can read" not in said


def test_a_markdown_table_of_exact_figures_is_read() -> None:
    exact = re.sub(r"~(\d+)-\d+ tokens/sec", r"\1.2 tokens/sec", RANGES.read_text())  # one number a cell
    runs, fmt, warnings = _load(exact.encode(), "exact.md")
    assert fmt == "general-table" and len(runs) == 16
    assert runs[0]["config"]["model"] == "DeepSeek R1 1.5B" and runs[0]["config"]["quantization"] == "Q4_K_M"
    assert runs[0]["metrics"]["tokens_per_s"] == 15.2 and runs[1]["config"]["model"] == "DeepSeek R1 7B"
    assert runs[2]["config"]["quantization"] == "Q4_0" and runs[0]["device"] is None  # Orin NX only in prose
    assert not any("Model Family tells the rows apart" in w for w in warnings)


def test_approximate_ranges_negative_cases() -> None:
    spread = "| Test | Speed |\n|---|---|\n| pp512 | 4.48 ± 0.04 t/s |\n| tg128 | 2.42 ± 0.01 t/s |\n"
    assert approximate_column(text_tables(spread)[0]) is None  # a mean ± its spread is no range
    mixed = "| Model | Speed |\n|---|---|\n| a | ~15-17 tokens/sec |\n| b | 12.5 tokens/sec |\n"
    assert approximate_column(text_tables(mixed)[0]) is None  # not every cell a range: no such column


def test_an_ok_column_and_a_success_column_leave_failed_rows_out() -> None:
    table = b"model,latency_ms,success\na,1.5,true\nb,,false\n"
    runs, _, warnings = _load(table, "ok.csv")
    assert [r["config"]["model"] for r in runs] == ["a"]
    assert any("line 3 (b) left out: its success is 'false'" in w for w in warnings)
    kept = b"model,latency_ms,ok\na,1.5,yes\nb,2.5,yes\n"
    assert len(_load(kept, "kept.csv")[0]) == 2
