"""Issue 39, thirteenth held-out set (files and attribution in tests/fixtures/formats/SOURCES.md): a report's table
on its side with a note after a figure, setups named before a suffix unit with the phase in each row's setup, each
card's figure summed in one cell, and Markdown escapes in model names. Each rule on the file's own numbers, with its
negative case."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import load
from joulebench import units
from tests.helpers import load_fixture as _load
from tests.helpers import refusal

FORMATS = Path(__file__).parent / "fixtures" / "formats" / "general_table"


def test_a_reports_table_on_its_side_and_a_note_after_a_figure() -> None:
    runs, _, _ = _load(FORMATS / "llm-bench-rtx3050-laptop-results-on-their-side.md")
    by_setup = {r["config"]["tag"].split("setup ")[-1]: r["metrics"] for r in runs}
    gpu = next(m for s, m in by_setup.items() if s.startswith("GPU"))
    cpu = next(m for s, m in by_setup.items() if s.startswith("CPU"))
    assert (gpu["tokens_per_s"], gpu["latency_p50_ms"], gpu["output_tokens"]) == (53.71, 931.18, 500)
    assert (cpu["tokens_per_s"], cpu["latency_p95_ms"]) == (18.01, 2939.79)
    assert units.parse("500 (50 × 10)") == units.Quantity(500.0, None, "")  # the figure, a note after it
    with pytest.raises(units.UnitError):
        units.parse("5 (apples) W")  # a note before the unit is no unit


def test_setups_named_before_a_suffix_unit_and_the_phase_each_row_names() -> None:
    runs, _, warnings = _load(FORMATS / "m5-max-vs-rog-z13-llamacpp-setups-in-column-names.csv")
    got = {r["config"]["tag"]: r["metrics"] for r in runs}
    assert got["mac_metal, test Decode 128"]["decode_tokens_per_s"] == 95.98
    assert got["asus_vulkan, test Prompt 512"]["prompt_tokens_per_s"] == 999.40
    assert all("tokens_per_s" not in m for m in got.values())  # never a prompt or a combined rate as the output's
    assert not any("Prompt 512 + Decode 128" in tag for tag in got)  # prompt and output together: no run
    assert any("over the prompt and the output together" in w for w in warnings)
    # columns of a mean and a first value of one figure are no setups
    stats = "model,avg_ttft_ms,ttft_first_ms\na,10,30\nb,12,40\n"
    imported = load(stats.encode(), "t.csv")[0]
    assert len(imported.runs) == 2 and any("ttft_first_ms left out" in w for w in imported.warnings)


def test_each_cards_figure_summed_in_one_cell_and_a_rate_per_second_spelled_out() -> None:
    runs, _, _ = _load(FORMATS / "ollama-two-arc-a770-rates-and-card-sums.md")
    phi4 = next(r for r in runs if r["config"]["model"] == "phi4:14b")["metrics"]
    assert phi4["tokens_per_s"] == 19.08 and phi4["avg_power_w"] == 182.0  # '90W + 92W': the two cards
    assert units.parse("81W + 86W") == units.Quantity(167.0, units.UNITS["W"], "W")
    assert units.parse("pp512 + tg128") is None  # words, not a sum
    with pytest.raises(units.UnitError):
        units.parse("81 W + 3 s")


def test_markdown_escapes_and_tokens_per_joule() -> None:
    runs, _, warnings = _load(FORMATS / "llm-bench-rtx3050-four-models-markdown-escapes.md")
    assert "Llama-3.2-3B Q4_K_M" in {r["config"]["model"] for r in runs}
    assert {r["device"]["name"] for r in runs} == {"NVIDIA GeForce RTX 3050"}
    gpt2 = next(r for r in runs if r["config"]["model"] == "gpt2-medium")["metrics"]
    assert gpt2["j_per_token"] == pytest.approx(1 / 2.82)  # '2.82' tok/J
    assert any("tokens per joule: J/token is 1 / it" in w for w in warnings)
    per_kwh = load(b"model,Efficiency (tokens/kWh)\na,4739557.83\nb,0\n", "t.csv")[0]
    assert per_kwh.runs[0]["metrics"]["j_per_token"] == pytest.approx(3.6e6 / 4739557.83)
    assert len(per_kwh.runs) == 1 and any("0 tokens per joule read as not measured" in w for w in per_kwh.warnings)


def test_a_row_whose_every_figure_is_zero_did_not_run() -> None:
    runs, _, warnings = _load(FORMATS / "arm-single-op-latency-three-engines-zero-rows.csv")
    assert len(runs) == 111 - 39 and "onnxrt" not in {r["config"].get("engine") for r in runs}
    conv3x3 = next(r for r in runs if r["config"]["engine"] == "ncnn" and "Conv2d_3x3_s1" in r["config"]["tag"])
    assert conv3x3["metrics"]["latency_avg_ms"] == 0.270
    assert sum("every figure in it is 0" in w for w in warnings) == 39
    # one zero beside a figure is that figure's own business, not a run that did not run
    one = load(b"op,mean_ms,max_ms\na,0,0.5\n", "t.csv")[0]
    assert len(one.runs) == 1


def test_a_row_of_zero_gpus_ran_on_the_cpu_and_a_utf16_log_is_read_as_text() -> None:
    runs, _, warnings = _load(FORMATS / "vllm-4xh200nvl-summary-cpu-row-zero-gpus.csv")
    assert len(runs) == 14 and runs[0]["metrics"]["tokens_per_s"] == 212.4 and runs[0]["config"]["gpu_count"] == 1
    assert "gpu_count" not in runs[-1]["config"] and runs[-1]["metrics"]["tokens_per_s"] == 26.8
    assert any("0 GPUs (the run used none)" in w for w in warnings)
    log = FORMATS.parent / "nvidia_smi" / "powershell-utf16-nvidia-smi-no-power.csv"
    assert log.read_bytes()[:2] == b"\xff\xfe"
    said = refusal(log.read_bytes(), log.name)
    assert "without power" in said and "memory.used [MiB]" in said  # read as text: the true reason, not 'binary'
    assert "binary data" in refusal(b"\xff\xfe\x00\xd8garbage", "x.csv")  # no UTF-16 text: still no text


def test_a_raspberry_pi_is_a_device_and_a_cpu() -> None:
    text = "**Hardware:** Raspberry Pi 5 (8GB)\n\n| model | tokens/s |\n|---|--:|\n| gemma3:1b | 11.53 |\n"
    run = load(text.encode(), "pi.md")[0].runs[0]
    assert run["device"] == {"name": "Raspberry Pi 5 8GB", "kind": "cpu"} and run["metrics"]["tokens_per_s"] == 11.53
    assert load(text.replace("Raspberry Pi 5", "my pi").encode(), "pi.md")[0].runs[0]["device"] is None  # never guessed
