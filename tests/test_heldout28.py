"""Issue 39, sets 28 to 32 (files and attribution in tests/fixtures/formats/SOURCES.md), counted unaided at 3269730:
a power line written twice in a powermetrics block, one unnumbered desktop GPU's power beside its VRAM, RAPL's domains
with a GPU's energy in mJ, display-formatted numbers, an execution status, a task column that is no mode, and a unit
written alone ('J/Token', 't/s'). Each rule on the file's own numbers, with its negative case."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from importers import load
from importers.table_fields import measure_field
from joulebench import units
from tests.helpers import load_fixture

FORMATS = Path(__file__).parent / "fixtures" / "formats"


def test_powermetrics_reads_a_line_written_twice_in_a_block_once() -> None:
    path = FORMATS / "power_logs_macos" / "ut2024-powermetrics-m1-flant5-first-1570-lines-cut-mid-block.txt"
    runs, fmt, warnings = load_fixture(path)
    assert fmt == "powermetrics" and len(runs) == 1
    metrics = runs[0]["metrics"]
    assert metrics["duration_s"] == pytest.approx(29.39115)  # 29 windows of ~1 s: the cut 30th holds no power line
    text = path.read_text()
    windows_ms = [float(m) for m in re.findall(r"\(([\d.]+)ms elapsed\)", text)][:29]
    combined_mw = [float(m) for m in re.findall(r"^Combined Power \(CPU \+ GPU \+ ANE\): (\d+) mW", text, re.M)]
    assert len(combined_mw) == 29 and text.count("GPU Power:") == 58  # each block's GPU power written twice
    expected_j = sum(mw * ms for mw, ms in zip(combined_mw, windows_ms, strict=True)) / 1e6
    assert metrics["energy_j"] == pytest.approx(expected_j)  # 2.64 J: the idle lead-in (59 to 359 mW)
    assert any("GPU Power" in w and "parts of it" in w for w in warnings)


def test_one_desktop_gpus_power_beside_its_vram_is_a_gpu_trace_not_a_jetson_log() -> None:
    runs, fmt, _ = load_fixture(FORMATS / "power_logs_meter" / "artigo-rtx4090-pynvml-system-metrics-gpu-power-w.csv")
    assert len(runs) == 1
    metrics = runs[0]["metrics"]
    assert metrics["energy_j"] == pytest.approx(12893.07, abs=0.01)  # the repo's own integration of the same file
    assert metrics["duration_s"] == pytest.approx(91.206) and metrics["energy_boundary"] == "gpu_board"
    # without a VRAM column the same power column may be a Jetson's GPU rail: read as before, asking for the board
    text = b"Timestamp,GPU Usage (%),GPU Power (W)\n0,1,5.0\n1,80,9.0\n2,80,9.5\n"
    assert "energy_j" not in load(text, "log.csv")[0].runs[0]["metrics"]


def test_rapl_domains_and_a_gpus_energy_in_mj_add_up_and_a_wrapped_counter_is_no_energy() -> None:
    runs, _, warnings = load_fixture(FORMATS / "general_table" /
                                     "greenlab-energibridge-run-table-rapl-gpu-mj-first-80-lines.csv")
    first = runs[0]
    assert first["config"]["model"] == "qwen:7b"  # model_version
    assert first["config"]["tag"] == "task_type generation, input_size long"  # tasks, never a mode
    assert first["config"]["mode"] is None
    assert first["metrics"]["energy_j"] == pytest.approx(0 + 237.88946533203125 + 400082 / 1000)  # DRAM+package+GPU
    assert len(runs) == 78  # line 71's package counter wrapped (-261,901 J): that run has no energy, said
    assert any("line 71" in w and "wrapped" in w for w in warnings)
    assert any("PP0_ENERGY (J)" in w and "inside the CPU package" in w for w in warnings)


def test_display_numbers_with_thousands_commas_and_an_execution_status() -> None:
    path = FORMATS / "general_table" / "check-models-mlxvlm-m5max-results-display-numbers.tsv"
    runs, _, warnings = load_fixture(path)
    assert len(runs) == 61  # the failed row left out, said
    lfm = next(r for r in runs if r["config"]["model"] == "LiquidAI/LFM2.5-VL-450M-MLX-bf16")
    assert lfm["metrics"]["prompt_tokens_per_s"] == 23197 and lfm["metrics"]["decode_tokens_per_s"] == 506
    assert any("execution_status is 'failed'" in w for w in warnings)
    # a decimal comma anywhere ('1,5') keeps every comma from being read as a thousands mark
    text = b"model\tlatency_ms\ttokens_per_second\na\t1,5\t23,197\nb\t2.5\t10\n"
    with pytest.raises(Exception, match="'1,5' is not a number"):
        load(text, "mixed.tsv")


def test_parts_named_by_their_unit_alone_and_components_of_a_soc() -> None:
    path = FORMATS / "experiment_csv" / "llm-benchmarking-zeus-apple-m4max-ollama-7b-j-per-token.csv"
    runs, _, _ = load_fixture(path)
    assert runs[0]["metrics"]["j_per_token"] == 0.4453 and runs[0]["metrics"]["energy_j"] == 566.86
    runs, _, _ = load_fixture(FORMATS / "general_table" / "coreml-diffusion-sd15-unet-ane-gpu-power.jsonl")
    ane = runs[0]["metrics"]
    assert ane["avg_power_w"] == pytest.approx(4.490223610953058 + 0.00021450896159317182)  # ANE + GPU: never one
    assert ane["latency_p50_ms"] == pytest.approx(399.01954149996754)


@pytest.mark.parametrize(("header", "field"), [
    ("J/Token", "j_per_token"), ("t/s", "tokens_per_s"), ("img/s", "throughput_sps"), ("docs_s", "throughput_sps"),
    ("avg_token_latency_ms", "tpot_avg_ms"), ("FTL[s]", "ttft_avg_ms"), ("model_version", None),
])
def test_names_read_by_their_unit(header: str, field: str | None) -> None:
    found, _, _ = measure_field(header)
    assert (found.key if found else None) == field


def test_names_that_are_no_figure_of_ours() -> None:
    assert measure_field("avg_io_throughput_mb_s")[0] is None  # megabytes a second: never items a second
    assert measure_field("t/s (req)")[0] is None  # each request's rate, not the system's
    assert units.header_unit("W/GPU")[1] is None and units.header_unit("I/O")[1] is None
