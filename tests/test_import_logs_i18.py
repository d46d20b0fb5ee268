"""Issue 18, power logs: multi-GPU alignment is in test_import_variants; here the Jetson module a log's
CPU cores and RAM total fit (offered, never stored as stated) and the power mode a jtop log records.

Real files in tests/fixtures/formats (attribution in SOURCES.md); expected values read from them by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from energy.rails import modules_for
from importers import Hints, ImportedFile, load
from importers.powerlogs.detect import sniff

FORMATS = Path(__file__).parent / "fixtures" / "formats"


def imp(rel: str, data: bytes | None = None, **hints: Any) -> ImportedFile:
    path = FORMATS / rel
    return load(path.read_bytes() if data is None else data, path.name, hints=Hints(**hints))[0]


@pytest.mark.parametrize(("rel", "offer"), [
    # first line: 'RAM 11283/62841MB' and CPU [..] with 12 entries
    ("jetson/agentmesh-agx-orin_jtop_log.csv", "12 CPU cores and 62,841 MB of RAM fit Jetson AGX Orin 64GB"),
    ("jetson/LLM_PIPELINE-agx-orin-tegrastats-ts.log", "12 CPU cores and 62,841 MB of RAM fit Jetson AGX Orin 64GB"),
    # 'RAM 896/7859MB', CPU [6 entries] and the VDD_SYS_* rails only a TX2 prints
    ("jetson/tegrastats_parser-tx2-tegrastats-dateheader.txt", "6 CPU cores and 7,859 MB of RAM fit Jetson TX2"),
    ("jetson/csc2231-jetson-nano_tegrastats.txt", "4 CPU cores and 3,964 MB of RAM fit Jetson Nano"),
    # VDD_IN + VDD_CPU_GPU_CV + VDD_SOC are printed alike by Orin NX, Orin Nano and Xavier NX: all three offered
    ("jetson/jetson-orin-nano-benchmarks-orin-nano-super-tegrastats-100ms.raw",
     "6 CPU cores and 7,607 MB of RAM fit Jetson Orin NX 8GB, Jetson Orin Nano 8GB or Jetson Xavier NX 8GB"),
])
def test_the_module_a_log_fits_is_offered_not_stated(rel: str, offer: str) -> None:
    f = imp(rel)
    run = f.runs[0]
    assert run["device"] is None  # a log does not name its module: not stated, so `label --device` fills it
    assert offer in f.warnings[0] and f.warnings[0].startswith("not stated in the file: device")
    labelled = imp(rel, device="Jetson AGX Orin 64GB")
    assert labelled.runs[0]["device"]["name"] == "Jetson AGX Orin 64GB"


def test_an_offered_module_gives_the_board_its_rail_rule() -> None:
    """Issue 28 item 9: the hand-rolled jtop logger's CPU/GPU/System columns do not tell the board, but its
    12 cores and 62,841 MB of RAM fit the AGX Orin 64GB alone: its board's sum of rails gives the energy (the
    same 260.0215 J as naming it), and the module stays offered, not stated."""
    run = imp("jetson/agentmesh-agx-orin_jtop_log.csv").runs[0]
    assert run["metrics"]["energy_j"] == pytest.approx(260.0215) and run["device"] is None
    assert "rail rule is taken from Jetson AGX Orin 64GB" in run["notes"]
    named = imp("jetson/agentmesh-agx-orin_jtop_log.csv", device="Jetson AGX Orin 64GB").runs[0]
    assert named["metrics"]["energy_j"] == pytest.approx(260.0215)


def test_module_table() -> None:
    assert modules_for(None, None) == []
    assert modules_for(8, 30_536) == ["Jetson AGX Orin 32GB", "Jetson AGX Xavier 32GB"]
    assert modules_for(8, 30_536, ["VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0"]) == ["Jetson AGX Orin 32GB"]
    assert modules_for(12, 7_607) == []  # no module has 12 cores and 8 GB


def _with_column(rel: str, name: str, values: list[str]) -> bytes:
    """The real file with one column appended (the column a jtop logger writes from stats['nvp model'])."""
    lines = (FORMATS / rel).read_text().splitlines()
    out = [lines[0].rstrip() + f", {name}"]
    rows = [line for line in lines[1:] if line.strip()]
    for i, line in enumerate(rows):
        out.append(line + ", " + values[min(i, len(values) - 1)])
    return ("\n".join(out) + "\n").encode()


def test_the_power_mode_column_is_stored_as_the_power_mode() -> None:
    data = _with_column("jetson/agentmesh-agx-orin_jtop_log.csv", "NVPMODEL", ["MAXN"])
    run = imp("jetson/agentmesh-agx-orin_jtop_log.csv", data=data).runs[0]
    assert run["config"]["power_mode"] == "MAXN"


def test_a_power_mode_that_changes_is_not_stored() -> None:
    data = _with_column("jetson/agentmesh-agx-orin_jtop_log.csv", "nvp model", ["MAXN"] * 5 + ["15W"])
    run = imp("jetson/agentmesh-agx-orin_jtop_log.csv", data=data).runs[0]
    assert "power_mode" not in run["config"]
    assert "the power mode changes during the log (MAXN, 15W)" in run["notes"]


# The columns vLLM's NvmlPowerMonitor (benchmarks) writes: perf_counter seconds, then per GPU its power in W
# (nvmlDeviceGetPowerUsage / 1000) and its graphics clock. Values here are the test's own.
WIDE = (b"Timestamp,GPU_0_power_w,GPU_0_freq_mhz,GPU_1_power_w,GPU_1_freq_mhz\n"
        b"1000.0,100.0,1410,110.0,1410\n1000.1,200.0,1410,210.0,1410\n1000.2,200.0,1410,210.0,1410\n")


def test_a_wide_nvml_power_log_is_one_trace_per_gpu() -> None:
    f, fmt = load(WIDE, "power.csv", hints=Hints(mode="infer"))
    run = f.runs[0]
    assert fmt == "gpu-power-csv" and run["config"]["gpu_count"] == 2
    assert [t["domain"] for t in run["power_traces"]] == ["gpu0", "gpu1"]  # clock columns are not power
    # trapezoids: GPU 0 0.1 x 150 + 0.1 x 200 = 35 J, GPU 1 0.1 x 160 + 0.1 x 210 = 37 J, over 0.2 s
    assert run["metrics"]["energy_j"] == pytest.approx(72.0)
    assert run["metrics"]["avg_power_w"] == pytest.approx(360.0)
    assert run["device"] is None and "the log does not name the GPU" in f.warnings[0]


def test_a_wide_log_in_milliwatts_says_so_or_is_read_as_mw_only_when_no_gpu_draws_that() -> None:
    mw = WIDE.replace(b"GPU_0_power_w", b"GPU_0_power_mw").replace(b"GPU_1_power_w", b"GPU_1_power_mw")
    assert load(mw, "power.csv")[0].runs[0]["metrics"]["energy_j"] == pytest.approx(0.072)
    unitless = (b"time,gpu0_power,gpu1_power\n1700000000,150000,160000\n1700000001,150000,160000\n"
                b"1700000002,150000,160000\n")
    run = load(unitless, "power.csv")[0].runs[0]
    assert run["metrics"]["avg_power_w"] == pytest.approx(310.0) and "unit_corrected_mw" in run["flags"]
    assert run["started_at"].startswith("2023-11-14T22:13:20")  # Unix seconds


def test_a_zeus_profile_takes_its_gpu_from_the_file_name_as_a_hint_only() -> None:
    """Issue 18, item 3: the fixture's saved name 'zeus-profile-A40+...' stored 'zeus-profile-A40' as a device
    stated by the file, which --device could not replace."""
    path = FORMATS / "zeus_mlenergy" / "zeus-profile-A40+bert-base-uncased+gpu0.csv"
    saved = load(path.read_bytes(), path.name)[0]
    assert saved.runs[0]["device"] is None  # 'zeus-profile-A40' names no device
    given = load(path.read_bytes(), path.name, hints=Hints(device="NVIDIA A40"))[0]
    assert {r["device"]["name"] for r in given.runs} == {"NVIDIA A40"}
    published = load(path.read_bytes(), "A40+bert-base-uncased+gpu0.csv")[0]  # its name in ml-energy/zeus
    assert {r["device"]["name"] for r in published.runs} == {"A40"}
    assert [(s.label, s.value, s.origin) for s in published.supplied] == [("device", "A40", "folder_name")]
    overridden = load(path.read_bytes(), "A40+bert-base-uncased+gpu0.csv", hints=Hints(device="NVIDIA A40"))[0]
    assert {r["device"]["name"] for r in overridden.runs} == {"NVIDIA A40"}  # the user's --device wins


# The stdout of DeepLearningExamples' BERT run_squad.py: its format_step prints nothing for the final
# empty step, so the summary line has no 'Summary:' prefix; its config is a PARAMETER line holding
# str(args). The lines are written to that code's format (values are the test's own).
BERT_STDOUT = (
    b"DLL 2020-10-01 10:00:00.000000 - PARAMETER Config : [\"Namespace(bert_model='bert-large-uncased', "
    b"do_train=True, do_predict=False, fp16=True, train_batch_size=32)\"]\n"
    b"DLL 2020-10-01 10:00:05.000000 - Training Epoch: 0 Training Iteration: 1  step_loss : 5.1 "
    b"learning_rate : 3e-05\n"
    b"DLL 2020-10-01 10:10:00.000000 - e2e_train_time : 595.3 training_sequences_per_second : 148.7 "
    b"final_loss : 1.05\n")


def test_a_dllogger_summary_line_without_the_summary_prefix() -> None:
    f, fmt = load(BERT_STDOUT, "bert_squad_train.log")
    run = f.runs[0]
    assert fmt == "dllogger"
    assert (run["metrics"]["throughput_sps"], run["metrics"]["duration_s"]) == (148.7, 595.3)
    assert run["config"]["mode"] == "train" and run["config"]["precision"] == "fp16"
    assert (run["config"]["model"], run["config"]["batch_size"]) == ("bert-large-uncased", 32)


def test_speech_synthesis_stages_keep_their_own_figures() -> None:
    """Issue 18, item 1c: FastPitch's frames/s was stored beside the end-to-end latency. Each stage (generator,
    WaveGlow, end to end) is now its own run with its own throughput and latency (values from the file's
    'avg' and '90%' steps)."""
    path = FORMATS / "nvidia_dle" / "Fastpitch-inference-dllogger-DLLL-string-steps-avg-90pct.json"
    runs = {r["config"]["tag"]: r["metrics"] for r in load(path.read_bytes(), path.name)[0].runs}
    assert list(runs) == ["generator", "waveglow", "end-to-end"]
    assert (runs["generator"]["throughput_sps"], runs["generator"]["sample_unit"]) == (2293.2684054957053, "frame")
    assert runs["generator"]["latency_avg_ms"] == pytest.approx(15.73445709488754)
    assert runs["generator"]["latency_p90_ms"] == pytest.approx(17.613047505047785)
    assert runs["waveglow"]["throughput_sps"] == 167617.63419916882
    assert runs["waveglow"]["latency_avg_ms"] == pytest.approx(55.1095556112982)
    assert runs["end-to-end"]["throughput_sps"] == 130389.75321236676
    assert runs["end-to-end"]["latency_avg_ms"] == pytest.approx(70.84401270618573)


@pytest.mark.parametrize("rel", ["jetson/LLM_PIPELINE-agx-orin-tegrastats-records.json",
                                 "jetson/LLM_PIPELINE-agx-orin-tegrastats-rails-long.json"])
def test_parsed_tegrastats_json_gives_the_energy_of_the_log_it_was_parsed_from(rel: str) -> None:
    """The repository's parser wrote both JSON files from the tegrastats.log saved beside them (one record
    per line, and one per rail and line): both must give what the log itself gives, sample for sample.
    43 samples 15:00:57-15:01:42; module = VDD_GPU_SOC + VDD_CPU_CV + VIN_SYS_5V0 (AGX Orin, no input rail)."""
    source = imp("jetson/LLM_PIPELINE-agx-orin-tegrastats-records-source.log").runs[0]["metrics"]
    f = imp(rel)
    m = f.runs[0]["metrics"]
    assert f.format == "tegrastats-json"
    assert m["energy_j"] == pytest.approx(source["energy_j"]) == pytest.approx(285.1545)
    assert m["avg_power_w"] == pytest.approx(6.3368, abs=1e-4) and m["duration_s"] == 45.0
    assert f.runs[0]["device"] is None  # the records do not name the module
    if rel.endswith("records.json"):  # its ram_total, not its 'cpu' list (the parser drops offline cores)
        assert "62,841 MB of RAM fit Jetson AGX Orin 64GB" in f.warnings[0]


def test_a_json_array_without_rails_is_not_read_as_a_power_log() -> None:
    data = b'[{"timestamp": "2025-08-14T15:00:57", "ram_used": 12574, "ram_total": 62841}]'
    assert sniff(data.decode()) is None
