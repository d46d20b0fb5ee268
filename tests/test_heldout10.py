"""Issue 39, tenth held-out set (files and attribution in tests/fixtures/formats/SOURCES.md): a power log of eight GPUs
written one row per GPU and time, a RAPL log with a decimal comma and counter wraps, a trtllm-bench report pasted
under another client's summary, a status column of errors, a device column known by its cells, tables in code
fences with llama.cpp's 'PP/s' and 'TG/s', the device named on an environment line, Portuguese figures in text, a
latency in 'ns' below what any inference takes, and a rate's unit written first ('fps_gpu'). Each rule on the
file's own numbers, with its negative case."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from importers import load
from ingest.plausibility import findings
from tests.helpers import load_fixture as _load

FORMATS = Path(__file__).parent / "fixtures" / "formats"
EIGHT_GPUS = FORMATS / "nvidia_smi" / "nanogpt-8gpu-nvidia-smi-loop-gpu_index-long.csv"
RAPL = FORMATS / "power_logs_rapl" / "energytracker-rapl-decimal-comma-first-1200.csv"
PASTED = FORMATS / "trtllm_bench" / "nvfp4-howto-client-summary-above-trtllm-bench-report.md"
ERRORS = FORMATS / "general_table" / "chitti-ollama-jetson-status-errors.csv"
COMPUTE_NAME = FORMATS / "general_table" / "tenstorrent-paper-gpt2-scores-compute-name.md"
FENCED = FORMATS / "general_table" / "48gb4090-ollama-comparison-fenced-tables.md"
ENV_BLOCK = FORMATS / "general_table" / "gpu-dl-benchmark-rtx3090-env-block.md"
PORTUGUESE = FORMATS / "text_figures" / "clocher-performance-pt.md"
LATENCY_NS = FORMATS / "general_table" / "tfg-mlperf-bert-offline-agx-latency-ns.txt"
VARIANTS = FORMATS / "general_table" / "yolo-m-jetson-variants-fps.json"


def _trapezoid_j(t: list[float], p: list[float]) -> float:
    return sum((t[i + 1] - t[i]) * (p[i] + p[i + 1]) / 2 for i in range(len(t) - 1))


def test_eight_gpus_one_row_each_per_time_give_a_trace_each_and_their_energies_add() -> None:
    from datetime import datetime

    runs, fmt, warnings = _load(EIGHT_GPUS)
    assert fmt == "power-table" and len(runs) == 1
    run = runs[0]
    rows = list(csv.DictReader(io.StringIO(EIGHT_GPUS.read_text())))
    by_gpu: dict[str, tuple[list[float], list[float]]] = {}
    for r in rows:
        t = datetime.fromisoformat(r["timestamp"].replace("Z", "+00:00")).timestamp()
        by_gpu.setdefault(r["gpu_index"], ([], []))[0].append(t)
        by_gpu[r["gpu_index"]][1].append(float(r["power_W"]))
    expected = sum(_trapezoid_j(t, p) for t, p in by_gpu.values())  # about 1.24 MJ: 8 GPUs near 590 W for 266 s
    assert len(by_gpu) == 8 and run["config"]["gpu_count"] == 8
    assert run["metrics"]["energy_j"] == pytest.approx(expected, rel=1e-6)
    assert run["metrics"]["energy_j"] == pytest.approx(1.2424e6, rel=1e-3)
    assert len(run["power_traces"]) == 8
    assert any("8 devices told apart by 'gpu_index'" in w for w in warnings)
    # a column named an id that is unique per row tells no devices apart: one trace, as before
    lines = EIGHT_GPUS.read_text().splitlines()
    alone = "\n".join(["sample_id,timestamp,power_W"] + [f"{n},{line.split(',')[0]},{line.split(',')[-1]}"
                                                          for n, line in enumerate(lines[1:9:1])]) + "\n"
    one = load(alone.encode(), "log.csv")[0].runs[0]
    assert len(one["power_traces"]) == 1 and one["config"].get("gpu_count") is None


def test_a_decimal_comma_in_a_comma_separated_log_and_a_wrapped_counters_negative_samples() -> None:
    runs, fmt, warnings = _load(RAPL)
    assert fmt == "power-table"
    rows = list(csv.reader(io.StringIO(RAPL.read_text())))[1:]
    watts = [float(f"{r[1]}.{r[2]}") for r in rows]
    kept = [w for w in watts if w >= 0]
    assert len(watts) == 1200 and len(kept) == 1189  # 11 samples near -12,970 W: RAPL's counter wrapped
    run = runs[0]
    assert run["metrics"]["duration_s"] == 6050.0
    assert run["metrics"]["energy_j"] == pytest.approx(765_640.6, rel=1e-6)  # the trapezoid over the 1,189 kept
    assert 30.0 <= min(run["power_traces"][0]["power_w"]) and max(run["power_traces"][0]["power_w"]) < 200
    assert any("decimal comma" in w for w in warnings) and any("11 negative sample(s) left out" in w
                                                                 for w in warnings)
    # a comma that splits two whole numbers where the header has a column for each is no decimal comma
    two = "time_s,gpu_power_w,cpu_power_w\n0,30,3\n1,31,4\n2,32,5\n"
    traces = load(two.encode(), "p.csv")[0].runs[0]["power_traces"]
    assert sorted(tr["power_w"][0] for tr in traces) == [3.0, 30.0]


def test_a_trtllm_bench_report_is_read_from_its_first_section_not_the_summary_pasted_above() -> None:
    runs, fmt, warnings = _load(PASTED)
    assert fmt == "trtllm-bench" and len(runs) == 1
    m = runs[0]["metrics"]
    # the report's own figures; the client's summary above it says 1431.0198 tokens/s and 7.2641 req/s
    assert m["tokens_per_s"] == 1216.0159 and m["requests_per_s"] == 4.7501
    assert m["duration_s"] == pytest.approx(3.3683769) and m["e2e_latency_p50_ms"] == 1683.3179
    assert not runs[0].get("flags")
    assert any("lines 1-69: figures above the report's first section" in w for w in warnings)
    # the report alone (from its first banner) reads the same figures, with nothing said of lines above it
    text = PASTED.read_text()
    alone = text[text.index("=====", text.index("Per GPU Output Throughput (tps/gpu):              1216")):]
    imported = load(alone.encode(), "report.txt")[0]
    assert imported.runs[0]["metrics"]["tokens_per_s"] == 1216.0159
    assert not any("above the report" in w for w in imported.warnings)


def test_rows_whose_status_names_an_error_are_left_out() -> None:
    runs, fmt, warnings = _load(ERRORS)
    assert fmt == "general-table"
    assert [(r["config"]["model"], r["metrics"].get("latency_avg_ms")) for r in runs] == [("moondream", 25815.7)]
    said = [w for w in warnings if "left out: its Status is" in w]
    assert len(said) == 9 and any("'Error 404'" in w for w in said) and any("HTTPConnectionPool" in w for w in said)
    kept = "model,latency_ms,status\na,10,Success\nb,12,no error\nc,0,Error: CUDA out of memory\n"
    assert [r["config"]["model"] for r in load(kept.encode(), "t.csv")[0].runs] == ["a", "b"]


def test_a_column_whose_cells_name_devices_is_the_device_column() -> None:
    runs, _, warnings = _load(COMPUTE_NAME)
    devices = [r["device"]["name"] for r in runs]
    assert devices[3:7] == ["Nvidia T4", "Nvidia L4", "Nvidia A100", "Nvidia A6000"]
    assert devices[0] == "Apple M3 Max CPU (14 core)" and runs[5]["metrics"]["tokens_per_s"] == 78.30
    assert any("Compute Name read as the device" in w for w in warnings)
    # prose that mentions a GPU is no device column
    notes = "model,latency_ms,notes\na,10,ran on the A100 node at night while others queued\nb,12,quiet box\n"
    assert {r["device"] for r in load(notes.encode(), "t.csv")[0].runs} == {None}


def test_tables_in_code_fences_with_llama_cpp_rates_and_a_model_tag_that_is_no_figure() -> None:
    runs, fmt, warnings = _load(FENCED)
    assert fmt == "general-table" and len(runs) == 50
    first = runs[0]
    assert first["device"]["name"] == "A6000-24GB" and first["config"]["model"] == "mistral-small3.2:latest"
    assert first["metrics"]["prompt_tokens_per_s"] == 1169.37 and first["metrics"]["decode_tokens_per_s"] == 35.88
    assert first["metrics"]["output_tokens"] == 1028
    assert {r["device"]["name"] for r in runs} == {"A6000-24GB", "A6000-48GB"}
    assert any("TTFT (no unit in its name or cells)" in w for w in warnings)  # seconds, never guessed
    # 'Model: qwen2.5-coder:32b' is a tag; a second named figure outside the tables still leaves them to the text
    text = ("Model: qwen2.5-coder:32b\nTotal duration: 5 s\nTotal energy: 300 J\n\n"
            "| GPU | TG/s |\n|---|---|\n| L4 | 9 |\n")
    assert load(text.encode(), "r.md")[1] == "text-figures"


def test_the_device_named_on_an_environment_line_above_a_table() -> None:
    runs, _, warnings = _load(ENV_BLOCK)
    assert {r["device"]["name"] for r in runs} == {"NVIDIA GeForce RTX 3090"}
    assert runs[0]["metrics"]["throughput_sps"] == 1503.56 and runs[0]["config"]["batch_size"] == 32
    assert any("the device named above them" in w for w in warnings)
    # two different devices named, neither above the table: none is taken
    text = ("| model | latency (ms) |\n|---|---|\n| a | 10 |\n\nGPU: NVIDIA A100\n\nGPU: NVIDIA L4\n")
    assert load(text.encode(), "r.md")[0].runs[0]["device"] is None


def test_portuguese_figures_in_text_and_a_tps_that_is_not_per_request() -> None:
    runs, fmt, _ = _load(PORTUGUESE)
    assert fmt == "text-figures"
    summary = runs[0]["metrics"]
    assert summary["tokens_per_s"] == 25.594 and summary["output_tokens"] == 6400
    assert summary["duration_s"] == 250.061  # 6400 / 250.061 = 25.594: the rate is output tokens / wall time
    per_request = "model,TPS/req,Throughput (tok/s)\na,20,80\n"
    assert load(per_request.encode(), "t.csv")[0].runs[0]["metrics"]["tokens_per_s"] == 80


def test_a_latency_below_a_microsecond_is_flagged_as_a_wrong_unit() -> None:
    runs, _, _ = _load(LATENCY_NS)
    batch_1 = next(r for r in runs if r["config"]["batch_size"] == 1)
    assert len(runs) == 25 and batch_1["metrics"]["throughput_sps"] == 185.116
    found = findings({"runs": runs})
    assert {f.field for f in found} == {"latency_avg_ms"} and len(found) == 25  # '712' read in ns: 0.000712 ms
    assert "below the 0.001 ms" in found[0].flag
    fine = [{"run_id": "r", "config": {}, "metrics": {"latency_avg_ms": 0.05, "ttft_p50_ms": 0.0}}]
    assert findings({"runs": fine}) == []


def test_a_rate_whose_unit_comes_first_is_read_per_variant() -> None:
    runs, _, _ = _load(VARIANTS)
    assert [(r["config"]["tag"], round(r["metrics"]["throughput_sps"], 2)) for r in runs] == [
        ("base_model", 15.06), ("fp32", 17.4), ("fp16", 46.36), ("int8", 17.28)]
    assert all("energy_j" not in r["metrics"] for r in runs)  # 'total_energy' states no unit (kWh): not guessed


KOREAN = FORMATS / "general_table" / "llm-benchmark-korean-report-one-table-per-quantity.md"


def test_one_table_per_quantity_over_the_same_rows_is_one_run_per_row() -> None:
    runs, fmt, warnings = _load(KOREAN)
    assert fmt == "general-table" and len(runs) == 7  # 8 rows, the 'N/A ... nan' one holds no figure
    first = runs[0]["metrics"]
    # '### 2.1 TTFT' above 'Mean (s)': the TTFT's mean; '### 2.2 총 응답 시간' (total response time): the latency
    assert (first["ttft_avg_ms"], first["ttft_p50_ms"], first["ttft_p99_ms"]) == (91.0, 84.0, 156.0)
    assert (first["latency_avg_ms"], first["latency_p99_ms"]) == (5061.0, 14454.0)
    assert "tokens_per_s" not in first  # 2.3 gives a rate's percentiles: a rate per request, not the run's
    assert any("TTFT Mean (s) read as ttft_avg_ms" in w for w in warnings)
    # two tables of the same figures under two headings are two setups, never joined row by row
    text = ("## A100\n| model | TTFT (ms) |\n|---|---|\n| m | 10 |\n\n## L4\n| model | TTFT (ms) |\n|---|---|\n"
            "| m | 30 |\n")
    two = load(text.encode(), "r.md")[0].runs
    assert [(r["device"]["name"], r["metrics"]["ttft_avg_ms"]) for r in two] == [("A100", 10.0), ("L4", 30.0)]


def test_a_model_given_by_its_file_is_named_by_the_files_stem() -> None:
    runs, _, _ = _load(FORMATS / "general_table" / "edgebench-yolov8n-onnxruntime-cpu-model-path.json")
    run = runs[0]
    assert run["config"]["model"] == "yolov8n" and run["config"]["engine"] == "onnxruntime"
    assert run["metrics"]["latency_p99_ms"] == pytest.approx(166.38222) and run["device"] is None  # 'cpu': where
    hub = '[{"model_path": "meta-llama/Llama-3.1-8B", "latency_ms": 5}]'  # a hub id is kept whole
    assert load(hub.encode(), "r.json")[0].runs[0]["config"]["model"] == "meta-llama/Llama-3.1-8B"
