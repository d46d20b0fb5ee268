"""Issue 39, held-out sets 99 to 102: files read wrong or refused unaided, each a fixture after it was counted
(tests/fixtures/formats/heldout99_102, SOURCES.md), with what it had been read as.
"""

from __future__ import annotations

import csv
import json
import statistics
from functools import partial
from pathlib import Path

import pytest

from importers import Hints, load
from tests.helpers import unaided

HELD = Path(__file__).parent / "fixtures" / "formats" / "heldout99_102"

imp = partial(unaided, HELD)


def test_a_settings_objects_output_length_is_asked_not_generated_and_a_gpu_objects_model_is_the_device() -> None:
    # had been: tokens/s = test_config.output_tokens / duration (4.86, where the writer measured 139.2) and the
    # model 'Unknown GPU' (gpu_info.model)
    doc = json.loads((HELD / "benchmark_summary_20250829_110039.json").read_text())
    f = imp("benchmark_summary_20250829_110039.json")
    assert len(f.runs) == len(doc["results"]) == 10
    run = f.runs[0]
    assert run["config"]["model"] == "openai/gpt-oss-20b"
    assert run["config"]["output_tokens_requested"] == 1000
    assert "tokens_per_s" not in run["metrics"] and "output_tokens" not in run["metrics"]
    assert run["device"] is None  # 'Unknown GPU' is the writer's fallback: no device stated


def test_vegeta_reports_pasted_one_after_another_are_a_run_each_tagged_by_the_lines_above() -> None:
    path = HELD.parent / "vegeta" / "budprompt-concurrency_new-seven-reports.md"
    f = load(path.read_bytes(), "concurrency_new.md", hints=Hints())[0]  # had been refused
    assert f.format == "vegeta" and len(f.runs) == 7
    first = f.runs[0]
    assert first["config"]["tag"] == "Duration 60s, Rate 1, Timeout 120s"
    assert first["metrics"]["requests_per_s"] == 0.33  # vegeta's throughput: successful requests a second
    assert first["metrics"]["e2e_latency_p50_ms"] == pytest.approx(315.774)
    assert [r["config"]["tag"].split(", ")[1] for r in f.runs] == [f"Rate {n}" for n in (1, 5, 10, 50, 100, 150, 200)]


def test_one_column_of_latencies_is_one_runs_samples() -> None:
    values = [float(r["latency_ms"]) for r in csv.DictReader((HELD / "resnet50_latency.csv").open())]
    (run,) = imp("resnet50_latency.csv").runs  # had been refused
    assert run["metrics"]["latency_avg_ms"] == pytest.approx(statistics.fmean(values))


def test_the_total_of_a_runs_breakdown_is_the_run_and_its_parts_are_left_out() -> None:
    doc = json.loads((HELD / "M4_float16_decomp.json").read_text())
    (run,) = imp("M4_float16_decomp.json").runs  # had been 9 runs, one per component
    total = doc["components"]["total"]
    assert run["metrics"]["duration_s"] == pytest.approx(total["total_ms"] / 1e3)
    assert run["metrics"]["latency_avg_ms"] == pytest.approx(total["mean_per_step_ms"])


def test_a_detectors_true_positives_are_no_gpu_count() -> None:
    f = imp("summary.csv")
    assert not any("gpu_count" in r["config"] for r in f.runs)  # had been 257 GPUs on every row


def test_time_to_second_token_is_not_the_latency() -> None:
    f = imp("aiperf-parity-report-2026-04-26.md")
    aiperf_c4 = next(r for r in f.runs if "AIPerf" in r["config"].get("tag", "") and r["config"].get(
        "tag", "").find("C 4") >= 0)
    assert aiperf_c4["metrics"]["ttft_p50_ms"] == pytest.approx(103.7)
    text = (HELD / "aiperf-parity-report-2026-04-26.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| AIPerf") and "| 4 |" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    header = [c.strip() for c in next(line for line in text.splitlines() if "TTST p50 ms" in line).strip(
        "|").split("|")]
    assert aiperf_c4["metrics"].get("latency_p50_ms") == pytest.approx(float(cells[header.index("latency p50 ms")]))


def test_a_hosting_platform_is_no_device() -> None:
    f = imp("comprehensive_report.csv")
    assert len(f.runs) == 8 and all(r["device"] is None for r in f.runs)  # had been 'local', 'aws', ...
    assert {r["config"]["tag"] for r in f.runs} >= {"Platform local, Mode streaming", "Platform aws, Mode streaming"}


def test_rows_saying_only_whether_each_request_succeeded_are_one_runs_requests() -> None:
    rows = list(csv.DictReader((HELD / "tp2_c8.csv").open()))
    (run,) = imp("tp2_c8.csv").runs  # had been 48 runs, one per request
    m = run["metrics"]
    assert m["requests_completed"] == len(rows) == 48 and m["requests_failed"] == 0
    assert m["ttft_p50_ms"] == pytest.approx(statistics.median(float(r["ttft_s"]) for r in rows) * 1e3)
    assert m["e2e_latency_avg_ms"] == pytest.approx(statistics.fmean(float(r["total_s"]) for r in rows) * 1e3)
    assert "tokens_per_s" not in m  # a request's own rate is not the run's, and the rows give no window


def test_a_failed_request_row_is_counted_and_a_table_with_settings_stays_a_table_of_runs() -> None:
    text = (HELD / "tp2_c8.csv").read_text().splitlines()
    failed = "\n".join([text[0], "False,,,0,", *text[1:]]) + "\n"
    (run,) = imp("tp2_c8.csv", failed.encode()).runs
    assert run["metrics"]["requests_completed"] == 48 and run["metrics"]["requests_failed"] == 1
    # a column that sets the rows apart (a batch size) makes them runs, whatever their `ok` says
    runs_table = "\n".join(["batch_size," + text[0]] + [f"{1 + i % 2}," + line for i, line in enumerate(text[1:])])
    assert len(imp("tp2_c8.csv", runs_table.encode()).runs) == 48


@pytest.mark.parametrize("name", ["metrics.json", "hfax-README.md"])
def test_warm_up_rows_are_left_out_and_a_tpu_column_is_the_device(name: str) -> None:
    f = imp(name)  # had been 19 runs with the 8 warm-ups (a JIT compile, 20 to 70 s) among them, no device
    assert len(f.runs) == 11  # 8 benchmark setups and 3 final generations
    assert not any("warmup" in (r["config"].get("tag") or "") for r in f.runs)
    assert {r["device"]["name"] for r in f.runs} == {"TPU v6e"}
    assert any("says warm-up" in w for w in f.warnings)
    tags = [r["config"]["tag"] for r in f.runs]
    assert len(set(tags)) == 9  # 8 benchmark setups (token-count buckets 128 to 1024) and the final, run 3 times
    assert sum("final" in t for t in tags) == 3
    text = next(r for r in f.runs if "benchmark, mode text-only, token" in (t := r["config"]["tag"].lower())
                and t.endswith(" 128"))
    assert text["metrics"]["tokens_per_s"] == pytest.approx(63.34, rel=1e-4)


def test_a_reports_table_on_its_side_with_units_in_its_cells_and_the_phone_on_a_line_above() -> None:
    f = imp("litertlm-report.md")  # had been refused
    assert len(f.runs) == 2
    assert {r["device"]["name"] for r in f.runs} == {"Samsung Galaxy S24 Ultra"}  # '**Device:** ... (SM-S938B)'
    assert [r["metrics"]["ttft_avg_ms"] for r in f.runs] == [690.0, 630.0]  # '690 ms', '**630 ms**'
    assert not any("decode_tokens_per_s" in r["metrics"] for r in f.runs)  # '~27.96 tokens/sec': an estimate
    assert sum("is an estimate" in w for w in f.warnings) == 2
