"""Result files found by held-out sets 83 to 90 (counted unaided before they were added: tests/fixtures/formats/
SOURCES.md), each with what it was read as before."""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

import pytest

from importers.table_fields import measure_field
from joulebench import units
from tests.helpers import load_fixture, refusal

HELD = Path(__file__).parent / "fixtures" / "formats" / "heldout83_90"


def test_a_table_of_request_times_is_one_run_whose_latencies_the_times_give() -> None:
    runs, fmt, warnings = load_fixture(HELD / "results_mi300_c50.csv")
    assert fmt == "general-table" and len(runs) == 1  # was refused: no column named a figure
    m = runs[0]["metrics"]
    rows = list(csv.DictReader((HELD / "results_mi300_c50.csv").open()))
    ttfts = [(float(r["first_token"]) - float(r["start"])) * 1e3 for r in rows]
    assert m["requests_completed"] == len(runs[0]["requests"]) == 500
    assert m["ttft_p50_ms"] == pytest.approx(statistics.median(ttfts))  # 359 ms: the writer's own metadata file
    window = max(float(r["end"]) for r in rows) - min(float(r["start"]) for r in rows)
    assert m["duration_s"] == pytest.approx(window) and m["requests_per_s"] == pytest.approx(500 / window)
    assert m["requests_per_s"] == pytest.approx(5.26, abs=0.01)  # the metadata file's throughput
    assert any("first_token, end read with start" in w for w in warnings)


def test_session_rows_are_requests_and_their_own_rates_are_not_the_runs() -> None:
    runs, _, warnings = load_fixture(HELD / "stress_test_sess20.csv")
    assert len(runs) == 1 and len(runs[0]["requests"]) == 20  # was 20 runs, each tagged by its session id
    m = runs[0]["metrics"]
    rows = list(csv.DictReader((HELD / "stress_test_sess20.csv").open()))
    assert m["e2e_latency_avg_ms"] == pytest.approx(statistics.fmean(float(r["latency_s"]) for r in rows) * 1e3)
    assert "tokens_per_s of each request, not the run's: median" in runs[0]["notes"]
    assert m["tokens_per_s"] == pytest.approx(sum(int(r["completion_tokens"]) for r in rows) / m["duration_s"])


def test_a_trailing_blank_line_is_no_sample_of_a_power_log() -> None:
    runs, fmt, _ = load_fixture(HELD / "power_log.csv")
    assert fmt == "nvidia-smi" and len(runs) == 1  # was refused: line 922, None is not a time
    assert runs[0]["metrics"]["avg_power_w"] == pytest.approx(302.4, abs=0.05)  # the collector's own mean


def test_phases_named_in_columns_and_devices_in_headings() -> None:
    runs, _, warnings = load_fixture(HELD / "megakernel-RESULTS.md", "RESULTS.md")
    assert len(runs) == 10  # 13 before, tg128 stored as prompt tokens/s
    mega = next(r for r in runs if "Megakernel" in r["config"]["tag"] and r["device"]
                and r["device"]["name"] == "RTX 3090")  # 'RTX 3090: pp520 tg128' names it before the colon
    assert mega["metrics"]["prompt_tokens_per_s"] == 21347 and mega["metrics"]["decode_tokens_per_s"] == 413
    spark = [r for r in runs if r["device"] and r["device"]["name"] == "NVIDIA DGX Spark"]
    assert {r["metrics"]["decode_tokens_per_s"] for r in spark} == {181, 65}  # 'Decode tg128 (tok/s)' joined
    dvfs = [r for r in runs if r["config"].get("power_limit_w")]
    assert {r["metrics"]["tokens_per_s"] for r in dvfs} == {433, 432, 411, 194}  # a bare 'tok/s': no phase's
    assert measure_field("pp520 (tok/s)")[0].key == "prompt_tokens_per_s"


def test_an_estimated_cell_is_not_stated_and_a_delta_column_no_setup() -> None:
    runs, _, warnings = load_fixture(HELD / "dflash-RESULTS.md", "RESULTS.md")
    assert runs  # was refused: one '~15-20 (est)' cell
    assert any("'~15-20 (est)' is an estimate, not a measurement" in w for w in warnings)
    assert not any("Δ" in (r["config"].get("tag") or "") for r in runs)
    assert units.is_estimate("~35 MB") and units.is_estimate("120 (estimated)") and not units.is_estimate("15 s")


def test_lat_ms_mean_is_the_mean_latency() -> None:
    runs, _, _ = load_fixture(HELD / "jetson_benchmark_results.csv")
    y11s = next(r for r in runs if r["config"]["model"] == "y11s")
    assert y11s["metrics"]["latency_avg_ms"] == pytest.approx(48.32, abs=0.01)  # was left out


def test_a_chips_name_is_no_statistic_and_tbd_states_nothing() -> None:
    message = refusal((HELD / "apple-silicon-bert-README.md").read_bytes(), "README.md")
    assert "TBD" not in message  # 'TBD' had refused the file; its device columns hold times of an unsaid kind
    assert measure_field("M3 Max GPU 40-core (64GB)", units.find_unit("s"))[0] is None  # never 'latency_max_ms'


def test_training_named_by_headings_and_lists() -> None:
    runs, _, _ = load_fixture(HELD / "performance_summary.md")
    assert len(runs) == 18 and {r["config"]["mode"] for r in runs} == {"train"}  # was inference
    runs, _, warnings = load_fixture(HELD / "gx10-finetuning-README.md", "README.md")
    assert len(runs) == 3 and {r["config"]["mode"] for r in runs} == {"train"}
    assert all("itl_avg_ms" not in r["metrics"] for r in runs)  # a training step is no decode step
    runs, _, _ = load_fixture(HELD / "benchmark_results_mi350.json")
    assert len(runs) == 36 and sorted(r["config"]["mode"] for r in runs) == ["infer"] * 18 + ["train"] * 18


def test_settings_named_bsz_and_in_thousands_tell_runs_apart() -> None:
    runs, _, warnings = load_fixture(HELD / "bench_llama3.2_3b_20260528.csv")
    assert sorted(r["config"]["seq_len"] for r in runs) == [1000, 2000, 4000, 8000, 16000, 32000]  # were pooled
    runs, _, _ = load_fixture(HELD / "mi300_batch_sweep_results.txt")
    assert sorted(r["config"]["batch_size"] for r in runs) == [2, 4, 8, 16, 32, 64]


def test_a_phones_own_cpu_rows_keep_the_phone_as_device() -> None:
    runs, _, _ = load_fixture(HELD / "benchmark_20260618_exynos.csv")
    assert len(runs) == 40 and {r["device"]["name"] for r in runs} == {"SM-S947B"}  # was not stated
    tags = {r["config"]["tag"] for r in runs}
    assert "runtime LiteRT, on cpu" in tags and "runtime LiteRT, on gpu" in tags  # never pooled


def test_llama_cpp_timings_in_a_decimal_comma_locale() -> None:
    runs, fmt, _ = load_fixture(HELD / "mk7.txt")
    assert fmt == "text-figures" and len(runs) == 1  # was refused
    assert runs[0]["metrics"]["decode_tokens_per_s"] == 3.06  # '3,06 tokens per second', never 306
    assert runs[0]["metrics"]["prompt_tokens_per_s"] == 3.33


def test_a_gpu_monitor_with_unix_ts_and_a_phase_column_is_a_trace() -> None:
    runs, fmt, warnings = load_fixture(HELD / "gpu_monitor.csv")
    assert fmt == "power-table" and len(runs) == 1  # was 40 runs, one per sample
    rows = list(csv.DictReader((HELD / "gpu_monitor.csv").open()))
    gpu0 = [float(r["power_w"]) for r in rows if r["index"] == "0"]
    trace = next(t for t in runs[0]["power_traces"] if t["domain"] == "index 0")
    assert trace["power_w"] == gpu0 and statistics.fmean(gpu0) == pytest.approx(198.707, abs=1e-3)  # its summary


def test_model_name_columns_ccu_and_a_counted_device_line() -> None:
    runs, _, _ = load_fixture(HELD / "benchmark_data.csv")
    assert {r["config"]["workload"] for r in runs} >= {"MiniMax-M2.7"}  # was 'unknown'
    assert {r["config"]["max_concurrency"] for r in runs} == {1, 10, 25, 50, 75, 100, 125, 150}  # 'ccu', no tag
    assert not any(r["config"].get("tag") for r in runs)
    runs, _, _ = load_fixture(HELD / "2026-06-11_kokkoro_gemma4-12b-qat.md")
    mine = [r for r in runs if "Results" in r["config"]["tag"]]
    assert len(mine) == 3 and all(r["config"]["gpu_count"] == 2 for r in mine)  # '2x RTX 3060 12GB'


def test_context_tokens_graphics_card_columns_and_statistics_over_runs() -> None:
    runs, _, _ = load_fixture(HELD / "gb10.csv")
    assert len({r["config"]["seq_len"] for r in runs}) == 32  # 'ctx_tokens': 32 depths, were pooled as repeats
    runs, _, _ = load_fixture(HELD / "ollama-README.md", "README.md")
    assert sorted(r["device"]["name"] for r in runs) == ["RTX 4080"] * 4 + ["RX 7900 XTX"] * 4  # 4 had none
    runs, _, _ = load_fixture(HELD / "maxq-summary.json", "summary.json")
    first = next(r for r in runs if r["config"]["max_concurrency"] == 1 and r["config"]["output_tokens_requested"]
                 == 128 and r["config"]["prompt_tokens_requested"] == 1024)
    m = first["metrics"]
    assert m["ttft_avg_ms"] == pytest.approx(112.1729, abs=1e-3)  # the median over runs of each run's mean TTFT
    assert m["ttft_p50_ms"] == pytest.approx(112.6461, abs=1e-3)  # ... of its median: was the mean under p50
    assert m["tokens_per_s"] == pytest.approx(59.4258, abs=1e-3)  # median.output_throughput: vLLM's tokens/s


def test_a_ratio_is_no_figure_and_baseline_candidate_are_setups() -> None:
    runs, _, warnings = load_fixture(HELD / "non_ort_tuning_summary.csv")
    assert len(runs) == 48 and {r["config"]["tag"].split(",")[0] for r in runs} == {"baseline", "candidate"}
    assert measure_field("tps_ratio")[0] is None  # was read as tokens/s, which made the candidates' left out


def test_a_left_out_label_column_still_tells_rows_apart() -> None:
    runs, _, _ = load_fixture(HELD / "exp2_context.csv")
    assert {r["config"]["tag"] for r in runs} == {"system fullkv", "system headkv"}  # were pooled by context


def test_a_power_trace_with_a_clock_and_elapsed_seconds() -> None:
    runs, fmt, warnings = load_fixture(HELD / "power_trace.csv")
    assert fmt == "power-table" and len(runs) == 1  # was 58 runs of the experiment-table reader
    rows = list(csv.DictReader((HELD / "power_trace.csv").open()))
    assert runs[0]["metrics"]["duration_s"] == pytest.approx(float(rows[-1]["elapsed_s"]))


def test_two_windows_of_one_run_are_no_setups_and_a_per_image_total_is_a_latency() -> None:
    runs, _, _ = load_fixture(HELD / "hpcdl_benchmark_report.csv")
    assert len(runs) == 6 and not any(r["config"].get("tag") in ("exec", "workload") for r in runs)  # were 12
    assert measure_field("total_per_image_ms")[0].key == "latency_avg_ms"  # was the run's duration


def test_run_numbers_are_repeats_and_a_run_card_of_key_value_tables_is_one_run() -> None:
    runs, _, _ = load_fixture(HELD / "production_benchmarks.csv")
    assert len(runs) == 150 and not any(r["config"].get("tag") for r in runs)  # 'run_number' was a setup each
    assert runs[0]["notes"].endswith("run 1") and runs[9]["notes"].endswith("run 10")  # which repeat each is
    runs, _, _ = load_fixture(HELD / "laguna-dflash-run-card.md", "laguna.md")
    assert len(runs) == 1  # was refused: two tables of keys and values
    run = runs[0]
    assert run["config"]["model"] == "Laguna-S-2.1" and run["config"]["max_concurrency"] == 24
    assert run["metrics"]["tokens_per_s"] == pytest.approx(359.908, abs=1e-3)
    assert run["metrics"]["ttft_p50_ms"] == pytest.approx(2931.70, abs=0.01)


def test_a_units_object_of_parts_gives_its_totals() -> None:
    runs, _, warnings = load_fixture(HELD / "d4_e2e_metrics_trt.json")
    m = runs[0]["metrics"]  # 'latency_ms': {'total': {'mean': ...}, 'infer': {...}}: the total was left out
    assert m["latency_avg_ms"] == pytest.approx(9.068, abs=1e-3) and m["latency_p95_ms"] == pytest.approx(11.173,
                                                                                                          abs=1e-3)
    assert measure_field("latency_ms.infer.mean")[0] is None  # one part of the whole, never a second latency


def test_llama_servers_timings_names_epochs_of_one_run_and_a_power_gadget_summary() -> None:
    runs, _, warnings = load_fixture(HELD / "llama_server_completion_timings.json", "retest.json")
    m = runs[0]["metrics"]  # was refused: 'predicted_per_second' read as an estimate
    assert m["decode_tokens_per_s"] == pytest.approx(47.635, abs=1e-3) and m["output_tokens"] == 502
    assert m["prompt_tokens_per_s"] == pytest.approx(95.35, abs=1e-2) and "duration_s" not in m  # no decode window
    runs, _, _ = load_fixture(HELD / "training_benchmark_8_threads.csv")
    rows = list(csv.DictReader((HELD / "training_benchmark_8_threads.csv").open()))
    assert len(runs) == 1  # was 100 runs, one per epoch
    assert runs[0]["metrics"]["duration_s"] == pytest.approx(sum(float(r["epoch_time_ms"]) for r in rows[1:]) / 1e3)
    runs, fmt, warnings = load_fixture(HELD / "log_python.csv", "PowerLog.csv")
    assert fmt == "power-table" and len(runs) == 1  # was refused: its closing summary lines were read as samples
    assert runs[0]["metrics"]["energy_j"] == pytest.approx(233.71, rel=0.02)  # the tool's own cumulative energy
    assert not any(t["domain"].startswith("Package PL") for t in runs[0]["power_traces"])  # limits, not power
