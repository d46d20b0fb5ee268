"""Issue 39, sets 22 to 24 (files and attribution in tests/fixtures/formats/SOURCES.md), counted unaided at 419184f:
a rate per stream or per GPU is no system throughput, a platform string is no device, a client count is the load,
and a per-layer profile (a row per layer of one pass) is refused as no run. Each rule on the files' own numbers, with
its negative case."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import load
from importers.table_fields import PER_GPU, measure_field
from importers.table_labels import label_field
from tests.helpers import load_fixture, refusal

FORMATS = Path(__file__).parent / "fixtures" / "formats"
OLLAMA = FORMATS / "general_table" / "dgx-spark-lab-ollama-gb10-per-stream-and-aggregate.json"
LAPTOP = FORMATS / "general_table" / "jetson-orin-llm-rtx5050-laptop-platform-string.json"
PROFILES = FORMATS / "profiles"


def test_a_rate_per_stream_is_not_the_systems_and_clients_are_the_load() -> None:
    runs, _, warnings = load_fixture(OLLAMA)
    assert len(runs) == 4  # never a 'per_stream' and an 'aggregate' run of each point
    by_load = {r["config"]["max_concurrency"]: r["metrics"]["tokens_per_s"] for r in runs}
    assert by_load == {1: pytest.approx(30.445277), 2: pytest.approx(30.881429), 4: pytest.approx(31.5, abs=1.5),
                       6: pytest.approx(32.51, abs=0.01)}
    assert any("per_stream_tok_s (a rate of each request" in w for w in warnings)
    for name in ("per_user_tps", "Output Token Throughput Per User (tokens/sec/user)", "tok_s_per_request"):
        assert measure_field(name)[0] is None
    per_gpu = measure_field("output_throughput_per_gpu_tok_s")[0]  # each GPU's: times a row's GPU count, or not stored
    assert per_gpu is not None and (per_gpu.key, per_gpu.unit) == ("tokens_per_s", "tokens/s" + PER_GPU)
    assert measure_field("aggregate_tok_s")[0].key == "tokens_per_s"  # type: ignore[union-attr]
    assert label_field("clients").key == "max_concurrency"  # type: ignore[union-attr]


def test_a_platform_string_is_no_device() -> None:
    runs, _, _ = load_fixture(LAPTOP)
    assert runs[0]["device"]["name"] == "NVIDIA GeForce RTX 5050 Laptop GPU"  # environment.name, never 'Windows-11-...'
    text = b"platform,tokens_per_second\nLinux-5.15.0-91-generic-x86_64-with-glibc2.35,41.2\n"
    assert load(text, "t.csv")[0].runs[0]["device"] is None


@pytest.mark.parametrize("name", ["llm-jetson-xavier-llama32-per-layer-latency-power.txt",
                                  "edge-inference-lab-orin-nano-trt-roofline-per-layer.csv"])
def test_a_per_layer_profile_is_refused_as_no_run(name: str) -> None:
    said = refusal((PROFILES / name).read_bytes(), name)
    assert "a per-layer profile" in said and "not a run" in said


def test_a_trtexec_layer_profile_points_to_the_log() -> None:
    path = PROFILES / "haxconn-googlenet-trtexec-export-profile.json"
    said = refusal(path.read_bytes(), path.name)
    assert "trtexec --exportProfile per-layer profile" in said and "Performance summary" in said


def test_a_table_of_four_stages_is_no_profile() -> None:
    text = b"op,latency_ms\nload,10\ntokenize,2\ninfer,50\nsave,1\n"  # four named rows: a table, read
    assert len(load(text, "stages.csv")[0].runs) == 4
