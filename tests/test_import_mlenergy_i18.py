"""ML.ENERGY leaderboard files, issue 18: v3 inter-token latencies are time per output token, v3's
max_num_seqs is a cap and not a batch size, v3 files written before 2026-01 hold a whole-run
tokens/s; v1 devices from a file name are hints; v1 per-request JSON arrays are serving runs.

Real files in tests/fixtures/formats/zeus_mlenergy (attribution in SOURCES.md). Expected figures
are read from the files here with json (not through the importer), or written as literals saying
which field of the file they are.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from importers import Hints, ImportedFile, load
from joulebench.errors import ResultFileError

ZM = Path(__file__).parent / "fixtures" / "formats" / "zeus_mlenergy"
V3_LLAMA = ZM / "mlenergy-v3-leaderboard-llama31-8b-lm-arena-chat.json"
V3_DEEPSEEK = ZM / "mlenergy-lb-v3-DeepSeek-R1-0528-gpqa.json"
V3_DEEPSEEK_2025 = ZM / "mlenergy-lb-v3-2025-12-DeepSeek-R1-0528-gpqa-whole-run-throughput.json"
V3_NEMOTRON = ZM / "mlenergy-lb-v3-Nemotron-Nano-12B-v2-VL-image-chat.json"
V3_NEMOTRON_2025 = ZM / "mlenergy-lb-v3-2025-12-Nemotron-Nano-12B-v2-VL-image-chat-no-avg-output-len.json"
V3_CODER_FP8 = ZM / "mlenergy-lb-v3-Qwen3-Coder-480B-FP8-sourcegraph-fim-dp-ep.json"
V3_TASK_FIM = ZM / "mlenergy-lb-v3-task-sourcegraph-fim.json"
V3_VIDEO = ZM / "mlenergy-lb-v3-CogVideoX-2b-text-to-video.json"
V3_LLM_FILES = (V3_LLAMA, V3_DEEPSEEK, V3_DEEPSEEK_2025, V3_NEMOTRON, V3_NEMOTRON_2025, V3_CODER_FP8, V3_TASK_FIM)


def imp(path: Path, name: str | None = None, dirs: tuple[str, ...] = (), **hints: Any) -> ImportedFile:
    return load(path.read_bytes(), name or path.name, hints=Hints(**hints), dirs=dirs)[0]


def configs(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = json.loads(path.read_text())["configurations"]
    return out


def key(c: dict[str, Any]) -> tuple[Any, ...]:
    return c["gpu_model"], c["num_gpus"], c["max_num_seqs"]


# --- 1. v3 ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", V3_LLM_FILES, ids=lambda p: p.name)
def test_v3_inter_token_latencies_are_stored_as_inter_token_latency(path: Path) -> None:
    f = imp(path)
    cs = configs(path)
    assert len(f.runs) == len(cs)
    for run, c in zip(f.runs, cs, strict=True):
        m = run["metrics"]
        assert (m["itl_p50_ms"], m["itl_p90_ms"], m["itl_p95_ms"], m["itl_p99_ms"]) == (
            c["median_itl_ms"], c["p90_itl_ms"], c["p95_itl_ms"], c["p99_itl_ms"])
        assert not any(k.startswith("latency_") for k in m)  # never a request's latency
        assert m["j_per_token"] == c["energy_per_token_joules"] and m["avg_power_w"] == c["avg_power_watts"]
        assert (m["j_per_sample"], m["sample_unit"]) == (c["energy_per_request_joules"], "request")
        assert (m["energy_boundary"], m["energy_method"]) == ("gpu_board", "reported")
        assert "inter-token latencies over every token" in run["notes"]


def test_v3_llama_first_configuration_exact_figures() -> None:
    m = imp(V3_LLAMA).runs[0]["metrics"]
    assert m["itl_p50_ms"] == 4.574391001369804  # median_itl_ms
    assert m["itl_p90_ms"] == 6.00760200759396  # p90_itl_ms
    assert m["itl_p95_ms"] == 7.697059109341346  # p95_itl_ms
    assert m["itl_p99_ms"] == 14.804588232655046  # p99_itl_ms
    assert m["tokens_per_s"] == 1637.2643059323757  # output_throughput_tokens_per_sec
    assert m["throughput_sps"] == pytest.approx(1637.2643059323757 / 387.9423828125)  # / avg_output_len


@pytest.mark.parametrize("path", V3_LLM_FILES, ids=lambda p: p.name)
def test_v3_max_num_seqs_is_the_servers_cap_kept_as_the_tag_not_a_batch_size(path: Path) -> None:
    f = imp(path)
    for run, c in zip(f.runs, configs(path), strict=True):
        assert run["config"]["batch_size"] is None
        assert run["config"]["tag"] == f"max_num_seqs {c['max_num_seqs']}"
        assert f"mean running batch {c['avg_batch_size']:.4g}" in run["notes"]
    assert "max_num_seqs is the server's maximum batch, not the batch it ran" in f.warnings[0]
    given = imp(path, batch_size=8)  # what the user says wins, and is recorded as theirs
    assert {r["config"]["batch_size"] for r in given.runs} == {8}
    assert [(s.label, s.value, s.origin) for s in given.supplied] == [("batch_size", "8", "user")]


def test_v3_written_before_2026_whole_run_tokens_per_s_is_replaced_by_the_energy_windows() -> None:
    """Before the leaderboard's "Fix steady state token throughput" (2026-01-01) the file's tokens/s
    covered the whole run while its energy figures cover the steady state; the same runs in the
    newer file state the steady state's tokens/s, which is avg_power_watts / energy_per_token_joules."""
    newer = {key(c): c for c in configs(V3_DEEPSEEK)}
    old = imp(V3_DEEPSEEK_2025)
    for run, c in zip(old.runs, configs(V3_DEEPSEEK_2025), strict=True):
        m = run["metrics"]
        assert m["tokens_per_s"] == pytest.approx(newer[key(c)]["output_throughput_tokens_per_sec"], rel=1e-12)
        assert m["tokens_per_s"] != c["output_throughput_tokens_per_sec"]  # e.g. 2999.03, the file says 1855.87
        assert m["throughput_sps"] == pytest.approx(m["tokens_per_s"] / c["avg_output_len"], rel=1e-12)
        assert m["avg_power_w"] / m["throughput_sps"] == pytest.approx(c["energy_per_request_joules"], rel=1e-9)
        assert "throughput_window_corrected" in run["flags"]
        assert f"output_throughput_tokens_per_sec {c['output_throughput_tokens_per_sec']:.6g} covers the whole run" \
            in run["notes"]
    first = old.runs[0]["metrics"]
    assert first["tokens_per_s"] == pytest.approx(2999.034216354128)  # the newer file's, max_num_seqs 128
    for run, c in zip(imp(V3_DEEPSEEK).runs, configs(V3_DEEPSEEK), strict=True):  # the newer file: as stated
        assert run["metrics"]["tokens_per_s"] == c["output_throughput_tokens_per_sec"]
        assert "throughput_window_corrected" not in run["flags"]


def test_v3_without_avg_output_len_derives_requests_per_s_from_power_and_energy_per_request() -> None:
    newer = {key(c): c for c in configs(V3_NEMOTRON)}
    for run, c in zip(imp(V3_NEMOTRON_2025).runs, configs(V3_NEMOTRON_2025), strict=True):
        assert "avg_output_len" not in c
        m = run["metrics"]
        assert m["throughput_sps"] == pytest.approx(c["avg_power_watts"] / c["energy_per_request_joules"], rel=1e-12)
        same = newer[key(c)]  # the same run in the newer file, which states avg_output_len
        assert m["throughput_sps"] == pytest.approx(same["output_throughput_tokens_per_sec"] / same["avg_output_len"],
                                                    rel=1e-9)
        assert m["tokens_per_s"] == pytest.approx(same["output_throughput_tokens_per_sec"], rel=1e-12)
        assert "no avg_output_len" in m["throughput_derivation"]


def test_v3_fp8_weights_leave_precision_not_stated_and_parallel_degrees_are_kept() -> None:
    f = imp(V3_CODER_FP8)
    assert {r["config"]["precision"] for r in f.runs} == {None}  # fp8 is not one of JouleBench's precisions
    assert "weight_precision 'fp8' is not one of fp32, tf32, fp16, bf16" in f.warnings[0]
    for run, c in zip(f.runs, configs(V3_CODER_FP8), strict=True):
        p = c["parallelization"]
        assert run["config"]["gpu_count"] == c["num_gpus"]
        assert (f"tensor/data/expert parallel {p['tensor_parallel']}/{p['data_parallel']}/{p['expert_parallel']}"
                in run["notes"])
    assert "(DP for attention, EP for MLP experts)" in f.runs[0]["notes"]
    assert imp(V3_CODER_FP8, precision="bf16").runs[0]["config"]["precision"] == "bf16"  # a hint fills it


def test_v3_per_task_file_is_read_and_agrees_with_the_per_model_file() -> None:
    """public/data/tasks/<task>.json: every configuration names its model, weight precision and flat
    parallel degrees (it was refused as an unknown format)."""
    f = imp(V3_TASK_FIM)
    cs = configs(V3_TASK_FIM)
    assert f.format == "mlenergy-leaderboard" and len(f.runs) == len(cs) == 50
    assert [r["config"]["model"] for r in f.runs] == [c["model_id"] for c in cs]
    assert {r["config"]["task"] for r in f.runs} == {"sourcegraph-fim"}
    per_model = {key(c): r for r, c in zip(imp(V3_CODER_FP8).runs, configs(V3_CODER_FP8), strict=True)}
    matched = 0
    for run, c in zip(f.runs, cs, strict=True):
        assert run["config"]["precision"] == ("bf16" if c["weight_precision"] == "bfloat16" else None)
        if c["model_id"] == "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8":
            assert run["metrics"] == per_model[key(c)]["metrics"]
            assert (f"tensor/data/expert parallel {c['tensor_parallel']}/{c['data_parallel']}/{c['expert_parallel']}"
                    in run["notes"])
            matched += 1
    assert matched == 16


def test_v3_video_fps_is_the_playback_rate_not_a_throughput() -> None:
    f = imp(V3_VIDEO)
    for run, c in zip(f.runs, configs(V3_VIDEO), strict=True):
        m = run["metrics"]
        assert (m["j_per_sample"], m["sample_unit"]) == (c["energy_per_video_joules"], "video")
        assert m["throughput_sps"] == c["throughput_videos_per_sec"] != c["fps"]
        assert m["latency_avg_ms"] == pytest.approx(c["batch_latency_s"] * 1e3)  # one batch
        assert run["config"]["batch_size"] == c["batch_size"] and run["config"]["image_size"] is None  # 720x480
        assert f"{c['num_frames']} frames played at {float(c['fps'])} fps" in run["notes"]
        assert not any(k.startswith("tpot_") for k in m)


# --- 2. v1 CSV: a device read from the file name is a hint -------------------------------------------------------

V1_A100 = ZM / "mlenergy-lb-v1-A100_chat_benchmark.csv"  # data/legacy/A100_chat_benchmark.csv
V1_A40_CONCISE = ZM / "mlenergy-lb-v1-A40_chat-concise_benchmark.csv"  # data/legacy/A40_chat-concise_benchmark.csv
V1_V100_2023 = ZM / "mlenergy-lb-v1-2023-06-17-V100_instruct-concise_benchmark.csv"  # data/2023-06-17/...


@pytest.mark.parametrize(("path", "name", "gpu", "task"), [
    (V1_A100, "A100_chat_benchmark.csv", "A100", "chat"),
    (V1_A40_CONCISE, "A40_chat-concise_benchmark.csv", "A40", "chat-concise"),
    (V1_V100_2023, "V100_instruct-concise_benchmark.csv", "V100", "instruct-concise"),
])
def test_v1_gpu_in_the_file_name_is_a_hint_recorded_as_supplied(path: Path, name: str, gpu: str, task: str) -> None:
    f = imp(path, name)
    assert {r["device"]["name"] for r in f.runs} == {gpu} and {r["config"]["task"] for r in f.runs} == {task}
    assert [(s.label, s.value, s.origin) for s in f.supplied] == [("device", gpu, "folder_name")]
    assert f"device {gpu!r} taken from the file name" in f.warnings
    assert "device" not in f.not_stated()


def test_v1_file_name_that_names_no_device_leaves_the_device_not_stated() -> None:
    f = imp(V1_A100, "chat_benchmark.csv")  # no device in its name
    assert {r["device"] is None for r in f.runs} == {True}
    assert f.not_stated()["device"] == 21 and f.supplied == ()
    assert "device (all 21 runs; the file's content does not name its GPU" in f.warnings[0]
    # 'mlenergy-lb-v1-A100' is no device name, but a word of the name is: read as a file name's device, said
    f = imp(V1_A100)
    assert {r["device"]["name"] for r in f.runs} == {"A100"} and f.supplied[0].origin == "folder_name"
    assert any("device 'A100' taken from the file name" in w for w in f.warnings)
    assert imp(V1_A100, "results_chat_benchmark.csv").runs[0]["device"] is None  # 'results' is no device either


@pytest.mark.parametrize("name", ["A100_chat_benchmark.csv", "mlenergy-lb-v1-A100_chat_benchmark.csv"])
def test_v1_the_users_device_wins_over_the_file_name(name: str) -> None:
    f = imp(V1_A100, name, device="A100 SXM4 40GB")
    assert {r["device"]["name"] for r in f.runs} == {"A100 SXM4 40GB"}
    assert [(s.label, s.value, s.origin) for s in f.supplied] == [("device", "A100 SXM4 40GB", "user")]


def test_v1_device_from_the_file_name_can_be_relabelled(seeded_db: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main
    from db import Store

    named = tmp_path / "A100_chat_benchmark.csv"
    named.write_bytes(V1_A100.read_bytes())
    assert main(["import", str(named), "--db", str(seeded_db)]) == 0
    assert main(["label", named.name, "--device", "A100 SXM4 40GB", "--db", str(seeded_db)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\ndevice +A100 SXM4 40GB +0 +21\n", out), out  # 0 filled, 21 replaced
    with Store.open(seeded_db) as store:
        rows = store.query("SELECT DISTINCT r.device_name, l.origin FROM runs r JOIN sources s USING (source_id) "
                           "JOIN run_labels l ON l.run_id = r.run_id AND l.label = 'device' "
                           "WHERE s.file_name = ?", [named.name]).rows()
    assert rows == [("A100 SXM4 40GB", "user")]


# --- 3. v1 raw results: a JSON array of per-request measurements is one serving run ------------------------------

V1_RAW = ZM / "mlenergy-lb-v1-raw-2023-06-chat-lmsys--vicuna-7B-benchmark.json"  # data/chat/lmsys--vicuna-7B/


def test_v1_raw_per_request_results_are_one_serving_run() -> None:
    items = json.loads(V1_RAW.read_text())
    f = imp(V1_RAW, "benchmark.json", dirs=("data", "chat", "lmsys--vicuna-7B"))
    assert f.format == "mlenergy-leaderboard" and len(f.runs) == 1
    run = f.runs[0]
    assert run["config"]["model"] == "lmsys/vicuna-7B" and run["config"]["task"] == "chat"  # the script's folders
    assert run["config"]["batch_size"] == 1 and run["config"]["mode"] == "infer"  # one prompt per window
    assert run["device"] is None and f.not_stated()["device"] == 1  # nothing names the GPU
    m = run["metrics"]
    energy = 2215.2789999842644 + 640.4210000038147 + 2334.6629999876022 + 649.0310000181198  # the 4 items' energy
    latency = 10.831703640520573 + 3.109673395752907 + 11.39552809484303 + 3.076037598773837  # and latency, s
    assert m["examples"] == 4 and m["sample_unit"] == "request"
    assert m["energy_j"] == pytest.approx(energy, rel=1e-12) and m["duration_s"] == pytest.approx(latency, rel=1e-12)
    assert m["j_per_sample"] == pytest.approx(energy / 4, rel=1e-12)  # mean energy per request: 1459.85 J
    assert m["j_per_token"] == pytest.approx(energy / (331 + 98 + 346 + 96), rel=1e-12)  # 6.7042 J per token
    assert m["throughput_sps"] == pytest.approx(4 / latency, rel=1e-12)  # 0.14078 requests/s
    assert m["avg_power_w"] == pytest.approx(energy / latency, rel=1e-12)  # 205.5 W
    assert m["tokens_per_s"] == pytest.approx(sum(i["throughput"] for i in items) / 4, rel=1e-12)  # 30.911
    assert m["latency_avg_ms"] == pytest.approx(latency / 4 * 1e3, rel=1e-12)
    assert m["latency_p50_ms"] == pytest.approx((3.109673395752907 + 10.831703640520573) / 2 * 1e3, rel=1e-12)
    third, fourth = 10.831703640520573, 11.39552809484303  # p90 lies at rank 3 x 0.9 = 2.7 of the sorted four
    assert m["latency_p90_ms"] == pytest.approx((third + 0.7 * (fourth - third)) * 1e3, rel=1e-12)
    assert m["latency_max_ms"] == pytest.approx(11395.52809484303)
    assert (m["energy_boundary"], m["energy_method"]) == ("gpu_board", "reported")
    assert "response length 96-346 tokens" in run["notes"] and "energy per request 640.4-2335 J" in run["notes"]


def test_v1_raw_results_take_a_device_only_from_a_folder_name_or_the_user() -> None:
    assert imp(V1_RAW).runs[0]["device"] is None and imp(V1_RAW).runs[0]["config"]["task"] is None
    in_folder = imp(V1_RAW, "benchmark.json", dirs=("results", "A100", "chat", "lmsys--vicuna-7B"))
    assert in_folder.runs[0]["device"]["name"] == "A100"
    assert [(s.label, s.value, s.origin) for s in in_folder.supplied] == [("device", "A100", "folder_name")]
    given = imp(V1_RAW, device="NVIDIA A40")
    assert given.runs[0]["device"]["name"] == "NVIDIA A40"


def _batched(length: float, energy: float, n: int, batch_tokens: float, latency: float = 8.0) -> dict[str, Any]:
    return {"model": "lmsys--vicuna-7B", "throughput": batch_tokens / latency, "response_length": length,
            "latency": latency, "energy": energy, "input": ["p"] * n, "output": ["o"] * n}


def test_v1_raw_batched_items_of_both_script_versions() -> None:
    """No batched raw file was found in public; these items follow the writer's code
    (ml-energy/leaderboard-v2 scripts/benchmark.py): 2023-07/08 (764dce6) wrote a batch's total
    tokens and energy, 2023-09 (01bc423) divided both by the batch size, also for a short last batch."""
    july = [_batched(800, 2000.0, 4, 800), _batched(300, 900.0, 2, 300, latency=5.0)]
    m = load(json.dumps(july).encode(), "benchmark_batch_4.json")[0].runs[0]["metrics"]
    assert (m["examples"], m["energy_j"], m["j_per_sample"]) == (6, 2900.0, 2900.0 / 6)
    assert m["j_per_token"] == pytest.approx(2900.0 / 1100) and m["throughput_sps"] == pytest.approx(6 / 13.0)
    september = [_batched(200, 500.0, 4, 800), _batched(75, 225.0, 2, 300, latency=5.0)]  # last batch: 2 of 4
    f = load(json.dumps(september).encode(), "benchmark_batch_4.json")[0]
    m = f.runs[0]["metrics"]
    assert (m["examples"], m["energy_j"]) == (6, 2900.0) and m["j_per_token"] == pytest.approx(2900.0 / 1100)
    assert f.runs[0]["config"]["batch_size"] == 4
    assert m["latency_avg_ms"] == pytest.approx((4 * 8.0 + 2 * 5.0) / 6 * 1e3)  # every request waits for its batch
    unclear = [_batched(0, 500.0, 4, 0)]  # no tokens: the energy could be the batch's or per request
    with pytest.raises(ResultFileError, match="cannot tell whether its energy is the batch's or per request"):
        load(json.dumps(unclear).encode(), "benchmark_batch_4.json")


# --- v1 CSV requests/s: the columns are means over the raw results' windows ---------------------------------------

V1_A40_BATCHED = ZM / "mlenergy-lb-v1b-A40_chat_benchmark-batchsize-OOM.csv"


def test_v1_csv_requests_per_s_is_requests_per_window_over_the_mean_latency() -> None:
    """compute_system_metrics.py averages each column over the raw results' windows: the mean of the
    windows' tokens/s over the mean response length is no request rate (-14% to +208% off on the
    real files); requests per window / mean window latency is."""
    first = imp(V1_A100, "A100_chat_benchmark.csv").runs[0]["metrics"]  # BAIR/koala-13b, latency 12.1433556952537 s
    assert first["throughput_sps"] == pytest.approx(1 / 12.1433556952537, rel=1e-12)  # was 21.2077 / 265.573
    assert first["throughput_derivation"].startswith("1 / latency")
    batched = {(r["config"]["model"], r["config"]["batch_size"]): r["metrics"]
               for r in imp(V1_A40_BATCHED, "A40_chat_benchmark.csv").runs}
    eight = batched[("lmsys/vicuna-7B", 8)]  # lmsys/vicuna-7B,8,34.9488...,163.0084...,42.0270...,672.7491...
    assert eight["throughput_sps"] == pytest.approx(8 / 42.02700683957226, rel=1e-12)  # was 34.95 / 163.0 (+13%)
    assert eight["j_per_sample"] == 672.74914045708 and eight["latency_avg_ms"] == pytest.approx(42027.00683957226)
    assert batched[("lmsys/vicuna-7B", 1)]["throughput_sps"] == pytest.approx(1 / 10.682850556722057, rel=1e-12)
    assert "throughput_sps" not in batched[("lmsys/vicuna-7B", 16)]  # the OOM row
