"""Issue 39, fifth held-out set: tables in text with units in their cells, a console table of statistics,
llama-benchy, a rate written `_per_sec`, a power log whose `Timestamp (s)` holds date-times, a one-line capture
(files and attribution in tests/fixtures/formats/SOURCES.md). Each rule is checked against the file's own numbers,
and each has its negative case: what it must not change.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from importers import load
from importers.table_console import _aligned, _spans
from joulebench.errors import ResultFileError
from tests.helpers import field_key as _key
from tests.helpers import load_fixture as _load
from tests.helpers import refusal as _refusal

FORMATS = Path(__file__).parent / "fixtures" / "formats"
THOR = FORMATS / "general_table" / "jetson-thor-edgellm-vllm-llamacpp-precision_sweep_results.txt"
MAARIFA = FORMATS / "general_table" / "maarifa-agx-orin-64gb-vllm-resultados-es.md"
SUMMARY = FORMATS / "general_table" / "isotopp-llamacpp-server-qwen3.6-27b-bf16-turbo3-summary.txt"
EDGEVISION = FORMATS / "general_table" / "edgevision-cpu-triton-vs-onnxruntime-triton_benchmark_results.csv"
BENCHY = FORMATS / "llama_bench" / "llama-benchy-vllm-qwen3.8-27b-nvfp4a16-awq-depth-sweep.md"
LLAMA_MD = FORMATS / "llama_bench" / "llama.cpp-README-depth-qwen2-7b-q4_K_M.md"
E2FL = FORMATS / "jetson" / "e2fl-jetson-orin-nx-resnet18-fl-power_jetson_2025-05-16_011216.csv"
YOLO = FORMATS / "text_figures" / "jetson-orin-nano-yolov8n-camera-fps-yolo_benchmark_results.txt"




# 1. Markdown tables in text: a row with no figure left out, the unnamed first column's row names in the tag --------

def test_pipe_tables_with_units_in_cells_and_unnamed_row_labels() -> None:
    runs, fmt, warnings = _load(THOR)
    assert fmt == "general-table" and len(runs) == 11  # 13 rows, FP8 and INT8-SQ hold no figure
    first = runs[0]
    assert first["config"]["tag"] == "Framework comparison, model fixed at Qwen2.5-1.5B-Instruct FP16 / Edge-LLM"
    m = first["metrics"]
    assert m["ttft_p50_ms"] == 34.0 and m["tokens_per_s"] == 48.0  # 'tok/s p50': a rate's median
    assert m["latency_p95_ms"] == 1331.0 and m["avg_power_w"] == 15.8
    assert runs[1]["config"]["tag"].endswith(" / vLLM") and runs[1]["metrics"]["ttft_p50_ms"] == 46.0
    last = runs[-1]
    assert last["config"]["tag"] == "Precision sweep at 7B, framework fixed at Edge-LLM / INT4 GPTQ"
    assert last["metrics"]["ttft_p50_ms"] == 65.0 and last["metrics"]["tokens_per_s"] == 40.7
    assert all(r["device"] is None for r in runs)  # no device stated: asked for, never guessed
    assert any("line 35, 36 left out: no figure in the row" in w for w in warnings)


def test_a_text_table_whose_every_row_lacks_a_figure_is_refused() -> None:
    text = "## Results\n\n| | TTFT (ms) | power (W) |\n|---|---|---|\n| **A** | – | – |\n| **B** | – | – |\n"
    assert "no figure in any row" in _refusal(text.encode(), "notes.md")


# 2. Spanish report: a settings column of names ('tiny', '64k') is no number, kept in the tag -------------------

def test_spanish_report_units_in_cells_and_setup_names() -> None:
    runs, fmt, warnings = _load(MAARIFA)
    # 26 rows of 'Tabla completa', and the prefix cache's 2 rows each giving its cold and its cached TTFT
    assert fmt == "general-table" and len(runs) == 30
    cache = [(r["config"]["tag"].split(", ")[1], r["metrics"]["ttft_avg_ms"]) for r in runs[26:]]
    assert cache == [("frío", 15000.0), ("cacheado", 1500.0), ("frío", 27100.0), ("cacheado", 2200.0)]
    first = runs[0]
    assert first["metrics"]["ttft_p50_ms"] == pytest.approx(420.0)  # TTFT_med '0.42s'
    assert first["metrics"]["ttft_p90_ms"] == pytest.approx(430.0)
    assert first["metrics"]["tokens_per_s"] == 32.7  # throughput '32.7 tok/s'
    assert first["config"]["max_concurrency"] == 1 and "seq_len" not in first["config"]
    assert "Tabla completa" in first["config"]["tag"] and "ctx tiny" in first["config"]["tag"]  # its setting's name
    worst = runs[25]  # 64k context, 8 users
    assert worst["metrics"]["ttft_p50_ms"] == pytest.approx(16500.0) and worst["metrics"]["tokens_per_s"] == 33.8
    assert worst["config"]["max_concurrency"] == 8 and "ctx 64k" in worst["config"]["tag"]
    assert len({r["config"]["tag"] + str(r["config"].get("max_concurrency")) for r in runs[:26]}) == 26
    assert any("ctx, contexto tell the rows apart" in w for w in warnings)  # 'tiny' is no seq_len: a setup's name
    assert not any(r["metrics"].get("ttft_avg_ms") == 1000.0 for r in runs)  # '~1-4s' ranges are no figure


def test_a_numeric_settings_column_is_still_read() -> None:
    text = "| ctx | TTFT_med |\n|---|---|\n| 2048 | 0.42s |\n| 4096 | 0.61s |\n"
    runs = load(text.encode(), "t.md")[0].runs
    assert [r["config"]["seq_len"] for r in runs] == [2048, 4096]


# 3. A console table of statistics as columns: the median of a rate is the figure, never its P95 ------------------

def test_console_summary_of_medians() -> None:
    runs, fmt, _ = _load(SUMMARY)
    assert fmt == "general-table" and len(runs) == 4
    assert [r["metrics"]["prompt_tokens_per_s"] for r in runs] == [84.74, 98.34, 114.2, 128.17]
    assert [r["metrics"]["decode_tokens_per_s"] for r in runs] == [9.22, 6.07, 8.27, 6.07]
    assert [r["config"]["tag"] for r in runs] == ["Test short-generation", "Test numeric-analysis",
                                                  "Test code-generation", "Test long-context"]
    assert not any(k.endswith(("p95_ms", "p95")) for r in runs for k in r["metrics"])


def test_a_percentile_of_a_rate_is_no_figure() -> None:
    assert _key("tok/s p50") == "tokens_per_s" and _key("gen tok/s median") == "decode_tokens_per_s"
    assert _key("tok/s p95") is None and _key("throughput_tok_s_p95") is None and _key("decode_tps_p90") is None
    assert _key("ttft_ms_p95") == "ttft_p95_ms"  # a latency's percentile is still read


def test_fixed_width_cells_past_their_names() -> None:
    header = _spans("Test                 Metric       Median          P95         Mean      Min/Max")
    row = "                     gen tok/s            9.22         9.68         8.98 8.06/9.68"
    assert _aligned(header, row) == ["", "gen tok/s", "9.22", "9.68", "8.98", "8.06/9.68"]
    names = _spans("Model           Speed   ok")  # words a space apart are one cell: never split as values are
    assert _aligned(names, "gemma3 27b       12.5   yes") == ["gemma3 27b", "12.5", "yes"]


# 4. llama-benchy: llama-bench's table with more columns, read by the llama-bench reader ---------------------------

def test_llama_benchy_table() -> None:
    runs, fmt, _ = _load(BENCHY)
    assert fmt == "llama-bench" and len(runs) == 18
    pp, tg = runs[0], runs[1]
    assert pp["config"]["tag"] == "pp2048" and pp["metrics"]["prompt_tokens_per_s"] == 2262.92
    assert pp["metrics"]["ttft_avg_ms"] == 978.7  # e2e_ttft (ms) mean; '± 45.90' not read
    assert tg["config"]["tag"] == "tg480" and tg["metrics"]["tokens_per_s"] == 67.44
    assert "ttft_avg_ms" not in tg["metrics"]
    deep = next(r for r in runs if r["config"]["tag"] == "pp2048 @ d50000")
    assert deep["metrics"]["prompt_tokens_per_s"] == 1957.27 and deep["metrics"]["ttft_avg_ms"] == 26665.88
    assert all("engine" not in r["config"] for r in runs)  # a server it does not name, not llama.cpp
    assert all(r["config"]["model"] == "Qwen3.8-27B-NVFP4a16-AWQ" and r["device"] is None for r in runs)


def test_llama_bench_md_still_names_its_engine() -> None:
    runs, fmt, _ = _load(LLAMA_MD)
    assert fmt == "llama-bench" and all(r["config"]["engine"] == "llama.cpp" for r in runs)
    assert all("ttft_avg_ms" not in r["metrics"] for r in runs)


# 5. a rate written '_per_sec' ---------------------------------------------------------------------------------------

def test_samples_per_sec_is_a_rate() -> None:
    runs, fmt, _ = _load(EDGEVISION)
    with EDGEVISION.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert fmt == "general-table" and len(runs) == len(rows) == 4
    for run, row in zip(runs, rows, strict=True):
        assert run["metrics"]["throughput_sps"] == pytest.approx(float(row["throughput_samples_per_sec"]))
        assert run["metrics"]["latency_p50_ms"] == pytest.approx(float(row["median_latency_ms"]))
        assert run["config"]["batch_size"] == int(row["batch_size"])
    assert _key("requests_per_sec") == "requests_per_s" and _key("frames_per_second") == "throughput_sps"


def test_a_time_in_seconds_stays_a_time() -> None:
    assert _key("elapsed_sec") == "duration_s" and _key("latency_sec") == "latency_avg_ms"


# 6. a power log whose 'Timestamp (s)' holds date-times ---------------------------------------------------------

def test_timestamp_seconds_header_over_date_times() -> None:
    runs, fmt, warnings = _load(E2FL)
    assert fmt == "power-table" and len(runs) == 1
    m = runs[0]["metrics"]
    assert m["duration_s"] == pytest.approx(16.658131 - 5.193600)  # 01:12:05.193600 to 01:12:16.658131
    assert m["avg_power_w"] == pytest.approx(5.094, abs=0.01)  # mW: 5964.67 ... 5039.36
    assert any("holds date-times" in w for w in warnings)


def test_timestamp_seconds_header_over_seconds_is_an_offset() -> None:
    text = "Timestamp (s),Power (mW)\n100.0,5000\n100.5,6000\n101.0,7000\n"
    m = load(text.encode(), "power.csv")[0].runs[0]["metrics"]
    assert m["duration_s"] == pytest.approx(1.0) and m["avg_power_w"] == pytest.approx(6.0)


def test_a_time_column_mixing_seconds_and_dates_is_refused() -> None:
    text = "Timestamp (s),Power (mW)\n2025-05-16 01:12:05.1,5000\n0.5,6000\n1.0,7000\n"
    assert "not a number" in _refusal(text.encode(), "power.csv")


# 7. a one-line capture stating two figures after a dash -----------------------------------------------------------

def test_a_capture_line_of_two_figures_after_a_dash() -> None:
    runs, fmt, _ = _load(YOLO)
    assert fmt == "text-figures" and len(runs) == 1
    m = runs[0]["metrics"]
    assert m["latency_avg_ms"] == pytest.approx(163.9)  # 'Average time: 0.1639s' per frame, not the run's window
    assert m["throughput_sps"] == 6.10  # 'FPS: 6.10'
    assert "duration_s" not in m


def test_one_figure_after_a_dash_is_no_run() -> None:
    text = "YOLO camera verification started\nStrategy cuda — FPS: 6.10 (over 30 frames)\n"
    with pytest.raises(ResultFileError):
        load(text.encode(), "capture.txt")
    # an epoch's mean time is a part of the run (never a latency, nor the whole run's window)
    assert _key("avg_epoch_time_s") is None and _key("total_time_s") == "duration_s"
