"""Result files found by held-out sets 57 to 59 (counted unaided before they were added: tests/fixtures/formats/
SOURCES.md), each with what it was read as before and a case that must stay as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import load
from tests.helpers import load_fixture

HELD56 = Path(__file__).parent / "fixtures" / "formats" / "heldout56_57"


def test_a_rate_per_gpu_is_the_runs_times_its_gpu_count_and_a_heading_names_the_model() -> None:
    runs, fmt, warnings = load_fixture(HELD56 / "xtuner-megatron-moe-training-per-gpu-rate-no-outer-pipes.md")
    assert fmt == "general-table" and len(runs) == 25  # was refused: 'Tokens/GPU/Second' read as no unit
    first = runs[0]
    assert first["device"]["name"] == "H800"  # 'Environment: H800 256 cards'
    assert first["config"]["mode"] == "train" and first["config"]["gpu_count"] == 256  # 'GPUNum'
    assert first["config"]["model"] == "Qwen3-235B-A22B"  # the heading above the tables
    m = first["metrics"]
    assert m["tokens_per_s"] == pytest.approx(1461.56 * 256)  # each GPU's rate x the GPUs: 4096 x 2048 / 22.42 s
    assert m["tokens_per_s"] == pytest.approx(4096 * 2048 / 22.42, rel=1e-4)
    assert m["latency_avg_ms"] == pytest.approx(22420)  # 'TimePerIter (s)': one step's time
    assert "prompt_tokens_per_s" not in m  # 'pp32' is the pipeline's degree, no prompt-processing phase
    assert first["notes"] == "general table line 81"  # the text's own line: no Markdown heading read as a CSV preamble
    assert any("read as the model of its rows" in w for w in warnings)
    # without a GPU count, each GPU's rate is no run's rate: not stored, said
    lone = "| Setup | Tokens/s per GPU |\n|---|---|\n| a | 100 |\n| b | 120 |\n"
    with pytest.raises(Exception, match="no figure in any row"):
        load(lone.encode(), "per_gpu.md")
    both = "| Setup | GPUs | Tokens/s per GPU | Output tokens/s |\n|---|---|---|---|\n| a | 2 | 100 | 210 |\n"
    imported, _ = load(both.encode(), "both.md")
    assert imported.runs[0]["metrics"]["tokens_per_s"] == 210  # the system's own rate is read before each GPU's
