"""Runner building blocks: workloads, statistics, energy figures, precisions, environment."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from cli.main import main
from energy import EnergyReading, reading_figures
from runner import environment, precision, workloads
from runner.execute import build
from runner.measure import latency_stats, percentile
from runner.options import RunConfig
from runner.power import NO_SENSOR_REASON, NoPowerMeter

SHIPPED = ["bert-large-ner", "bert-base-ner", "bert-large-squad", "bert-base-squad", "distilbert-cls", "gpt2",
           "resnet50", "vit-base", "bert-tiny", "llm-0.5b", "llm-1b", "llm-3b", "llm-8b", "llm-tiny"]


def test_the_shipped_workloads_and_their_sizes() -> None:
    assert workloads.names() == SHIPPED
    assert workloads.get("bert-large-ner").parameter_count() == pytest.approx(334e6, rel=0.01)
    assert workloads.get("bert-base-ner").parameter_count() == pytest.approx(108.9e6, rel=0.01)
    assert workloads.get("gpt2").parameter_count() == pytest.approx(124.4e6, rel=0.01)
    assert workloads.get("resnet50").parameter_count() == pytest.approx(25.56e6, rel=0.01)
    assert workloads.get("vit-base").parameter_count() == pytest.approx(86.57e6, rel=0.01)
    assert workloads.get("bert-base-ner").default_size == 512
    assert workloads.get("bert-base-squad").default_size == 384
    assert workloads.get("vit-base").default_size == workloads.get("resnet50").default_size == 224


# large = base's code, bigger; generation workloads do not train (tests/test_generation.py builds llm-tiny)
@pytest.mark.parametrize("name", [n for n in SHIPPED if "-large-" not in n and not workloads.get(n).generates])
def test_every_workload_builds_and_computes_a_loss_on_its_synthetic_batch(name: str) -> None:
    spec = workloads.get(name)
    size = 16 if spec.input_kind == "text" else 64
    cfg = RunConfig(name, "train", "fp32", 2, 1, size, "cpu", False, 0, 1, None, 0)
    model, inputs = build(cfg, torch.device("cpu"))
    assert model.training
    with torch.no_grad():
        out = model(**inputs)
    assert out.loss.ndim == 0 and torch.isfinite(out.loss)
    assert out[1].shape[0] == 2  # logits (start logits for question answering)
    if spec.input_kind == "text":
        assert inputs["input_ids"].shape == (2, size)
    else:
        assert inputs["pixel_values"].shape == (2, 3, size, size)


def test_workloads_command_lists_every_workload_with_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["workloads"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines()[2:]}
    assert list(rows) == SHIPPED
    assert "334.1 M" in rows["bert-large-ner"] and "token-classification" in rows["bert-large-ner"]
    assert "seq 512" in rows["bert-base-ner"] and "224x224" in rows["resnet50"]


@given(st.lists(st.floats(0, 1e4, allow_nan=False), min_size=1, max_size=50), st.floats(0, 100))
def test_percentile_matches_numpy(values: list[float], q: float) -> None:
    assert percentile(sorted(values), q) == pytest.approx(float(np.percentile(values, q)), rel=1e-9, abs=1e-9)


def test_latency_stats_are_ordered() -> None:
    stats = latency_stats([float(x) for x in range(1, 101)])
    assert stats["latency_p50_ms"] == pytest.approx(50.5)
    assert stats["latency_p99_ms"] == pytest.approx(99.01)
    assert stats["latency_avg_ms"] == pytest.approx(50.5) and stats["latency_max_ms"] == 100
    assert latency_stats([]) == dict.fromkeys(stats)


@pytest.mark.parametrize("energy", [None, 0.0, -3.0, math.nan])
def test_energy_is_never_zero_or_negative(energy: float | None) -> None:
    out = reading_figures(EnergyReading(energy_j=energy, missing_reason=NO_SENSOR_REASON), examples=10,
                          optimizer_steps=5, duration_s=2.0)
    assert set(out) == {"energy_missing_reason"} and out["energy_missing_reason"]


def test_energy_figures_use_examples_and_optimizer_steps() -> None:
    out = reading_figures(EnergyReading(energy_j=20.0, boundary="gpu_board", method="counter"), examples=40,
                          optimizer_steps=5, duration_s=4.0)
    assert (out["j_per_sample"], out["j_per_iteration"], out["avg_power_w"]) == (0.5, 4.0, 5.0)
    inference = reading_figures(EnergyReading(energy_j=20.0), examples=40, optimizer_steps=0, duration_s=4.0)
    assert "j_per_iteration" not in inference


def test_the_default_meter_reports_no_sensor_even_when_the_window_fails() -> None:
    meter = NoPowerMeter()
    with pytest.raises(RuntimeError), meter.window() as reading:
        raise RuntimeError("boom")
    assert reading.energy_j is None and reading.missing_reason == NO_SENSOR_REASON


def test_precisions_on_a_cpu() -> None:
    cpu = torch.device("cpu")
    assert [p for p in precision.PRECISIONS if precision.problem(p, "infer", cpu) is None] == ["fp32", "bf16"]
    assert precision.problem("fp16-weights", "train", torch.device("cuda")) is not None
    # TF32 flags are set explicitly per run, reported as in effect only on a GPU that has it, then restored
    before = precision._raw_flags()
    with precision.tf32_setting(precision.get("tf32"), cpu) as in_effect:
        assert precision._read_tf32_flags() is True and in_effect is False
    with precision.tf32_setting(precision.get("fp32"), cpu) as in_effect:
        assert precision._read_tf32_flags() is False and in_effect is False
    assert precision._raw_flags() == before
    inputs = {"ids": torch.ones(2, dtype=torch.long), "pixels": torch.ones(2)}
    cast = precision.cast_inputs(inputs, precision.get("fp16-weights"))
    assert cast["ids"].dtype == torch.long and cast["pixels"].dtype == torch.float16


def test_environment_has_no_host_or_user_names() -> None:
    import getpass
    import socket

    captured = environment.capture(torch.device("cpu"))
    env = captured.environment
    assert env["torch_version"] == torch.__version__ and env["python_version"] and env["os"]
    assert env["cpu_count"] >= 1 and env["ram_gb"] > 0 and env["torch_threads"] == torch.get_num_threads()
    assert captured.device["kind"] == "cpu" and captured.device["name"] == env["cpu_model"]
    text = json.dumps([captured.device, env]).lower()
    for secret in {socket.gethostname(), getpass.getuser()} - {"", "root", "localhost"}:
        assert secret.lower() not in text


PEAK_SCRIPT = """
import torch
from runner import devices
cpu = torch.device("cpu")
block = torch.ones(400_000_000, dtype=torch.uint8)  # 400 MB, touched
with_block = devices.read_peak_memory(cpu, "cpu").rss_mb
del block
assert devices.reset_peak_memory(cpu)
print(with_block, devices.read_peak_memory(cpu, "cpu").rss_mb)
"""


def test_peak_memory_window_on_a_cpu() -> None:
    # in a fresh process: this one's allocator keeps freed memory of earlier tests resident
    out = subprocess.run([sys.executable, "-c", PEAK_SCRIPT], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent).stdout
    with_block, after_reset = map(float, out.split())
    assert with_block > 400 and with_block - after_reset > 300  # the reset starts a new window
