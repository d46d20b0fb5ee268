"""Issue 39, set 26 (files and attribution in tests/fixtures/formats/SOURCES.md), counted unaided at 5e3d195: a CSV
under '#' comment lines (its preamble's GPU every row's device), camelCase keys, sentences per second, and 'Time to
First Token' spelled out. Each rule on the file's own numbers, with its negative case."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import load
from importers.table_fields import measure_field, uncamel
from tests.helpers import load_fixture

FORMATS = Path(__file__).parent / "fixtures" / "formats" / "general_table"


def test_a_csv_under_comment_lines_with_its_preamble_labels() -> None:
    runs, _, warnings = load_fixture(FORMATS / "gemma4-openvino-genai-arc-b390-comment-preamble.csv")
    assert len(runs) == 24
    assert {r["device"]["name"] for r in runs} == {"Intel(R) Arc(TM) B390 GPU (iGPU)"}
    first = runs[0]["metrics"]
    assert first["ttft_avg_ms"] == 310.1 and first["tpot_avg_ms"] == 33.55 and first["decode_tokens_per_s"] == 29.8
    assert any("22 comment line(s) above the table read as its preamble" in w for w in warnings)
    # a Markdown text ('# Title' over prose) is no preamble; a preamble naming no GPU names no device
    text = b"# my runs\n# gpu: my laptop\nmodel,tokens_per_second,latency_ms\nllama,41.2,900\nqwen,38.0,950\n"
    assert [r["device"] for r in load(text, "runs.csv")[0].runs] == [None, None]


def test_camel_case_keys_are_read_by_their_words() -> None:
    runs, _, _ = load_fixture(FORMATS / "apple-silicon-llm-bench-iphone-camelcase-keys.json")
    m = runs[0]["metrics"]
    assert m["ttft_avg_ms"] == 890.0 and m["decode_tokens_per_s"] == pytest.approx(18.154235, abs=1e-6)
    assert m["energy_j"] == pytest.approx(2970.000708, abs=1e-5) and m["avg_power_w"] == pytest.approx(4.366238, 1e-6)
    assert uncamel("metrics.averagePackagePowerW") == "metrics.average_Package_Power_W"
    assert uncamel("power_mW") == "power_mW"  # a unit after a separator stays whole


def test_sentences_per_second_and_time_to_first_token_spelled_out() -> None:
    runs, _, _ = load_fixture(FORMATS / "apple-silicon-embed-bench-coreml-sentences-per-s.json")
    assert [round(r["metrics"]["throughput_sps"], 2) for r in runs] == [89.3, 89.2, 88.8]
    for name, key in (("Time to First Token (ms)", "ttft_avg_ms"), ("timeToFirstTokenMs", "ttft_avg_ms"),
                      ("Inter Token Latency (ms)", "itl_avg_ms")):
        assert measure_field(name)[0].key == key  # type: ignore[union-attr]  # never the run's duration


def test_a_time_between_tokens_is_the_itl_and_a_vendor_is_no_device() -> None:
    """Sets 25 and 27: 'tbt_p95_ms' is the ITL's p95, never a request's latency; a 'platform' of 'amd' names no device
    beside gpu_info.device_name."""
    for name, key in (("tbt_p95_ms", "itl_p95_ms"), ("time_between_tokens_ms", "itl_avg_ms")):
        assert measure_field(name)[0].key == key  # type: ignore[union-attr]
    doc = b'{"platform": "amd", "gpu_info": {"device_name": "AMD Instinct MI300X"}, "tokens_per_second": 5120.5}'
    assert load(doc, "r.json")[0].runs[0]["device"]["name"] == "AMD Instinct MI300X"


def test_a_stray_carriage_return_under_a_preamble_is_read_or_refused_never_a_crash() -> None:
    """Found by the slow tier's fuzzer (a damaged copy of the preamble fixture): csv.Error escaped the unwrapping."""
    from joulebench.errors import JouleBenchError

    text = b"# gpu: NVIDIA A100-SXM4-80GB\nmodel,latency_ms,tokens_per_second\nbert,5\r1,7\nt5,6,8\n"
    try:
        runs = load(text, "runs.csv")[0].runs
    except JouleBenchError as e:
        assert e.format_message().strip()
    else:
        assert runs
