"""Issue 39, held-out sets 103 to 106: files read wrong or refused unaided, each a fixture after it was counted
(tests/fixtures/formats/heldout103_106, SOURCES.md), with what it had been read as.
"""

from __future__ import annotations

import csv
import json
import re
from functools import partial
from pathlib import Path

import pytest

from joulebench.errors import ResultFileError
from tests.helpers import unaided

HELD = Path(__file__).parent / "fixtures" / "formats" / "heldout103_106"

imp = partial(unaided, HELD)


def test_thousands_set_apart_by_a_space_are_one_number() -> None:
    f = imp("aidaptiv-README.md")  # had been refused: '2 486' is not a number
    assert len(f.runs) == 24  # 7 GPUs x 4 columns, less the 4 '—' cells
    first = f.runs[0]
    assert first["device"]["name"] == "RTX 5090" and first["metrics"]["tokens_per_s"] == 2486.0
    assert first["config"]["mode"] == "train"  # 'Fine-Tuning Performance Summary'
    last = f.runs[-1]
    assert last["metrics"]["tokens_per_s"] == 718.0 and "70B (2×)" in last["config"]["tag"]


def test_examples_per_second_is_the_runs_throughput() -> None:
    doc = json.loads((HELD / "benchmark_training_results.json").read_text())
    f = imp("benchmark_training_results.json")
    records = doc if isinstance(doc, list) else next(v for v in doc.values() if isinstance(v, list))
    assert len(f.runs) == len(records) == 12
    assert [r["metrics"]["throughput_sps"] for r in f.runs] == pytest.approx(
        [rec["examples_per_second"] for rec in records])


def test_a_training_table_and_an_inference_table_of_the_same_setups_stay_apart() -> None:
    f = imp("Result_Zenith_v0.3.0_RealWorld_Benchmark.md")  # had been refused ('65.06 ms' under a per-token name)
    assert [r["config"]["mode"] for r in f.runs] == ["train", "train", "infer", "infer"]
    train, _, infer, _ = f.runs
    assert train["metrics"]["duration_s"] == 20.97 and "tokens_per_s" not in train["metrics"]
    assert infer["metrics"]["tpot_avg_ms"] == 65.06 and infer["metrics"]["tokens_per_s"] == 15.37
    assert "duration_s" not in infer["metrics"]
    assert {r["device"]["name"] for r in f.runs} == {"Tesla T4"}


def test_one_epochs_time_is_not_the_runs_duration() -> None:
    # had been: the last epoch's 44.0 s stored as the duration of a five-epoch run
    with pytest.raises(ResultFileError, match="epoch_time_sec left out: one epoch's time"):
        imp("wandb-summary.json")


def test_a_step_time_in_a_table_of_runs_is_each_runs_mean_step() -> None:
    data = b"model,batch_size,step_time_ms,samples_per_s\nresnet50,32,43.58,734.2\nvit_b_16,32,61.2,522.9\n"
    f = imp("runs.csv", data)
    assert [r["metrics"]["latency_avg_ms"] for r in f.runs] == [43.58, 61.2]
    assert not any("duration_s" in r["metrics"] for r in f.runs)


def test_a_leading_column_of_whole_numbers_tells_the_runs_apart() -> None:
    rows = [r for r in csv.DictReader((HELD / "benchmark_summary.csv").open()) if r["Time (s)"]]
    f = imp("benchmark_summary.csv")  # had been 5 runs of one configuration: the LoRA ranks pooled as repeats
    assert [r["config"]["tag"] for r in f.runs] == [f"R {r['R']}" for r in rows]


def test_a_running_average_beside_a_clock_is_the_last_steps() -> None:
    text = (HELD / "regular_ce_1060_run.txt").read_text()
    last = [m for m in re.finditer(r"step:(\d+)/1060, train_time:(\d+)ms, step_avg:([\d.]+)ms", text)][-1]
    (run,) = imp("regular_ce_1060_run.txt").runs  # had been 315.6 ms: the mean of the running means
    assert run["metrics"]["latency_avg_ms"] == pytest.approx(float(last.group(3)))
    assert run["metrics"]["latency_avg_ms"] == pytest.approx(int(last.group(2)) / int(last.group(1)), rel=1e-3)


def test_an_objects_average_of_its_records_figure_makes_them_one_runs_items() -> None:
    doc = json.loads((HELD / "hybrid2_results.json").read_text())
    (run,) = imp("hybrid2_results.json").runs  # had been 50 runs, tagged by each question's answer
    assert run["metrics"]["requests_completed"] == len(doc["results"]) == 50
    assert run["metrics"]["ttft_avg_ms"] == pytest.approx(doc["avg_ttft_seconds"] * 1e3, rel=1e-3)
    assert not run["config"].get("tag")  # a question's answer type is no setup of the run


def test_a_log_of_items_told_only_by_a_rising_timestamp_is_one_run() -> None:
    rows = list(csv.DictReader((HELD / "edge_results_ml_xgb.csv").open()))
    (run,) = imp("edge_results_ml_xgb.csv").runs  # had been 1020 runs
    latencies = [float(r["latency_ms"]) for r in rows]
    assert run["metrics"]["requests_completed"] == len(rows) == 1020
    assert run["metrics"]["e2e_latency_avg_ms"] == pytest.approx(sum(latencies) / len(latencies))
    assert not run["config"].get("tag")
    # a table of a few runs with a timestamp stays a table of runs
    few = "timestamp,latency_ms\n" + "".join(f"{1758113103 + i},{20 + i}\n" for i in range(6))
    assert len(imp("edge_results_ml_xgb.csv", few.encode()).runs) == 6


def test_records_their_writer_marked_void_are_left_out() -> None:
    records = [json.loads(line) for line in (HELD / "index.jsonl").read_text().splitlines() if line.strip()]
    f = imp("index.jsonl")
    void = [r for r in records if r.get("status", "").startswith(("invalid", "unreliable"))]
    assert len(void) == 5
    assert sum("left out: its status is" in w for w in f.warnings) == len(void)
    assert len(f.runs) <= len(records) - len(void)


def test_a_power_gadget_log_is_one_trace_whose_energy_is_its_own_counter() -> None:
    f = imp("intel_power_gadget_log.csv")  # had been read as 23 rows of a table of experiments
    rows = list(csv.reader((HELD / "intel_power_gadget_log.csv").read_text().split("\n\n")[0].splitlines()))
    counter = [float(r[6]) for r in rows[1:]]  # 'Cumulative Processor Energy_0(Joules)'
    elapsed = [float(r[2]) for r in rows[1:]]
    assert len(f.runs) == 1 and "standalone_power_trace" in f.runs[0]["flags"]
    m = f.runs[0]["metrics"]
    assert m["energy_method"] == "counter" and m["energy_j"] == pytest.approx(counter[-1] - counter[0])
    assert m["duration_s"] == pytest.approx(elapsed[-1] - elapsed[0])
    assert m["energy_sampled_j"] < m["energy_j"]  # the trapezoid over 9 samples, kept beside the counter
    domains = [t["domain"] for t in f.runs[0]["power_traces"]]
    assert domains[0] == "Processor Power_0" and not any("PL" in d for d in domains)  # limits are no draws


def test_abbreviated_step_and_throughput_headers_of_a_console_table() -> None:
    f = imp("summary_table.txt")  # had been refused: 'Step(ms)' neither a latency nor a duration, 's/s' no unit
    lines = (HELD / "summary_table.txt").read_text().splitlines()[2:]
    real = [line.split() for line in lines if not line.startswith("unknown")]
    assert len(f.runs) == len(real) == 20  # the two rows of zeros are no runs
    first = f.runs[0]
    assert first["metrics"]["latency_avg_ms"] == 136.70 and first["metrics"]["throughput_sps"] == 468.19
    assert first["config"]["gpu_count"] == 2 and first["config"]["model"] == "resnet50"
    assert "FSDP-Full+MP+AC (2GPU)" in first["config"]["tag"]


def test_seconds_per_second_is_samples_only_under_a_throughput_name() -> None:
    from joulebench import units
    assert units.header_unit("Thru(s/s)")[1] == units.UNITS["samples/s"]
    assert units.header_unit("Throughput (s/s)")[1] == units.UNITS["samples/s"]
    assert units.header_unit("Ratio (s/s)")[1] is None  # a time over a time is no rate of samples
