"""NVIDIA AIPerf's `profile_export_aiperf.csv` with its three stacked tables (aiperf
exporters/metrics_csv_exporter.py): per-request statistics `Metric,avg,min,max,sum,p1..p99,std`, the system's
`Metric,Value`, and the GPU telemetry table `Endpoint,GPU_Index,GPU_Name,GPU_UUID,Metric,...` (empty when no
telemetry came). Two real files (tests/fixtures/formats/SOURCES.md) and telemetry rows written as the exporter
and gpu_telemetry/constants.py write them; every expected figure was read off the file by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from importers import load
from joulebench.errors import ResultFileError
from tests.helpers import ingest_runs, mutated, readers_of_other_fixtures, refusal, runs_or_refusal

FOLDER = Path(__file__).parent / "fixtures" / "formats" / "genai_perf"
RTX5090 = FOLDER / "anud18-qwen36-aiperf-rtx5090-nvfp4-agent-c16-profile_export_aiperf.csv"
DATABLOOM = FOLDER / "databloom-aiperf-lab-tests-qwen3-4b-q4_1-c1-profile_export_aiperf.csv"
UUID = "GPU-afc3c15a-48a5-d669-0634-191c629f95fa"


def with_telemetry(rows: list[str], header: str | None = None, system: str = "") -> bytes:
    """The real RTX 5090 file with telemetry rows under its telemetry header (or another header), and more
    `Metric,Value` rows, CRLF as csv.writer writes them."""
    text = RTX5090.read_bytes().decode()
    if header is not None:
        text = text.replace("Endpoint,GPU_Index,GPU_Name,GPU_UUID,Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,"
                            "p95,p99,std", header)
    text = text.replace("Total Token Throughput (tokens/sec),9282.32\r\n",
                        f"Total Token Throughput (tokens/sec),9282.32\r\n{system}")
    return (text + "".join(f"{r}\r\n" for r in rows)).encode()


def one_run(data: bytes, name: str = "profile_export_aiperf.csv") -> dict:
    f, fmt = load(data, name)
    assert fmt == "genai-perf"
    (run,) = f.runs
    return run


def test_real_rtx5090_file_reads_its_two_tables_and_its_empty_telemetry(tmp_path: Path, bare_template: Path) -> None:
    # used to be refused at the telemetry header: "line 42 (Endpoint, value): 'GPU_Index' is not a number"
    (row,) = ingest_runs(tmp_path / "a.duckdb", bare_template, RTX5090)
    assert row["origin_format"] == "genai-perf"
    assert row["ttft_avg_ms"] == pytest.approx(230.14) and row["ttft_p99_ms"] == pytest.approx(687.62)
    assert row["e2e_latency_avg_ms"] == pytest.approx(6726.66)  # "Request Latency (ms)", avg
    assert row["e2e_latency_p90_ms"] == pytest.approx(12053.18)
    assert row["tpot_avg_ms"] == pytest.approx(11.85) and row["itl_avg_ms"] is None  # per request: TPOT
    assert row["tokens_per_s"] == pytest.approx(1172.15)  # system "Output Token Throughput (tokens/sec)"
    assert row["requests_per_s"] == pytest.approx(2.16)  # "Request Throughput (requests/sec)", 3 digits kept
    assert row["requests_completed"] == 96  # "Request Count,96.00"
    assert row["duration_s"] == pytest.approx(44.52)  # "Benchmark Duration (sec)"
    assert row["output_tokens"] == 52187  # "Total Output Sequence Length (tokens)"
    assert row["prompt_tokens_mean"] == pytest.approx(3761.31) and row["output_tokens_mean"] == pytest.approx(543.61)
    # the telemetry table names the GPU, and it has no rows: the device is the one the file's name gives
    assert row["device_name"] == "rtx5090"
    assert one_run(RTX5090.read_bytes())["device"] is None  # as the tool names the file: not stated
    assert row["energy_j"] is None and "telemetry table is empty" in row["energy_missing_reason"]


def test_the_sum_column_and_the_per_user_rates_are_never_stored() -> None:
    m = one_run(RTX5090.read_bytes())["metrics"]
    values = [v for v in m.values() if isinstance(v, float)]
    for never in (645759.75, 22093.17, 1137.34, 85.66, 80.69, 21547.42, 9282.32):  # sums; per-user rates; total
        assert not any(v == pytest.approx(never) for v in values), never
    assert m["duration_s"] == pytest.approx(44.52)  # not the sum of latencies (645759.75 ms)


def test_real_databloom_file_with_failed_requests() -> None:
    run = one_run(DATABLOOM.read_bytes(), DATABLOOM.name)
    m = run["metrics"]
    assert m["requests_completed"] == 15 and m["requests_failed"] == 5  # "Request Count", "Error Request Count"
    # "Request Throughput (requests/sec),0.05" is 15 / 274.14 printed '%.2f': the quotient keeps its digits
    assert m["requests_per_s"] == pytest.approx(15 / 274.14)
    assert m["tokens_per_s"] == pytest.approx(12.95)  # 3550 / 274.14 = 12.9496: printed to 4 digits, kept
    assert m["ttft_avg_ms"] == pytest.approx(516.39) and m["ttft_p95_ms"] == pytest.approx(881.45)
    assert m["tpot_p99_ms"] == pytest.approx(40.56)  # "Inter Token Latency (ms)", p99
    assert m["duration_s"] == pytest.approx(274.14) and m["output_tokens"] == 3550
    assert "energy_j" not in m and run["device"] is None  # not stated


def test_one_gpu_power_times_duration_when_the_mj_counter_is_too_coarse() -> None:
    row = "localhost:9401,0,NVIDIA GeForce RTX 5090,GPU-1,{},{}"
    power = "455.30,120.10,575.00,,120.50,130.00,300.00,440.00,470.00,500.00,540.00,560.00,570.00,60.00"
    data = with_telemetry([row.format("GPU Power Usage (W)", power),
                           row.format("Energy Consumption (MJ)", "0.02" + "," * 13),  # counter delta, avg alone
                           row.format("GPU Utilization (%)", "91.00,0.00,100.00" + ",0.00" * 11)])
    run = one_run(data)
    m = run["metrics"]
    assert run["device"]["name"] == "NVIDIA GeForce RTX 5090" and run["config"]["gpu_count"] == 1
    # 0.02 MJ is good to 5 kJ (25 %): the mean power x Benchmark Duration instead
    assert m["energy_j"] == pytest.approx(455.30 * 44.52) and m["energy_method"] == "sampled"
    assert m["avg_power_w"] == pytest.approx(455.30) and m["energy_boundary"] == "gpu_board"
    assert m["j_per_token"] == pytest.approx(455.30 * 44.52 / 52187)  # over "Total Output Sequence Length"
    assert "0.02 MJ printed to 0.01 MJ" in run["notes"]


def test_eight_gpus_counter_deltas_summed_when_precise_enough() -> None:
    rows = []
    for i in range(8):
        gpu = f"dcgm-node1:9401,{i},NVIDIA H100 80GB HBM3,GPU-{i:04d}"
        rows.append(f"{gpu},GPU Power Usage (W),650.00,300.00,700.00" + ",1.00" * 11)
        rows.append(f"{gpu},Energy Consumption (MJ),1.25" + "," * 13)
    run = one_run(with_telemetry(rows))
    m = run["metrics"]
    assert run["device"]["name"] == "NVIDIA H100 80GB HBM3" and run["config"]["gpu_count"] == 8
    assert m["energy_j"] == pytest.approx(8 * 1.25e6) and m["energy_method"] == "counter"  # 40 kJ rounding: 0.4 %
    assert m["avg_power_w"] == pytest.approx(8 * 650.0)  # every GPU's mean together


def test_newest_aiperf_total_gpu_energy_platform_and_hostname_columns(tmp_path: Path, bare_template: Path) -> None:
    header = ("Endpoint,GPU_Index,GPU_Name,GPU_UUID,Platform,Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,"
              "p99,std,Hostname")
    rows = [f"localhost:9401,{i},NVIDIA B200,GPU-{i},nvidia,NVIDIA {metric}" + ",node-7" for i in (0, 1)
            for metric in ("GPU Power Usage (W),500.00,200.00,900.00" + ",1.00" * 11,
                           "Energy Consumption (MJ),0.04" + "," * 13)]
    system = ("Total GPU Energy (J),41234.56\r\nTotal GPU Power (W),1000.00\r\n"
              "Output Tokens per Joule (tokens/J),1.27\r\n")
    path = tmp_path / "profile_export_aiperf.csv"
    path.write_bytes(with_telemetry(rows, header, system))
    (row,) = ingest_runs(tmp_path / "b.duckdb", bare_template, path)
    assert row["energy_j"] == pytest.approx(41234.56)  # "Total GPU Energy (J)": every GPU's counter, to the joule
    assert row["avg_power_w"] == pytest.approx(1000.0)  # "Total GPU Power (W)"
    assert row["device_name"] == "B200" and row["gpu_count"] == 2  # GPU_Name "NVIDIA B200", as the store names it
    assert row["j_per_token"] == pytest.approx(41234.56 / 52187)


def test_older_energy_rows_are_readings_since_boot_not_the_runs_energy() -> None:
    gpu = f"localhost:9401,0,NVIDIA H100 80GB HBM3,{UUID}"
    # AIPerf before its counter deltas: statistics of the counter's readings (docs/tutorials/gpu-telemetry.md)
    rows = [f"{gpu},GPU Power Usage (W),348.69,120.57,386.02,,120.57,120.57,,378.34,378.34,386.02,386.02,386.02,"
            "386.02,85.97",
            f"{gpu},Energy Consumption (MJ),1234.24,1234.23,1234.25,,1234.23,1234.23,,1234.23,1234.23,1234.25,1234.25,"
            "1234.25,1234.25,0.01"]
    run = one_run(with_telemetry(rows))
    m = run["metrics"]
    assert m["energy_j"] == pytest.approx(348.69 * 44.52) and m["energy_method"] == "sampled"
    assert m["energy_j"] != pytest.approx(1234.24e6)
    assert "readings since boot" in run["notes"]


def test_gpus_of_two_models_name_no_device() -> None:
    rows = ["localhost:9401,0,NVIDIA A100-SXM4-80GB,GPU-a,GPU Power Usage (W),300.00" + ",1.00" * 13,
            "localhost:9401,1,NVIDIA H100 80GB HBM3,GPU-b,GPU Power Usage (W),400.00" + ",1.00" * 13]
    f, _ = load(with_telemetry(rows), "profile_export_aiperf.csv")
    (run,) = f.runs
    assert run["device"] is None  # not stated: two models
    assert run["config"]["gpu_count"] == 2 and run["metrics"]["avg_power_w"] == pytest.approx(700.0)
    assert "NVIDIA A100-SXM4-80GB, NVIDIA H100 80GB HBM3" in run["notes"]


def test_telemetry_unit_of_another_quantity_is_refused_naming_the_line() -> None:
    data = with_telemetry(["localhost:9401,0,NVIDIA L4,GPU-x,GPU Power Usage (MJ),72.00" + ",1.00" * 13])
    message = refusal(data, "profile_export_aiperf.csv")
    assert "line 43 (GPU Power Usage (MJ))" in message and "'MJ' is not a unit of power" in message


def test_genai_perf_csv_with_its_gpu_tables_still_imports() -> None:
    # genai-perf's CsvExporter as its tests/test_csv_exporter.py test_telemetry_output expects it
    lines = ["Metric,avg,min,max,p99,p95,p90,p75,p50,p25,p10,p5,p1",
             "Time To First Token (ms),8.00,7.00,9.00,8.98,8.90,8.80,8.50,8.00,7.50,7.20,7.10,7.02",
             "Request Latency (ms),5.00,4.00,6.00,5.98,5.90,5.80,5.50,5.00,4.50,4.20,4.10,4.02",
             "Inter Token Latency (ms),11.00,10.00,12.00,11.98,11.90,11.80,11.50,11.00,10.50,10.20,10.10,10.02",
             "", "Metric,Value", "Output Token Throughput (tokens/sec),456.00", "Request Throughput (per sec),123.00",
             "Request Count (count),3.00", "", "Metric,GPU,avg,min,max,p99,p95,p90,p75,p50,p25",
             "GPU Power Usage (W),gpu0,45.85,45.20,46.50,46.49,46.44,46.37,46.17,45.85,45.53",
             'GPU Clock Sm (MHz),gpu0,"1,525.00","1,500.00","1,550.00","1,549.50","1,547.50","1,545.00","1,537.50",'
             '"1,525.00","1,512.50"',
             "", "Metric,GPU,Value", "GPU Power Limit (W),gpu0,250.00", ""]
    run = one_run("\r\n".join(lines).encode(), "profile_export_genai_perf.csv")
    m = run["metrics"]
    assert m["tokens_per_s"] == pytest.approx(456.0) and m["requests_completed"] == 3
    assert "energy_j" not in m and "avg_power_w" not in m
    assert "GenAI-Perf GPU telemetry tables" in run["notes"]


def test_every_request_failed_is_refused_saying_so() -> None:
    # databloom/aiperf-lab-tests artifacts/qwen_qwen3.5-4b-gguf:q4_k_m-openai-chat-concurrency1 (04456446)
    text = ("Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\n"
            "Error Input Sequence Length (tokens),9.50,6.00,14.00,190.00,6.00,6.00,6.00,8.25,9.00,10.25,14.00,14.00,"
            "14.00,2.87\n\nMetric,Value\nError Request Count,20.00\nTotal Error Input Sequence Length (tokens),190.00"
            "\n\n\nEndpoint,GPU_Index,GPU_Name,GPU_UUID,Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\n")
    message = refusal(text.replace("\n", "\r\n").encode(), "profile_export_aiperf.csv")
    assert "every request failed (Error Request Count 20)" in message


def test_other_formats_fixtures_are_not_taken() -> None:
    assert readers_of_other_fixtures({"genai-perf"}, {"genai_perf"}) == []


def test_refusal_names_a_bad_telemetry_figure() -> None:
    data = with_telemetry(["localhost:9401,0,NVIDIA L4,GPU-x,GPU Power Usage (W),lots" + ",1.00" * 13])
    with pytest.raises(ResultFileError, match=r"line 43 \(GPU Power Usage \(W\), avg\): 'lots' is not a number"):
        load(data, "profile_export_aiperf.csv")


SEEDS = [(RTX5090.name, RTX5090.read_bytes()), (DATABLOOM.name, DATABLOOM.read_bytes()),
         ("profile_export_aiperf.csv", with_telemetry(
             [f"localhost:9401,0,NVIDIA H100 80GB HBM3,{UUID},GPU Power Usage (W),348.69" + ",1.00" * 13,
              f"localhost:9401,0,NVIDIA H100 80GB HBM3,{UUID},Energy Consumption (MJ),0.90" + "," * 13]))]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from(SEEDS), cut=st.floats(0, 1), at=st.floats(0, 1),
       junk=st.sampled_from([b"NaN", b"-5", b"1e400", b"\r\n", b",", b"N/A", b"Endpoint,GPU_Index,GPU_Name,Metric\r\n",
                             b"Metric,Value\r\n", b"Energy Consumption (kWh),", b"(W)", b"\r\n\r\n"]))
def test_mutated_aiperf_files_import_or_refuse_naming_the_file(seed: tuple[str, bytes], cut: float, at: float,
                                                                junk: bytes) -> None:
    name, data = seed
    for run in runs_or_refusal(mutated(data, cut, at, junk), name):
        assert all(not isinstance(v, float) or v == v for v in run["metrics"].values())
