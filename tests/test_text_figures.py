"""Issue 39: figures pasted into text (`name: value unit`, `name=value unit`), read by `importers.text_figures`
through the general table's field recognition and units. Real files and their attribution in
tests/fixtures/formats/SOURCES.md (section text_figures); every figure is checked against the file's own text.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from importers import load
from importers.table_fields import measure_field
from importers.text_figures import candidates
from joulebench import units
from joulebench.errors import NothingToImportError, ResultFileError
from tests.helpers import ingest_runs

TEXTS = Path(__file__).parent / "fixtures" / "formats" / "text_figures"
PASTE = TEXTS / "inference-energy-results_paste.md"
BENCHOFF = TEXTS / "benchoff-agx-orin-vllm-0.20-AWQ-INT4.txt"


def _runs(data: bytes, name: str = "notes.txt") -> tuple[list[dict], str, tuple[str, ...]]:
    imported, fmt = load(data, name)
    return imported.runs, fmt, imported.warnings


def _sections(path: Path) -> list[dict[str, str]]:
    """The file's sections as a person reads them: the machine heading, the model heading and each 'Name: value'."""
    out: list[dict[str, str]] = []
    machine = ""
    for line in path.read_text().splitlines():
        if line.startswith("# "):
            machine = line[2:]
        elif line.startswith("### "):
            out.append({"machine": machine, "model": line[4:]})
        elif out and (m := re.match(r"^(?:[MD]\d+\s+)?([A-Za-z][A-Za-z /]+?):\s+(\S+)", line)):
            out[-1].setdefault(m.group(1), m.group(2))
    return out


# --- the pasted console output of a measurement tool, several models under device headings --------------------

def test_each_model_section_is_a_run_with_the_device_its_heading_names() -> None:
    runs, fmt, _ = _runs(PASTE.read_bytes(), PASTE.name)
    sections = _sections(PASTE)
    assert fmt == "text-figures" and len(runs) == len(sections) == 11
    devices = {"DGX4 (A100-80GB)": "A100-80GB", "D4 (NVIDIA RTX 6000 Ada - 48GB)": "NVIDIA RTX 6000 Ada",
               "D1 (NVIDIA GeForce RTX 3090 - 24GB)": "NVIDIA GeForce RTX 3090"}
    for run, section in zip(runs, sections, strict=True):
        m, c = run["metrics"], run["config"]
        assert run["device"]["name"] == devices[section["machine"]] and run["device"]["kind"] == "gpu"
        assert c["model"] == section["model"] and c["mode"] == "infer"
        assert m["energy_j"] == pytest.approx(float(section["Total energy"]))  # M1, never 'Active energy'
        assert m["duration_s"] == pytest.approx(float(section["Total time"]))
        assert m["avg_power_w"] == pytest.approx(float(section["Average power"]))  # never 'Peak' or 'Idle power'
        assert m["j_per_token"] == pytest.approx(float(section["Energy per token"]))
        assert m["tokens_per_s"] == pytest.approx(float(section["Throughput"]))
        assert m["latency_avg_ms"] == pytest.approx(float(section["Average latency"]) * 1e3)


def test_the_first_run_is_read_as_printed() -> None:
    run = _runs(PASTE.read_bytes(), PASTE.name)[0][0]
    m = run["metrics"]
    assert run["device"]["name"] == "A100-80GB" and run["config"]["model"] == "Qwen2.5-3B-Instruct"
    assert m["energy_j"] == 183155.23 and m["duration_s"] == 629.91 and m["avg_power_w"] == 290.74
    assert m["j_per_token"] == 0.35 and m["tokens_per_s"] == 830.82 and m["latency_avg_ms"] == pytest.approx(1161)
    assert run["notes"] == "figures in text, lines 14-42, under 'Qwen2.5-3B-Instruct'"


def test_estimated_peak_idle_percent_and_memory_size_figures_are_not_stored() -> None:
    runs, _, warnings = _runs(PASTE.read_bytes(), PASTE.name)
    for run in runs:
        m = run["metrics"]
        assert not {"ttft_avg_ms", "tpot_avg_ms", "mem_used_device_mb", "gpu_util_avg_pct"} & set(m)
    said = " | ".join(warnings)
    assert "not read: M4 Avg prefill time; M5 Avg decode time/token" in said  # '(estimated)' in the text
    assert "Active energy left out: energy_j is already given by M1 Total energy" in said
    assert "M7 Peak power (a peak" in said and "Idle power (a peak" in said
    assert "GPU memory total (the device's memory size" in said


def test_the_paste_through_the_store_keeps_the_run_of_183155_j_on_the_a100(tmp_path: Path,
                                                                              bare_template: Path) -> None:
    rows = ingest_runs(tmp_path / "t.duckdb", bare_template, PASTE)
    first = next(r for r in rows if r["energy_j"] == pytest.approx(183155.23))
    assert first["device_name"] == "A100 80GB" and first["model"] == "Qwen2.5-3B-Instruct"
    assert len(rows) == 11


# --- one run per line: N=1 | wall=22.4s | gen=200 | AGG=8.9 tok/s | per-stream~8.9 ------------------------------

def test_each_line_of_several_figures_is_a_run_with_its_concurrency() -> None:
    runs, fmt, warnings = _runs(BENCHOFF.read_bytes(), BENCHOFF.name)
    lines = [dict(kv.split("=", 1) for kv in line.split(" | ")[:4]) for line in BENCHOFF.read_text().splitlines()
             if line.startswith("N=")]
    assert fmt == "text-figures" and len(runs) == len(lines) == 3
    assert [r["metrics"]["tokens_per_s"] for r in runs] == [8.9, 27.2, 51.4]
    assert [r["config"]["max_concurrency"] for r in runs] == [1, 3, 6]
    for run, line in zip(runs, lines, strict=True):
        assert run["metrics"]["tokens_per_s"] == float(line["AGG"].split()[0])
        assert run["metrics"]["duration_s"] == float(line["wall"].rstrip("s"))
        assert run["config"]["max_concurrency"] == int(line["N"])
        assert run["config"]["model"] == "Qwen3.8-27B" and run["config"]["mode"] == "infer"
        assert run["config"]["tag"] == "vLLM 0.20 Qwen3.8-27B AWQ-INT4 (compressed-tensors), ctx8192, cudagraphs"
        assert run["device"] is None  # the AGX Orin is only in the file name: not stated
    said = " | ".join(warnings)
    assert "N read as the concurrency" in said and "27.2 = 3 x 9.1" in said
    assert "approximate or estimated, not read: per-stream" in said


def test_n_is_no_concurrency_where_the_line_does_not_show_it() -> None:
    text = b"N=4 | wall=20.0s | AGG=8.9 tok/s | per-stream~8.9\nN=2 | wall=20.0s | AGG=8.9 tok/s\n"
    runs, _, _ = _runs(text)
    assert [r["config"].get("max_concurrency") for r in runs] == [None, None]  # 4 x 8.9 is not 8.9; no per-stream


# --- strict: what is not read ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    b"starting job\nx: 5 s\ndone\n",
    b"INFO epoch 3 finished\nElapsed time: 5 s\nloss: 0.31\n",  # one figure is no run
    b"Model: resnet18\nBatch size: 8\nGPU: NVIDIA A100-SXM4-80GB\n",  # labels without figures
    b"a=1 | b=2 | c=3\nd: 4 apples | e: 5\n",  # numbers without units
])
def test_a_log_without_two_figures_with_units_is_not_read(text: bytes) -> None:
    with pytest.raises(NothingToImportError, match="not a format JouleBench knows"):
        load(text, "job.log")


def test_labels_are_read_only_when_they_name_a_known_device_or_precision() -> None:
    text = (b"Device: cuda\nPrecision: 93.5%\nBatch size: 8\nMax concurrency: 4\nConcurrency: 21.04\n"
            b"Total energy: 120 J\nDuration: 10 s\n")
    run = _runs(text)[0][0]
    assert run["device"] is None and run["config"]["precision"] is None  # 'cuda' is a backend; 93.5% a score
    assert run["config"]["batch_size"] == 8 and run["config"]["max_concurrency"] == 4
    assert run["metrics"]["energy_j"] == 120 and run["metrics"]["avg_power_w"] == pytest.approx(12)
    named = _runs(b"GPU: NVIDIA A100-SXM4-80GB\nPrecision: fp16\nTotal energy: 120 J\nDuration: 10 s\n")[0][0]
    assert named["device"]["name"] == "NVIDIA A100-SXM4-80GB" and named["config"]["precision"] == "fp16"


def test_a_heading_naming_a_device_and_a_model_gives_both_and_is_the_tag() -> None:
    run = _runs(b"=== vLLM on Jetson AGX Orin, Qwen3-8B ===\nwall=22.4s | AGG=8.9 tok/s\n")[0][0]
    assert run["device"] == {"name": "Jetson AGX Orin", "kind": "jetson"} and run["config"]["model"] == "Qwen3-8B"
    assert run["config"]["tag"] == "vLLM on Jetson AGX Orin, Qwen3-8B"
    plain = _runs(b"## Results for the 8B and 70B models\nThroughput: 5 tok/s | Duration: 2 s\n")[0][0]
    assert plain["device"] is None and plain["config"]["model"] is None  # no model name of its own in the heading


def test_a_section_repeating_its_figures_is_several_runs() -> None:
    text = b"## Results\nThroughput: 100 tokens/s\nDuration: 10 s\n\nThroughput: 120 tokens/s\nDuration: 9 s\n"
    runs, _, _ = _runs(text)
    assert [(r["metrics"]["tokens_per_s"], r["metrics"]["duration_s"]) for r in runs] == [(100, 10), (120, 9)]
    assert runs[0]["config"]["tag"] == "Results" and runs[0]["config"]["model"] is None


def test_a_unit_that_contradicts_its_name_refuses_the_file_naming_the_line() -> None:
    with pytest.raises(ResultFileError, match=r"line 2: Energy per token: column 'Energy per token' is in W"):
        load(b"Duration: 10 s\nEnergy per token: 5 W\nThroughput: 8 tok/s\n", "run.txt")


def test_a_figure_out_of_range_refuses_the_file_naming_it() -> None:
    with pytest.raises(ResultFileError, match="Average power"):
        load(b"Average power: 9e9 kW\nDuration: 10 s\n", "run.txt")


def test_the_field_words_added_for_text_are_general() -> None:
    tpot = measure_field("Avg decode time/token", units.unit("s"))[0]
    assert tpot is not None and tpot.key == "tpot_avg_ms"  # a time per token, never the run's window
    assert measure_field("gpu_memory_total_gb")[0] is None  # the card's size, not what the run used
    used = measure_field("gpu_memory_used_gb")[0]
    assert used is not None and used.key == "mem_used_device_mb"
    prompt = measure_field("Input token throughput (tok/s)")[0]
    assert prompt is not None and prompt.key == "prompt_tokens_per_s"


def test_json_is_never_read_as_text() -> None:
    with pytest.raises(ResultFileError):
        load(b'{"note": "Throughput: 5 tok/s | Duration: 2 s"}', "x.json")


@pytest.mark.parametrize("data", [b"a" * 262144 + b": 5 J", b"=" * 262144, b"# " * 131072,
                                  (b"x" * 900 + b": 1 J | y: 2 s\n") * 300, b"a: 1,2,3,4,5,6,7,8 J\n" * 10000])
def test_pathological_text_is_scanned_in_linear_time(data: bytes) -> None:
    start = time.perf_counter()
    candidates(data.decode())
    assert time.perf_counter() - start < 5.0  # a hang guard, not a speed target


def test_more_runs_than_one_file_holds_stop_the_scan_and_refuse() -> None:
    data = b"Throughput: 5 tok/s | Duration: 2 s\n" * 20_001
    with pytest.raises(ResultFileError, match="one file holds at most 20,000"):
        load(data, "many.txt")
