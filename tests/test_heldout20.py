"""Issue 39, twentieth held-out set (files and attribution in tests/fixtures/formats/SOURCES.md), counted unaided at
b196cff: an RTX PRO 6000 Server Edition never filed as the Workstation Edition, an energy per token in Wh per 1,000
tokens, a telemetry log whose clock is an elapsed time beside clocks and memory, and a rate's median written between
its items and '_s' ('tok_med_s') with a 'gpu_used' column saying which rows ran on the CPU. Each rule on the file's
own numbers, with its negative case."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.device_names import parse
from joulebench import units
from tests.helpers import load_fixture as _load

FORMATS = Path(__file__).parent / "fixtures" / "formats"
NANOCHAT = FORMATS / "general_table" / "nanochat-moe-rtx-pro-6000-server-edition.csv"
T4_WH = FORMATS / "general_table" / "quantization-energy-t4-wh-per-1k-tokens.csv"
SPARK = FORMATS / "power_logs_meter" / "dgx-spark-gb10-telemetry-elapsed-seconds.csv"
OLLAMA = FORMATS / "general_table" / "ai-ml-gpu-bench-ollama-gpu-used-stat-rates.csv"


def test_a_server_edition_is_its_own_part() -> None:
    server, workstation = (parse(f"NVIDIA RTX PRO 6000 Blackwell {e} Edition") for e in ("Server", "Workstation"))
    assert server.form == "server" and workstation.form == "workstation"
    assert server.power_class != workstation.power_class  # never one filed under the other
    runs, _, _ = _load(NANOCHAT)
    named = {r["device"]["name"] for r in runs}
    assert "NVIDIA RTX PRO 6000 Blackwell Server Edition" in named


def test_an_energy_per_token_in_wh_per_thousand_tokens() -> None:
    runs, _, _ = _load(T4_WH)
    assert len(runs) == 48
    assert runs[0]["metrics"]["j_per_token"] == pytest.approx(0.3566 * 3.6, rel=0.05)  # Wh/1k tokens x 3.6 = J/token
    assert units.header_unit("wh_per_1k_tokens")[1].factor == 3.6  # type: ignore[union-attr]
    assert units.header_unit("wh_per_token")[1].factor == 3600.0  # type: ignore[union-attr]


def test_a_telemetry_log_clocked_by_elapsed_seconds() -> None:
    runs, fmt, _ = _load(SPARK)
    assert fmt == "power-table" and len(runs) == 1  # one trace, never 84 runs of 10 s
    m = runs[0]["metrics"]
    assert m["duration_s"] == 835.0 and 33.0 < m["avg_power_w"] < 35.0


def test_a_rates_median_between_its_items_and_s_and_rows_run_on_the_cpu() -> None:
    runs, _, warnings = _load(OLLAMA)
    assert len(runs) == 114  # never split into 'wall' and 'tok' setups
    first = runs[0]
    assert first["metrics"]["tokens_per_s"] == pytest.approx(38.54, abs=0.01)  # tok_med_s: tokens a second
    on_cpu = next(r for r in runs if r["metrics"]["tokens_per_s"] == pytest.approx(11.34, abs=0.01))
    assert on_cpu["device"] is None and first["device"]["name"].endswith("GTX 1060 6GB")  # gpu_used False: no GPU
    assert any("a row where it is False ran on the CPU" in w for w in warnings)
    assert units.header_unit("wall_med_s")[1].kind == "time"  # type: ignore[union-attr]


def test_records_of_one_named_figure_each_and_pass_fail_verdicts() -> None:
    """`results.<benchmark>` records of `metric_name`, `metric_value`, `metric_unit` and a PASS / FAIL `status` (a
    verdict against a target, not a crash): each record a run with its one figure, every record kept."""
    checks = FORMATS / "general_table" / "nebius-h100-cluster-check-metric-records.json"
    runs, _, warnings = _load(checks)
    assert len(runs) == 4  # the FAIL verdicts (matmul, memory) kept: they measured
    training = next(r for r in runs if r["config"]["tag"] == "training_benchmark")
    assert training["metrics"]["tokens_per_s"] == 331772.1 and training["config"]["mode"] == "train"
    assert any("verdicts (PASS / FAIL" in w for w in warnings)


def test_a_record_of_zeros_with_a_zero_sequence_length_is_no_run(tmp_path: Path) -> None:
    """Twenty-first set: JSON Lines whose unmeasured records hold 0 for every timing and a 0 prompt length. A 0
    sequence length is no setting a run had: not stated, and the record of zeros is left out, never the file
    refused."""
    records = FORMATS / "general_table" / "kv-cache-benchmark-llama2-zero-rows.jsonl"
    runs, _, warnings = _load(records)
    assert runs and all(r["config"].get("seq_len") for r in runs)
    assert any("every figure in it is 0" in w for w in warnings)
    assert runs[0]["metrics"]["ttft_avg_ms"] == pytest.approx(1559.97)
