"""Issue 39, nineteenth held-out set (files and attribution in tests/fixtures/formats/SOURCES.md), counted unaided at
37677eb: a Jetson's power rails written in turn (the input rail the energy, never their sum), variants named in a
'name' column, a 'cloud' energy that is time x a rating, a model's load time beside the run's, an energy named with
its phase in kWh, a time named 'Time_Taken_s', a device 'CPU (no CUDA)' and 0 MB of VRAM. Each rule on the file's
own numbers, with its negative case."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers.table_fields import measure_field
from importers.table_rows import is_backend
from tests.helpers import load_fixture as _load

FORMATS = Path(__file__).parent / "fixtures" / "formats"
RAILS = FORMATS / "power_logs_meter" / "powerlens-jetson-orin-nano-three-rails-in-turn.csv"
DGCNN = FORMATS / "experiment_csv" / "dgcnn-jetson-nano-variants-by-name.csv"
OLLAMA = FORMATS / "general_table" / "on-device-lm-ollama-powermetrics-cloud-estimate.csv"
KWH = FORMATS / "experiment_csv" / "energy-pipeline-rtx4090-inference-kwh-phase-named.csv"
YOLO_CPU = FORMATS / "general_table" / "edgeai-sentinel-yolov8n-cpu-no-cuda.json"
RUN_TABLE = FORMATS / "experiment_csv" / "greenlab-tf-pt-run-table-time-taken.csv"


def test_rails_written_in_turn_give_the_input_rails_energy_never_their_sum(tmp_path: Path) -> None:
    runs, fmt, warnings = _load(RAILS)
    assert fmt == "power-table" and len(runs) == 1
    m = runs[0]["metrics"]
    assert 16.5 < m["avg_power_w"] < 18.0  # VDD_IN alone; mixing the three rails in one trace gave 10.1 W
    assert any("a trace per rail" in w for w in warnings)
    # rails none of which is the input: traces, no energy taken from any of them
    log = tmp_path / "rails.csv"
    log.write_text("t_s,rail,power_w\n" + "".join(f"{k * 0.1:.1f},{name},{p}\n" for k, (name, p) in enumerate(
        [("CPU", 2.0), ("GPU", 5.0)] * 10)))
    runs, _, _ = _load(log)
    assert "energy_j" not in runs[0]["metrics"]


def test_variants_in_a_name_column_are_setups_never_repeats() -> None:
    runs, fmt, _ = _load(DGCNN)
    assert fmt == "experiment-table" and len(runs) == 28
    first = runs[0]
    assert first["config"]["tag"] == "name aggr_mean"
    assert (first["metrics"]["latency_avg_ms"], first["metrics"]["throughput_sps"]) == (38.65, 206.1)
    assert len({r["config"]["tag"] for r in runs}) == 28


def test_a_cloud_estimate_and_a_load_time_are_no_measurements() -> None:
    runs, fmt, warnings = _load(OLLAMA)
    assert fmt == "general-table" and len(runs) == 48
    m = runs[0]["metrics"]
    assert m["energy_j"] == 34.76 and m["avg_power_w"] == 7.92  # powermetrics', not 3.673 s x 1500 W
    assert m["duration_s"] == pytest.approx(3.673)  # total_time_s, not the 0.846 s model load
    assert measure_field("cloud_energy_J")[0] is None and measure_field("load_time_s")[0] is None
    assert measure_field("energy_J")[0] is not None and measure_field("total_time_s")[0] is not None
    assert any("cloud_energy_J (an estimate or a rating" in w for w in warnings)


def test_an_energy_named_with_its_phase_and_its_components() -> None:
    runs, fmt, _ = _load(KWH)
    assert fmt == "experiment-table" and len(runs) == 4
    m = runs[0]["metrics"]
    assert m["energy_j"] == pytest.approx(2.5755e-05 * 3.6e6, rel=1e-3)  # energy_infer_kwh, in J
    runs, _, _ = _load(RUN_TABLE)
    assert runs[0]["metrics"]["duration_s"] == pytest.approx(21.024009, rel=1e-6)  # 'Time_Taken_s'


def test_a_cpu_named_no_device_and_zero_vram_no_figure() -> None:
    runs, _, warnings = _load(YOLO_CPU)
    assert len(runs) == 4 and all(r["device"] is None for r in runs)  # 'CPU (no CUDA)': where it ran, unnamed
    assert all("mem_used_device_mb" not in r["metrics"] for r in runs)  # VRAM 0.0 on a CPU run: not measured
    assert is_backend("CPU (no CUDA)") and not is_backend("NVIDIA A10 (24 GB)")
    assert runs[3]["metrics"]["throughput_sps"] == pytest.approx(16.49, abs=0.01)


def test_an_energy_given_as_its_components_is_their_sum(tmp_path: Path) -> None:
    """The energy as CPU and GPU parts and no total (beside a raw counter reading at the start): the run's energy is
    their sum, never the first part's alone with the GPU named as the device."""
    table = tmp_path / "parts.csv"
    table.write_text("model,duration_s,cpu_energy_j,gpu_energy_j,start_cpu_energy_j,ttft_p50_ms\n"
                     "m,10,100,400,238752.2,50\n")
    runs, fmt, warnings = _load(table)
    assert fmt == "general-table" and runs[0]["metrics"]["energy_j"] == 500.0
    assert any("start_cpu_energy_j left out (counter readings" in w for w in warnings)
    table.write_text("model,duration_s,cpu_energy_j,total_energy_j,ttft_p50_ms\nm,10,100,450,50\n")
    assert _load(table)[0][0]["metrics"]["energy_j"] == 450.0  # a total, where given, is the energy


def test_a_summary_of_cpu_and_gpu_parts_with_a_wrapped_counter() -> None:
    """`key: value` lines: the CPU's and the GPU's energy, no total, and the RAPL counter's raw start and end
    readings (the end below the start: it wrapped). The run's energy is CPU + GPU, never the CPU's alone."""
    summary = FORMATS / "text_figures" / "energy-pipeline-rtx4090-cpu-gpu-summary-wrapped-counter.txt"
    runs, _, warnings = _load(summary)
    m = runs[0]["metrics"]
    assert m["energy_j"] == pytest.approx(38535.62 + 252023.72)
    assert m["avg_power_w"] == pytest.approx(25.677 + 167.928)
    assert runs[0]["device"]["name"] == "NVIDIA GeForce RTX 4090"
    assert any("end_cpu_energy_j left out (counter readings" in w for w in warnings)
