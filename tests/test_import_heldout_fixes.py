"""Issue 39, second held-out set: the real files that the general table reader, the power-table reader, the mapping
guess and the refusal descriptions read wrong (files and attribution in tests/fixtures/formats/SOURCES.md; the
refused ones in tests/fixtures/general_table_refused/). Each figure is checked against the file's own numbers.
"""

from __future__ import annotations

import csv
import json
from datetime import datetime
from pathlib import Path

import pytest

from importers import load
from importers.base import Source
from importers.describe import looks_like
from importers.general_table import is_backend
from importers.mapping import read_table
from importers.mapping_guess import guess
from importers.table_fields import measure_field
from importers.table_labels import label_field
from joulebench import units
from joulebench.errors import ResultFileError

FIXTURES = Path(__file__).parent / "fixtures"
TABLES = FIXTURES / "formats" / "general_table"
REFUSED = FIXTURES / "general_table_refused"
HPC = TABLES / "hpc-mlperf-2node-power_log-FIRST300.csv"
GTX1080 = TABLES / "llm-energy-bench-gtx1080-summary.csv"
CITIC = TABLES / "LLM-Energy-Benchmark-q_citic.csv"
SUMMARY = TABLES / "inference-energy-summary.json"
MULTIPROMPT = TABLES / "jetson-llm-benchmark-multiprompt_results.json"
BENCHOFF = FIXTURES / "formats" / "text_figures" / "benchoff-agx-orin-vllm-0.20-AWQ-INT4.txt"  # read since (text)
RESNET = REFUSED / "edge-vision-resnet18_tensorrt_20241025-083233.json"
LAYERS = REFUSED / "edge-vision-jetson-average_power_and_run_time-FIRST40.csv"


def _load(path: Path) -> tuple[list[dict], str, tuple[str, ...]]:
    imported, fmt = load(path.read_bytes(), path.name)
    return imported.runs, fmt, imported.warnings


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _refusal(path: Path) -> str:
    with pytest.raises(ResultFileError) as err:
        load(path.read_bytes(), path.name)
    return str(err.value)


# 1. a column named total_* is the total ---------------------------------------------------------------

def test_a_total_column_gives_the_energy_and_the_node_columns_stay_traces() -> None:
    runs, fmt, warnings = _load(HPC)
    rows = _rows(HPC)
    t = [datetime.fromisoformat(r["timestamp"]).timestamp() for r in rows]
    p = [float(r["total_watts"]) for r in rows]
    trapezoid = sum((t[i + 1] - t[i]) * (p[i] + p[i + 1]) / 2 for i in range(len(t) - 1))
    m = runs[0]["metrics"]
    assert fmt == "power-table"
    assert m["energy_j"] == pytest.approx(trapezoid, rel=1e-9)
    assert m["duration_s"] == pytest.approx(t[-1] - t[0])
    assert {tr["domain"] for tr in runs[0]["power_traces"]} == {"n1_watts", "n2_watts", "total_watts"}
    assert any("total_watts is the total" in w and "n1_watts, n2_watts" in w for w in warnings)
    assert runs[0]["device"] is None  # a power log names no device


# 2. a spread is not a mean --------------------------------------------------------------------------

def test_an_iqr_column_is_left_out_not_read_as_a_mean() -> None:
    runs, _, warnings = _load(GTX1080)
    rows = _rows(GTX1080)
    assert len(runs) == len(rows) == 12
    for run, row in zip(runs, rows, strict=True):
        m = run["metrics"]
        assert "latency_avg_ms" not in m and "ttft_avg_ms" not in m
        assert m["latency_p50_ms"] == pytest.approx(float(row["latency_median_seconds"]) * 1e3)
        assert m["ttft_p50_ms"] == pytest.approx(float(row["ttft_median_seconds"]) * 1e3)
    unread = next(w for w in warnings if w.startswith("columns not read"))
    assert "latency_iqr_seconds" in unread and "ttft_iqr_seconds" in unread
    for name in ("latency_std_ms", "ttft_sd_s", "e2e_stdev_ms", "latency_variance_ms", "latency_spread_ms",
                 "latency_range_ms"):
        assert measure_field(name)[0] is None, name


# 3. a stated energy per token wins ------------------------------------------------------------------

def test_a_stated_energy_per_output_token_wins_over_the_derived_one() -> None:
    runs, _, _ = _load(GTX1080)
    for run, row in zip(runs, _rows(GTX1080), strict=True):
        m = run["metrics"]
        assert m["j_per_token"] == pytest.approx(float(row["joules_per_output_token"]))
        assert m["energy_j"] == pytest.approx(float(row["gpu_energy_joules"]))  # never the per-token figure


def test_an_energy_per_completion_token_in_j_is_per_token_not_the_total() -> None:
    runs, _, _ = _load(SUMMARY)
    doc = json.loads(SUMMARY.read_text())
    m = runs[0]["metrics"]
    assert m["j_per_token"] == pytest.approx(doc["energy_per_completion_token_J"])
    assert m["energy_j"] == pytest.approx(doc["total_energy_J"])
    assert m["duration_s"] == pytest.approx(doc["duration_s"])


def test_a_spanish_energy_per_generated_token_is_read_in_j_per_token() -> None:
    runs, _, _ = _load(CITIC)
    rows = _rows(CITIC)
    assert len(runs) == len(rows) == 84
    for run, row in zip(runs, rows, strict=True):
        assert run["metrics"]["j_per_token"] == pytest.approx(float(row["Energía (J/token gen)"]))
        assert run["metrics"]["energy_j"] == pytest.approx(float(row["Energía (kWh)"]) * 3.6e6)


def test_the_units_parser_reads_the_first_unit_token_and_per_token_names() -> None:
    assert units.header_unit("Energía (J/token gen)")[1] == units.unit("J/token")
    for name in ("joules_per_output_token", "j_per_completion_token", "energy_per_completion_token_J",
                 "energy_per_token_j"):
        found = units.header_unit(name)[1]
        assert found is not None and found.kind == "energy_per_token", name
        field = measure_field(name)[0]
        assert field is not None and field.key == "j_per_token", name
    assert units.header_unit("gpu_energy_joules")[1] == units.unit("J")  # a total stays a total


# 4. a backend is no device --------------------------------------------------------------------------

def test_a_backend_in_the_hardware_column_is_not_a_device() -> None:
    runs, _, warnings = _load(CITIC)
    assert {r["Hardware"] for r in _rows(CITIC)} == {"cuda"}
    assert all(run["device"] is None for run in runs)  # not stated: the import asks for it
    assert any("'cuda'" in w and "backend, not a device" in w for w in warnings)
    for word in ("cuda", "CPU", "gpu", "mps", "rocm", "xpu", "npu", "cuda:0", "auto"):
        assert is_backend(word), word
    for device in ("NVIDIA A100-SXM4-80GB", "Jetson AGX Orin", "GeForce RTX 4090"):
        assert not is_backend(device)


# 5. a total token rate is not output tokens/s -------------------------------------------------------

def test_a_total_token_throughput_is_left_out_with_the_reason() -> None:
    runs, _, warnings = _load(CITIC)
    for run, row in zip(runs, _rows(CITIC), strict=True):
        m = run["metrics"]
        assert "tokens_per_s" not in m
        assert m["decode_tokens_per_s"] == pytest.approx(float(row["Throughput Decode (tok/s)"]))
    unread = next(w for w in warnings if w.startswith("columns not read"))
    assert "Throughput Total (tok/s) (prompt and output tokens together" in unread


# 6. batch-size columns ------------------------------------------------------------------------------

def test_batch_size_columns_in_several_languages() -> None:
    runs, _, _ = _load(CITIC)
    for run, row in zip(runs, _rows(CITIC), strict=True):
        assert run["config"]["batch_size"] == int(row["Tamaño Batch"])
    for name in ("batch", "batch_size", "Tamaño Batch", "lote", "Batchgröße"):
        found = label_field(name)
        assert found is not None and found.key == "batch_size", name
    assert label_field("Numero de Lotes") is None  # a count of batches is no batch size


# 7. nested JSON: one run per path -------------------------------------------------------------------

def test_nested_json_gives_one_run_per_model_and_prompt() -> None:
    runs, fmt, warnings = _load(MULTIPROMPT)
    doc = json.loads(MULTIPROMPT.read_text())["models"]
    paths = [(model, prompt, leaf) for model, prompts in doc.items() for prompt, leaf in prompts.items()]
    assert fmt == "general-table" and len(runs) == len(paths) == 100
    for run, (model, prompt, leaf) in zip(runs, paths, strict=True):
        m = run["metrics"]
        assert run["config"]["model"] == model and run["config"]["tag"] == prompt
        assert run["config"]["mode"] == "infer"
        assert m["decode_tokens_per_s"] == pytest.approx(leaf["gen_tps"])
        assert m["duration_s"] == pytest.approx(leaf["wall_time_s"])
        if leaf["prompt_tps"]:
            assert m["prompt_tokens_per_s"] == pytest.approx(leaf["prompt_tps"])
        else:  # 0 tokens/s: not measured, never a rate
            assert "prompt_tokens_per_s" not in m
        assert run["device"] is None
    assert not any("already given" in w for w in warnings)  # no cell dropped as a duplicate
    assert any("nested JSON read as 100 records" in w for w in warnings)


# 8. the mapping guess --------------------------------------------------------------------------------

def _guess(path: Path) -> tuple[dict[str, tuple[str | None, str | None]], dict[str, str]]:
    reasons: dict[str, str] = {}
    return guess(read_table(Source.single(path.read_bytes(), path.name)), reasons), reasons


def test_guess_leaves_an_idle_power_out_and_reads_the_per_token_energy() -> None:
    guessed, _ = _guess(SUMMARY)
    assert guessed["idle_power_W"] == (None, None)
    assert guessed["energy_per_completion_token_J"] == ("j_per_token", "J/token")
    assert guessed["total_energy_J"] == ("energy_j", "J")


def test_guess_fits_a_unit_to_a_power_far_out_of_range_for_watts() -> None:
    guessed, _ = _guess(LAYERS)
    values = [float(r["average_power"]) for r in _rows(LAYERS)]
    assert sorted(values)[len(values) // 2] > 5e6  # about 5.96e6: 5.96 MW read as W; 5.96 W as µW
    assert guessed["average_power"] == ("avg_power_w", "µW")


def test_guess_leaves_an_ambiguous_power_unmapped_with_the_reason() -> None:
    table = read_table(Source.single(b"step,power\n1,800000\n2,810000\n3,790000\n", "p.csv"))
    reasons: dict[str, str] = {}
    assert guess(table, reasons)["power"] == (None, None)  # 800 W in mW or 0.8 W in µW: both one device's
    assert "both mW and µW fit" in reasons["power"]


def test_guess_prefills_the_total_power_column() -> None:
    guessed, _ = _guess(HPC)
    assert guessed["total_watts"] == ("avg_power_w", "W")
    assert guessed["n1_watts"] == (None, None) and guessed["n2_watts"] == (None, None)


def test_guess_never_reads_a_spread_as_a_latency() -> None:
    guessed, _ = _guess(GTX1080)
    assert guessed["latency_iqr_seconds"] == (None, None) and guessed["ttft_iqr_seconds"] == (None, None)
    assert guessed["joules_per_output_token"] == ("j_per_token", "J/token")


# 9. refusals say what the file is --------------------------------------------------------------------

def test_text_with_commas_is_not_described_as_a_table() -> None:
    said = looks_like(Source.single(BENCHOFF.read_bytes(), BENCHOFF.name))
    assert "a table with columns" not in said and "text beginning '=== vLLM 0.20" in said
    assert _load(BENCHOFF)[1] == "text-figures"  # now read as figures in text (tests/test_text_figures.py)


def test_a_json_string_holding_json_is_described_as_such() -> None:
    said = _refusal(RESNET)
    assert "a JSON string that holds JSON" in said and "config, total_time" in said
    assert "a table with columns" not in said


def test_a_refused_table_points_to_the_mapping_step() -> None:
    said = _refusal(LAYERS)
    assert "a table with columns" in said and "average_power" in said
    assert "map its columns on the Upload page, or joulebench import --mapping RECIPE FILE" in said
