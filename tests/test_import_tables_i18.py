"""Issue 18, per-experiment tables: a unit the user states for a column (`--unit COLUMN=UNIT`, the
Upload form's 'Units of columns'), an output's frame rate that is not a throughput, and a refusal that
says how to supply what is missing.

The Jetson Nano table is a real file (tests/fixtures/formats, attribution in SOURCES.md); expected
values are read from it by hand.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from cli.main import main
from explorer.upload import hints as upload_hints
from importers import Hints, load
from importers.base import column_unit
from joulebench.errors import ResultFileError

FORMATS = Path(__file__).parent / "fixtures" / "formats"
NANO = FORMATS / "experiment_csv" / "CSC2231_Project-jetson-nano-per-run-power-mW.csv"


def test_a_table_without_units_is_read_by_its_rail_names_and_magnitudes() -> None:
    """Issue 28 item 9: PWR_IN_AVG reaches 3,812, which no Jetson draws in W: mW, said in the notes."""
    f, fmt = load(NANO.read_bytes(), NANO.name)
    assert fmt == "power-summary" and len(f.runs) == 10
    assert f.runs[0]["metrics"]["avg_power_w"] == pytest.approx(3.7479943)  # RUN 0: PWR_IN_AVG 3747.9943 mW
    assert "so it is read as mW, as tegrastats writes them" in f.runs[0]["notes"]


def test_units_stated_by_the_user_read_the_columns() -> None:
    f, fmt = load(NANO.read_bytes(), NANO.name, hints=Hints(
        device="Jetson Nano", units=(("PWR_IN_AVG", "mW"), ("pwr_gpu_avg", "mW"), ("PWR_IN_MAX", "mW"))))
    assert fmt == "power-summary" and len(f.runs) == 10
    first = f.runs[0]["metrics"]  # RUN 0: PWR_IN_AVG 3747.9943 mW
    assert first["avg_power_w"] == pytest.approx(3.7479943)
    assert "energy_j" not in first  # a power without a duration is no energy
    assert "read in mW, as you stated (--unit)" in f.runs[0]["notes"]


def test_a_unit_for_a_column_the_file_does_not_have_names_its_columns() -> None:
    with pytest.raises(ResultFileError, match="--unit PWR_TOTAL: no such column; the file's columns are RUN, PWR_IN"):
        load(NANO.read_bytes(), NANO.name, hints=Hints(units=(("PWR_TOTAL", "mW"),)))


@pytest.mark.parametrize(("text", "problem"), [
    ("PWR_IN_AVG", "write COLUMN=UNIT"), ("=mW", "write COLUMN=UNIT"), ("energy=furlongs", "is not one of J, kJ"),
])
def test_a_bad_unit_is_refused_with_the_fix(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        column_unit(text)
    with pytest.raises(ResultFileError, match=problem):
        upload_hints("", "", "", "", units=text)


def test_the_upload_form_and_the_flag_take_the_same_pairs() -> None:
    assert upload_hints("", "", "", "", "PWR_IN_AVG=mw,\n energy = kWh").units == (("PWR_IN_AVG", "mW"),
                                                                                   ("energy", "kWh"))
    assert Hints.from_json(Hints(units=(("a", "W"),)).to_json()).units == (("a", "W"),)


def test_the_cli_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "t.duckdb"
    assert main(["import", str(NANO), "--db", str(db), "--unit", "PWR_IN_AVG=mW", "--device", "Jetson Nano"]) == 0
    with duckdb.connect(str(db), read_only=True) as con:
        powers = [r[0] for r in con.execute("SELECT avg_power_w FROM runs WHERE source_id = "
                                                 "(SELECT max(source_id) FROM runs) ORDER BY run_id").fetchall()]
    assert len(powers) == 10 and all(3.0 < p < 4.5 for p in powers)
    with pytest.raises(SystemExit):
        main(["import", str(NANO), "--db", str(db), "--unit", "PWR_IN_AVG"])
    assert "write COLUMN=UNIT" in capsys.readouterr().err


# A per-prompt video-generation table of the shape issue 18 reports (the real file is not public here):
# `fps` is the output video's playback rate; the generator's throughput is num_frames / duration.
VIDEO = (b"prompt,model,duration,energy,num_frames,fps\n"
         b"a cat,wan2.1,41.5,0.0012,81,16\n"
         b"a dog,wan2.1,40.0,0.0011,81,16\n")


def test_an_output_frame_rate_is_not_a_throughput() -> None:
    f, _ = load(VIDEO, "per_prompt.csv", hints=Hints(units=(("energy", "kWh"),)))
    m = f.runs[0]["metrics"]
    assert m["throughput_sps"] == pytest.approx(81 / 41.5) and m["sample_unit"] == "frame"
    assert m["throughput_derivation"] == "num_frames / duration"
    assert m["duration_s"] == 41.5 and m["energy_j"] == pytest.approx(0.0012 * 3.6e6)
    assert m["j_per_sample"] == pytest.approx(0.0012 * 3.6e6 / 81)
    assert "fps is the output video's frame rate" in f.runs[0]["notes"]


def test_label_gives_each_run_its_own_batch_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A table with one row per batch size that does not say which: `label --batch-size 1,2,...` gives the
    i-th run the i-th value; a wrong count is refused and changes nothing."""
    db = tmp_path / "t.duckdb"
    assert main(["import", str(NANO), "--db", str(db), "--unit", "PWR_IN_AVG=mW"]) == 0
    sizes = ",".join(str(2 ** i) for i in range(10))
    assert main(["label", NANO.name, "--db", str(db), "--batch-size", "1,2,4"]) != 0
    assert "has 10 runs; give one batch size per run (3 given) or one for all" in capsys.readouterr().err
    assert main(["label", NANO.name, "--db", str(db), "--batch-size", sizes]) == 0
    assert "1, 2, 4, 8, 16, 32, 64, 128, ... (one per run)" in capsys.readouterr().out
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT r.batch_size, l.value FROM runs r JOIN run_labels l ON l.run_id = r.run_id "
                           "AND l.label = 'batch_size' ORDER BY r.rowid").fetchall()
    assert [r[0] for r in rows] == [2 ** i for i in range(10)] and [r[1] for r in rows] == [str(2 ** i)
                                                                                          for i in range(10)]


# The shapes of two summaries issue 18 found refused (their files are not public here): a long-format
# `metric,gpu_index,value,unit` summary, and a one-row Jetson summary with units in its column names.
LONG = (b"metric,gpu_index,value,unit\nduration,0,120.0,sec\nduration,1,119.5,sec\navg_power,0,250.5,W\n"
        b"avg_power,1,240.0,W\nenergy,0,30060,J\nenergy,1,28680,J\npeak_power,0,300,W\n")


def test_a_long_format_summary_is_one_run_summed_over_its_gpus() -> None:
    f, fmt = load(LONG, "summary.csv", hints=Hints(device="A100", mode="train"))
    m = f.runs[0]["metrics"]
    assert fmt == "experiment-table" and len(f.runs) == 1
    assert (m["duration_s"], m["energy_j"], m["avg_power_w"]) == (120.0, 30060 + 28680, 250.5 + 240.0)
    assert any(w.startswith("rows left out (a spread, a peak") and w.endswith("peak_power") for w in f.warnings)
    assert "energy and power summed over 2 GPUs (0, 1)" in " ".join(f.warnings)
    assert "mode (its run; the table does not say" in load(LONG, "summary.csv")[0].warnings[0]


def test_a_one_row_summary_with_units_in_its_names() -> None:
    f, _ = load(b"device,gpu_name,duration_sec,gpu_energy_kwh\njetson,Orin,120.5,0.0004\n", "summary.csv")
    run = f.runs[0]
    assert run["device"]["name"] == "Orin" and run["metrics"]["duration_s"] == 120.5
    assert run["metrics"]["energy_j"] == pytest.approx(0.0004 * 3.6e6)


def test_optimum_memory_on_two_gpus_is_per_gpu() -> None:
    """Issue 18, item 5: optimum-benchmark's tracker sums torch's peaks and NVML's used memory over the
    GPUs; on the 2 x A100-80GB run the file's 144,667.7 MB is 72,333.9 MB per GPU."""
    path = FORMATS / "optimum_benchmark" / "dereklu-quant-llama70b-compile-2xa100-benchmark.json"
    run = load(path.read_bytes(), path.name)[0].runs[0]
    assert run["config"]["gpu_count"] == 2
    assert run["metrics"]["mem_used_device_mb"] == pytest.approx(144667.705344 / 2)
    assert run["metrics"]["mem_peak_allocated_mb"] == pytest.approx(141195.54816 / 2)
    assert run["metrics"]["mem_peak_rss_mb"] == pytest.approx(2085.011456)  # host memory: not per GPU
    assert "sum over 2 GPUs divided by 2" in run["notes"]
    text = path.with_name("dereklu-quant-llama70b-compile-2xa100-benchmark_report.txt")
    rendered = load(text.read_bytes(), text.name)[0].runs[0]
    assert "sum over every visible GPU; how many is not in this file" in rendered["notes"]


def test_optimum_legacy_aggregated_report_reads_each_row() -> None:
    """Issue 18, item 4: a legacy (0.0.x) aggregated report, one row per experiment: each row's own
    benchmark.input_shapes.batch_size, precision from backend.torch_dtype, the GPU from
    environment.gpus written as a Python list. Values read from the file."""
    path = FORMATS / "optimum_benchmark" / "optimum-benchmark-running-llamas-Llama-7b-full_report-legacy-aggregated.csv"
    f, _ = load(path.read_bytes(), path.name)
    forward = [r for r in f.runs if r["config"]["tag"].endswith(":forward")]
    assert len(forward) == 35  # 35 experiments, each with forward, generate and decode targets
    assert [r["config"]["batch_size"] for r in forward[:7]] == [1, 4, 32, 64, 8, 16, 2]
    assert {r["device"]["name"] for r in f.runs} == {"NVIDIA A100-SXM4-80GB"}  # "['NVIDIA A100-SXM4-80GB']"
    assert forward[0]["config"]["precision"] == "fp16" and forward[0]["metrics"]["throughput_sps"] == 29.8
    gptq = [r for r in forward if "gptq" in r["config"]["tag"]]
    assert gptq and all(r["config"]["precision"] is None for r in gptq)  # int4 weights: not fp16
    assert any("gptq quantized weights leave the precision not stated" in w for w in f.warnings)
