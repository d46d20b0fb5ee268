"""Issue 39, held-out sets 107 to 110: files read wrong or refused unaided, each a fixture after it was counted
(tests/fixtures/formats/heldout107_110, SOURCES.md), with what it had been read as.
"""

from __future__ import annotations

import csv
import json
import re
from functools import partial
from pathlib import Path

import pytest

from tests.helpers import unaided

HELD = Path(__file__).parent / "fixtures" / "formats" / "heldout107_110"

imp = partial(unaided, HELD)


def _first_table(name: str) -> list[list[str]]:
    """The rows of a Markdown file's first pipe table, its header first."""
    lines = (HELD / name).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| "))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines[start:end] if line.startswith("| ")]


def test_two_statistics_in_one_cell_are_split_into_a_column_each() -> None:
    f = imp("SUMMARY.md")  # had been refused: '199 / 221' is not a number
    rows = _first_table("SUMMARY.md")[1:]  # a second table repeats the runs
    assert len(f.runs) == len(rows) == 18
    for run, row in zip(f.runs, rows, strict=True):
        ttft = row[6]
        m = re.fullmatch(r"(\d+) / (\d+)", ttft)
        if m:
            assert (run["metrics"]["ttft_p50_ms"], run["metrics"]["ttft_p90_ms"]) == (float(m[1]), float(m[2]))
        else:  # '~74 (avg)': an estimate of another statistic, in neither column
            assert "ttft_p50_ms" not in run["metrics"] and "ttft_p90_ms" not in run["metrics"]
    assert f.runs[0]["metrics"]["latency_p90_ms"] == 318.0 and f.runs[0]["metrics"]["duration_s"] == pytest.approx(
        64.3 * 60)
    assert any("split into a column each" in w and "'~74 (avg)'" in w for w in f.warnings)


def test_the_device_a_title_names_before_what_was_measured() -> None:
    f = imp("SUMMARY.md")  # '# NVIDIA Jetson AGX Thor Developer Kit eval results'
    assert {r["device"]["name"] for r in f.runs} == {"NVIDIA Jetson AGX Thor Developer Kit"}
    assert {r["device"]["kind"] for r in f.runs} == {"jetson"}


def test_figures_named_down_a_metric_column_with_a_unit_column_and_statistics_beside() -> None:
    f = imp("results-reviewed.csv")  # had been refused: no column of the header names a figure
    with (HELD / "results-reviewed.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    runs = {(r["status"], r["quantization"], r["timestamp_utc"]) for r in rows}
    assert len(f.runs) == len(runs) == 7  # the per-figure notes ('Flash Attention enabled') split no run
    first = [r for r in rows if r["status"] == rows[0]["status"] and r["timestamp_utc"] == rows[0]["timestamp_utc"]]
    ttft = next(r for r in first if r["metric"] == "ttft_ms")
    total = next(r for r in first if r["metric"] == "runtime_total_ms")
    m = f.runs[0]["metrics"]
    assert (m["ttft_p50_ms"], m["ttft_p90_ms"]) == (float(ttft["median"]), float(ttft["p90"]))
    assert m["latency_max_ms"] == float(total["max"]) and "duration_s" not in m  # 'min' is no unit of minutes
    assert f.runs[0]["device"]["name"] == "NVIDIA Jetson AGX Orin Developer Kit"


def test_a_warm_up_line_of_appended_vllm_results_is_left_out() -> None:
    f = imp("ds-0822-cpu.json")  # had kept the warm-up (5 prompts of 1 output token) as a 16th run
    lines = [json.loads(x) for x in (HELD / "ds-0822-cpu.json").read_text().splitlines() if x.strip()]
    measured = [r for r in lines if r.get("type") != "warmup"]
    assert len(lines) == 16 and len(f.runs) == len(measured) == 15
    assert [r["metrics"]["duration_s"] for r in f.runs] == pytest.approx([r["duration"] for r in measured])
    assert any("warm-up" in w and "left out" in w for w in f.warnings)


def test_a_mean_of_what_each_item_took_is_a_latency_not_the_runs_duration() -> None:
    f = imp("summary_by_model_split.csv")  # 'mean_transcribe_seconds' had been stored as the run's duration
    with (HELD / "summary_by_model_split.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(f.runs) == len(rows) == 6
    for run, row in zip(f.runs, rows, strict=True):
        assert run["metrics"]["latency_avg_ms"] == pytest.approx(float(row["mean_transcribe_seconds"]) * 1000)
        assert "duration_s" not in run["metrics"]
        assert f"model_size {row['model_size']}, split {row['split']}" == run["config"]["tag"]


def test_a_chips_time_in_ms_over_rows_named_by_their_input_file_is_one_runs_latency() -> None:
    f = imp("evaluation_results.csv")  # had been refused: 'npu_ms' neither a latency nor a duration
    with (HELD / "evaluation_results.csv").open() as fh:
        times = [float(r["npu_ms"]) for r in csv.DictReader(fh)]
    assert len(f.runs) == 1 and len(times) == 1897  # a row per clip: the items of one run
    assert f.runs[0]["metrics"]["latency_avg_ms"] == pytest.approx(sum(times) / len(times))


def test_a_chips_time_in_ms_is_one_inferences_and_a_bare_step_a_steps() -> None:
    from importers.table_fields import measure_field
    assert measure_field("npu_ms")[0].key == "latency_avg_ms"  # type: ignore[union-attr]
    assert measure_field("gpu_ms")[0].key == "latency_avg_ms"  # type: ignore[union-attr]
    assert measure_field("cpu_s")[0] is None  # seconds on a CPU: a run's as often as an inference's
    assert measure_field("Step(ms)")[0].key == "duration_s"  # type: ignore[union-attr]  # per_part_durations' step


def test_an_objects_own_figures_beside_a_list_of_counts_are_the_run() -> None:
    doc = json.loads((HELD / "single_node_results.json").read_text())
    f = imp("single_node_results.json")  # had been refused: its list of per-endpoint counts taken for the records
    assert len(f.runs) == 1
    m = f.runs[0]["metrics"]
    assert m["latency_p50_ms"] == pytest.approx(doc["latency_seconds"]["p50"] * 1000)
    assert m["requests_per_s"] == pytest.approx(doc["throughput"]["requests_per_second"])
    assert m["tokens_per_s"] == pytest.approx(doc["throughput"]["completion_tokens_per_second"])
    assert m["duration_s"] == pytest.approx(doc["wall_clock_seconds"])


def test_a_training_summary_keeps_its_step_times_and_its_wall_time() -> None:
    doc = json.loads((HELD / "report.json").read_text())
    f = imp("report.json")  # had been read as inference, its step times as inter-token latencies
    assert len(f.runs) == 1
    run = f.runs[0]
    assert run["config"]["mode"] == "train"  # losses, MFU, grad_accum, steps per epoch: a training run's columns
    m = run["metrics"]
    assert not any(k.startswith("itl_") for k in m)
    assert m["latency_p50_ms"] == doc["median_step_time_ms"] and m["latency_avg_ms"] == doc["mean_step_time_ms"]
    assert m["duration_s"] == doc["actual_total_wall_s"]  # never the micro step's 1.88 s


def test_a_tables_columns_say_it_trained() -> None:
    from importers.table_checks import trains
    assert trains(["mfu_pct", "loss_last_step", "tokens_per_sec"])
    assert trains(["GradAccum", "MFU", "tokens/s"])
    assert not trains(["ttft_ms", "tokens_per_sec", "batch_size"])
    assert not trains(["loss", "tokens_per_sec"])  # one such column says nothing alone


def test_a_cases_prompt_and_output_lengths_name_no_phase() -> None:
    f = imp("results.md")  # 'Generated tokens/sec' had been stored as a prefill rate: 'prompt-8192' read as a phase
    rows = [r for r in _first_table("results.md")[1:] if r[0].startswith("`prompt-8192")]
    assert len(f.runs) == len(rows) == 10
    for run, row in zip(f.runs, rows, strict=True):
        assert run["metrics"]["tokens_per_s"] == float(row[8]) and "prompt_tokens_per_s" not in run["metrics"]
        assert row[0].strip("`") in run["config"]["tag"]


def test_a_setup_naming_one_phase_still_names_it() -> None:
    from importers.table_checks import tag_phases
    assert tag_phases("Prompt 512") == {"prefill"} and tag_phases("tg128") == {"decode"}
    assert tag_phases("prompt-8192-output-300-rate-010") == set() and tag_phases("in512_out128") == set()


def test_a_json_lines_trace_of_each_gpus_power_is_one_power_log() -> None:
    records = [json.loads(x) for x in (HELD / "gpu_metrics.jsonl").read_text().splitlines() if x.strip()]
    f = imp("gpu_metrics.jsonl")  # had been refused: no figure among its records' keys
    assert f.format == "power-table" and len(f.runs) == 1
    run = f.runs[0]
    assert run["config"]["gpu_count"] == len(records[0]["gpus"]) == 8
    assert run["metrics"]["duration_s"] == pytest.approx(records[-1]["timestamp"] - records[0]["timestamp"])
    first = next(t for t in run["power_traces"] if t["domain"] == "gpu_id 0")
    assert first["power_w"][:3] == [r["gpus"][0]["power_w"] for r in records[:3]]
    assert "standalone_power_trace" in run["flags"]


def test_json_lines_of_runs_with_a_time_and_a_power_stay_runs() -> None:
    from importers.powerlogs.json_log import is_json_power_log
    runs = "\n".join(json.dumps({"timestamp": 1700000000 + i, "model": f"m{i}", "avg_power_w": 200 + i,
                                 "tokens_per_s": 50.0 + i}) for i in range(6))
    assert not is_json_power_log(runs)  # a model and a token rate on each line: a table of runs


def test_a_run_card_of_key_value_tables_and_tables_of_one_figures_statistics_is_one_run() -> None:
    f = imp("benchmark_Qwen3_5-27B_2026-03-24_11-23-55.md")  # had been one run of the throughput alone
    assert len(f.runs) == 1
    run = f.runs[0]
    assert run["device"]["name"] == "RTX 3090 24GB"  # '| **GPU Type** | RTX 3090 24GB |'
    assert run["config"]["model"] == "Qwen3.5-27B"
    m = run["metrics"]
    assert m["duration_s"] == 453.85 and m["tokens_per_s"] == 102.39
    # each statistic row under the heading that names its figure, in the column's unit (thousands' commas read)
    assert (m["ttft_avg_ms"], m["ttft_p50_ms"], m["ttft_p99_ms"]) == (203458.5, 210676.23, 396877.17)
    assert (m["tpot_avg_ms"], m["tpot_p50_ms"], m["tpot_p99_ms"]) == (84.26, 80.61, 194.43)
    assert (m["itl_avg_ms"], m["itl_p95_ms"]) == (80.52, 286.26)
    assert not any(k.endswith("p80_ms") for k in m)  # a percentile JouleBench does not store


def test_a_statistics_table_beside_a_table_of_setups_is_a_run_of_its_own() -> None:
    text = ("## Setups\n\n| model | TTFT (ms) |\n|---|---|\n| a | 10 |\n| b | 20 |\n\n"
            "## Time to First Token (TTFT)\n\n| Percentile | Time (ms) |\n|---|---|\n| Mean | 15 |\n| p99 | 20 |\n")
    f = imp("setups.md", text.encode())  # its rows had been two runs of a 'Time (ms)' duration
    assert [r["metrics"].get("ttft_avg_ms") for r in f.runs] == [10.0, 20.0, 15.0]
    assert f.runs[2]["metrics"]["ttft_p99_ms"] == 20.0 and f.runs[2]["config"]["tag"] == "Time to First Token (TTFT)"
    assert not any("duration_s" in r["metrics"] for r in f.runs)


def test_several_json_documents_pasted_under_headings_are_a_run_each() -> None:
    text = (HELD / "BASELINE_REPORT.md").read_text()
    docs = [json.loads(m) for m in re.findall(r"(?ms)^\{$.*?^\}$", text)]
    f = imp("BASELINE_REPORT.md")  # only the last document had been read
    assert len(f.runs) == len(docs) == 3
    for run, doc, heading in zip(f.runs, docs, ("Concurrency = 1", "Concurrency = 4", "Concurrency = 16"),
                                 strict=True):
        assert run["config"]["max_concurrency"] == doc["concurrency"] and run["config"]["tag"] == heading
        assert run["metrics"]["duration_s"] == pytest.approx(doc["wall_time_s"])
        assert run["metrics"]["latency_p95_ms"] == pytest.approx(doc["latency"]["p95_s"] * 1000)
        assert run["metrics"]["tokens_per_s"] == pytest.approx(doc["tokens"]["tokens_per_second"])
    assert run["device"] is None  # 'GPU: (5090 )': a bare number names no GPU
    assert any("3 JSON documents read from the text" in w for w in f.warnings)
    # documents of different kinds (a config, then results) are no runs of one kind: the last is read, as before
    mixed = '# r\n{\n  "model": "m",\n  "seed": 1\n}\n\n## out\n{\n  "tokens_per_s": 5.0,\n  "duration_s": 2.0\n}\n'
    assert len(imp("mixed.md", mixed.encode()).runs) == 1


def test_a_stack_line_names_the_cards_and_an_arc_pro_card_is_known() -> None:
    f = imp("06-benchmarks.md")  # 'Stack: 4× Intel Arc Pro B70 32 GB, kernel ...'
    assert {(r["device"]["name"], r["device"]["kind"]) for r in f.runs} == {("Intel Arc Pro B70", "gpu")}
    assert [r["config"]["gpu_count"] for r in f.runs] == [1, 2]  # each row's TP column
    assert [r["metrics"]["decode_tokens_per_s"] for r in f.runs] == [16.54, 12.16]


def test_a_console_table_of_groups_and_the_log_lines_that_repeat_it() -> None:
    f = imp("benchmark_comprehensive.txt")  # had been 2 runs of the log lines' P95/P99 alone
    by_tag = {r["config"]["tag"].removeprefix("Scenario "): r for r in f.runs}
    assert set(by_tag) == {"Single Short Doc (9w)", "Single Long Doc (49w)", "Batch Short Docs (96x)",
                           "Batch Long Docs (96x)"}  # the idle row holds only a heap size: no run
    short = by_tag["Single Short Doc (9w)"]["metrics"]
    assert (short["latency_p50_ms"], short["latency_p95_ms"], short["latency_p99_ms"]) == (51.1, 54.2, 54.2)
    assert by_tag["Batch Long Docs (96x)"]["metrics"]["throughput_sps"] == 30.6  # 'emb/sec'
    assert "latency_avg_ms" not in by_tag["Batch Long Docs (96x)"]["metrics"]  # 'ms/emb': 1000 / throughput
    assert {(r["device"]["name"], r["device"]["kind"]) for r in f.runs} == {("AMD Ryzen 9 7900", "cpu")}


def test_a_traditional_chinese_table_on_its_side_a_run_per_driver() -> None:
    f = imp("driver_update_comparison.md")  # had been refused: no figure named in English or simplified Chinese
    assert len(f.runs) == 4  # two concurrencies x two drivers; the improvement column is no setup
    tags = [r["config"]["tag"] for r in f.runs]
    assert len(set(tags)) == 4 and all(("580" in t) != ("595" in t) for t in tags)  # the driver in each run's tag
    first = f.runs[0]["metrics"]
    assert (first["duration_s"], first["tokens_per_s"], first["ttft_avg_ms"]) == (130.98, 58.64, 15462.13)
    assert (first["tpot_avg_ms"], first["itl_avg_ms"]) == (204.53, 203.86)
    assert all("prompt_tokens_per_s" not in r["metrics"] for r in f.runs)  # '總 Token 吞吐量': all tokens, unread
