"""Real-world variants of known tools, the new formats (vLLM, MLPerf Training, AI Energy Score, DCGM,
per-experiment tables, Perseus) and the wrong numbers of issue 11, each against real files in
tests/fixtures/formats (attribution in SOURCES.md).

Expected values were computed from the files with awk or jq, not by the importers; each literal
says how.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from energy.rails import BOARDS, module_power
from importers import Hints, ImportedFile, load, load_source
from importers.archive import sources_from_path
from joulebench.errors import ResultFileError
from joulebench.resultfile import schema

FORMATS = Path(__file__).parent / "fixtures" / "formats"
# real files kept to show a refusal with a true reason (the tests below say which)
REFUSED_BY_DESIGN = frozenset({
    "wandb-summary.json",  # its one duration is the last epoch's, no run's (issue 39, held-out set 103)
    "huggingface-AIEnergyScore-v2-batch_runner-master_results-HEADER-ONLY-2025-10.csv",
    "perseus-sosp24-iteration_time_energy-a100_sxm-bloom_bf16_mb12.csv",
    "MIGProfiler-dmon-derived-MIG-GPU-I-GRACT-FBUSD-a100-finetune_moco.csv",
    "CSC2231_Project-jetson-nano-per-run-power-mW.csv",
    "carbontracker-llama31-8b-h100-h200-long-metrics-no-units.csv",  # no units: mapped (test_mapping)
    "tfg-a30-resnet50-offline-meter-semicolon-mw-unnamed.csv",  # a meter's channels, no unit: mapped (test_mapping)
    "powershell-utf16-nvidia-smi-no-power.csv",  # a log without power: refused saying so (test_heldout13)
    "llm-jetson-xavier-llama32-per-layer-latency-power.txt",  # per-layer profiles: no run (test_heldout22)
    "edge-inference-lab-orin-nano-trt-roofline-per-layer.csv",
    "haxconn-googlenet-trtexec-export-profile.json",
    "apple-silicon-bert-README.md",  # devices as columns of times of an unsaid kind (test_heldout83)
})


def imp(rel: str, name: str | None = None, dirs: tuple[str, ...] = (), **hints: Any) -> ImportedFile:
    """Import a fixture's bytes, under the name (and folders) it had in its repository when given."""
    path = FORMATS / rel
    return load(path.read_bytes(), name or path.name, hints=Hints(**hints), dirs=dirs)[0]


def folder(rel: str, **hints: Any) -> list[ImportedFile]:
    return [load_source(s, Hints(**hints))[0] for s in sources_from_path(FORMATS / rel)]


def only(f: ImportedFile) -> dict[str, Any]:
    assert len(f.runs) == 1
    return f.runs[0]


# --- units stored honestly: the migration's fields ---------------------------------------------------

NEW_METRICS = ("sample_unit", "tokens_per_s", "prompt_tokens_per_s", "j_per_token", "ttft_avg_ms", "ttft_p50_ms",
               "ttft_p99_ms", "tpot_avg_ms", "tpot_p50_ms", "tpot_p99_ms", "throughput_unit_not_stated")


def test_every_new_metric_has_a_description_and_a_physical_range() -> None:
    props = schema()["$defs"]["metrics"]["properties"]
    for key in NEW_METRICS:
        spec = props[key]
        assert len(spec["description"]) > 20, key
        if "number" in spec["type"]:
            assert ("minimum" in spec or "exclusiveMinimum" in spec) and "maximum" in spec, key
        else:
            assert None in spec["enum"] and "image" in spec["enum"], key
    migration = (Path(__file__).parents[1] / "db" / "migrations" / "0007_units_and_tokens.sql").read_text()
    assert all(f"ADD COLUMN {key} " in migration for key in NEW_METRICS)


# --- Jetson rails by board (energy.rails), against real logs of each board -----------------------------

def test_the_board_table_names_every_board_and_its_rule() -> None:
    names = {b.name for b in BOARDS}
    for board in ("Jetson Nano", "Jetson TX1", "Jetson TX2", "Jetson TX2 NX", "Jetson Xavier NX", "Jetson AGX Xavier",
                  "Jetson Orin NX / Orin Nano", "Jetson AGX Orin", "Jetson AGX Thor"):
        assert board in names
    assert module_power(["POM_5V_IN", "POM_5V_GPU", "POM_5V_CPU"]).rails == ("POM_5V_IN",)
    agx_xavier = module_power(["GPU", "CPU", "SOC", "CV", "VDDRQ", "SYS5V"])
    assert agx_xavier.summed and agx_xavier.rails == ("GPU", "CPU", "SOC", "CV", "VDDRQ", "SYS5V")
    agx_orin = module_power(["VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0", "VDDQ_VDD2_1V8AO"])
    assert agx_orin.rails == ("VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0") and "VDDQ_VDD2_1V8AO is fed" in agx_orin.note
    alone = module_power(["VIN_SYS_5V0"], "Jetson AGX Orin")  # one 5 V rail is a part, never the module
    assert not alone.ok and "one rail alone is a part" in (alone.missing_reason or "")
    assert module_power(["VIN", "VDD_GPU", "VDD_CPU_SOC_MSS", "VIN_SYS_5V0"]).boundary == "system"  # Thor: + carrier


def test_agx_orin_tegrastats_sums_its_three_input_rails() -> None:
    run = only(imp("jetson/LLM_PIPELINE-agx-orin-tegrastats-ts.log", device="Jetson AGX Orin 64GB", mode="infer"))
    m = run["metrics"]
    # awk: trapezoid over VDD_GPU_SOC + VDD_CPU_CV + VIN_SYS_5V0 (mW) at the 15 timestamps = 96767 mW s over 15 s
    assert m["energy_j"] == pytest.approx(96.767) and m["duration_s"] == 15
    assert m["energy_boundary"] == "jetson_module" and "energy_sum_of_rails" in run["flags"]
    assert "module power = sum of VDD_GPU_SOC + VDD_CPU_CV + VIN_SYS_5V0" in run["notes"]


def test_agx_orin_wide_telemetry_csv_leaves_vddq_out() -> None:
    run = only(imp("jetson/tegra_inference-agx-orin-wide-telemetry.csv", device="Jetson AGX Orin", mode="infer"))
    m = run["metrics"]
    # awk over VDD_GPU_SOC-IN_POWER + VDD_CPU_CV-IN_POWER + VIN_SYS_5V0-IN_POWER (mW), System-Time HH:MM:SS:
    # 46093282 mW s over 1200 s (38.4 W); VDDQ_VDD2_1V8AO (mean 6120.8 mW, fed from VIN_SYS_5V0) is not added
    assert m["energy_j"] == pytest.approx(46093.282) and m["duration_s"] == 1200
    totals = [t["domain"] for t in run["power_traces"] if t["boundary"] == "jetson_module"]
    assert totals == ["VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0"]
    assert "started_at" not in run  # times of day without a date: never placed on a calendar


def test_agx_orin_sysfs_logger_drops_its_footer_and_the_vddq_rail() -> None:
    run = only(imp("jetson/Jetson-Energy-Monitor-agx-orin-sysfs-50ms.csv", device="Jetson AGX Orin", mode="infer"))
    # awk over the 3479 five-field rows: trapezoid of GPU+SOC + CPU+CV + I/O (5V0) = 2154321.2323 mW s over
    # 176.190157 s; the 6-field footer (the writer's per-rail mJ, 905814.31 + 411715.58 + 837328.52) is no sample
    assert run["metrics"]["energy_j"] == pytest.approx(2154.3212323, abs=1e-6)
    assert run["metrics"]["duration_s"] == pytest.approx(176.190157, abs=1e-6)
    assert [t["domain"] for t in run["power_traces"]] == ["GPU+SOC", "CPU+CV", "I_O_5V0", "I_O_VDDQ"]


def test_xavier_nx_uses_vdd_in_alone() -> None:
    run = only(imp("jetson/tegra_burn-xavier-nx-tegrastats-ts.log", device="Jetson Xavier NX", mode="infer"))
    # awk: trapezoid of VDD_IN (mW) over the 103 timestamps = 1348900 mW s over 105 s; the sub-rails are not added
    assert run["metrics"]["energy_j"] == pytest.approx(1348.9) and run["metrics"]["duration_s"] == 105
    assert "energy_sum_of_rails" not in run["flags"] and "Jetson Xavier NX: module input rail VDD_IN" in run["notes"]


def test_orin_nano_sub_second_tegrastats_spreads_lines_within_each_second() -> None:
    run = only(imp("jetson/jetson-orin-nano-benchmarks-orin-nano-super-tegrastats-100ms.raw",
                   device="Jetson Orin Nano Super", mode="infer"))
    # awk: lines sharing a 1 s stamp (9-10 each) spread i/k s apart; trapezoid of VDD_IN = 881834.7667 mW s, 72.9 s
    assert run["metrics"]["energy_j"] == pytest.approx(881.8347667, abs=1e-6)
    assert run["metrics"]["duration_s"] == pytest.approx(72.9)
    assert "sample_times_spread_within_second" in run["flags"]


def test_a_parsed_tegrastats_csv_with_computed_times_is_flagged() -> None:
    run = only(imp("jetson/jetson-orin-nano-benchmarks-orin-nano-super-parsed.csv", mode="infer",
                   device="Jetson Orin Nano Super"))
    # awk: t_ms is index x 100; trapezoid of power_in_mw = 801071.75 mW s over 66 s (the real log above: 72.9 s)
    assert run["metrics"]["energy_j"] == pytest.approx(801.07175) and run["metrics"]["duration_s"] == 66
    assert "sample_times_nominal" in run["flags"]


def test_tx2_tegrastats_after_a_date_line_is_anchored_in_utc() -> None:
    run = only(imp("jetson/tegrastats_parser-tx2-tegrastats-dateheader.txt", device="Jetson TX2", mode="infer"))
    # awk: 432 lines 1 s apart (no times), trapezoid of VDD_IN = 1652261.5 mW s; `date` printed 18:22:31 UTC
    assert run["metrics"]["energy_j"] == pytest.approx(1652.2615)
    assert run["started_at"] == "2021-01-26T18:22:31+00:00" and "sample_interval_assumed_1s" in run["flags"]


def test_tx2_terminal_paste_skips_the_prompt_lines() -> None:
    run = only(imp("jetson/tx2-deep-learning-kit-bsp-tx2-terminal-paste.log", device="Jetson TX2", mode="idle"))
    assert run["metrics"]["energy_j"] == pytest.approx((3.566 + 3.445) / 2)  # VDD_IN 3566, then 3445 mW, 1 s apart


def test_agx_xavier_gpu_rail_alone_is_no_module_energy_and_mw_labelled_w_is_read_as_mw() -> None:
    """codecarbonForJetson's gpu_log: jtop's 'Power GPU' (mW) written as gpu_power_w, ISO times with a 'T'."""
    run = only(imp("jetson/codecarbonForJetson-agx-xavier-jtop-Power-GPU-mW-as-W.csv",
                   device="NVIDIA Jetson AGX Xavier", mode="infer"))
    trace = run["power_traces"][0]
    assert trace["power_w"][:2] == [4.939, 6.472]  # "4939.00", "6472.00": no Jetson draws 4.9 kW
    assert trace["t_s"][1] == pytest.approx(1.002869)  # 08:43:07.981514 -> 08:43:08.984383
    assert "energy_j" not in run["metrics"] and "unit_corrected_mw" in run["flags"]
    assert "GPU + CPU + SOC + CV + VDDRQ + SYS5V" in run["metrics"]["energy_missing_reason"]


# --- nvidia-smi wrapper with ISO 8601 and offsets ----------------------------------------------------------

def test_nvidia_smi_wrapper_with_iso_offsets_and_a_gpu_column() -> None:
    run = only(imp("nvidia_smi/gpu_glasses-8xH100-iso8601-offset-multigpu.csv", device="H100", mode="idle"))
    assert run["config"]["gpu_count"] == 8  # ids in 'gpu' (0..7); its 'index' column is always 0
    assert run["started_at"] == "2025-09-08T09:26:50+00:00"  # 17:26:50+08:00
    # GPUs 3-7 have no sample at the last two timestamps: the GPUs are aligned on the 6 s all of them
    # cover (each GPU's trapezoid over 17:26:50-56, summed, by hand = 3523.885 J; 587.31 W). Each
    # over its own span, summed, then divided by the longest span gave 3964.375 J / 8 s = 495.5 W.
    assert run["metrics"]["energy_j"] == pytest.approx(3523.885)
    assert run["metrics"]["duration_s"] == pytest.approx(6.0)
    assert run["metrics"]["avg_power_w"] == pytest.approx(587.3141667)
    assert "gpu0, gpu1, gpu2 outside it are left out" in run["notes"]
    assert run["device"]["memory_gb"] == pytest.approx(81559 * 1.048576 / 1e3)  # one GPU's memory.total, MiB


# --- CodeCarbon ---------------------------------------------------------------------------------------

def test_codecarbon_on_a_jetson_is_an_estimate() -> None:
    run = only(imp("codecarbon/codecarbonforjetson-emissions-3.0.2-agx-xavier-aarch64.csv",
                   device="Jetson AGX Xavier", mode="infer"))
    m = run["metrics"]
    assert m["energy_j"] == pytest.approx(9.115924695520182e-05 * 3.6e6)  # energy_consumed kWh
    assert (m["energy_boundary"], m["energy_method"]) == ("estimated", "estimated")
    assert run["device"]["kind"] == "jetson"


def test_codecarbon_nul_bytes_and_unfinished_rows() -> None:
    f = imp("codecarbon/lmpowerconsumption-emissions-3.0.2-rtx4090-936rows-nul-bytes.csv", mode="infer")
    # python: 936 data rows once the 206476 NULs are removed, 934 with a duration or energy (distinct run_ids);
    # their energy_consumed sums to 20.073618422075988 kWh
    assert len(f.runs) == 934 and any("206476 NUL bytes" in w for w in f.warnings)
    assert sum(r["metrics"].get("energy_j", 0) for r in f.runs) == pytest.approx(20.073618422075988 * 3.6e6)


def test_codecarbon_gpu_count_is_the_tracked_number_not_the_enumerated_one() -> None:
    f = imp("codecarbon/aira-llamafactory-emissions-2.8.3+3.0.7-8xH800-gpucount2.csv", mode="train")
    counts = sorted(r["config"]["gpu_count"] for r in f.runs)
    assert counts.count(2) == 31 and counts.count(1) == 6  # awk over gpu_count: 11 + 20 twos, 3 + 3 ones
    assert {r["device"]["name"] for r in f.runs} == {"NVIDIA H20", "NVIDIA H800"}  # "8 x NVIDIA H800": 8 enumerated


def test_codecarbon_1x_and_2x_headers() -> None:
    run = only(imp("codecarbon/younesbelkada-transformers-outputs-emissions-1.x-gcp.csv", device="GCP VM",
                   mode="train"))
    assert run["metrics"]["duration_s"] == pytest.approx(170.6476652622223)  # 1.x: no device columns at all
    two = imp("codecarbon/crystalgazers-emissions-2.x-apple-m1pro.csv", mode="train")
    assert len(two.runs) == 2 and two.runs[0]["device"]["name"] == "Apple M1 Pro"


# --- optimum-benchmark ---------------------------------------------------------------------------------

def test_optimum_energy_star_skips_non_model_phases_and_keeps_units() -> None:
    f = imp("optimum_benchmark/benchlab-llama3-8b-energystar-h100-benchmark.json")
    by_tag = {r["config"]["tag"]: r for r in f.runs}
    assert set(by_tag) == {"prefill", "decode"}  # load_dataset, preprocess_dataset, load_model are not runs
    prefill, decode = by_tag["prefill"]["metrics"], by_tag["decode"]["metrics"]
    assert prefill["energy_j"] == pytest.approx(0.08172944713225458 * 3.6e6)  # whole dataset, kWh
    assert prefill["j_per_sample"] == pytest.approx(3.6e6 / 12235.492042198697)  # samples/kWh
    assert decode["j_per_token"] == pytest.approx(3.6e6 / 7059021.617039943)  # tokens/kWh, not J per sample
    assert "j_per_sample" not in decode and "iterations_per_s" not in decode
    assert by_tag["prefill"]["device"]["memory_gb"] == pytest.approx(85.520809984)  # gpu_vram_mb bytes, one GPU


def test_optimum_two_of_five_gpus_decode_tokens_and_per_token_itl() -> None:
    f = imp("optimum_benchmark/dereklu-quant-llama70b-compile-2xa100-benchmark.json")
    by_tag = {r["config"]["tag"]: r for r in f.runs}
    assert set(by_tag) == {"prefill", "decode"}  # per_token belongs to decode; load_model is not a run
    decode = by_tag["decode"]
    assert decode["config"]["gpu_count"] == 2  # backend.device_ids "2,4"; environment lists 5 devices
    assert "memory_gb" not in decode["device"]  # gpu_vram_mb totals 4 A100s and a DGX Display: not one device's
    m = decode["metrics"]
    assert m["tokens_per_s"] == pytest.approx(10.106150928797131) and "iterations_per_s" not in m
    assert m["itl_avg_ms"] == pytest.approx(99.40907258471192)  # per_token.latency.mean 0.0994... s: ITL
    assert m["itl_p99_ms"] == pytest.approx(131.71405029296876)
    assert by_tag["prefill"]["metrics"]["throughput_sps"] == pytest.approx(7.598912567968993)


def test_optimum_text_and_markdown_renderings() -> None:
    txt = imp("optimum_benchmark/benchlab-llama3-8b-energystar-h100-benchmark_report.txt", device="H100", mode="infer")
    md = imp("optimum_benchmark/benchlab-llama3-8b-energystar-h100-benchmark_report.md", device="H100", mode="infer")
    for f in (txt, md):
        by_tag = {r["config"]["tag"]: r["metrics"] for r in f.runs}
        assert set(by_tag) == {"prefill", "decode"}
        assert by_tag["prefill"]["energy_j"] == pytest.approx(0.081729 * 3.6e6)  # "+ total: 0.081729 (kWh)"
        assert by_tag["decode"]["j_per_token"] == pytest.approx(3.6e6 / 7059021.617040)
    tokens = imp("optimum_benchmark/dereklu-quant-llama70b-compile-2xa100-benchmark_report.txt", device="A100",
                 mode="infer")
    assert {r["config"]["tag"]: r["metrics"].get("tokens_per_s") for r in tokens.runs}["decode"] == 10.11
    bge = only(imp("optimum_benchmark/optimum-benchmark-root-accidental-cpu-bge-benchmark_report.md", device="Xeon",
                   mode="infer"))
    assert bge["metrics"]["throughput_sps"] == 5.65 and bge["metrics"]["latency_p99_ms"] == pytest.approx(11547.694)


def test_optimum_legacy_training_csv_and_2023_report_csv() -> None:
    dirs = ("experiments", "A100-80GB", "llama_peft+bnb_batch_size(4)", "2")
    f = imp("optimum_benchmark/optimum-benchmark-examples-training-llamas-a100-training_results.csv",
            name="training_results.csv", dirs=dirs)
    by_tag = {r["config"]["tag"]: r for r in f.runs}
    assert set(by_tag) == {"warmup", "training", "overall_training"}
    assert by_tag["training"]["metrics"]["throughput_sps"] == pytest.approx(12.975170376673516)
    assert by_tag["overall_training"]["metrics"]["duration_s"] == pytest.approx(30.884538888931274)  # "samles/s"
    assert by_tag["training"]["config"]["mode"] == "train" and by_tag["training"]["device"]["name"] == "A100-80GB"
    report = imp("optimum_benchmark/optimum-benchmark-examples-whisper-t4-inference_report.csv")
    first = report.runs[0]  # whisper_auto_opt(O4): forward 98.6 iter/s at batch 1, generate 204 tok/s
    assert first["device"]["name"] == "Tesla T4" and first["metrics"]["iterations_per_s"] == 98.6
    assert report.runs[1]["metrics"]["tokens_per_s"] == 204.0 and "throughput_sps" not in report.runs[1]["metrics"]


def test_optimum_config_alone_says_what_it_is() -> None:
    data = json.loads((FORMATS / "optimum_benchmark/benchlab-llama3-8b-energystar-h100-benchmark.json").read_text())
    with pytest.raises(ResultFileError, match="a config without results"):
        load(json.dumps(data["config"]).encode(), "benchmark_config.json")


# --- AI Energy Score ------------------------------------------------------------------------------------

def test_ai_energy_score_leaves_failed_repetitions_out_and_flags_them() -> None:
    f = imp("ai_energy_score/huggingface-AIEnergyScore-results-benchmark_report-energystar-measures-2025-08.json",
            device="NVIDIA H100 80GB HBM3")
    assert f.format == "ai-energy-score"
    prefill, decode = (r["metrics"] for r in f.runs)
    # jq: mean GPU kWh of measures without [6] (all zero) x 3.6e6 = 288034.4113 J (the report's mean: 259230.97)
    assert prefill["energy_j"] == pytest.approx(288034.4113162336)
    # decode measures [4] (negative) and [6] (its prefill failed, so generate - 0) left out: 246190.0710 J
    assert decode["energy_j"] == pytest.approx(246190.07095189928)
    assert all("repetitions_excluded" in r["flags"] for r in f.runs)
    assert decode["j_per_token"] == pytest.approx(246190.07095189928 / 9000)  # efficiency x total kWh = 9000 tokens
    assert prefill["j_per_sample"] == pytest.approx(288.0344113162336)  # 1000 prompts (preprocess volume)
    assert prefill["energy_boundary"] == "gpu_board"  # the score is GPU energy


def test_nvidia_smi_log_with_units_in_parentheses() -> None:
    """The AI Energy Score v2 engine's own nvidia-smi wrapper writes `power.draw(W)`, `memory.total(MiB)`."""
    run = only(imp("ai_energy_score/neuralwatt-ai_energy_benchmarks-preAIES-nvidia_smi_log-h100-llama3.3-2025-03.csv",
                   mode="infer"))
    assert run["device"]["name"] == "NVIDIA H100 80GB HBM3" and run["config"]["power_limit_w"] == 700
    # awk: trapezoid of power.draw(W) over the 6425 timestamps = 477886.9279 J over 809.964 s
    assert run["metrics"]["energy_j"] == pytest.approx(477886.9279, abs=1e-3)
    assert run["metrics"]["duration_s"] == pytest.approx(809.964)


def test_ai_energy_score_master_results_header_only() -> None:
    with pytest.raises(ResultFileError, match="header only"):
        imp("ai_energy_score/huggingface-AIEnergyScore-v2-batch_runner-master_results-HEADER-ONLY-2025-10.csv")


# --- vLLM ----------------------------------------------------------------------------------------------------

def test_vllm_benchmark_serving_result() -> None:
    run = only(imp("vllm/LambdaLabsML-vllm-benchmark-2024-09-1xH100-llama3.1-8b-fp8-prompt10-len8192.json",
                   device="NVIDIA H100 80GB HBM3"))
    m = run["metrics"]
    assert (m["tokens_per_s"], m["prompt_tokens_per_s"]) == (408.288688998953, 1264.586459818024)
    assert (m["throughput_sps"], m["sample_unit"]) == (9.237300656084908, "request")
    # --save-detailed: TTFT from the requests; vLLM's p99 60.2885 ms counted its 3 answers without a token as 0 ms
    assert m["ttft_p99_ms"] == pytest.approx(60.29927535797469) and m["tpot_p50_ms"] == 5.271130460851754
    assert "ttft_p99_ms: vLLM's summary states 60.2885" in run["notes"]
    assert m["latency_avg_ms"] == 289.99347539793234  # mean_latency_ms, the 2024 name of e2el
    assert run["config"]["model"] == "neuralmagic/Meta-Llama-3.1-8B-FP8" and "energy_j" not in m


def test_vllm_failed_run_sweep_and_stripped_keys() -> None:
    failed = only(imp("vllm/er0080-vllmbench-fixture-v0.25.1-all-requests-failed.json", device="GPU"))
    assert failed["status"] == "failed" and "ttft_avg_ms" not in failed["metrics"]  # 0.0 everywhere is no result
    sweep = imp("vllm/er0080-vllmbench-fixture-v0.25.1-sweep-summary.json", device="GPU")
    assert [r["metrics"]["tokens_per_s"] for r in sweep.runs] == [93.74767963046673, 199.36907134182283]
    # total_token_throughput 281.2430388914002 - output_throughput 93.74767963046673
    assert sweep.runs[0]["metrics"]["prompt_tokens_per_s"] == pytest.approx(187.49535926093347)
    # SERVE--max_num_seqs=4: the server's cap on running requests, kept in the tag; not a batch size
    assert sweep.runs[0]["config"]["batch_size"] is None and sweep.runs[0]["config"]["tag"].endswith("max_num_seqs 4")
    assert len({r["config"]["sweep_id"] for r in sweep.runs}) == 1  # `vllm bench sweep`'s points: one sweep
    assert "sweep_id" not in failed["config"]  # one run alone is no sweep
    bare = only(imp("vllm/vllm-ascend-fork-2025-02-llama3-8b-sharegpt-qps-inf-NO-throughput-keys.json", device="NPU"))
    assert bare["metrics"]["ttft_p99_ms"] == 13925.454098824412 and "tokens_per_s" not in bare["metrics"]


# --- MLPerf Inference LLM runs, MLPerf Training ---------------------------------------------------------------

def test_mlperf_llm_server_tokens_ttft_tpot_and_gpu_count() -> None:
    runs = {r.runs[0]["config"]["tag"]: r.runs[0] for r in folder("mlperf_inference/v4.1_closed_AMD")}
    server = runs["MLPerf Server"]
    m = server["metrics"]
    assert m["tokens_per_s"] == 21028.23 and m["throughput_sps"] == 71.74 and m["sample_unit"] == "request"
    assert m["ttft_p99_ms"] == pytest.approx(1604.171041)  # 1604171041 ns
    assert m["tpot_p99_ms"] == pytest.approx(197.873909)
    assert m["ttft_avg_ms"] == pytest.approx(1006.32967)
    assert server["config"]["gpu_count"] == 8  # systems/8xMI300X_2xEPYC-9374F.json, beside the results
    assert runs["MLPerf Offline"]["metrics"]["tokens_per_s"] == 23514.8


def test_mlperf_inferred_tokens_are_not_counted_tokens() -> None:
    runs = [f.runs[0] for f in folder("mlperf_inference/v4.1_closed_Intel")]
    assert runs and all("tokens_per_s" not in r["metrics"] for r in runs)
    assert any("498.316 tokens/s inferred" in r["notes"] for r in runs)


def test_mlperf_power_run_joules_per_token() -> None:
    offline = next(f.runs[0] for f in folder("mlperf_inference/v4.1_closed_NVIDIA")
                   if f.runs[0]["config"]["tag"] == "MLPerf Offline")
    m = offline["metrics"]
    assert m["tokens_per_s"] == 25262.1
    assert m["j_per_token"] == pytest.approx(m["avg_power_w"] / 25262.1) and 0.24 < m["j_per_token"] < 0.25


def test_mlperf_interactive_scenario_from_the_folder() -> None:
    run = only(folder("mlperf_inference/v5.1_closed_Dell")[0])
    assert run["config"]["tag"] == "MLPerf Interactive"  # LoadGen writes 'Scenario : Server'
    assert run["metrics"]["tpot_p99_ms"] < 40  # the Interactive limit


def test_mlperf_training_power_folder() -> None:
    run = only(folder("mlperf_training/v4.0_smc-ac-power")[0])
    m = run["metrics"]
    assert m["duration_s"] == pytest.approx(277.048)  # run_stop 1715341407147 - run_start 1715341130099 ms
    # awk: harmonic mean of the 15 tracked_stats throughputs = 7612.026196 samples/s
    assert m["throughput_sps"] == pytest.approx(7612.026196, abs=1e-5)
    # awk: trapezoid of power_reading (W) between run_start and run_stop, edges interpolated = 1878755.5721 J
    assert m["energy_j"] == pytest.approx(1878755.5721, abs=1e-3) and m["energy_boundary"] == "wall"
    assert "power_measurement_stop_broken" in run["flags"]
    assert run["device"]["name"] == "NVIDIA H100-SXM5-80GB" and run["config"]["gpu_count"] == 8


def test_mlperf_training_result_files_alone() -> None:
    nvidia = only(imp("mlperf_training/v4.0_NVIDIA/results/h200_ngc23.09_pytorch/bert/result_0.txt", device="H200"))
    assert nvidia["metrics"]["duration_s"] == pytest.approx(300.868)  # 1715253160303 - 1715252859435 ms
    assert nvidia["metrics"]["throughput_sps"] == pytest.approx(8001.110991, abs=1e-5)  # awk: 17 blocks
    assert nvidia["config"]["workload"] == "bert" and nvidia["config"]["mode"] == "train"
    gaudi = only(imp("mlperf_training/v4.0_Intel-HabanaLabs/results/HLS-Gaudi2-PT/llama2_70b_lora/result_0.txt",
                     device="Gaudi2"))
    assert gaudi["status"] == "ok" and "throughput_sps" not in gaudi["metrics"]  # no tracked_stats
    with pytest.raises(ResultFileError, match="without its result file"):
        imp("mlperf_training/v4.0_smc-ac-power/results/1xSMC-H100-SXM-80GB/bert/power/"
            "result_5119-240510190348838227199_06/node_0.txt")


# --- ML.ENERGY, Zeus, Perseus --------------------------------------------------------------------------------

def test_mlenergy_v2_llm_json() -> None:
    run = only(imp("zeus_mlenergy/mlenergy-lb-v2-llm-chat-A100-Mixtral-8x22B-bs256+tp8+pp2.json",
                   name="bs256+tp8+pp2.json"))
    m = run["metrics"]
    assert run["device"]["name"] == "NVIDIA A100-SXM4-40GB" and run["config"]["gpu_count"] == 16  # TP 8 x PP 2
    assert (m["j_per_sample"], m["sample_unit"]) == (521.574942332967, "request")  # Energy/req (J)
    assert m["tokens_per_s"] == 1291.461609342521  # Token tput (tok/s)
    assert m["throughput_sps"] == pytest.approx(1291.461609342521 / 387.80066666666664)  # / Avg Output Tokens
    assert m["j_per_token"] == pytest.approx(521.574942332967 / 387.80066666666664)
    assert m["tpot_avg_ms"] == pytest.approx(287.09145206882897)  # Avg TPOT (s)
    assert run["config"]["batch_size"] == 256  # the file name's bs (Max BS 512 is max_num_seqs x PP)


def test_mlenergy_v2_diffusion_json() -> None:
    image = only(imp("zeus_mlenergy/mlenergy-lb-v2-t2i-A100-sdxl-base-bs4+steps25.json"))
    m = image["metrics"]
    assert (m["j_per_sample"], m["sample_unit"]) == (1028.9778500000016, "image")
    assert m["latency_avg_ms"] == pytest.approx(10595.553398132324)  # Batch latency (s), per batch of 4
    assert m["throughput_sps"] == pytest.approx(4 / 10.595553398132324)
    video = only(imp("zeus_mlenergy/mlenergy-lb-v2-t2v-A100-text-to-video-ms-1.7b-bs4+steps25+frames16.json"))
    assert (video["metrics"]["j_per_sample"], video["metrics"]["sample_unit"]) == (1039.8423750000075, "video")


def test_mlenergy_v1_csvs() -> None:
    chat = imp("zeus_mlenergy/mlenergy-lb-v1-A100_chat_benchmark.csv", name="A100_chat_benchmark.csv")
    first = chat.runs[0]["metrics"]  # BAIR/koala-13b,21.2077...,265.5732...,12.1433...,2144.8338...
    assert len(chat.runs) == 21 and chat.runs[0]["device"]["name"] == "A100"
    assert first["tokens_per_s"] == 21.207721076321384 and first["j_per_sample"] == 2144.8338435191445
    assert first["j_per_token"] == pytest.approx(2144.8338435191445 / 265.5732034922767)
    assert first["latency_avg_ms"] == pytest.approx(12143.3556952537)
    oom = imp("zeus_mlenergy/mlenergy-lb-v1b-A40_chat_benchmark-batchsize-OOM.csv", name="A40_chat_benchmark.csv")
    assert len(oom.runs) == 115 and sum(r["status"] == "oom" for r in oom.runs) == 33  # awk: 33 rows of 3 fields
    early = imp("zeus_mlenergy/mlenergy-lb-v0-2023-06-16-benchmark.csv", name="benchmark.csv", device="A100")
    assert early.runs[0]["metrics"]["tokens_per_s"] == 30.08236985276053


def test_mlenergy_v3_diffusion_configurations() -> None:
    f = imp("zeus_mlenergy/mlenergy-lb-v3-FLUX.1-dev-text-to-image.json")
    data = json.loads((FORMATS / "zeus_mlenergy/mlenergy-lb-v3-FLUX.1-dev-text-to-image.json").read_text())
    c = data["configurations"][0]
    m = f.runs[0]["metrics"]
    assert (m["j_per_sample"], m["sample_unit"]) == (c["energy_per_image_joules"], "image")
    assert m["throughput_sps"] == c["throughput_images_per_sec"]


def test_zeus_profile_named_with_several_gpu_ids() -> None:
    f = imp("zeus_mlenergy/zeus-profile-A40+resnet18+gpu0,1,2,3.csv", name="A40+resnet18+gpu0,1,2,3.csv")
    run = f.runs[0]
    assert len(f.runs) == 9 and run["device"]["name"] == "A40" and run["config"]["gpu_count"] == 4
    assert run["config"]["power_limit_w"] == 300  # __GlobalPowerLimitOptimizer_300
    assert run["metrics"]["energy_j"] == pytest.approx(16520.021, abs=1e-3)  # awk: gpu0..3_energy of row 1


def test_perseus_zeus_baseline_table() -> None:
    f = imp("zeus_mlenergy/zeus-perseus-sosp24-zeus_global-A100.csv", name="zeus_global.csv",
            dirs=("sosp24_data", "zeus", "csv", "A100"))
    run = f.runs[0]  # bert-huge-uncased, batch 256, dp1 tp1 pp4, mbs 8 x 32, 300 W on every stage
    m = run["metrics"]
    assert len(f.runs) == 30 and run["device"]["name"] == "A100" and run["config"]["gpu_count"] == 4
    assert run["config"]["power_limit_w"] == 300
    assert m["j_per_iteration"] == m["energy_j"] == pytest.approx(6819.0174444439235)
    assert m["iterations_per_s"] == pytest.approx(1 / 6.354814670704029)
    assert m["j_per_sample"] == pytest.approx(6819.0174444439235 / 256)
    local = imp("zeus_mlenergy/zeus-perseus-sosp24-zeus_local-A40.csv", name="zeus_local.csv",
                dirs=("sosp24_data", "zeus", "csv", "A40"))
    assert local.runs[0]["config"]["power_limit_w"] is None  # per-stage limits 175 x4, 150 x3, 300


def test_perseus_power_limit_dump_and_rank_profile() -> None:
    exp = "merak+bloom-3b+custom:0,10,18,26,32+dp1+pp4+tp1+mbs4+nmb128+ZeusGlobalPowerLimit"
    dump = imp("zeus_mlenergy/perseus-sosp24-ZeusGlobalPowerLimit-A100-bloom-3b-pp4.json",
               name="ZeusGlobalPowerLimit.json", dirs=("sosp24_data", "zeus", "raw", "A100", "zeus_global", exp))
    first = dump.runs[0]
    assert len(dump.runs) == 6 and first["config"]["power_limit_w"] == 300 and first["config"]["model"] == "bloom-3b"
    assert first["metrics"]["energy_j"] == pytest.approx(68579.61700000007)  # jq ."300".energy, J per iteration
    assert first["metrics"]["j_per_sample"] == pytest.approx(68579.61700000007 / 512)  # mbs 4 x nmb 128
    prof = only(imp("zeus_mlenergy/perseus-sosp24-A100-bloom-3b-PointSolution-0.prof.json", name="0.prof.json",
                    dirs=("sosp24_data", "perseus", "A100", "dp1+pp4+tp1", exp.replace("ZeusGlobalPowerLimit",
                                                                                         "PointSolution"))))
    # jq: iterations 2..3 (first two are warm-up): mean of the slowest rank's time = 61.74352324008942 s,
    # mean of the 4 ranks' summed energy = 68910.66950000077 J
    assert prof["metrics"]["duration_s"] == pytest.approx(61.74352324008942)
    assert prof["metrics"]["energy_j"] == pytest.approx(68910.66950000077)


def test_perseus_emulated_frontier_is_refused_with_the_reason() -> None:
    with pytest.raises(ResultFileError, match="emulated iterations"):
        imp("zeus_mlenergy/perseus-sosp24-iteration_time_energy-a100_sxm-bloom_bf16_mb12.csv",
            name="bloom_bf16_mb12.csv")


# --- Lambda ------------------------------------------------------------------------------------------------------

def test_lambda_v2_layout_units_per_task_and_zero_cells() -> None:
    f = imp("lambda_dlbench/pytorch-train-throughput-v2-fp16.csv")
    assert len(f.runs) == 650  # awk: 93 rows x 7 tasks = 651 cells, one of them 0.0 (not run)
    assert any("1 cell(s) of 0" in w for w in f.warnings)
    row = {r["config"]["workload"]: r for r in f.runs
           if r["environment"]["system_name"] == "LambdaBM_ENG04_1xH200_140GB_SXM_h200_v2"}
    resnet = row["resnet50"]["metrics"]
    assert resnet["throughput_sps"] == 3079.0 and resnet["sample_unit"] == "image"
    assert row["bert_large_squad"]["metrics"]["sample_unit"] == "sequence"
    assert row["gnmt"]["metrics"]["tokens_per_s"] == 570504.0 and "throughput_sps" not in row["gnmt"]["metrics"]
    assert row["resnet50"]["device"]["name"] == "H200 140GB SXM" and row["resnet50"]["config"]["gpu_count"] == 1


def test_lambda_v1_json_records_bs_tables_and_v0() -> None:
    v1 = imp("lambda_dlbench/pytorch-train-throughput-fp16.json")
    h100 = {r["config"]["workload"]: r for r in v1.runs if r["device"]["name"] == "H100 80GB SXM5"}
    assert len(v1.runs) == 320 and h100["resnet50"]["metrics"]["throughput_sps"] == 20728  # jq: 32 rows x 10 tasks
    assert h100["resnet50"]["config"]["gpu_count"] == 8 and h100["resnet50"]["device"]["tdp_w"] == 700  # 5600 / 8
    assert h100["tacotron2"]["metrics"]["sample_unit"] == "frame"  # train_items_per_sec: mel frames
    bs = imp("lambda_dlbench/pytorch-train-bs-fp16.json")
    quadro = next(r for r in bs.runs
                  if r["device"]["name"] == "Quadro RTX 8000" and r["config"]["workload"] == "resnet50")
    assert quadro["config"]["batch_size"] == 928 and "throughput_sps" not in quadro["metrics"]
    v0 = imp("lambda_dlbench/pytorch_benchmark_throughput.csv")
    assert len(v0.runs) == 182  # awk: 184 cells, 2 of them 0.0
    amp = next(r for r in v0.runs if r["config"]["workload"] == "resnet50" and r["config"]["precision"] == "fp16")
    assert amp["metrics"]["throughput_sps"] == 910.41 and amp["config"]["gpu_count"] == 4  # resnet50_AMP, 4x1080Ti


# --- dllogger ------------------------------------------------------------------------------------------------------

def test_dllogger_string_steps_avg_and_percentiles() -> None:
    runs = imp("nvidia_dle/Fastpitch-inference-dllogger-DLLL-string-steps-avg-90pct.json", device="GPU").runs
    run = runs[0]  # the generator stage; its frames/s goes with its own latency (issue 18, item 1c)
    m = run["metrics"]
    path = FORMATS / "nvidia_dle/Fastpitch-inference-dllogger-DLLL-string-steps-avg-90pct.json"
    data = [json.loads(line[5:]) for line in path.read_text().splitlines()]
    avg = {k: v for d in data if d["step"] == "avg" for k, v in d["data"].items()}
    p90 = {k: v for d in data if d["step"] == "90%" for k, v in d["data"].items()}
    assert (m["throughput_sps"], m["sample_unit"]) == (avg["generator_frames/s"], "frame")
    assert m["latency_avg_ms"] == pytest.approx(avg["generator_latency"] * 1e3)
    assert m["latency_p90_ms"] == pytest.approx(p90["generator_latency"] * 1e3)
    assert runs[-1]["metrics"]["latency_p90_ms"] == pytest.approx(p90["latency"] * 1e3)  # end to end
    assert all(r["config"]["mode"] == "infer" for r in runs)


def test_dllogger_old_column_nvlog() -> None:
    run = only(imp("nvidia_dle/tacotron2-ide8-train-8xV100-old-nvlog-0.2.2-column.json", mode="train"))
    assert run["device"] == {"name": "Tesla V100-SXM2-16GB", "kind": "gpu", "memory_gb": pytest.approx(16.91353088)}
    assert run["config"]["gpu_count"] == 2  # args.world_size; gpu_info.num 8 is what was visible
    m = run["metrics"]
    assert m["throughput_unit_not_stated"] == 16277.613694366899 and "throughput_sps" not in m  # items/sec
    assert m["duration_s"] == 640.564523935318  # epoch_time
    infer = only(imp("nvidia_dle/Tacotron2-adapted-inference-rtx2070-old-nvlog-0.2.2-nested-iter.json"))
    assert infer["device"]["name"] == "GeForce RTX 2070 with Max-Q Design" and infer["config"]["precision"] == "fp16"
    assert infer["metrics"]["latency_avg_ms"] == pytest.approx(7665.1287939967006)  # iter.latency [[7.665...]] s


def test_dllogger_metadata_units_and_stdout_with_dlll_prefix() -> None:
    run = only(imp("nvidia_dle/NVIDIA-dllogger-v1.0.0-example_resnet_log.json", device="GPU", mode="train"))
    assert run["metrics"].get("sample_unit") in (None, "image")
    stdout = only(imp("nvidia_dle/NVIDIA-dllogger-example_stdout_log.txt", device="GPU", mode="train"))
    assert stdout["status"] == "ok"


# --- DCGM ------------------------------------------------------------------------------------------------------------

def test_dcgm_field_csv_sorted_per_gpu() -> None:
    run = only(imp("dcgm/dcgm_test-8gpu-dcgm-long-format-us-epoch.csv", device="GPU", mode="idle"))
    # numpy: rows sorted by GPU and time; the window all 8 GPUs cover (their samples are staggered by up
    # to 0.21 s); per GPU, trapezoid of power_usage_instant interpolated at its edges, summed = 1046.10955 J
    # over 1.840636 s = 568.34 W (8 GPUs at about 71 W). Each over its own span gave 1191.07 J / 2.24 s.
    assert run["metrics"]["energy_j"] == pytest.approx(1046.1095515, abs=1e-6)
    assert run["metrics"]["avg_power_w"] == pytest.approx(568.3413467, abs=1e-6)
    assert "left out" not in run["notes"]  # staggered sampling, not a GPU missing samples
    assert run["config"]["gpu_count"] == 8 and run["started_at"].startswith("2024-06-19T07:57:16.956328")


def test_dcgm_job_statistics_leave_saturated_energy_out() -> None:
    f = imp("dcgm/HPC-Resource-Prediction-dcgm-job-stats-csv-FIRSTPART-21lines.csv", device="Tesla V100", mode="train")
    first, second, third = f.runs[:3]
    assert first["metrics"]["energy_missing_reason"].startswith("energyconsumed_joules 157521 J disagrees")
    assert "energy_counter_saturated" in first["flags"]  # 44.0546 W x 4452.47 s = 196150 J
    assert "energy_nonpositive" in second["flags"]  # 0.0 J
    assert "energy_counter_saturated" in third["flags"]  # 94816 J vs 26.3725 W x 8398.3 s = 221484 J
    fourth = f.runs[3]["metrics"]
    assert fourth["energy_j"] == 69451.0  # 37.5481 W x 1851.72 s = 69528 J: agrees
    assert fourth["duration_s"] == 1851.72


def test_dcgm_dmon_without_power_says_so() -> None:
    with pytest.raises(ResultFileError, match="without power fields"):
        imp("dcgm/MIGProfiler-dmon-derived-MIG-GPU-I-GRACT-FBUSD-a100-finetune_moco.csv")


def test_dcgmi_dmon_text_prefers_the_energy_counter() -> None:
    """The layout of DeviceMonitor.cpp (header, unit line, entity rows, N/A, the stop message)."""
    text = ("#Entity   POWER       TOTEC       TMPTR\nID        W           mJ          C\n"
            "GPU 0     61.256      1000        33\nGPU 1     N/A         2000        34\n"
            "GPU 0     63.256      62000       33\nGPU 1     70.000      74000       34\n"
            "dmon was stopped due to receiving a signal\n")
    run = only(load(text.encode(), "dmon.log", hints=Hints(device="A100", mode="idle"))[0])
    assert run["metrics"]["energy_j"] == pytest.approx(((62000 - 1000) + (74000 - 2000)) / 1000)  # TOTEC mJ
    assert run["metrics"]["energy_method"] == "counter" and "sample_interval_assumed_1s" in run["flags"]


# --- per-experiment tables -----------------------------------------------------------------------------------------

def test_experiment_table_is_not_a_jtop_log() -> None:
    """green-ml-bench results.csv has a timestamp and *_power_* columns: it was read as a jtop log (58.57 W as
    0.0586 W, a duration of days, the RTX 4070 catalogued as a Jetson)."""
    f = imp("experiment_csv/green-ml-bench-results-wh-training-time.csv", device="NVIDIA GeForce RTX 4070")
    assert f.format == "experiment-table" and len(f.runs) == 22
    run = f.runs[0]  # tune_RFC / wine: 77.65 s, CPU 1.153824 + GPU 0.783572 + RAM 0.378963 Wh
    assert run["device"] == {"name": "NVIDIA GeForce RTX 4070", "kind": "gpu"}
    assert run["metrics"]["duration_s"] == 77.65 and run["config"]["mode"] == "train"  # training_time_s
    assert run["metrics"]["energy_j"] == pytest.approx((1.153824 + 0.783572 + 0.378963) * 3600)
    assert run["metrics"]["energy_boundary"] == "system"


def test_experiment_tables_jetson_and_llm() -> None:
    rf = imp("experiment_csv/RF-Anomaly-Orin-Nano-benchmark_results.csv", device="Jetson Orin Nano")
    m = rf.runs[0]["metrics"]  # ae / PyTorch
    assert m["energy_j"] == 4.2802035427093506 and m["avg_power_w"] == 4.92
    assert "j_per_sample" not in m and "energy_per_inference_j is 0" in rf.runs[0]["notes"]  # broken column
    assert (m["throughput_sps"], m["sample_unit"]) == (87.3578195202458, "frame")  # inference_throughput_fps
    fno = imp("experiment_csv/neural-operator-jetson-benchmark-orin-nano-super-fno-energy-summary.csv",
              device="Jetson Orin Nano Super")
    assert fno.runs[0]["metrics"]["j_per_sample"] == 0.04332620051468655  # energy_per_inf_j
    assert fno.runs[0]["metrics"]["energy_j"] == 1469.7980262602266
    thor = imp("experiment_csv/Jetson-thor-transformers-summary-nvml-power.tsv", device="Jetson AGX Thor")
    assert thor.runs[0]["metrics"]["energy_j"] == pytest.approx(67.68581072133966 * 16.351146784674512)
    a100 = imp("experiment_csv/gpu_power_benchmark-A100-aggregated-per-config.csv", device="A100", mode="train")
    assert a100.runs[0]["metrics"]["j_per_token"] == pytest.approx(198.0330880326314 / 67.19685905089818)


def test_experiment_table_without_units_is_read_by_its_rail_names() -> None:
    run = imp("experiment_csv/CSC2231_Project-jetson-nano-per-run-power-mW.csv", device="Jetson Nano").runs[0]
    assert run["metrics"]["avg_power_w"] == pytest.approx(3.7479943)  # PWR_IN_AVG 3747.9943 mW


def test_token_latency_p90_p95_are_their_own_figures():
    """MLPerf's 90th/95th percentile first-token and output-token latencies are stored as TTFT/TPOT
    percentiles (schema 12), not dropped and not mixed with request latency."""
    import importers

    folder = FORMATS / "mlperf_inference/v4.1_closed_AMD/results/8xMI300X_2xEPYC-9374F/llama2-70b-99/Server"
    summary = folder / "performance/run_1/mlperf_log_summary.txt"
    loaded, _ = importers.load(summary.read_bytes(), summary.name)
    m = loaded.runs[0]["metrics"]
    assert m["ttft_p90_ms"] == pytest.approx(1319.203675)
    assert m["ttft_p95_ms"] == pytest.approx(1411.787782)
    assert m["ttft_p50_ms"] < m["ttft_p90_ms"] < m["ttft_p95_ms"] < m["ttft_p99_ms"]
    assert m["tpot_p50_ms"] <= m["tpot_p90_ms"] <= m["tpot_p95_ms"] <= m["tpot_p99_ms"]
