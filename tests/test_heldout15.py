"""Issue 39, fifteenth held-out set (files and attribution in tests/fixtures/formats/SOURCES.md), counted unaided at
8a7cd0f: records under a key no list of records is named by, a warm-up's time beside the run's figures, a token
count that is a median of runs, and a prefill row's placeholder decode rate. Each rule on the file's own numbers,
with its negative case."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from importers.table_fields import measure_field
from tests.helpers import load_fixture as _load
from tests.helpers import runs_or_refusal

FORMATS = Path(__file__).parent / "fixtures" / "formats" / "general_table"
METRICS_LIST = FORMATS / "resnet18-cpu-backends-metrics-list-warmup.json"
LM_STUDIO = FORMATS / "lmstudio-llm-bench-decode-prefill-placeholder-rows.csv"


def test_the_one_list_of_records_with_figures_whatever_its_key_and_no_warm_up_window() -> None:
    runs, fmt, _ = _load(METRICS_LIST)
    assert fmt == "general-table" and len(runs) == 3
    openvino = runs[2]["metrics"]
    assert openvino["latency_avg_ms"] == 23.797 and openvino["throughput_sps"] == 42.02
    assert all("duration_s" not in r["metrics"] for r in runs)  # 'warmup_total_ms' is the warm-up's, not the run's
    assert measure_field("warmup_total_ms")[0] is None and measure_field("total_time_ms")[0] is not None
    # two lists of records with figures under unnamed keys: two sweeps, each record told apart by its list's name
    # (a list named for a run's parts, its raw samples or warm-up, is no list of runs)
    two = b'{"a": [{"latency_ms": 1}, {"latency_ms": 2}], "b": [{"latency_ms": 3}], "raw_samples": [{"latency_ms": 9}]}'
    assert [(r["config"]["tag"], r["metrics"]["latency_avg_ms"]) for r in runs_or_refusal(two, "t.json")] == [
        ("list a", 1), ("list a", 2), ("list b", 3)]


def test_a_median_token_count_and_a_prefill_rows_placeholder_rate() -> None:
    runs, _, warnings = _load(LM_STUDIO)
    assert len(runs) == 637
    rows = list(csv.DictReader(io.StringIO(LM_STUDIO.read_text())))
    placeholders = sum(1 for r in rows if r["mode"] == "prefill" and float(r["tg_tok_s"] or 0) >= 1e6)
    assert placeholders == 46
    assert max(r["metrics"].get("decode_tokens_per_s", 0) for r in runs) < 200  # no 1000000 stored
    assert any("225.5 tokens is no whole count" in w for w in warnings)
    assert any(r["metrics"].get("output_tokens_mean") == 225.5 for r in runs)
    first = runs[0]["metrics"]
    assert (first["prompt_tokens_per_s"], first["decode_tokens_per_s"], first["ttft_avg_ms"]) == (422.594, 15.706,
                                                                                                  182.0)
