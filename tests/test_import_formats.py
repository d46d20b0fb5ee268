"""Every real file in tests/fixtures/formats imports, with hand-checked numbers.

Expected values were computed by reading the files (awk / a calculator), not by the
importers; each literal says how.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from db import Store
from importers import Hints, ImportedFile, load, load_source
from importers.archive import sources_from_path
from ingest import import_source
from ingest.service import import_sources
from joulebench.errors import ResultFileError

FORMATS = Path(__file__).parent / "fixtures" / "formats"


def imp(rel: str, **hints: Any) -> ImportedFile:
    sources = sources_from_path(FORMATS / rel)
    assert len(sources) == 1
    return load_source(sources[0], Hints(**hints))[0]


def only(f: ImportedFile) -> dict[str, Any]:
    assert len(f.runs) == 1
    return f.runs[0]


def test_optimum_benchmark_json() -> None:
    f = imp("optimum_benchmark/tei-bge-cpu-t4host_benchmark.json")
    run = only(f)  # the 'load' target is model loading, not a measurement of the workload
    assert f.format == "optimum-benchmark" and f.document["producer"]["version"] == "0.5.0.dev0"
    assert run["device"] == {
        "name": "Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz",
        "kind": "cpu",
    }  # backend.device cpu
    m, c = run["metrics"], run["config"]
    assert m["throughput_sps"] == pytest.approx(5.648934083819028)  # report.forward.throughput.value, samples/s
    assert m["latency_p50_ms"] == pytest.approx(11300.766840518918)  # forward.latency.p50 = 11.3007... s x 1000
    assert m["latency_p99_ms"] == pytest.approx(11547.694239768898)
    assert len(run["step_times_ms"]) == 10 and m["duration_s"] == pytest.approx(113.29571039485745)
    assert c["batch_size"] == 64 and c["seq_len"] == 128 and c["mode"] == "infer"
    assert c["precision"] is None  # backend.dtype is null: unknown, not guessed
    assert "energy_j" not in m


def test_optimum_report_with_its_config_in_one_folder(tmp_path: Path) -> None:
    """optimum-benchmark also writes the two halves of benchmark.json as benchmark_report.json and
    benchmark_config.json side by side: a folder (or zip) with both imports as one source."""
    import json
    import zipfile

    whole = json.loads((FORMATS / "optimum_benchmark/tei-bge-cpu-t4host_benchmark.json").read_text())
    folder = tmp_path / "bge" / "run"
    folder.mkdir(parents=True)
    (folder / "benchmark_report.json").write_text(json.dumps(whole["report"]))
    (folder / "benchmark_config.json").write_text(json.dumps(whole["config"]))
    (tmp_path / "bge" / "notes.txt").write_text("not a result")
    sources = [s for s in sources_from_path(tmp_path / "bge") if s.is_folder]
    assert [sorted(s.files) for s in sources] == [["benchmark_config.json", "benchmark_report.json"]]
    paired = load_source(sources[0])[0]
    run = only(paired)
    assert paired.format == "optimum-benchmark"
    assert [w.split(";")[0] for w in paired.warnings] == ["not stated in the file: precision (its run)"]
    assert run["device"]["name"] == "Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz"  # from the config
    assert run["metrics"]["throughput_sps"] == pytest.approx(5.648934083819028)  # same as benchmark.json
    assert run["config"]["batch_size"] == 64 and run["config"]["seq_len"] == 128
    archive = tmp_path / "bge.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name in ("benchmark_report.json", "benchmark_config.json"):
            zf.write(folder / name, f"run/{name}")
    zipped = sources_from_path(archive)
    assert len(zipped) == 1 and zipped[0].content_sha256 == sources[0].content_sha256
    report_only = sources_from_path(folder / "benchmark_report.json")[0]
    alone = load_source(report_only, Hints(device="Xeon 8259CL", mode="infer"))[0]
    assert any("without its config" in w for w in alone.warnings)


def test_optimum_legacy_csv_without_a_device_imports_it_as_not_stated_or_takes_it_from_the_folder(
        tmp_path: Path) -> None:
    legacy = "optimum_benchmark/legacy-vicuna-fp16-bs1-a100_inference_results.csv"
    named = imp(legacy)  # a name that holds a device among its words: the device, said, correctable like a folder's
    assert [r["device"]["name"] for r in named.runs] == ["a100", "a100"]
    assert [(s.label, s.value, s.origin) for s in named.supplied] == [("device", "a100", "folder_name")]
    alone = load((FORMATS / legacy).read_bytes(), "inference_results.csv")[0]  # the name optimum-benchmark writes
    assert [r["device"] for r in alone.runs] == [None, None]  # not stated, not guessed
    assert alone.not_stated() == {"device": 2, "precision": 2, "batch_size": 2}  # inference_results: mode infer
    assert alone.runs[0]["metrics"]["throughput_sps"] == 38.5  # the figures come in all the same
    message = alone.warnings[0]  # everything missing, in one message
    assert message.startswith("not stated in the file: device (all 2 runs), precision (all 2 runs), "
                              "batch size (all 2 runs)")
    assert "joulebench label inference_results.csv --device NAME --precision P --batch-size N" in message
    # The original layout: experiments/A100-80GB/fp16-batch_size(1)-sequence_length(128)-new_tokens(256)/0/
    folder = tmp_path / "experiments" / "A100-80GB" / "fp16-batch_size(1)-sequence_length(128)-new_tokens(256)" / "0"
    folder.mkdir(parents=True)
    shutil.copy(FORMATS / legacy, folder / "inference_results.csv")
    f = load_source(sources_from_path(folder / "inference_results.csv")[0])[0]
    forward, generate = f.runs
    assert forward["device"]["name"] == "A100-80GB" and forward["config"]["precision"] == "fp16"
    assert forward["config"]["batch_size"] == 1 and forward["config"]["seq_len"] == 128
    assert forward["metrics"]["throughput_sps"] == 38.5  # forward.throughput(samples/s)
    assert forward["metrics"]["latency_avg_ms"] == pytest.approx(26.0)  # forward.latency(s) 0.026 x 1000
    assert forward["metrics"]["mem_used_device_mb"] == 15128
    assert generate["metrics"]["latency_avg_ms"] == pytest.approx(6670.0)  # 6.67 s
    assert generate["metrics"]["throughput_sps"] == pytest.approx(1 / 6.67)  # batch 1 / 6.67 s, stated as derived
    assert "38.4 tokens/s" in generate["notes"]


def test_mlperf_orin_power_trimmed_to_the_window_and_ranging_excluded() -> None:
    f = imp("mlperf_inference/v3.0_NVIDIA_Orin_TRT_MaxQ_resnet50_SingleStream")
    run = only(f)  # run_1 only: ranging/ is excluded
    assert any("ranging" in w for w in f.warnings)
    assert run["device"] == {"name": "NVIDIA Jetson AGX Orin", "kind": "jetson"}
    c, m = run["config"], run["metrics"]
    assert c["workload"] == "resnet50" and c["gpu_count"] == 1 and c["mode"] == "infer" and c["precision"] is None
    assert m["throughput_sps"] == pytest.approx(667.53)  # "QPS w/ loadgen overhead" x samples_per_query 1
    assert m["latency_p50_ms"] == pytest.approx(1.578304)  # 1578304 ns
    assert m["latency_p90_ms"] == pytest.approx(1.637569)
    assert m["latency_max_ms"] == pytest.approx(147.144425)
    assert m["examples"] == 400518  # result_query_count in the detail log
    # awk over spl.txt: 600 samples between power_begin 06:22:00.638 and power_end 06:32:00.640, mean 14.814617 W
    assert len(run["power_traces"][0]["power_w"]) == 600
    assert m["avg_power_w"] == pytest.approx(14.814617, abs=1e-6)
    assert m["duration_s"] == pytest.approx(600.002)
    assert m["energy_j"] == pytest.approx(14.814617 * 600.002, rel=1e-6)  # ~8888.8 J
    assert m["j_per_sample"] == pytest.approx(14.814617 * 600.002 / 400518, rel=1e-6)  # ~0.02219 J
    assert m["energy_boundary"] == "wall" and m["energy_method"] == "sampled"


def test_mlperf_h100_server_without_power() -> None:
    run = only(imp("mlperf_inference/v3.0_NVIDIA_DGX-H100_H100-SXM-80GBx8_TRT_bert-99_Server"))
    assert run["device"]["name"] == "NVIDIA H100-SXM-80GB" and run["config"]["gpu_count"] == 8
    assert run["config"]["workload"] == "bert-99"
    assert run["metrics"]["throughput_sps"] == pytest.approx(59593.13)  # "Completed samples per second"
    assert run["metrics"]["latency_p99_ms"] == pytest.approx(77.763446)  # 77763446 ns
    assert run["metrics"].get("energy_j") is None and "spl.txt" in run["metrics"]["energy_missing_reason"]


def test_mlperf_summary_alone() -> None:
    path = FORMATS / "mlperf_inference/v3.0_NVIDIA_DGX-H100_H100-SXM-80GBx8_TRT_bert-99_Server/run_1"
    run = only(
        load(
            (path / "mlperf_log_summary.txt").read_bytes(),
            "mlperf_log_summary.txt",
            hints=Hints(device="NVIDIA H100-SXM-80GB", workload="bert-99"),
        )[0]
    )
    assert run["metrics"]["throughput_sps"] == pytest.approx(59593.13)


def test_codecarbon_a100_many_runs_kwh_to_joules() -> None:
    f = imp("codecarbon/lightspec-a100sxm4_emissions.csv", mode="train")
    assert len(f.runs) == 7 and f.document["producer"]["version"] == "3.0.2"
    run = f.runs[0]
    assert run["device"] == {"name": "NVIDIA A100-SXM4-40GB", "kind": "gpu"}  # "1 x NVIDIA A100-SXM4-40GB"
    assert run["config"]["gpu_count"] == 1
    assert run["metrics"]["energy_j"] == pytest.approx(62830.12986974)  # 0.0174528138527075 kWh x 3.6e6
    assert run["metrics"]["avg_power_w"] == pytest.approx(301.6449197)  # / duration 208.2916892049834 s
    assert run["metrics"]["energy_boundary"] == "system" and run["environment"]["ram_gb"] == pytest.approx(
        1007.672908782959
    )


def test_codecarbon_jetson_without_device_and_mode_imports_them_as_not_stated() -> None:
    rel = "codecarbon/jetson-nano-edgeai_emissions.csv"
    no_mode = imp(rel, device="Jetson Nano 4GB")
    assert only(no_mode)["config"]["mode"] is None and only(no_mode)["device"]["name"] == "Jetson Nano 4GB"
    assert "mode (its run; CodeCarbon does not record it)" in no_mode.warnings[0]
    no_device = imp(rel, mode="infer")
    assert only(no_device)["device"] is None
    assert "device (its run; no gpu_model (empty on a Jetson))" in no_device.warnings[0]  # where it looked
    assert only(no_device)["metrics"]["energy_j"] == pytest.approx(8.857767133)
    run = only(imp(rel, device="Jetson Nano 4GB", mode="infer"))
    assert run["device"] == {"name": "Jetson Nano 4GB", "kind": "jetson"}  # os is ...-tegra-aarch64
    assert run["metrics"]["energy_j"] == pytest.approx(8.857767133)  # 2.460490870277692e-06 kWh x 3.6e6


def test_codecarbon_zero_energy_is_missing_with_a_reason_and_a_flag() -> None:
    text = (FORMATS / "codecarbon/lightspec-a100sxm4_emissions.csv").read_text().splitlines()
    cells = text[1].split(",")
    cells[13] = "0.0"  # energy_consumed
    data = "\n".join([text[0], ",".join(cells)]).encode()
    run = only(load(data, "emissions.csv", hints=Hints(mode="train"))[0])
    assert run["metrics"].get("energy_j") is None and "zero, negative" in run["metrics"]["energy_missing_reason"]
    assert "energy_nonpositive" in run["flags"]


def test_mlenergy_v3() -> None:
    f = imp("zeus_mlenergy/mlenergy-v3-leaderboard-llama31-8b-lm-arena-chat.json")
    assert len(f.runs) == 20
    run = f.runs[0]
    assert run["device"]["name"] == "B200" and run["config"]["precision"] == "bf16"  # weight_precision bfloat16
    assert run["config"]["model"] == "meta-llama/Llama-3.1-8B-Instruct"
    # max_num_seqs 8 is vLLM's cap on running requests, not the batch that ran: a tag, batch size not stated
    assert run["config"]["batch_size"] is None and run["config"]["tag"] == "max_num_seqs 8"
    m = run["metrics"]
    assert m["throughput_sps"] == pytest.approx(4.220380083)  # 1637.2643 tokens/s / 387.94238 tokens per request
    assert m["j_per_sample"] == pytest.approx(151.50076862712154)  # energy_per_request_joules
    assert m["avg_power_w"] / m["throughput_sps"] == pytest.approx(m["j_per_sample"], rel=1e-3)  # consistent
    assert m["itl_p50_ms"] == pytest.approx(4.574391001369804)  # median_itl_ms: inter-token latency (ITL)
    assert "latency_p50_ms" not in m  # an inter-token latency is not a request's latency


def test_mlenergy_v1_and_v2_shapes() -> None:
    v1 = b"model,batch_size,throughput,response_length,latency,energy\nlmsys/vicuna-7B,2,34.76,209.9,14.24,1142.2\n"
    run = only(load(v1, "A100_chat_benchmark.csv")[0])
    assert run["device"]["name"] == "A100" and run["metrics"]["j_per_sample"] == pytest.approx(1142.2)
    assert run["metrics"]["latency_avg_ms"] == pytest.approx(14240.0)
    v2 = (
        b'{"Model": "SimianLuo/LCM_Dreamshaper_v7", "GPU model": "NVIDIA A100-SXM4-40GB", "Batch size": 2,'
        b' "Batch latency (s)": 1.5, "Energy per image (J)": 356.2}'
    )
    run = only(load(v2, "bs2.json")[0])
    assert run["metrics"]["throughput_sps"] == pytest.approx(2 / 1.5) and run["metrics"]["j_per_sample"] == 356.2


def test_zeus_nsdi_trace() -> None:
    f = imp("zeus_mlenergy/zeus-nsdi23-v100_summary_power.csv", device="Tesla V100")
    assert len(f.runs) == 476  # 477 lines minus the header
    run = f.runs[0]  # cifar100,shufflenetv2,1024,adadelta,100,11.2766...,86.8646...
    assert run["config"]["power_limit_w"] == 100 and run["config"]["batch_size"] == 1024
    assert run["metrics"]["energy_j"] == pytest.approx(979.5432353)  # 86.8646 W x 11.27667 s per epoch
    assert run["metrics"]["avg_power_w"] == pytest.approx(86.86460850784009)
    assert "j_per_sample" not in run["metrics"]  # examples per epoch are not in the file


def test_zeus_power_limit_profile() -> None:
    f = imp("zeus_mlenergy/zeus-plo-profile-v100-bert.csv", device="Tesla V100")
    assert [r["config"]["power_limit_w"] for r in f.runs] == [250, 225, 200, 175, 150, 125, 100]
    m = f.runs[0]["metrics"]
    assert m["energy_j"] == pytest.approx(3019.459) and m["avg_power_w"] == pytest.approx(225.8756456)  # J / s


def test_lambda_table_watt_is_tdp_not_energy() -> None:
    f = imp("lambda_dlbench/pytorch-train-throughput-fp16.csv")
    rtx3090 = next(
        r
        for r in f.runs
        if r["device"]["name"] == "RTX 3090" and r["config"]["workload"] == "resnet50" and r["config"]["gpu_count"] == 1
    )
    assert rtx3090["metrics"]["throughput_sps"] == 905.0 and rtx3090["config"]["precision"] == "fp16"
    assert rtx3090["device"]["tdp_w"] == 350.0 and rtx3090["config"]["mode"] == "train"
    assert all("energy_j" not in r["metrics"] for r in f.runs)
    two = next(
        r
        for r in f.runs
        if r["environment"].get("system_name") is None
        and r["config"]["gpu_count"] == 2
        and r["device"]["name"] == "RTX 3090"
        and r["config"]["workload"] == "bert_base_squad"
    )
    assert two["device"]["tdp_w"] == 350.0  # "2x RTX 3090", watt 700 for 2 GPUs


def test_hf_trainer_all_results_and_state() -> None:
    f = imp("hf_trainer/t5-small-summarization_all_results.json", device="NVIDIA T4")
    train, evaluation = f.runs
    assert train["config"]["mode"] == "train" and train["metrics"]["throughput_sps"] == 15.743
    assert train["metrics"]["duration_s"] == pytest.approx(54713.1806)
    assert evaluation["config"]["mode"] == "infer" and evaluation["metrics"]["throughput_sps"] == 4.106
    state = only(imp("hf_trainer/t5-small-summarization_trainer_state.json", device="NVIDIA T4", precision="fp32"))
    assert state["config"]["batch_size"] == 4 and state["metrics"]["optimizer_steps"] == 215337
    assert state["metrics"]["iterations_per_s"] == 3.936 and state["config"]["precision"] == "fp32"


def test_dllogger_json_lines() -> None:
    run = only(imp("nvidia_dle/eventbert-bert-pretrain-phase2_dllogger.json", device="Tesla V100"))
    c = run["config"]
    assert run["metrics"]["throughput_sps"] == pytest.approx(128.27777476981666)  # training_sequences_per_second
    assert c["precision"] == "fp16" and c["batch_size"] == 10 and c["grad_accum_steps"] == 512  # fp16=True
    assert c["seq_len"] == 512 and c["gpu_count"] == 1 and c["mode"] == "train" and c["model"] == "bert-base-uncased"
    assert run["metrics"]["duration_s"] == pytest.approx(125578.67013645172)  # e2e_train_time


def test_dllogger_stdout() -> None:
    run = only(imp("nvidia_dle/lambda-A100SXM4-resnet50_AMP_dllogger-stdout.txt", device="A100 SXM4"))
    assert run["metrics"]["throughput_sps"] == pytest.approx(1208.05)  # "Summary: ... train.total_ips : 1208.05 img/s"
    assert run["config"]["precision"] == "fp16" and run["config"]["batch_size"] == 720  # amp : True
    assert run["config"]["workload"] == "resnet50" and run["config"]["mode"] == "train"


def test_dllogger_device_from_folder(tmp_path: Path) -> None:
    folder = tmp_path / "results" / "A100_SXM4" / "PyTorch_resnet50_AMP"
    folder.mkdir(parents=True)
    shutil.copy(FORMATS / "nvidia_dle/lambda-A100SXM4-resnet50_AMP_dllogger-stdout.txt", folder / "run.txt")
    run = only(load_source(sources_from_path(folder / "run.txt")[0])[0])
    assert run["device"]["name"] == "A100_SXM4"


def test_nvidia_smi_log_standalone_trace() -> None:
    unlabelled = imp("nvidia_smi/fletcher-io-gtx1650_gpu_power.csv")
    assert only(unlabelled)["config"]["mode"] is None  # a power log does not say what ran
    assert only(unlabelled)["metrics"]["energy_j"] == pytest.approx(18.16935, abs=1e-5)
    run = only(imp("nvidia_smi/fletcher-io-gtx1650_gpu_power.csv", mode="infer"))
    assert run["device"]["name"] == "NVIDIA GeForce GTX 1650" and run["config"]["workload"] == "power-log"
    assert "standalone_power_trace" in run["flags"]
    trace = run["power_traces"][0]
    assert len(trace["t_s"]) == 80 and trace["power_w"][0] == 19.46  # "19.46 W"
    # awk: trapezoid rule over power.draw at the 80 timestamps = 18.16935 J over 0.918 s
    assert run["metrics"]["energy_j"] == pytest.approx(18.16935, abs=1e-5)
    assert run["metrics"]["duration_s"] == pytest.approx(0.918)
    assert run["metrics"]["mem_used_device_mb"] == pytest.approx(max_mib() * 1.048576)  # MiB -> MB
    assert run["device"]["memory_gb"] == pytest.approx(4096 * 1.048576 / 1000)


def max_mib() -> float:
    lines = (FORMATS / "nvidia_smi/fletcher-io-gtx1650_gpu_power.csv").read_text().splitlines()[1:]
    return max(float(line.split(", ")[5].split()[0]) for line in lines)


def test_tegrastats_old_format() -> None:
    f = imp("jetson/csc2231-jetson-nano_tegrastats.txt", device="Jetson Nano 4GB", mode="infer")
    run = only(f)
    assert run["device"] == {"name": "Jetson Nano 4GB", "kind": "jetson"}
    rails = {t["domain"]: t for t in run["power_traces"]}
    assert set(rails) == {"POM_5V_IN", "POM_5V_GPU", "POM_5V_CPU"}
    assert rails["POM_5V_IN"]["power_w"][2] == pytest.approx(2.793)  # "POM_5V_IN 2793/1750" mW
    # no timestamps: 1 s apart (tegrastats default); awk: trapezoid over the 114 POM_5V_IN values
    # (sum minus half the first and last) = 504521.5 mW s
    assert run["metrics"]["energy_j"] == pytest.approx(504.5215)
    assert "sample_interval_assumed_1s" in run["flags"]


def test_tegrastats_new_format_with_timestamps() -> None:
    text = (
        "04-24-2024 10:00:00 RAM 2000/7620MB CPU [1%@729] EMC_FREQ 0% VDD_IN 5000mW/5000mW VDD_CPU_GPU_CV 600mW/600mW\n"
        "04-24-2024 10:00:02 RAM 2000/7620MB CPU [1%@729] EMC_FREQ 0% VDD_IN 7000mW/6000mW VDD_CPU_GPU_CV 900mW/750mW\n"
    )
    run = only(load(text.encode(), "tegrastats.log", hints=Hints(device="Jetson Orin NX", mode="idle"))[0])
    assert run["metrics"]["energy_j"] == pytest.approx(12.0)  # 5 W rising to 7 W over 2 s: (5 + 7) / 2 x 2
    assert "sample_interval_assumed_1s" not in run["flags"]


def test_jtop_csv() -> None:
    run = only(imp("jetson/agentmesh-agx-orin_jtop_log.csv", device="Jetson AGX Orin 64GB", mode="infer"))
    domains = [t["domain"] for t in run["power_traces"]]
    assert domains == ["CPU", "GPU", "System"]  # the empty 'Extra Power' column is dropped
    # AGX Orin has no input rail (energy.rails): awk, trapezoid over CPU+GPU+System (mW) at the 15 timestamps
    # = 260.0215 J over 30 s (System_Power_Inst alone, VIN_SYS_5V0, was 140.634 J)
    assert run["metrics"]["energy_j"] == pytest.approx(260.0215)
    assert run["metrics"]["duration_s"] == 30.0 and run["metrics"]["energy_boundary"] == "jetson_module"


def test_tqdm_lines() -> None:
    text = " 50%|#####     | 782/1563 [00:48<00:48, 16.10it/s]\r100%|##########| 1563/1563 [01:36<00:00, 16.14it/s]\n"
    run = only(load(text.encode(), "train.log", hints=Hints(device="GeForce RTX 3090", mode="train", batch_size=32))[0])
    assert run["metrics"]["iterations_per_s"] == 16.14 and run["metrics"]["duration_s"] == 96
    assert run["metrics"]["throughput_sps"] == pytest.approx(516.48)  # 16.14 it/s x 32, as in the seed


def test_unknown_format_names_the_tools_read_once() -> None:
    with pytest.raises(ResultFileError) as e:
        load(b"hello,world\n1,2\n", "mystery.csv")
    message = e.value.format_message()
    assert message.startswith("mystery.csv:") and "not a format JouleBench knows" in message
    assert "holds no benchmark figures JouleBench can read (it looks like a table with columns hello, world;" in message
    assert "joulebench import --mapping RECIPE FILE" in message  # a table: the mapping step is named
    assert "optimum-benchmark, codecarbon" in message and len(message) < 1000  # the tools once, not every format
    for name in ("optimum-benchmark", "MLPerf (LoadGen", "codecarbon", "nvidia-smi", "tegrastats", "tqdm"):
        assert name in message


def test_errors_name_file_line_and_reason() -> None:
    bad = (
        b"timestamp, name, power.draw [W]\n2024/10/13 03:33:31.779, GTX, 19.4 W\n2024/10/13 03:33:31.790, GTX, abc W\n"
    )
    with pytest.raises(ResultFileError, match=r"gpu\.csv: line 3: power\.draw \[W\]: 'abc W' is not a number"):
        load(bad, "gpu.csv", hints=Hints(mode="idle"))


def test_every_fixture_ingests_once(tmp_path: Path) -> None:
    hints = Hints(device="Test GPU", mode="infer")
    db = tmp_path / "all.duckdb"
    Store.open(db, seed_reference=False).close()
    sources = [s for p in sorted(FORMATS.iterdir()) if p.is_dir() for s in sources_from_path(p)]
    from tests.test_import_variants import REFUSED_BY_DESIGN  # issue 11: files refused with a true reason

    sources = [s for s in sources if s.name.rsplit("/", 1)[-1] not in REFUSED_BY_DESIGN]
    assert len(sources) >= 17
    total = 0
    # all in one import (one open, one grading pass: 149 imports of their own took 60 s), as the Upload page
    # imports a folder: each source is still read, validated and reported on its own
    for outcome in import_sources([(source, None) for source in sources], db=db, hints=hints):
        name = outcome.source.name
        assert outcome.error is None and outcome.report is not None and outcome.loaded is not None, name
        assert outcome.report.status == "imported", name
        # a file holding the same measurements as one imported before (guidellm's csv beside its json) adds
        # none of them twice (db.same_measurement)
        assert outcome.report.runs_added + outcome.report.runs_duplicate == len(outcome.loaded.runs), name
        total += outcome.report.runs_added
    for source in sources[:3]:
        again, _ = import_source(source, db=db, hints=hints)
        assert again.status == "already_imported" and again.runs_added == 0
    with Store.open(db, seed_reference=False) as store:
        assert store.query("SELECT count(*) AS n FROM runs")["n"][0] == total
        formats = set(store.query("SELECT DISTINCT format FROM sources")["format"])
        assert len(formats) >= 11
        orin = store.query(
            "SELECT origin_format, origin_tool, power_w FROM runs JOIN power_samples USING (run_id) "
            # the catalog's name (ingest.device_names): an Orin of another file, imported first, may give its 64GB
            "WHERE device_name LIKE 'Jetson AGX Orin%' AND origin_format = 'mlperf-inference' LIMIT 1"
        ).row(0, named=True)
        assert orin["origin_format"] == "mlperf-inference" and orin["origin_tool"] == "mlperf-loadgen"
