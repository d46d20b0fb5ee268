"""Issue 39, third held-out set: console captures and logs read right by the text reader (`importers.text_figures`,
`importers.text_lines`), `nvidia-smi -q` reports read as a power log (`importers.powerlogs.nvidia_smi_query`) and an
Ollama table whose columns contradict themselves refused naming them (`importers.ollama`). Real files and their
attribution in tests/fixtures/formats/SOURCES.md (section "third held-out set: console captures"); every figure is
checked against the file's own text, parsed here by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from importers import load
from importers.powerlogs.detect import read_power_log, sniff
from importers.text_figures import candidates
from joulebench.errors import NothingToImportError, ResultFileError
from tests.helpers import ingest_runs, readers_of_other_fixtures

FIXTURES = Path(__file__).parent / "fixtures"
GB10 = FIXTURES / "formats" / "text_figures" / "jetson-ml-assessment-gb10_gpu_benchmark_output.txt"
CAMPAIGN = FIXTURES / "formats" / "text_figures" / "jetson-llm-maxperf-energy-campaign-2026-08-12.log"
SMI_Q = FIXTURES / "formats" / "nvidia_smi" / "mobilenetv3-nvidia-smi-q-power_log.txt"
OLLAMA_CSV = FIXTURES / "ollama_refused" / "jetson-llm-perf-analysis-ollama-benchmark_results.csv"


def _load(path: Path) -> tuple[list[dict], str, str]:
    imported, fmt = load(path.read_bytes(), path.name)
    return imported.runs, fmt, " | ".join(imported.warnings)


# --- an indented report: resnet18: -> Batch 1: -> Throughput / Latency --------------------------------------------

def _report_by_hand() -> list[tuple[str, int, float, float]]:
    """(model, batch, FPS, ms) of the 'PyTorch GPU Performance:' block as a person reads it."""
    out: list[tuple[str, int, float, float]] = []
    model, batch, fps = "", 0, 0.0
    block = GB10.read_text().split("PyTorch GPU Performance:")[1].split("\n\n")[0]
    for line in block.splitlines():
        if re.fullmatch(r"  \w+:", line):
            model = line.strip()[:-1]
        elif m := re.fullmatch(r"    Batch (\d+):", line):
            batch = int(m.group(1))
        elif m := re.fullmatch(r"      Throughput: ([\d.]+) FPS", line):
            fps = float(m.group(1))
        elif m := re.fullmatch(r"      Latency: ([\d.]+) ms", line):
            out.append((model, batch, fps, float(m.group(1))))
    return out


def test_each_model_and_batch_scope_of_the_indented_report_is_a_run() -> None:
    runs, fmt, _ = _load(GB10)
    expected = _report_by_hand()
    assert fmt == "text-figures" and len(runs) == len(expected) + 2 == 14
    for run, (model, batch, fps, ms) in zip(runs[:12], expected, strict=True):
        assert (run["config"]["model"], run["config"]["batch_size"]) == (model, batch)
        assert run["metrics"]["throughput_sps"] == fps and run["metrics"]["latency_avg_ms"] == pytest.approx(ms)
    resnet50_b8 = next(r for r in runs if r["config"]["model"] == "resnet50" and r["config"]["batch_size"] == 8)
    assert resnet50_b8["metrics"]["throughput_sps"] == 486.20
    assert resnet50_b8["metrics"]["latency_avg_ms"] == pytest.approx(2.06)
    assert resnet50_b8["notes"] == "figures in text, lines 74-75, under 'PyTorch GPU Performance > resnet50 > Batch 8'"
    # 'Mixed Precision Performance:' then 'FP32 Throughput: 471.76 FPS' / 'FP16 Throughput: 703.37 FPS': a setup each
    assert [(r["config"]["tag"], r["metrics"]["throughput_sps"]) for r in runs[12:]] == [("FP32", 471.76),
                                                                                        ("FP16", 703.37)]


def test_the_progress_lines_batch_size_16_do_not_leak_and_the_cards_memory_is_no_memory_used() -> None:
    runs, _, said = _load(GB10)
    assert sorted({r["config"]["batch_size"] for r in runs[:12]}) == [1, 4, 8, 16]  # not 16 everywhere
    assert all("mem_used_device_mb" not in r["metrics"] for r in runs)  # 'GPU Memory: 119.64 GB' is the card's size
    assert "line 49: GPU Memory (the device's memory size, not memory used)" in said
    assert all("duration_s" not in r["metrics"] for r in runs)  # 'Total Benchmark Time' is no run's window


def test_the_device_is_the_gpu_named_as_written_never_the_misleading_title() -> None:
    runs, _, _ = _load(GB10)
    assert {r["device"]["name"] for r in runs} == {"NVIDIA GB10"}  # the title says Jetson Orin Nano: not a label
    assert {r["device"]["kind"] for r in runs} == {"gpu"}


def test_gb10_is_not_in_the_catalogue_and_is_stored_unmapped(tmp_path: Path, bare_template: Path) -> None:
    rows = ingest_runs(tmp_path / "t.duckdb", bare_template, GB10)
    assert len(rows) == 14
    names = {r["device_name"] for r in rows}
    assert len(names) == 1 and "GB10" in names.pop()  # its own entry, not a Jetson nor any catalogued card


@pytest.mark.parametrize(("line", "device"), [("GPU: NVIDIA GB10", "NVIDIA GB10"), ("GPU: NVIDIA CUDA 12.1", None),
                                              ("Device: NVIDIA driver 535", None), ("GPU: cuda:0", None)])
def test_a_vendors_part_name_is_a_device_and_its_software_is_not(line: str, device: str | None) -> None:
    [run] = _load_text(f"{line}\nThroughput: 5 FPS\nLatency: 3 ms\n".encode())[0]
    assert (run["device"] or {}).get("name") == device


# --- a llama.cpp campaign log: banners, generated text, timings and a summary line per run -------------------------

def _summaries() -> dict[str, tuple[float, float, float]]:
    """run -> (tok/s, W decode, J/tok) from the file's summary lines."""
    out = {}
    for m in re.finditer(r"^(\S+): ([\d.]+) tok/s, ([\d.]+) W decode, ([\d.]+) J/tok", CAMPAIGN.read_text(), re.M):
        out[m.group(1)] = (float(m.group(2)), float(m.group(3)), float(m.group(4)))
    return out


def test_each_banner_of_the_campaign_is_one_run_with_decode_rate_power_and_j_per_token() -> None:
    runs, fmt, said = _load(CAMPAIGN)
    summary = _summaries()
    assert fmt == "text-figures" and len(runs) == len(summary) == 15
    for run in runs:
        name = run["config"]["tag"].split("/")[-1]
        tok_s, watts, j_tok = summary[name]
        m = run["metrics"]
        assert m["decode_tokens_per_s"] == pytest.approx(tok_s, abs=0.05)  # llama.cpp's 'decoded ... speed'
        assert m["avg_power_w"] == watts and m["decode_j_per_token"] == j_tok
        assert "tokens_per_s" not in m and "j_per_token" not in m  # the decode rate printed again, not a 2nd rate
        assert "duration_s" not in m and "energy_j" not in m  # decode power x a total time would be no energy
        assert run["config"]["mode"] == "infer" and run["device"] is None  # the board is only in the repo's paths
    assert "eval rate (inf tokens/s over 1: no rate)" in said  # a speculative run's target evaluates once


def test_a_named_campaign_run_reads_as_its_summary_and_timing_lines_say() -> None:
    runs, _, _ = _load(CAMPAIGN)
    run = next(r for r in runs if r["config"]["tag"] == "benchmarks/2026-08-12-energy-maxn-iq4xs-1")
    m = run["metrics"]
    assert m["decode_tokens_per_s"] == 26.785 and m["prompt_tokens_per_s"] == 407.004
    assert m["avg_power_w"] == 48.24 and m["decode_j_per_token"] == 1.801  # 48.24 W / 26.785 tok/s
    assert m["avg_power_w"] != 11.16  # 'idle 11.16/11.16 W' is not the run's power
    assert run["notes"] == ("figures in text, lines 275-300, under 'benchmarks/2026-08-12-energy-maxn-iq4xs-1'")


def test_markdown_headings_in_the_generated_answers_neither_split_nor_tag_the_runs() -> None:
    assert "## Step 2: Global Planning" in CAMPAIGN.read_text()
    runs, _, _ = _load(CAMPAIGN)
    assert all(r["config"]["tag"].startswith("benchmarks/2026-08-12-energy-maxn-") for r in runs)


def test_generated_prose_with_a_power_inside_a_sentence_is_no_figure() -> None:
    text = ("=== benchmarks/run-1 ===\n"
            "The robot drew 5 W, then 10 W while moving at 3 s intervals.\n"
            "Power: the board drew 5 W inside a sentence, 2 J/tok as well\n"
            "Summary: 5 tokens were generated, 3 W average\n")
    assert candidates(text) == []
    with pytest.raises(NothingToImportError):
        load(text.encode(), "answer.log")


def test_a_line_naming_its_own_run_is_that_run() -> None:
    text = b"Results of the night\nrun-a: 22.0 tok/s, 47.8 W decode, 2.17 J/tok\nrun-b: 30.0 tok/s, 50.0 W, 1.7 J/tok\n"
    runs, _, _ = _load_text(text)
    assert [r["config"]["tag"] for r in runs] == ["run-a", "run-b"]
    assert runs[0]["metrics"]["tokens_per_s"] == 22.0 and runs[0]["metrics"]["avg_power_w"] == 47.8


def _load_text(data: bytes) -> tuple[list[dict], str, tuple[str, ...]]:
    imported, fmt = load(data, "notes.txt")
    return imported.runs, fmt, imported.warnings


# --- indented scopes: negative cases -----------------------------------------------------------------------------

def test_an_indented_block_of_information_lines_makes_no_run() -> None:
    text = "GPU Information:\n  GPU: NVIDIA GB10\n  GPU Memory: 119.64 GB\n  Power Limit: 140 W\n  Clock: 2.1 GHz\n"
    assert candidates(text) == []


def test_labels_of_a_scope_apply_inside_it_and_a_settings_block_applies_to_its_section() -> None:
    progress = ("Running:\n  Testing a...\n    Batch size: 1\n    Batch size: 4\n"
                "Report:\n  resnet18:\n    Throughput: 5 FPS\n    Latency: 3 ms\n")
    [run] = _load_text(progress.encode())[0]
    assert run["config"]["batch_size"] is None and run["config"]["model"] == "resnet18"  # 1 then 4: no setting
    settings = ("Configuration:\n  Model: llama-3-8b\n  Batch size: 8\n"
                "Results:\n  Throughput: 100 tok/s\n  Latency: 20 ms\n")
    [run] = _load_text(settings.encode())[0]
    assert run["config"]["batch_size"] == 8 and run["config"]["model"] == "llama-3-8b"


# --- nvidia-smi -q reports: a power log -----------------------------------------------------------------------------

def test_the_nvidia_smi_q_reports_are_one_power_trace_of_eight_samples() -> None:
    runs, fmt, said = _load(SMI_Q)
    draws = [float(x) for x in re.findall(r"Power Draw\s+: ([\d.]+) W", SMI_Q.read_text())]
    assert fmt == "nvidia-smi-q" and len(runs) == 1 and len(draws) == 8
    [trace] = runs[0]["power_traces"]
    assert trace["power_w"] == draws and trace["power_w"][0] == 37.44
    assert trace["t_s"] == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]  # each report's Timestamp, 2 s apart
    m = runs[0]["metrics"]
    energy = sum((a + b) / 2 * 2.0 for a, b in zip(draws, draws[1:], strict=False))
    assert m["duration_s"] == 14.0 and m["energy_j"] == pytest.approx(energy)
    assert runs[0]["config"]["power_limit_w"] == 350.0 and runs[0]["config"]["gpu_count"] == 1
    assert runs[0]["device"] is None  # -d POWER prints no Product Name; 350 W does not name a card
    assert "'Power Samples'" in said and "standalone_power_trace" in runs[0]["flags"]


def test_one_report_alone_is_one_sample_and_no_energy() -> None:
    one = SMI_Q.read_bytes().split(b"!!!!!1")[0]
    [run] = load(one, "one.txt")[0].runs
    assert run["metrics"]["energy_missing_reason"].startswith("the log holds one sample (one nvidia-smi -q report)")
    assert run["power_traces"][0]["power_w"] == [37.44]


def test_the_power_log_readers_of_the_runner_and_of_attached_logs_read_it_too() -> None:
    assert sniff(SMI_Q.read_text()) == "nvidia-smi-q"
    log = read_power_log(SMI_Q.read_bytes())
    assert log.samples == 8 and log.power_limit_w == 350.0 and log.total_j() == pytest.approx(633.34)


NEW_DRIVER = """==============NVSMI LOG==============

Timestamp                                              : Tue Jun  2 09:04:{s:02d} 2026
Driver Version                                         : 595.71.05
CUDA Version                                           : 13.2

Attached GPUs                                          : 2
GPU 00000000:01:00.0
    Product Name                                       : NVIDIA H100 80GB HBM3
    FB Memory Usage
        Total                                          : 81559 MiB
        Used                                           : {used} MiB
    GPU Power Readings
        Average Power Draw                             : 101.00 W
        Instantaneous Power Draw                       : {w0:.2f} W
        Current Power Limit                            : 700.00 W
    GPU Memory Power Readings
        Instantaneous Power Draw                       : 69.61 W
    Module Power Readings
        Instantaneous Power Draw                       : N/A
GPU 00000000:02:00.0
    Product Name                                       : NVIDIA H100 80GB HBM3
    GPU Power Readings
        Average Power Draw                             : N/A
        Instantaneous Power Draw                       : {w1:.2f} W
        Current Power Limit                            : 700.00 W

"""


def test_a_newer_driver_report_gives_one_trace_per_gpu_and_the_product_name() -> None:
    text = "".join(NEW_DRIVER.format(s=s, used=1000 + s, w0=100.0 + s, w1=200.0 + s) for s in (9, 10, 12))
    [run] = load(text.encode(), "q.log")[0].runs
    assert run["device"]["name"] == "NVIDIA H100 80GB HBM3" and run["config"]["gpu_count"] == 2
    assert [t["power_w"] for t in run["power_traces"]] == [[109.0, 110.0, 112.0], [209.0, 210.0, 212.0]]
    assert run["power_traces"][0]["t_s"] == [0.0, 1.0, 3.0]  # never the memory's or the module's draw
    assert run["config"]["power_limit_w"] == 700.0 and run["metrics"]["mem_used_device_mb"] == pytest.approx(
        1012 * 1.048576)


def test_a_note_holding_a_report_and_other_text_is_no_power_log_and_no_other_log_is_taken() -> None:
    text = SMI_Q.read_text().replace("!!!!!1", "epoch 1 done, accuracy 0.91")
    assert sniff(text) != "nvidia-smi-q"
    backwards = SMI_Q.read_text().replace("19:31:44", "19:31:40")
    with pytest.raises(ResultFileError, match=r"line 29: Timestamp: time goes backwards"):
        load(backwards.encode(), "q.txt")
    assert readers_of_other_fixtures({"nvidia-smi-q"}, {"nvidia_smi"}) == []


# --- an Ollama table whose columns contradict themselves -----------------------------------------------------------

def test_the_ollama_table_with_copied_columns_is_refused_naming_what_it_found() -> None:
    with pytest.raises(ResultFileError) as refused:
        load(OLLAMA_CSV.read_bytes(), OLLAMA_CSV.name)
    said = refused.value.format_message()
    assert "lines 2, 3, 4, 5, 6: the prompt eval columns are copies of the eval columns" in said
    assert "prompt_eval_duration_s = eval_duration_s = 3.731717978" in said
    assert "prompt_eval_rate_tps = eval_rate_tps = 4.82" in said and "eval_count empty in every row" in said
    assert "line 3: eval_duration_s 36019.2906 is longer than total_duration_s 11.030357887" in said
    assert "Fix the script that wrote the table" in said


def test_an_ollama_table_with_a_rate_column_and_no_count_is_read() -> None:
    text = (b"model,total_duration_s,eval_count,eval_duration_s,eval_rate_tps,prompt_eval_count,"
            b"prompt_eval_duration_s\nllama3:8b,10.5,,8.0,12.5,30,0.4\n")
    [run] = load(text, "ok.csv")[0].runs
    assert run["metrics"]["decode_tokens_per_s"] == 12.5 and run["metrics"]["prompt_tokens_per_s"] == 75.0
    with pytest.raises(ResultFileError, match=r"line 2: neither eval count nor eval rate: .*holds: total duration 10"):
        load(b"model,total_duration,eval_count,eval_duration\nllama3:8b,10000000000,,\n", "none.csv")
