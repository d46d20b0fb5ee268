"""Result files of held-out sets 47 to 52 (counted unaided before they were added: tests/fixtures/formats/SOURCES.md,
section heldout47_52): each with what it was read as before and a case that must stay as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers.table_fields import measure_field
from importers.table_labels import label_field
from tests.helpers import load_fixture

HELD = Path(__file__).parent / "fixtures" / "formats" / "heldout47_52"


def _key(header: str) -> str | None:
    found = measure_field(header)[0]
    return found.key if found else None


def test_a_telemetry_log_of_many_columns_is_one_power_trace() -> None:
    runs, fmt, _ = load_fixture(HELD / "energibridge-macos-cifar10-train-63-columns.csv")
    assert fmt == "power-table" and len(runs) == 1  # 1,159 samples were as many runs
    m = runs[0]["metrics"]
    assert m["duration_s"] == pytest.approx(235.008, abs=1e-3) and m["avg_power_w"] == pytest.approx(120.10, abs=0.01)


def test_an_energy_per_image_is_per_item_never_the_runs() -> None:
    runs, _, _ = load_fixture(HELD / "rx580-model-comparison-energy-per-img-mj.md")
    resnet = next(r for r in runs if r["config"]["model"] == "ResNet-18")["metrics"]
    assert resnet["j_per_sample"] == pytest.approx(0.07072) and "energy_j" not in resnet
    assert _key("Energy/Req (J)") == "j_per_request" and _key("energy/run (J)") == "energy_j"


def test_a_speech_tables_duration_is_the_clips_length() -> None:
    runs, _, warnings = load_fixture(HELD / "faster-whisper-m1-clip-duration-rtf.csv")
    assert len(runs) == 4 and not any("duration_s" in r["metrics"] for r in runs)
    assert runs[0]["metrics"]["latency_avg_ms"] == pytest.approx(1927)
    assert any("duration_s: each clip's length" in w for w in warnings)


def test_an_architecture_is_no_model_and_a_videos_frame_rate_is_no_throughput() -> None:
    runs, _, _ = load_fixture(HELD / "whisper-large-rtx-pro6000-machine-arch.json")
    assert runs[0]["config"]["model"] == "large"  # was 'x86_64' (machine.arch)
    runs, _, warnings = load_fixture(HELD / "sglang-diffusion-cosmos3-t2v-video-fps-setting.json")
    m = runs[0]["metrics"]
    assert "throughput_sps" not in m and m["requests_per_s"] == 0.0187 and m["latency_p50_ms"] == 106259
    assert any("frame rate of the video generated" in w for w in warnings)


def test_an_energy_per_all_tokens_neither_splits_the_runs_nor_stands_for_j_per_token() -> None:
    runs, _, _ = load_fixture(HELD / "ollama-jetson-nano-energy-per-all-tokens.csv")
    assert len(runs) == 288  # was 576: each row split into 'generated' and 'all tokens' setups
    first = runs[0]["metrics"]
    assert first["j_per_token"] == pytest.approx(first["energy_j"] / first["output_tokens"], rel=0.05) if (
        "output_tokens" in first) else first["j_per_token"] > 0
    assert _key("energy_per_all_tokens_j") is None and _key("energy_per_generated_token_j") == "j_per_token"


def test_a_tests_whole_duration_is_no_latency() -> None:
    runs, _, _ = load_fixture(HELD / "simple-ai-benchmarking-rtx4090-performance-durations.csv")
    assert not any("latency_avg_ms" in r["metrics"] for r in runs)  # infer_performance_duration_s was a latency
    assert {r["config"]["mode"] for r in runs} == {"train", "infer"}
    assert _key("inference_ms") == "latency_avg_ms" and _key("infer_performance_duration_s") == "duration_s"


def test_flags_and_pascal_case_names() -> None:
    assert label_field("request-rate").key == "request_rate_per_s" and label_field("max-concurrency").key == \
        "max_concurrency"
    assert _key("CurSamplesPerSec") == "throughput_sps" and _key("TTFT") is None  # no unit: asked for


def test_a_logs_first_figures_past_its_head_are_read() -> None:
    runs, fmt, _ = load_fixture(HELD / "megatron-deepspeed-v100-iterations-after-1000-lines.log")
    assert fmt == "text-figures"  # the iterations start at line 1,037 (about 90 KB in): the head held no figure
    train = next(r for r in runs if r["config"]["mode"] == "train")
    assert train["metrics"]["throughput_sps"] == pytest.approx(0.532) and train["config"]["workload"] == "unknown"
    assert 140 < train["metrics"]["duration_s"] < 146  # 19 iterations after the warm-up, their times summed


def test_a_banner_between_rules_is_no_tables_header() -> None:
    runs, _, _ = load_fixture(HELD / "ollama-small-llms-console-table-under-banner.md")
    assert [r["config"]["model"] for r in runs][:2] == ["granite4:350m", "qwen3:0.6b"] and len(runs) == 7
    assert runs[0]["metrics"]["ttft_avg_ms"] == 133 and runs[0]["metrics"]["tokens_per_s"] == 26.0


def test_a_sampling_temperature_beside_latencies_is_no_temperature_log() -> None:
    from tests.helpers import refusal
    refused = HELD.parent.parent / "general_table_refused" / (
        "fw-llmbench-summary-temperature-and-qps-as-concurrency.csv")
    message = refusal(refused.read_bytes(), "s.csv")
    assert "temperature log" not in message and "Concurrency" in message and "0.125" in message


def test_counts_prove_the_units_of_times_and_speeds_that_state_none() -> None:
    runs, _, warnings = load_fixture(HELD / "llm-benchmark-h20-qwen3-30b-times-without-units.csv")
    assert len(runs) == 10  # was refused: no time or speed column names its unit
    m = runs[0]["metrics"]
    assert m["duration_s"] == pytest.approx(9.461028575897217)  # total_tokens / total_time = total_tokens_per_second
    assert m["decode_tokens_per_s"] == pytest.approx(110.75789421619935)  # = response_tokens / generation_time (s)
    assert m["prompt_tokens_per_s"] == pytest.approx(137749.42591251488)  # = prompt_tokens / preprocess_time (s)
    assert any("preprocess_time + generation_time = total_time" in w for w in warnings)


def test_a_count_over_a_time_near_a_rate_proves_nothing() -> None:
    from importers.table_identities import proven_units
    header = ["prompt_tokens", "total_tokens", "decode_time", "total_tokens_per_second"]
    rows = [(2, ["29704", "30728", "9.245", "3247.85"]), (3, ["29698", "30722", "9.219", "3247.13"])]
    # 29704 / 9.245 is 1.1 % off the rate: the prompt's tokens over the decode time are no identity
    assert proven_units(header, rows, [0, 1, 2], None) is None
