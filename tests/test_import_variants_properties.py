"""Property tests for the parsers of issue 11, in the style of test_import_properties.py: random lines
and values in each new grammar never raise anything but ResultFileError (or PowerLogError from the
log parsers), and a refused file never changes the database. (Truncated and mutated copies of every
new fixture are covered by test_import_properties.py, which walks the whole fixtures folder.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from db import Store
from energy.rails import module_power
from importers import Hints, load
from importers.powerlogs.detect import read_power_log
from importers.powerlogs.log import PowerLogError
from joulebench.errors import ResultFileError
from tests.test_import_properties import folder_loads_or_refuses

FORMATS = Path(__file__).parent / "fixtures" / "formats"
HINTS = Hints(device="Test GPU", mode="infer")
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


def attempt(data: bytes, name: str, dirs: tuple[str, ...] = ()) -> str:
    try:
        imported, _ = load(data, name, hints=HINTS, dirs=dirs)
    except ResultFileError as e:
        assert e.format_message()
        return "refused"
    assert imported.runs
    return "converted"


NUMBERS = st.one_of(st.integers(-10, 10**7), st.floats(allow_nan=True, allow_infinity=True), st.none(),
                    st.text(max_size=6), st.booleans(), st.lists(st.integers(), max_size=3))


@SETTINGS
@given(values=st.dictionaries(st.sampled_from([
    "duration", "completed", "failed", "request_throughput", "output_throughput", "total_token_throughput",
    "input_throughput", "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "p99_tpot_ms",
    "mean_e2el_ms", "max_concurrency", "request_rate", "num_prompts", "max_num_seqs"]), NUMBERS, max_size=12),
    as_list=st.booleans())
def test_vllm_results_with_any_values(values: dict, as_list: bool) -> None:
    doc = {"backend": "vllm", "model_id": "m", "mean_ttft_ms": 1.0, **values}
    assert attempt(json.dumps([doc, doc] if as_list else doc).encode(), "vllm.json") in ("converted", "refused")


MLLOG = [
    ':::MLLOG {"namespace": "", "time_ms": 1000, "event_type": "INTERVAL_START", "key": "run_start", "value": null}',
    ':::MLLOG {"namespace": "", "time_ms": 9000, "event_type": "INTERVAL_END", "key": "run_stop", "value": null, '
    '"metadata": {"status": "success"}}',
    '0: :::MLLOG {"time_ms": 5000, "key": "tracked_stats", "value": {"throughput": 12.5}}',
    ':::MLLOG {"time_ms": 5000, "key": "tracked_stats", "value": {"throughput": "x"}}',
    ':::MLLOG {"time_ms": 1, "key": "submission_benchmark", "value": "bert"}',
    ':::MLLOG {"time_ms": "a", "key": "run_stop", "metadata": "success"}',
    ':::MLLOG {"key": "d_batch_size", "value": -3}',
    ':::MLLOG {truncated', "+ echo 'Beginning trial'", "", ':::MLLOG {"key": "power_reading", "value": 2000}',
]


@SETTINGS
@given(lines=st.lists(st.sampled_from(MLLOG), max_size=14))
def test_mlperf_training_logs_of_random_lines(lines: list[str]) -> None:
    assert attempt(("\n".join(lines) + "\n").encode(), "result_0.txt") in ("converted", "refused")


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(lines=st.lists(st.sampled_from(MLLOG[:4] + [
    ':::MLLOG {"time_ms": 2000, "key": "power_reading", "value": 2000}',
    ':::MLLOG {"time_ms": 9500, "key": "power_reading", "value": 2100}',
    ':::MLLOG {"time_ms": 500, "key": "power_reading", "value": -1}',
    ':::MLLOG {"time_ms": 1000, "key": "power_measurement_start"}', "garbage"]), max_size=10))
def test_mlperf_training_power_folders_of_random_lines(lines: list[str]) -> None:
    members = ("result.txt", "power/node_0.txt")
    outcomes = folder_loads_or_refuses(FORMATS / "mlperf_training" / "v4.0_smc-ac-power", members,
                                       ("\n".join(lines) + "\n").encode(), "mlperf-training")
    assert len(outcomes) == len(members)


DMON = ["#Entity   POWER       TOTEC       TMPTR", "ID        W           mJ          C",
        "GPU 0     61.256      1000  33",
        "GPU 1     N/A         2000        34", "GPU-I 3   0.5         1           2", "GPU 0     x           1   2",
        "GPU 0 LINK 3   1   2   3", "dmon was stopped due to receiving a signal", "# Entity SMACT", "GPU 0 1",
        "1777708107.135 GPU 0     62.0   1500   33", "1777708107.135 #Entity   POWER  TOTEC  TMPTR"]


@SETTINGS
@given(lines=st.lists(st.sampled_from(DMON), max_size=12))
def test_dcgmi_dmon_logs_of_random_lines(lines: list[str]) -> None:
    data = ("\n".join(["#Entity   POWER       TOTEC       TMPTR", *lines]) + "\n").encode()
    assert attempt(data, "dmon.log") in ("converted", "refused")
    try:
        read_power_log(data)
    except PowerLogError as e:
        assert e.where and e.reason


TEGRA = [
    "07-21-2025 16:33:42 RAM 1/2MB CPU [1%@729] EMC_FREQ 0% VDD_GPU_SOC 2798mW/2798mW VDD_CPU_CV 799mW/799mW "
    "VIN_SYS_5V0 3315mW/3315mW",
    "07-21-2025 16:33:42 RAM 1/2MB CPU [1%@729] EMC_FREQ 0% VDD_GPU_SOC 2798mW/2798mW/2798mW VDD_CPU_CV 799mW/799mW "
    "VIN_SYS_5V0 3315mW/3315mW",
    "RAM 936/3964MB CPU [10%@102] EMC_FREQ 0%@204 POM_5V_IN 920/920 POM_5V_GPU 0/0 POM_5V_CPU 119/119",
    "RAM 1/2MB CPU [1%@1] EMC_FREQ 0% GPU 0/0 CPU 210/216 SOC 860/864 CV 0/0 VDDRQ 140/144 SYS5V 1880/1889",
    "Tue Jan 26 18:22:31 UTC 2021", "nvidia@linux:~$ sudo tegrastats", "13-45-2025 99:99:99 RAM 1/2MB CPU [1%] x",
    "RAM 1/2MB CPU [] VDD_IN 5/5",
]


@SETTINGS
@given(lines=st.lists(st.sampled_from(TEGRA), max_size=10),
       device=st.sampled_from([None, "Jetson AGX Orin", "Jetson Nano"]))
def test_tegrastats_of_every_generation_mixed(lines: list[str], device: str | None) -> None:
    data = ("\n".join(lines) + "\n").encode()
    try:
        log = read_power_log(data, None, device)
    except PowerLogError as e:
        assert e.reason
    else:
        assert set(log.totals) <= {t.domain for t in log.traces}
        assert not ({"VDDQ_VDD2_1V8AO", "POM_5V_GPU"} & set(log.totals))


JETSON_CSV_HEADERS = ["time,GPU+SOC,CPU+CV,I/O (5V0),I/O (VDDQ)", "TIME,POM_5V_IN_CUR,POM_5V_IN_AVG,POM_5V_GPU_CUR",
                      "t_ms,power_soc_mw,power_cpu_gpu_cv_mw,power_in_mw", "timestamp,gpu_power_w,gpu_energy_kwh",
                      "System-Time,VDD_GPU_SOC-IN_POWER,VDD_CPU_CV-IN_POWER,VIN_SYS_5V0-IN_POWER"]
CELLS = st.one_of(st.integers(-5, 70000).map(str), st.sampled_from(["", "-", "N/A", "x", "12:00:01", "1.5e3",
                                                                    "2025-07-03T08:43:07.981514", "1648029257.7"]))


@SETTINGS
@given(header=st.sampled_from(JETSON_CSV_HEADERS), rows=st.lists(st.lists(CELLS, min_size=1, max_size=6), max_size=8),
       device=st.sampled_from([None, "Jetson AGX Orin", "Jetson Orin Nano"]))
def test_jetson_telemetry_csvs_of_random_cells(header: str, rows: list[list[str]], device: str | None) -> None:
    data = (header + "\n" + "\n".join(",".join(r) for r in rows) + "\n").encode()
    hints = Hints(device=device or "Test", mode="idle")
    try:
        load(data, "log.csv", hints=hints)
    except ResultFileError as e:
        assert e.format_message()


@SETTINGS
@given(names=st.lists(st.sampled_from(["VDD_IN", "POM_5V_IN", "VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0",
                                        "VDDQ_VDD2_1V8AO", "GPU", "CPU", "SOC", "CV", "VDDRQ", "SYS5V", "VIN",
                                        "CPU_Power_Inst", "System_Power_Inst", "x"]), max_size=7, unique=True),
       device=st.sampled_from([None, "Jetson AGX Orin", "Jetson AGX Xavier", "Jetson Nano", "Jetson TX2", "RTX 4090"]))
def test_the_rail_rule_never_adds_a_rail_to_the_one_it_feeds(names: list[str], device: str | None) -> None:
    choice = module_power(names, device)
    assert set(choice.rails) <= set(names)
    if "VDD_IN" in choice.rails or "POM_5V_IN" in choice.rails or "VIN" in choice.rails:
        assert len(choice.rails) == 1 and not choice.summed
    assert "VDDQ_VDD2_1V8AO" not in choice.rails
    assert choice.ok or choice.missing_reason


RENDER = ["+ prefill:", "\t+ energy:", "\t\t+ total: 0.081729 (kWh)", "\t\t+ gpu: x (kWh)",
          "\t+ efficiency: 7 (tokens/kWh)",
          "\t+ throughput:", "\t\t+ throughput: 10.11 (tokens/s)", "\t\t\t+ too: deep", "+ decode:", "\t+ latency:",
          "\t\t+ count: 10", "\t\t+ mean: -0.13 (s)", "# decode:", "## latency:", "| metric | value | unit |",
          "| mean | 0.1 | s |", "| count | 3 | - |", "garbage"]


@SETTINGS
@given(lines=st.lists(st.sampled_from(RENDER), max_size=12))
def test_optimum_renderings_of_random_lines(lines: list[str]) -> None:
    for head in (["+ forward:", "\t+ latency:"], ["# forward:", "", "## latency:", "", "| metric | value | unit |"]):
        data = ("\n".join([*head, *lines]) + "\n").encode()
        assert attempt(data, "benchmark_report.txt") in ("converted", "refused")


@SETTINGS
@given(measures=st.lists(st.one_of(st.fixed_dictionaries({"unit": st.just("kWh"), "gpu": NUMBERS, "total": NUMBERS}),
                                   NUMBERS), max_size=6),
       phase=st.sampled_from(["prefill", "decode", "preprocess"]))
def test_ai_energy_score_measures_of_any_shape(measures: list, phase: str) -> None:
    doc = {phase: {"energy": {"unit": "kWh", "gpu": 0.1, "total": 0.1}, "measures": measures,
                   "efficiency": {"unit": "tokens/kWh", "value": 10}}}
    assert attempt(json.dumps(doc).encode(), "benchmark_report.json") in ("converted", "refused")


@SETTINGS
@given(limits=st.dictionaries(st.sampled_from(["300", "275", "250.5", "x"]),
                              st.fixed_dictionaries({"time": NUMBERS, "energy": NUMBERS}), min_size=1, max_size=4))
def test_perseus_power_limit_dumps_of_any_values(limits: dict) -> None:
    dirs = ("A100", "merak+bloom-3b+custom:0,10+dp1+pp4+tp1+mbs4+nmb128+ZeusGlobalPowerLimit")
    assert attempt(json.dumps(limits).encode(), "ZeusGlobalPowerLimit.json", dirs) in ("converted", "refused")


TABLE_HEADERS = ["model,duration_s,energy_total_j,avg_power_w", "model,training_time_s,cpu_energy_wh,gpu_energy_wh",
                 "tag,measure_seconds_actual,throughput_inf_s,energy_per_inf_j,avg_power_w",
                 "model_name,tokens_per_second_mean,power_draw_watts_mean", "RUN,PWR_IN_AVG,PWR_GPU_AVG"]


@SETTINGS
@given(header=st.sampled_from(TABLE_HEADERS), rows=st.lists(st.lists(CELLS, min_size=1, max_size=6), max_size=6))
def test_experiment_tables_of_random_cells(header: str, rows: list[list[str]]) -> None:
    data = (header + "\n" + "\n".join(",".join(r) for r in rows) + "\n").encode()
    assert attempt(data, "results.csv") in ("converted", "refused")


LAMBDA = [",ssd,bert_base_squad,resnet50,gnmt", "name_gpu,num_gpu,watt,price,resnet50,mystery",
          "name_gpu,SSD_AMP,resnet50_FP32,bert_base_squad_FP16"]


@SETTINGS
@given(header=st.sampled_from(LAMBDA), rows=st.lists(st.lists(CELLS, min_size=1, max_size=6), max_size=6))
def test_lambda_tables_of_random_cells(header: str, rows: list[list[str]]) -> None:
    data = (header + "\n" + "\n".join(",".join(["LambdaOD_4x_Texas_2xH100_80GB_SXM5", *r]) for r in rows) + "\n")
    assert attempt(data.encode(), "pytorch-train-throughput-v2-fp16.csv") in ("converted", "refused")


NEW_FIXTURES = sorted(str(p.relative_to(FORMATS)) for family in ("vllm", "ai_energy_score", "dcgm", "experiment_csv",
                                                                 "lambda_dlbench", "zeus_mlenergy")
                      for p in (FORMATS / family).glob("*") if p.is_file())


def test_refused_new_files_never_change_the_database(tmp_path: Path) -> None:
    from ingest import import_bytes

    db = tmp_path / "p.duckdb"
    Store.open(db, seed_reference=False).close()

    def counts() -> tuple[int, ...]:
        with Store.open(db, seed_reference=False) as store:
            return tuple(store.query(f"SELECT count(*) AS n FROM {t}")["n"][0]
                         for t in ("sources", "runs", "devices", "power_samples", "environments"))

    before = counts()

    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
    @given(name=st.sampled_from(NEW_FIXTURES), cut=st.floats(0.05, 0.95), junk=st.binary(min_size=1, max_size=3))
    def check(name: str, cut: float, junk: bytes) -> None:
        data = (FORMATS / name).read_bytes()[:24_000]
        i = int(len(data) * cut)
        broken = data[:i] + b"\x00\xff" + junk + data[i:]
        with pytest.raises(ResultFileError):
            import_bytes(broken, name.rsplit("/", 1)[-1], db=db, hints=HINTS)
        assert counts() == before

    check()
