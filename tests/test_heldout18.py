"""Issue 39, eighteenth held-out set (files and attribution in tests/fixtures/formats/SOURCES.md), counted unaided at
452f8c3: MLPerf Tiny's energy and performance results, eight AMD GPUs in one power log with separator rows and a
power cap column, a device 'name' that only counts devices, an audio file's length beside the wall time, and
'N x <GPU>' cells under headings keyed 'Model:' and 'Number of GPUs:'. Each rule on the file's own numbers, with its
negative case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from importers import load, load_source
from importers.base import Source
from importers.table_fields import measure_field
from tests.helpers import load_fixture as _load
from tests.helpers import refusal

FORMATS = Path(__file__).parent / "fixtures" / "formats"
TINY_ENERGY = FORMATS / "mlperf_tiny" / "st-nucleo-u385rg-q-kws-energy-results.txt"
TINY_JSON = FORMATS / "mlperf_tiny" / "qualcomm-snapdragon-ic-performance-results.json"
MI300X = FORMATS / "general_table" / "amd-mi300x-8gpu-power-log-separator-rows.csv"
ECO2AI = FORMATS / "experiment_csv" / "eco2ai-fedsophia-gpu-count-not-name.csv"
WHISPER = FORMATS / "general_table" / "whisper-sh-audio-length-and-wall-time.json"
H2OGPT = FORMATS / "general_table" / "h2ogpt-perf-counted-gpus-oom.md"


def test_mlperf_tiny_energy_results_the_median_with_each_trial_checked() -> None:
    runs, fmt, _ = _load(TINY_ENERGY)
    assert fmt == "mlperf-tiny" and len(runs) == 1
    m = runs[0]["metrics"]
    assert m["j_per_sample"] == pytest.approx(245.3412e-6)  # 'Median energy cost is 245.3412 uJ/inf.'
    assert m["avg_power_w"] == pytest.approx(5.0875e-3) and m["duration_s"] == pytest.approx(12.056)
    assert m["energy_boundary"] == "system"
    # where the folders name the system and the benchmark, they are the device and the workload
    source = Source.single(TINY_ENERGY.read_bytes(), "results.txt",
                           ("closed", "STMicroelectronics", "results", "NUCLEO_U385RG_Q", "kws", "energy"))
    imported, _ = load_source(source)
    run = imported.runs[0]
    assert run["device"]["name"] == "NUCLEO_U385RG_Q" and run["config"]["workload"] == "mlperf-tiny kws"
    # a trial whose power x time is not its energy is no EnergyRunner figure
    bad = TINY_ENERGY.read_text().replace("Power         : 5.0860 mW.", "Power         : 7.0860 mW.")
    assert "disagree" in refusal(bad.encode(), "results.txt")


def test_mlperf_tiny_performance_windows_json() -> None:
    runs, fmt, _ = _load(TINY_JSON)
    assert fmt == "mlperf-tiny"
    windows = json.loads(TINY_JSON.read_text())
    rates = sorted(w["infer"]["throughput"] for w in windows)
    assert runs[0]["metrics"]["throughput_sps"] == pytest.approx(rates[len(rates) // 2])
    windows[0]["infer"]["throughput"] = 99999.0  # not iterations / elapsed_time (microseconds)
    assert "is not iterations / elapsed_time" in refusal(json.dumps(windows).encode(), "results.json")
    said = refusal(b"Power Edition Output\nAccuracy: 44 True positives, 6 False negatives\n", "results.txt")
    assert "no median throughput nor energy" in said


def test_eight_gpus_in_one_power_log_with_separator_rows_and_a_cap_column() -> None:
    runs, fmt, warnings = _load(MI300X)
    assert fmt == "power-table" and len(runs) == 1
    m = runs[0]["metrics"]
    assert m["duration_s"] == 1993.0 and 8 * 130 < m["avg_power_w"] < 8 * 200  # eight MI300X, never one
    assert any("8 devices told apart by 'device'" in w for w in warnings)


def test_a_device_name_that_only_counts_devices_is_no_name() -> None:
    runs, _, warnings = _load(ECO2AI)
    assert len(runs) == 3 and all(r["device"] is None for r in runs)
    assert runs[0]["metrics"]["energy_j"] == pytest.approx(0.013843013 * 3.6e6, rel=1e-3)
    assert any("counts devices and names none" in w for w in warnings)


def test_an_audio_files_length_is_a_setting_never_the_runs_time() -> None:
    runs, _, _ = _load(WHISPER)
    assert len(runs) == 6
    first = runs[0]
    assert first["metrics"]["duration_s"] == 69.0  # execution_time_sec, not the 3,600 s of audio
    assert first["config"]["model"] == "tiny.en"  # not 'Darwin/arm64', the 'arch' an OS and a CPU name
    assert first["config"]["tag"] == "audio_duration_ms 3600000"  # an hour and three hours: two setups
    assert measure_field("audio_duration_ms")[0] is None and measure_field("run_duration_ms")[0] is not None


def test_counted_gpus_under_keyed_headings() -> None:
    runs, _, _ = _load(H2OGPT)
    assert len(runs) == 31  # the OOM rows left out
    first, last = runs[0], runs[-1]
    assert first["device"]["name"] == "NVIDIA RTX 6000 Ada" and first["config"]["gpu_count"] == 1
    assert "Model: h2oai/h2ogpt-4096-llama2-7b-chat" in first["config"]["tag"]
    assert "Model: h2oai/h2ogpt-4096-llama2-13b-chat" in last["config"]["tag"] and last["config"]["gpu_count"] == 2
    # a count alone names no device
    imported, _ = load(b"model,gpus,tokens_per_s\nm,2 x,10\nm,1 x,12\n", "t.csv")
    assert all(r["device"] is None for r in imported.runs)


def test_a_table_of_unit_less_times_is_offered_to_the_mapping_step_not_called_a_utilisation_log() -> None:
    table = FORMATS.parent / "general_table_refused" / "tinydiffusion-unet-unitless-times.csv"
    said = refusal(table.read_bytes(), table.name)
    assert "utilisation log" not in said and "map its columns on the Upload page" in said
