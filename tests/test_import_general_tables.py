"""Issue 39: the everyday shapes people upload, read by the general table reader and the log readers beneath
the tool readers: headers carrying units (any language), long tables pivoted by metric/value/unit, JSON Lines
and JSON records flattened with their nested settings, two-column power logs, an `ollama run --verbose`
capture with the statistics after the answer, CodeCarbon's multi-GPU `gpu_model`.

The small tables below are written for these tests in the shapes the issue quotes (its headers verbatim); the
Ollama capture is a real file (tests/fixtures/formats/SOURCES.md). A device is never guessed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from importers import Hints, load
from importers.codecarbon import gpu_models
from joulebench.errors import ResultFileError

FORMATS = Path(__file__).parent / "fixtures" / "formats"
OLLAMA = FORMATS / "ollama" / "llm-benchmark-macmini-deepseek-r1-1.5b-verbose-ansi-FIRSTPART-2answers.log"
LIGHTSPEC = FORMATS / "codecarbon" / "lightspec-a100sxm4_emissions.csv"


def _load(text: str, name: str, hints: Hints | None = None) -> tuple[list[dict], str, tuple[str, ...]]:
    imported, fmt = load(text.encode(), name, hints=hints)
    return imported.runs, fmt, imported.warnings


def test_headers_with_units_are_converted_and_the_device_is_asked_for() -> None:
    runs, fmt, warnings = _load("model,prefill_gpu_median_ms,decode_tps,Total Energy (Wh),Energy per Token (J/token),"
                                "Energy per Second (W)\nllama3.2-1b,35.1,25.3,0.0123,0.35,8.9\n", "jetson.csv")
    m = runs[0]["metrics"]
    assert fmt == "general-table" and runs[0]["device"] is None  # no device column: asked for, never guessed
    assert m["energy_j"] == pytest.approx(0.0123 * 3600)  # Wh -> J
    assert m["decode_tokens_per_s"] == 25.3 and m["j_per_token"] == 0.35 and m["avg_power_w"] == 8.9
    assert "ttft_p50_ms" not in m  # a prefill time is not a time to first token
    assert any("not stated in the file: device" in w for w in warnings)
    assert any("prefill_gpu_median_ms" in w and "prefill time" in w for w in warnings)


def test_non_english_headers_and_units_in_cells() -> None:
    runs, _, _ = _load("Modelo;Dispositivo;Energía (kJ);Potencia;Tiempo (s);Rendimiento (tokens/s)\n"
                       "mistral-7b;Jetson AGX Orin;1,5;25 W;60;30,2\n", "resultados.csv")
    m = runs[0]["metrics"]
    assert runs[0]["device"] == {"name": "Jetson AGX Orin", "kind": "jetson"}
    assert m["energy_j"] == pytest.approx(1500.0) and m["avg_power_w"] == 25.0 and m["duration_s"] == 60.0
    assert m["tokens_per_s"] == pytest.approx(30.2)


def test_a_unit_that_does_not_fit_its_field_is_refused_naming_the_column() -> None:
    with pytest.raises(ResultFileError) as e:
        _load("model,gpu,Energy per Token (W)\nx,RTX 4090,3\n", "bad.csv")
    message = e.value.format_message()
    assert message.startswith("bad.csv: line 1: Energy per Token (W):") and "J/token" in message
    assert "correct its unit" in message


def test_a_value_out_of_the_schema_range_is_refused_naming_file_line_and_column() -> None:
    with pytest.raises(ResultFileError) as e:
        _load("model,gpu,TTFT median (h),decode_tps\nx,RTX 4090,25,12\n", "big.csv")  # 25 h > a day
    message = e.value.format_message()
    assert "big.csv: line 2: TTFT median (h)" in message and "outside its range" in message


def test_a_long_table_is_pivoted_into_one_run_per_model_gpu_and_run() -> None:
    text = ("Type,Model,GPU,Run,Metric,Value,Unit\n"
            "inference,llama-3-8b,RTX 4090,1,Total Energy,120.5,J\n"
            "inference,llama-3-8b,RTX 4090,1,Throughput,45.2,tokens/s\n"
            "inference,llama-3-8b,RTX 4090,1,TTFT median,210,ms\n"
            "inference,llama-3-8b,RTX 4090,2,Total Energy,0.0325,Wh\n"
            "inference,llama-3-8b,RTX 4090,2,Throughput,46.0,tokens/s\n"
            "inference,llama-3-8b,RTX 4090,2,TTFT median,0.2,s\n")
    runs, fmt, warnings = _load(text, "long.csv")
    assert fmt == "general-table" and len(runs) == 2
    assert [r["metrics"]["energy_j"] for r in runs] == pytest.approx([120.5, 117.0])  # 0.0325 Wh = 117 J
    assert [r["metrics"]["ttft_p50_ms"] for r in runs] == pytest.approx([210.0, 200.0])
    assert all(r["device"]["name"] == "RTX 4090" and r["config"]["mode"] == "infer" for r in runs)
    assert runs[0]["notes"].endswith("run 1") and any("pivoted: 2 run(s)" in w for w in warnings)


def test_a_long_table_without_a_unit_column_reads_units_in_the_metric_names() -> None:
    runs, _, _ = _load("Type,Model,GPU,Run,Metric,Value\ninference,phi3,Orin Nano,1,energy_j,30.5\n"
                       "inference,phi3,Orin Nano,1,decode_tps,12.1\ninference,phi3,Orin Nano,1,power_mw,5120\n",
                       "long2.csv")
    m = runs[0]["metrics"]
    assert m["energy_j"] == 30.5 and m["decode_tokens_per_s"] == 12.1 and m["avg_power_w"] == pytest.approx(5.12)


def test_the_same_metric_twice_for_one_run_is_refused() -> None:
    with pytest.raises(ResultFileError, match=r"long\.csv: line 3: Metric: 'energy_j' given twice"):
        _load("Model,GPU,Metric,Value\nx,A100,energy_j,1\nx,A100,energy_j,2\n", "long.csv")


def test_json_lines_are_records_flattened_with_their_settings_never_a_csv() -> None:
    records = [{"schema_version": 2, "model": "qwen2.5:0.5b", "device": {"name": "Jetson Orin Nano 8GB"},
                "config": {"batch_size": bs, "precision": "fp16"},
                "metrics": {"ttft_ms": ttft, "decode_tps": tps, "energy_j": e}}
               for bs, ttft, tps, e in ((4, 35.2, 88.1, 12.5), (8, 40.1, 150.3, 20.1))]
    text = "\n".join(json.dumps(r) for r in records) + "\n"
    runs, fmt, _ = _load(text, "results.jsonl")
    assert fmt == "general-table" and len(runs) == 2
    assert [r["config"]["batch_size"] for r in runs] == [4, 8]
    assert [r["config"]["precision"] for r in runs] == ["fp16", "fp16"]
    assert runs[1]["metrics"]["ttft_avg_ms"] == 40.1 and runs[1]["metrics"]["decode_tokens_per_s"] == 150.3
    assert runs[0]["device"]["name"] == "Jetson Orin Nano 8GB"  # device.name: the record states it


def test_a_json_object_holding_a_list_of_records() -> None:
    doc = {"tool": "mybench", "results": [{"model": "resnet50", "gpu": "A100", "latency_p99_ms": 4.2, "qps": 900},
                                          {"model": "resnet50", "gpu": "A100", "latency_p99_ms": 4.9, "qps": 950}]}
    runs, fmt, _ = _load(json.dumps(doc), "bench.json")
    assert fmt == "general-table" and [r["metrics"]["throughput_sps"] for r in runs] == [900, 950]
    assert runs[0]["metrics"]["latency_p99_ms"] == 4.2


@pytest.mark.parametrize(("text", "energy_j"), [
    ("Timestamp (s),Power (mW)\n0.0,5000\n0.5,5000\n1.0,7000\n1.5,7000\n2.0,5000\n", 12.0),
    ("sec,mw\n0,4000\n1,4000\n2,6000\n", 9.0),
    ("time_ms,gpu_power_w\n0,100\n500,100\n1000,300\n", 150.0),
])
def test_a_time_column_with_power_is_a_standalone_power_trace(text: str, energy_j: float) -> None:
    runs, fmt, _ = _load(text, "power.csv")
    run = runs[0]
    assert fmt == "power-table" and "standalone_power_trace" in run["flags"]
    assert run["metrics"]["energy_j"] == pytest.approx(energy_j)  # trapezoid over the converted watts
    assert run["device"] is None and run["power_traces"][0]["power_w"][0] < 1000


def test_a_power_column_without_a_unit_is_refused_naming_it_and_read_with_unit() -> None:
    with pytest.raises(ResultFileError, match=r"power\.csv: power: the header states no unit.*--unit"):
        _load("time,power\n0,4000\n1,4200\n2,4100\n", "power.csv")
    runs, _, _ = _load("time,power\n0,4000\n1,4000\n2,4000\n", "power.csv", Hints(units=(("power", "mW"),)))
    assert runs[0]["metrics"]["avg_power_w"] == pytest.approx(4.0)


def test_an_ollama_capture_with_statistics_after_the_answer_and_spinner_codes() -> None:
    imported, fmt = load(OLLAMA.read_bytes(), OLLAMA.name)
    assert fmt == "ollama" and len(imported.runs) == 2
    first, second = (r["metrics"] for r in imported.runs)
    assert first["duration_s"] == pytest.approx(17.645952291)  # 'total duration:' after the spinner's codes
    assert first["decode_tokens_per_s"] == 104.06 and first["output_tokens"] == 1003
    assert first["prompt_tokens_per_s"] == 294.38 and second["decode_tokens_per_s"] == 137.94
    assert imported.runs[0]["config"]["model"] == "deepseek-r1:1.5b"  # 'model_name =    deepseek-r1:1.5b'


def test_an_ollama_capture_whose_statistics_come_after_a_long_answer_is_detected() -> None:
    answer = "The answer is long. " * 2000  # 40 KB of answer: the statistics lie past the first 16 KB
    text = ("\x1b[?25l⠙ ⠹\x1b[?25h" + answer + "\n\x1b[?25l\x1b[?25htotal duration:       5.2s\n"
            "load duration:        1.1s\nprompt eval count:    10 token(s)\nprompt eval duration: 50ms\n"
            "prompt eval rate:     200.00 tokens/s\neval count:           100 token(s)\neval duration:        4s\n"
            "eval rate:            25.00 tokens/s\n")
    runs, fmt, _ = _load(text, "capture.txt")
    assert fmt == "ollama" and runs[0]["metrics"]["decode_tokens_per_s"] == 25.0
    assert runs[0]["metrics"]["duration_s"] == 5.2


@pytest.mark.parametrize(("gpu_model", "count", "expected"), [
    ("2 x NVIDIA GeForce RTX 4090", None, [(2, "NVIDIA GeForce RTX 4090")]),
    ("NVIDIA GeForce RTX 3090, NVIDIA GeForce RTX 3090", None, [(2, "NVIDIA GeForce RTX 3090")]),
    ("1 x NVIDIA GeForce RTX 30901 x NVIDIA GeForce RTX 4090", 2,
     [(1, "NVIDIA GeForce RTX 3090"), (1, "NVIDIA GeForce RTX 4090")]),
    ("8 x NVIDIA H800", 2, [(8, "NVIDIA H800")]),
    ("4 x NVIDIA A10012 x Tesla T4", 16, [(4, "NVIDIA A100"), (12, "Tesla T4")]),
])
def test_codecarbon_gpu_model_lists_count_and_each_model(gpu_model: str, count: int | None,
                                                         expected: list[tuple[int, str]]) -> None:
    assert gpu_models(gpu_model, count) == expected


def test_a_codecarbon_row_of_two_gpus_is_stored_on_the_gpu_with_its_count_not_a_prefix() -> None:
    header, row = LIGHTSPEC.read_text().splitlines()[:2]
    cols = header.split(",")
    for gpu_model, gpu_count in (("2 x NVIDIA GeForce RTX 4090", "2"),
                                 ("NVIDIA GeForce RTX 3090, NVIDIA GeForce RTX 3090", "")):
        cells = row.split(",")
        cells[cols.index("gpu_model")] = f'"{gpu_model}"'
        cells[cols.index("gpu_count")] = gpu_count
        runs, fmt, _ = _load(header + "\n" + ",".join(cells) + "\n", "emissions.csv")
        assert fmt == "codecarbon"
        assert runs[0]["device"]["name"] == gpu_model.split(" x ")[-1].split(",")[0]
        assert runs[0]["config"]["gpu_count"] == 2


def test_json_lines_without_a_figure_are_described_as_records_not_as_a_table() -> None:
    text = '{"schema_version": 2, "name": "a", "count": 3}\n{"schema_version": 2, "name": "b", "count": 4}\n'
    with pytest.raises(ResultFileError) as e:
        _load(text, "r.jsonl")
    message = e.value.format_message()
    assert "JSON Lines records with keys schema_version, name, count" in message and "columns {" not in message
