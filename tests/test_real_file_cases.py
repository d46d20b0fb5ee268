"""Issue 28 item 9: real files of other tools that were read wrong, each imported into a real DuckDB store
through the import service and read back as Run detail reads it: the figures (checked by hand against the
file), the grade, the configuration and the device. Files and their writers: tests/fixtures/formats/SOURCES.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import Hints, load
from joulebench.errors import ResultFileError
from tests.helpers import ingest_runs

FORMATS = Path(__file__).parent / "fixtures" / "formats"
SUMMARY = FORMATS / "power_summary"


def _ingest(tmp_path: Path, template: Path, path: Path, **hints: object) -> list[dict]:
    return ingest_runs(tmp_path / "store.duckdb", template, path, **hints)


# --- a. a two-GPU power summary: its stated total is never summed again -----------------------------------

def test_a_two_gpu_summary_keeps_its_stated_total(tmp_path: Path, seeded_template: Path) -> None:
    path = SUMMARY / "GPU-power-log-2gpu-pynvml-power_log_summary.csv"
    f, fmt = load(path.read_bytes(), path.name, hints=Hints(device="NVIDIA A100-SXM4-40GB", mode="train"))
    assert fmt == "power-summary"
    [run] = _ingest(tmp_path, seeded_template, path, device="NVIDIA A100-SXM4-40GB", mode="train")
    # by hand: ENERGY_TOTAL,ALL,15259.766,J = 6616.065 + 8643.701; TIME,ALL,32.617,sec
    assert run["energy_j"] == pytest.approx(15259.766)  # not 30,519.532 (the parts and their total added)
    assert run["duration_s"] == pytest.approx(32.617)
    assert run["avg_power_w"] == pytest.approx(202.841 + 265.006, rel=1e-4)  # not + POWER_ALL_AVG 233.923
    assert run["gpu_count"] == 2 and run["energy_boundary"] == "gpu_board" and run["energy_method"] == "reported"
    assert run["device_name"] == "NVIDIA A100-SXM4-40GB" and run["mode"] == "train"
    assert "as stated by ENERGY_TOTAL" in run["notes"] and "not added again" in run["notes"]
    assert "POWER_ALL_AVG 233.923 W (line 7) is the mean over the GPUs" in run["notes"]
    assert run["trust_grade"] == "B"  # imported from another tool's file: at most B
    assert any(r.startswith("[B] origin") for r in run["trust_reasons"])


def test_an_appended_summary_is_one_run_a_block() -> None:
    data = (SUMMARY / "GPU-power-log-2gpu-pynvml-power_log_summary.csv").read_bytes()
    block = data.split(b"\n", 1)[1]  # the writer appends the next run's rows under the same header
    f, _ = load(data + block.replace(b"32.617", b"30.000"), "power_log_summary.csv")
    assert [r["metrics"]["energy_j"] for r in f.runs] == [pytest.approx(15259.766)] * 2
    assert [r["metrics"]["duration_s"] for r in f.runs] == [32.617, 30.0]


# --- d. unit-less rail columns: the unit from the rail names and the magnitudes -----------------------------

def test_jetson_rail_means_in_mw_are_read_with_the_reason(tmp_path: Path, seeded_template: Path) -> None:
    path = SUMMARY / "CSC2231_Project-jetson-nano-fp16-jit-per-run-power-mW.csv"
    runs = _ingest(tmp_path, seeded_template, path, device="Jetson Nano", mode="infer", precision="fp16")
    assert len(runs) == 10
    first = next(r for r in runs if r["notes"].startswith("power summary, RUN 0;"))
    assert first["avg_power_w"] == pytest.approx(2.9471468)  # PWR_IN_AVG 2947.1468 (mW) on line 2
    assert first["energy_boundary"] == "jetson_module" and first.get("energy_j") is None
    assert "PWR_IN_AVG reaches 3,812, which no Jetson draws in W" in first["notes"]
    assert "module power = PWR_IN_AVG (the module's input rail)" in first["notes"]
    assert "peaks left out: PWR_IN_MAX, PWR_CPU_MAX, PWR_GPU_MAX" in first["notes"]
    assert {r["device_name"] for r in runs} == {"Jetson Nano"}
    assert {(r["mode"], r["precision"], r["batch_size"]) for r in runs} == {("infer", "fp16", None)}
    assert len({r["config_key"] for r in runs}) == 1  # ten runs of one configuration: repeats
    assert {r["trust_grade"] for r in runs} == {"C"}  # a mean power over a window whose length is not recorded
    assert "[C] window: window length not recorded" in first["trust_reasons"]


def test_gpu_means_in_w_are_read_with_the_reason() -> None:
    path = SUMMARY / "CSC2231_Project-rtx3070-fp16-jit-per-run-power-W.csv"
    f, fmt = load(path.read_bytes(), path.name, hints=Hints(device="GeForce RTX 3070"))
    assert fmt == "power-summary" and len(f.runs) == 10
    assert [r["metrics"]["avg_power_w"] for r in f.runs][:2] == [54.5466, 73.545]  # W, as written
    assert f.runs[0]["device"]["name"] == "GeForce RTX 3070"
    assert "which in mW would be under 1.5 W, less than a GPU draws while it runs, so they are read as W" \
        in f.runs[0]["notes"]


def test_a_table_whose_values_fit_both_units_is_refused_naming_the_fix() -> None:
    data = b"RUN,VDD_CPU_AVG,VDD_GPU_AVG\n0,12.5,40.0\n1,13.0,41.5\n"  # sub-rails only, values fit W and mW
    with pytest.raises(ResultFileError) as e:
        load(data, "rails.csv")
    message = e.value.format_message()
    assert "VDD_CPU_AVG, VDD_GPU_AVG do not state their unit and the values (up to 41.5) fit both W and mW" \
        in message and "--unit VDD_CPU_AVG=mW (or W)" in message
    f, _ = load(data, "rails.csv", hints=Hints(units=(("VDD_CPU_AVG", "mW"),)))
    assert "read in mW, as you stated (--unit)" in f.runs[0]["notes"]


# --- b. a Jetson log whose RAM total names the module: stored with its power ------------------------------

def test_a_jtop_log_is_stored_with_its_power_by_the_board_its_ram_names(tmp_path: Path,
                                                                        seeded_template: Path) -> None:
    path = FORMATS / "jetson" / "agentmesh-agx-orin_jtop_log.csv"  # RAM 11283/62841MB, 12 cores: AGX Orin 64GB
    f, _ = load(path.read_bytes(), path.name)
    [run] = _ingest(tmp_path, seeded_template, path, mode="infer")
    # the same sum of CPU + GPU + System as --device 'Jetson AGX Orin' gives (test_sensors: 260.0215 J)
    assert run["energy_j"] == pytest.approx(260.0215) and run["duration_s"] == pytest.approx(30.0)
    assert run["energy_boundary"] == "jetson_module"
    assert "rail rule is taken from Jetson AGX Orin 64GB (its 12 CPU cores and 62,841 MB of RAM" in run["notes"]
    assert run["device_name"] is None  # the module is offered for the user to confirm, not stated by the log
    assert "fit Jetson AGX Orin 64GB" in f.warnings[0]
    assert run["mode"] == "infer" and run["trust_grade"] == "B"  # imported; 30 s, sensor period not recorded


# --- c. DeepLearningExamples dllogger: the empty step '()' and a cut-short nvlog --------------------------

def test_dllogger_stdout_summary_printed_with_the_empty_step(tmp_path: Path, seeded_template: Path) -> None:
    path = FORMATS / "nvidia_dle" / "lambda-16xA4000-tacotron2-FP16-dllogger-stdout-empty-step.txt"
    [run] = _ingest(tmp_path, seeded_template, path, device="RTX A4000")
    # by hand: '- () run_time : 105.88213012999768', '- () train_items_per_sec : 117995.0190604205'
    assert run["duration_s"] == pytest.approx(105.88213012999768)
    assert run["throughput_sps"] is None  # items (mel frames) the log does not name: not stored as samples
    assert "train_items_per_sec" in run["notes"] and "117995.0190604205" in run["notes"]
    assert (run["workload"], run["mode"], run["batch_size"], run["gpu_count"]) == ("Tacotron2_PyT", "train", 48, 16)
    assert run["precision"] is None  # amp : False says only 'not fp16' (fp32 and TF32 look the same)
    assert run["device_name"] == "RTX A4000" and run["trust_grade"] == "B"  # imported; a 106 s window


def test_dllogger_stdout_throughput_of_the_empty_step_is_stored() -> None:
    path = FORMATS / "nvidia_dle" / "lambda-16xA4000-tacotron2-FP16-dllogger-stdout-empty-step.txt"
    run = load(path.read_bytes(), path.name, hints=Hints(device="RTX A4000"))[0].runs[0]
    assert run["metrics"]["throughput_unit_not_stated"] == pytest.approx(117995.0190604205)
    assert run["metrics"]["duration_s"] == pytest.approx(105.88213012999768)


def test_a_cut_short_fastpitch_nvlog_gets_its_iterations_rate(tmp_path: Path, seeded_template: Path) -> None:
    path = FORMATS / "nvidia_dle" / "Fastpitch-train-nvlog-DLLL-cut-short-no-summary.json"
    [run] = _ingest(tmp_path, seeded_template, path, device="V100 SXM 16GB")
    # by hand over the 124 iterations: sum(train_frames/s x took) = 2,237,554 frames in sum(took) = 29.1207 s
    assert run["throughput_sps"] == pytest.approx(2237554.0 / 29.120670318603516, rel=1e-6)
    assert run["duration_s"] == pytest.approx(29.120670318603516)
    assert run["sample_unit"] == "frame" and "over the 124 logged iterations" in run["throughput_derivation"]
    assert (run["mode"], run["precision"], run["batch_size"], run["gpu_count"]) == ("train", "fp16", 32, 1)
    assert run["device_name"] == "V100 SXM 16GB" and run["trust_grade"] == "B"  # imported; 29.1 s of iterations
