"""Issue 39, third held-out set: the tables, the wrapper and the log without header that were refused or read wrong
(files and attribution in tests/fixtures/formats/SOURCES.md; the refused one in tests/fixtures/general_table_refused/).
Each rule is checked against the file's own numbers, and each has its negative case: what it must not change.
"""

from __future__ import annotations

import csv
import hashlib
import json
from datetime import datetime
from pathlib import Path

import pytest

from importers import Hints, detect, load
from importers.base import Source
from importers.powerlogs.detect import read_power_log
from importers.table_fields import measure_field
from importers.table_labels import label_field
from importers.table_units import data_row
from joulebench import units
from joulebench.errors import ResultFileError
from tests.helpers import field_key as _key
from tests.helpers import refusal as _refusal

FIXTURES = Path(__file__).parent / "fixtures"

FORMATS = FIXTURES / "formats"
INTEL = FORMATS / "general_table" / "intel-llm-bench-results.jsonl"
AGG = FORMATS / "general_table" / "rl-tensorrt-jetson-orin-final_results_agg.csv"
PROMPT = FORMATS / "general_table" / "promptenergy-gsm8k_energy_experiment_results.csv"
WRAPPED = FORMATS / "llama_bench" / "insiderllm-miu-flashnext-llama-bench-default-rep1.json"
NOHEADER = FORMATS / "nvidia_smi" / "plato-nvidia-smi-noheader-gpu_log.csv"
HEADED = FORMATS / "nvidia_smi" / "fletcher-io-gtx1650_gpu_power.csv"
MATMUL = FIXTURES / "general_table_refused" / "jetson-orin-matmul-cublas_3mode_analysis.csv"


def _load(data: bytes, name: str) -> tuple[list[dict], str, tuple[str, ...]]:
    imported, fmt = load(data, name)
    return imported.runs, fmt, imported.warnings




def _label(header: str) -> str | None:
    field = label_field(header)
    return None if field is None else field.key


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


# 1. a unit written as a name's ending (pp_tok_s), pp / tg, failed rows, setups in a device column -----------------

@pytest.mark.parametrize("header", ["pp_tok_s", "tg_tok_s", "gen_tokens_s", "tg_t_s", "Tokens/Sec", "tokens/sec",
                                    "Tok/s", "decode_tok_per_sec", "eval_tokens_sec"])
def test_a_token_rate_written_as_the_names_ending_is_tokens_per_second(header: str) -> None:
    unit = units.header_unit(header)[1]
    assert unit is not None and unit.symbol == "tokens/s"


@pytest.mark.parametrize("header", ["t_s", "start_t_s", "stok_s", "time_s", "elapsed_s"])
def test_a_time_in_seconds_stays_a_time(header: str) -> None:
    unit = units.header_unit(header)[1]
    assert unit is not None and unit.kind == "time"


def test_pp_and_tg_are_the_prompt_and_the_decode_rates() -> None:
    assert _key("pp_tok_s") == "prompt_tokens_per_s"
    assert _key("tg_tok_s") == "decode_tokens_per_s"
    assert _key("throughput_tok_s") == "tokens_per_s"  # neither: the output rate
    assert _key("pp_ms") is None  # pp names the prompt's rate only; a time of it is no TTFT


def test_the_intel_jsonl_reads_pp_and_tg_and_leaves_the_failed_record_out() -> None:
    runs, fmt, warnings = _load(INTEL.read_bytes(), INTEL.name)
    records = [json.loads(line) for line in INTEL.read_text().splitlines() if line.strip()]
    ok = [r for r in records if r["status"] == "ok"]
    assert fmt == "general-table" and len(records) == 16 and len(runs) == len(ok) == 15
    for run, record in zip(runs, ok, strict=True):
        assert run["metrics"]["prompt_tokens_per_s"] == record["pp_tok_s"]
        assert run["metrics"]["decode_tokens_per_s"] == record["tg_tok_s"]
        assert run["config"]["quantization"] == record["quant"] and run["config"]["mode"] == "infer"
        assert run["device"] is None  # 'a770', 'igpu', 'cpu_offload' are setups: no device is guessed
        assert f"name {record['name']}" in run["config"]["tag"] and f"device {record['device']}" in run["config"]["tag"]
    first = runs[0]["metrics"]
    assert (first["prompt_tokens_per_s"], first["decode_tokens_per_s"]) == (796.444066, 46.890689)  # gemma-4-e4b, a770
    failed = next(w for w in warnings if "left out" in w and "status" in w)
    assert "record 7 (gemma-4-31b)" in failed and "'failed'" in failed and "failed to load model" in failed
    assert any("names setups, not devices" in w for w in warnings)
    assert len({r["config"]["tag"] for r in runs}) == 15  # no two setups read as repeats of one


def test_a_status_column_of_ok_rows_leaves_every_row_and_a_table_of_failures_is_refused() -> None:
    header = "model,status,decode_tps\n"
    runs, _, warnings = _load((header + "m1,ok,10\nm2,success,12\n").encode(), "t.csv")
    assert [r["metrics"]["decode_tokens_per_s"] for r in runs] == [10, 12]
    assert not any("left out" in w for w in warnings)
    refusal = _refusal((header + "m1,failed,\nm2,oom,\n").encode(), "t.csv")
    assert "every row's status says it failed" in refusal


def test_a_device_column_of_names_is_still_the_device_and_one_of_backends_only_is_not() -> None:
    runs, _, _ = _load(b"device,model,decode_tps\nRTX 4090,m,50\nRTX 3090,m,40\n", "t.csv")
    assert [r["device"]["name"] for r in runs] == ["RTX 4090", "RTX 3090"]
    runs, _, warnings = _load(b"device,model,decode_tps\ncuda,m,50\ncpu,m,4\n", "t.csv")
    assert all(r["device"] is None for r in runs)
    assert any("'cuda' in the device column is a backend" in w for w in warnings)


# 2. a power mode column is the setting (a label), never a power figure --------------------------------------------

def test_a_power_mode_name_with_watts_in_it_is_the_setting() -> None:
    assert _label("power_mode_name") == "power_mode"
    assert _label("nvpmodel") == "power_mode"
    assert _label("hardware_model") == "device"
    assert measure_field("power_mode_name", units.unit("W"))[0] is None  # cells '15W' are a setting's name
    assert _key("power_mode_w") is None


def test_a_power_mode_column_of_numbers_is_still_the_setting_beside_the_power() -> None:
    data = b'{"power_mode": 15, "model": "m", "power_w": 9.5, "duration_s": 10}\n' \
           b'{"power_mode": 25, "model": "m", "power_w": 14.0, "duration_s": 8}\n'
    runs, fmt, _ = _load(data, "t.jsonl")
    assert fmt == "general-table"
    assert [r["config"]["power_mode"] for r in runs] == ["15", "25"]
    assert [r["metrics"]["avg_power_w"] for r in runs] == [9.5, 14.0]
    assert [r["metrics"]["energy_j"] for r in runs] == [95.0, 112.0]


def test_the_matmul_table_is_refused_naming_what_it_read_and_the_power_without_unit() -> None:
    refusal = _refusal(MATMUL.read_bytes(), MATMUL.name)
    assert "is not a number" not in refusal  # 'MAXN_SUPER' is a label, never read as a figure
    assert "power_mode_name as power_mode" in refusal and "hardware_model as device" in refusal
    assert "elapsed_ms as duration_s" in refusal
    assert "avg_power_consumption names a power or an energy without a unit" in refusal
    assert "gflops" in refusal and "--mapping" in refusal


def test_a_duration_alone_without_a_unitless_power_is_still_read() -> None:
    runs, _, _ = _load(b"model,mode,train_time_s\nresnet50,train,3600\n", "t.csv")
    assert runs[0]["metrics"]["duration_s"] == 3600


# 3. an aggregated table: X_mean is X over the repeats, _std/_min/_max a spread, _count a count ---------------------

def test_the_aggregated_table_reads_the_means_and_never_the_spreads() -> None:
    runs, fmt, warnings = _load(AGG.read_bytes(), AGG.name)
    rows = _rows(AGG)
    assert fmt == "general-table" and len(runs) == len(rows) == 24
    for run, row in zip(runs, rows, strict=True):
        m = run["metrics"]
        assert m["latency_avg_ms"] == float(row["latency_mean_ms_mean"])
        assert m["latency_p95_ms"] == float(row["latency_p95_ms_mean"])
        assert m["avg_power_w"] == float(row["avg_power_w_mean"])
        assert run["config"]["batch_size"] == int(row["batch"])
        assert "throughput_sps" not in m and "tokens_per_s" not in m  # throughput_mean states no unit
    fp16, int8, torch = runs[0], runs[12], runs[18]
    assert (fp16["metrics"]["latency_avg_ms"], fp16["config"]["precision"]) == (0.3991861381694737, "fp16")
    assert int8["config"]["quantization"] == "INT8" and torch["config"]["engine"] == "PYTORCH"
    assert torch["metrics"]["latency_avg_ms"] == 0.6464228068301358  # the mean, not its std 0.0095
    assert all(r["config"]["model"] is None for r in runs)  # FP16 / PYTORCH are no models
    assert any("latency_mean_ms_mean read as latency_avg_ms" in w and "the mean its name ends in" in w
               for w in warnings)


@pytest.mark.parametrize(("header", "why"), [("latency_mean_ms_std", "std over repeats"),
                                             ("avg_power_w_max", "max over repeats"),
                                             ("avg_power_w_count", "a count of repeats"),
                                             ("latency_std_ms_mean", "spread")])
def test_a_spread_or_a_count_over_repeats_is_not_read(header: str, why: str) -> None:
    field, _, said = measure_field(header)
    assert field is None and why in said


def test_a_name_with_its_unit_last_is_not_an_aggregate() -> None:
    assert _key("power_mean_w") == "avg_power_w"
    assert _key("latency_max_ms") == "latency_max_ms"
    assert _key("throughput_mean") is None  # no unit: not guessed


# 4. Tokens/Sec and Tokens Generated --------------------------------------------------------------------------------

def test_the_prompt_strategy_table_reads_tokens_per_second_and_the_tokens_generated() -> None:
    runs, fmt, _ = _load(PROMPT.read_bytes(), PROMPT.name)
    rows = _rows(PROMPT)
    assert fmt == "general-table" and len(runs) == len(rows) == 3
    for run, row in zip(runs, rows, strict=True):
        m = run["metrics"]
        assert m["tokens_per_s"] == float(row["Tokens/Sec"])
        assert m["output_tokens"] == int(row["Tokens Generated"])
        assert m["energy_j"] == pytest.approx(float(row["Total Energy (kWh)"]) * 3.6e6)
        assert m["j_per_token"] == pytest.approx(m["energy_j"] / m["output_tokens"])
        assert run["config"]["tag"] == f"Strategy {row['Strategy']}"
    assert runs[0]["metrics"]["tokens_per_s"] == 7.45 and runs[0]["metrics"]["output_tokens"] == 2805


def test_a_requested_or_mean_count_of_tokens_is_not_the_tokens_generated() -> None:
    assert _label("max_new_tokens") == "output_tokens_requested"
    assert _key("avg_generated_tokens") == "output_tokens_mean"  # a mean per request, not the run's count
    assert _key("generated_tokens_per_s") == "tokens_per_s"
    assert _key("completion_tokens") == "output_tokens"
    assert _key("prompt_tokens") is None  # a label (the prompt's length), not a figure


def test_short_text_columns_that_tell_rows_apart_are_kept_in_the_tag_and_no_others() -> None:
    long_text = "x" * 80
    data = (b"model,model_short,strategy,output,when,decode_tps\n"
            + f"llama-3-8b,l8,a,{long_text}1,2026-01-01 10:00,10\n".encode()
            + f"llama-3-8b,l8,b,{long_text}2,2026-01-01 11:00,11\n".encode()
            + f"qwen-7b,q7,a,{long_text}3,2026-01-01 12:00,12\n".encode())
    runs, _, _ = _load(data, "t.csv")
    # model_short is told by the model, the output is long text, 'when' a date: none of them is a setup
    assert [r["config"]["tag"] for r in runs] == ["strategy a", "strategy b", "strategy a"]
    runs, _, _ = _load(b"model,tag,strategy,decode_tps\nm,t1,a,10\nm,t1,b,11\n", "t.csv")
    assert [r["config"]["tag"] for r in runs] == ["t1", "t1"]  # a table's own tag column is its tag


# 5. a wrapper object around one list of records is read by those records' reader ----------------------------------

def test_the_llama_bench_rows_inside_a_wrapper_are_read_by_the_llama_bench_reader() -> None:
    data = WRAPPED.read_bytes()
    imported, fmt = load(data, WRAPPED.name)
    rows = json.loads(data)["rows"]
    assert fmt == "llama-bench" and len(imported.runs) == len(rows) == 4
    assert imported.content_sha256 == hashlib.sha256(data).hexdigest()  # the file's hash, not the list's
    for run, row in zip(imported.runs, rows, strict=True):
        assert run["device"]["name"] == row["gpu_info"] == "NVIDIA GeForce RTX 3090"
        key = "prompt_tokens_per_s" if row["n_gen"] == 0 else "tokens_per_s"
        assert run["metrics"][key] == row["avg_ts"]
        assert run["config"]["model"] == "Qwen3.8-Flash-Next-UD-IQ3_XXS"  # the shard's number is no model name
    assert imported.runs[0]["metrics"]["prompt_tokens_per_s"] == 158.622129
    assert imported.runs[1]["metrics"]["tokens_per_s"] == 16.676864
    assert any("under 'rows' of a wrapper object" in w and "cmd, stderr_tail" in w for w in imported.warnings)


def _reader(data: bytes) -> str:
    try:
        return detect(Source.single(data, "w.json")).NAME
    except ResultFileError:
        return "refused"


def test_a_wrapper_is_unwrapped_once_and_only_around_one_list() -> None:
    rows = json.loads(WRAPPED.read_bytes())["rows"]
    assert _reader(json.dumps(rows).encode()) == "llama-bench"
    assert _reader(json.dumps({"runs": [{"rows": rows}]}).encode()) != "llama-bench"  # one level only
    assert _reader(json.dumps({"rows": rows, "results": rows}).encode()) != "llama-bench"  # which list: not said
    other = json.dumps({"cmd": ["x"], "rows": [{"model": "m", "decode_tps": 12.5}]}).encode()
    assert _reader(other) == "general-table"  # records no tool reads: the general reader, as before


# 6. a log without header row: columns told by their cells --------------------------------------------------------

def test_the_noheader_nvidia_smi_log_is_one_power_trace() -> None:
    runs, fmt, warnings = _load(NOHEADER.read_bytes(), NOHEADER.name)
    lines = [line.split(", ") for line in NOHEADER.read_text().splitlines() if line.strip()]
    t = [datetime.strptime(c[0], "%Y/%m/%d %H:%M:%S.%f").timestamp() for c in lines]
    p = [float(c[6].removesuffix(" W")) for c in lines]
    trapezoid = sum((t[i + 1] - t[i]) * (p[i] + p[i + 1]) / 2 for i in range(len(t) - 1))
    assert fmt == "nvidia-smi" and len(runs) == 1 and len(lines) == 1923
    trace = runs[0]["power_traces"][0]
    assert len(trace["t_s"]) == 1923 and trace["power_w"][:3] == [11.64, 11.36, 11.51]
    assert runs[0]["metrics"]["energy_j"] == pytest.approx(trapezoid, rel=1e-9)
    assert runs[0]["metrics"]["duration_s"] == pytest.approx(t[-1] - t[0])
    assert runs[0]["device"] is None  # no name column: the GPU is not stated
    assert "mem_used_device_mb" not in runs[0]["metrics"]  # two MiB columns: used or free cannot be told
    assert any("no header row" in w for w in warnings)
    assert len(read_power_log(NOHEADER.read_bytes()).traces[0].t_s) == 1923  # --power-log and attach read it too


def test_a_headed_log_is_read_by_its_header_and_the_same_log_without_it_by_its_cells() -> None:
    data = HEADED.read_bytes()
    headed, _ = load(data, HEADED.name)
    bare, fmt = load(data.split(b"\n", 1)[1], "noheader.csv")
    assert fmt == "nvidia-smi"
    assert bare.runs[0]["device"]["name"] == headed.runs[0]["device"]["name"] == "NVIDIA GeForce GTX 1650"
    assert bare.runs[0]["metrics"]["energy_j"] == headed.runs[0]["metrics"]["energy_j"]
    assert "mem_used_device_mb" in headed.runs[0]["metrics"] and not any("no header" in w for w in headed.warnings)


def test_a_table_whose_first_row_is_data_without_power_is_refused_saying_so() -> None:
    refusal = _refusal(b"2026/04/25 16:06:06.780, 0 %, 2 MiB, 27\n2026/04/25 16:06:11.788, 5 %, 2 MiB, 28\n",
                       "util.csv")
    assert "the first row is data, not a header" in refusal


def test_a_header_is_never_taken_for_data() -> None:
    assert not data_row(["timestamp", "power.draw [W]", "memory.used [MiB]"])
    assert not data_row(["model", "batch", "latency_ms"])
    assert not data_row(["1", "2", "3"])  # numbered columns: no unit, no time
    assert data_row(["2026/04/25 16:06:06.780", " 11.64 W"])
    runs, fmt, _ = _load(b"Timestamp (s),Power (W)\n0,10\n1,12\n2,11\n", "p.csv")
    assert fmt == "power-table" and len(runs) == 1


def test_hints_still_name_the_device_of_a_noheader_log() -> None:
    imported, _ = load(NOHEADER.read_bytes(), NOHEADER.name, hints=Hints(device="RTX 4000 Ada", mode="train"))
    assert imported.runs[0]["device"]["name"] == "RTX 4000 Ada"
