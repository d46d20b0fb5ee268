"""Issue 39: the timing trace `trtexec --exportTimes=FILE` writes (TensorRT samples/common/sampleReporting.cpp,
exportJSONTrace), read as one inference run with what trtexec's own summary computes from it. The real file and its
attribution: tests/fixtures/formats/SOURCES.md (section trtexec)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from importers import Hints, load
from importers.trtexec import TraceStats
from joulebench.errors import NothingToImportError, ResultFileError

TIMES = Path(__file__).parent / "fixtures" / "formats" / "trtexec" / "edge-vision-alexnet_fp16.timing.json"


def _records() -> list[dict]:
    return json.loads(TIMES.read_text())


def _trtexec_percentile(values: list[float], p: float) -> float:
    """sampleReporting.cpp findPercentile, written out again from the C++ (not from the reader), in C floats."""
    v = sorted(values)
    exclude = int((np.float32(1) - np.float32(p) / np.float32(100)) * np.float32(len(v)))
    return v[max(len(v) - 1 - exclude, 0)]


def _load(data: bytes, **hints: object) -> tuple[dict, str, tuple[str, ...]]:
    imported, fmt = load(data, "model.timing.json", hints=Hints(**hints))  # type: ignore[arg-type]
    assert len(imported.runs) == 1
    return imported.runs[0], fmt, imported.warnings


def test_the_real_trace_gives_one_run_with_trtexecs_throughput_and_latency_percentiles() -> None:
    run, fmt, warnings = _load(TIMES.read_bytes())
    records = _records()
    latencies = [r["latencyMs"] for r in records]
    window_s = (records[-1]["endD2hMs"] - records[0]["startH2dMs"]) / 1e3
    m, c = run["metrics"], run["config"]
    assert fmt == "trtexec-times" and len(records) == 6039
    assert m["duration_s"] == pytest.approx(window_s) and m["duration_s"] == pytest.approx(3.00117)  # 8001.4 - 5000.23
    assert m["iterations_per_s"] == pytest.approx(6039 / window_s) and m["iterations_per_s"] == pytest.approx(2012.2152)
    assert m["latency_avg_ms"] == pytest.approx(sum(latencies) / len(latencies))
    assert m["latency_p50_ms"] == 0.495605  # 6,039 values: the middle one
    assert m["latency_p90_ms"] == _trtexec_percentile(latencies, 90) == 0.498047
    assert m["latency_p95_ms"] == _trtexec_percentile(latencies, 95) == 0.498535
    assert m["latency_p99_ms"] == _trtexec_percentile(latencies, 99) == 0.5
    assert m["latency_max_ms"] == max(latencies) == 0.500977
    assert "energy_j" not in m and "no power" in m["energy_missing_reason"]
    assert "throughput_sps" not in m and "examples" not in m  # the samples in a query are not stated
    assert run["device"] is None and c["precision"] is None and c["batch_size"] is None  # the trace names none
    assert c["engine"] == "tensorrt" and c["mode"] == "infer" and c["model"] is None
    assert "GPU Compute Time min 0.490234 ms, mean" in run["notes"]  # computeMs (h2d and d2h are 0 here)
    assert "pass --batch-size" in run["notes"]
    assert any("6039 queries / (last endD2hMs - first startH2dMs = 3.00117 s)" in w for w in warnings)


def test_a_stated_batch_makes_samples_per_second() -> None:
    run, _, _ = _load(TIMES.read_bytes(), batch_size=8)
    m = run["metrics"]
    assert m["throughput_sps"] == pytest.approx(m["iterations_per_s"] * 8) and m["examples"] == 6039 * 8
    assert "batch 8" in m["throughput_derivation"]


def test_the_statistics_follow_trtexecs_rules() -> None:
    stats = TraceStats.of([float(v) for v in range(100, 0, -1)])
    assert (stats.min_ms, stats.max_ms, stats.mean_ms) == (1, 100, 50.5)
    assert stats.p50_ms == 50.5  # an even count: the mean of the two middle values
    # in C floats (1 - 0.99f) * 100 is 0.99999905: nothing is excluded and p99 of 100 values is the largest
    assert (stats.p90_ms, stats.p95_ms, stats.p99_ms) == (90, 95, 100)
    values = [float(v) for v in range(1, 101)]
    assert [_trtexec_percentile(values, p) for p in (90, 95, 99)] == [90, 95, 100]
    assert TraceStats.of([3.0]).p99_ms == 3.0


def test_an_older_trace_with_end_to_end_times_is_read_and_may_hold_warm_ups() -> None:
    records = [{**r, "endToEndMs": r["latencyMs"]} for r in _records()[:200]]  # TensorRT 8.0 to 8.4
    run, fmt, warnings = _load(json.dumps(records).encode())
    assert fmt == "trtexec-times" and run["metrics"]["latency_max_ms"] == max(r["latencyMs"] for r in records)
    assert any("before 8.5" in w and "warm-up" in w for w in warnings)


def test_a_tensorrt_7_trace_names_its_copies_in_and_out() -> None:
    renamed = {"startH2dMs": "startInMs", "endH2dMs": "endInMs", "startD2hMs": "startOutMs", "endD2hMs": "endOutMs",
               "h2dMs": "inMs", "d2hMs": "outMs"}
    records = [{renamed.get(k, k): v for k, v in r.items()} for r in _records()[:100]]
    run, _, _ = _load(json.dumps(records).encode())
    window_s = (records[-1]["endOutMs"] - records[0]["startInMs"]) / 1e3
    assert run["metrics"]["duration_s"] == pytest.approx(window_s)
    assert run["metrics"]["iterations_per_s"] == pytest.approx(100 / window_s)


@pytest.mark.parametrize(("change", "expected"), [
    ({"latencyMs": -0.5}, r"record 3: latencyMs: -0\.5 ms is negative"),
    ({"computeMs": None}, r"record 3: computeMs: 'None' is not a finite number of ms"),
    ({"latencyMs": "0.5"}, r"record 3: latencyMs: '0\.5' is not a finite number of ms"),
    ({"endD2hMs": 1.0}, r"record 3: ends \(1 ms\) before it starts"),
])
def test_a_bad_record_refuses_the_file_naming_it(change: dict, expected: str) -> None:
    records = _records()[:10]
    records[2] = {**records[2], **change}
    with pytest.raises(ResultFileError, match=expected):
        load(json.dumps(records).encode(), "bad.timing.json")


def test_a_trace_that_spans_no_time_or_is_cut_is_refused() -> None:
    still = [{**r, "startH2dMs": 5.0, "endD2hMs": 5.0} for r in _records()[:5]]
    with pytest.raises(ResultFileError, match="span no time"):
        load(json.dumps(still).encode(), "still.timing.json")
    with pytest.raises(ResultFileError, match="not a JSON array of trtexec timing records"):
        load(TIMES.read_bytes()[:20_000], "cut.timing.json")
    with pytest.raises(NothingToImportError):
        load(b"[]", "empty.timing.json")


def test_non_finite_numbers_are_refused() -> None:
    text = TIMES.read_text()[:3000].rsplit("\n,", 1)[0] + "\n]"  # the first records, closed
    records = json.loads(text)
    bad = text.replace(f'"latencyMs" : {records[1]["latencyMs"]}', '"latencyMs" : NaN', 1)
    with pytest.raises(ResultFileError, match="latencyMs: 'None' is not a finite number"):
        load(bad.encode(), "nan.timing.json")
