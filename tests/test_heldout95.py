"""Issue 39, held-out sets 95 to 98: files read wrong unaided, each a fixture after it was counted
(tests/fixtures/formats/heldout95_98, SOURCES.md), with what it had been read as.
"""

from __future__ import annotations

import json
import statistics
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import unaided

HELD = Path(__file__).parent / "fixtures" / "formats" / "heldout95_98"

imp = partial(unaided, HELD)


def test_an_object_stating_a_runs_figures_beside_its_raw_requests_is_that_run() -> None:
    # had been 50 runs, one per request, the object's p50_s / output_tps / req_per_s dropped
    doc = json.loads((HELD / "awq_chat_20.json").read_text())
    (run,) = imp("awq_chat_20.json").runs
    m = run["metrics"]
    assert len(run["requests"]) == doc["n"] == 50
    assert m["tokens_per_s"] == pytest.approx(doc["output_tps"])  # a rate over the writer's window: the object's
    assert m["requests_per_s"] == pytest.approx(doc["req_per_s"])
    assert m["e2e_latency_p50_ms"] == pytest.approx(doc["p50_s"] * 1e3)  # its requests' end-to-end latency
    assert m["ttft_p50_ms"] == pytest.approx(doc["ttft_p50_s"] * 1e3)
    assert "latency_p50_ms" not in m
    assert run["config"]["max_concurrency"] == 20 and run["config"]["workload"] == "chat"
    assert "prompt_tokens_requested" not in run["config"]  # each request's own prompt length is no setting


def test_a_disagreeing_stated_figure_is_replaced_by_the_requests_and_named() -> None:
    doc = json.loads((HELD / "awq_chat_20.json").read_text())
    doc["p50_s"] = 2.0
    (run,) = imp("awq_chat_20.json", json.dumps(doc).encode()).runs
    assert run["metrics"]["e2e_latency_p50_ms"] == pytest.approx(statistics.median(
        r["latency_s"] for r in doc["raw"]) * 1e3)
    assert "states 2000" in run["notes"]


def test_an_object_of_sweep_records_with_a_total_is_not_one_run_of_requests() -> None:
    doc: dict[str, Any] = {"model": "m", "total_time_s": 120.0, "results": [
        {"concurrency": c, "ttft_ms": 10.0 * c, "latency_ms": 100.0 * c} for c in (1, 2, 4, 8, 16)]}
    f = imp("sweep.json", json.dumps(doc).encode())
    assert len(f.runs) == 5 and not any(r.get("requests") for r in f.runs)


def test_per_item_rows_of_several_models_on_the_same_images_are_a_run_per_model() -> None:
    # had been 180 runs, one per call, each tagged by its image
    lines = [json.loads(x) for x in (HELD / "results.jsonl").read_text().splitlines() if x.strip()]
    f = imp("results.jsonl")
    assert len(f.runs) == 9
    by_model = {r["config"]["model"]: r for r in f.runs}
    for model in ("smolvlm2-256m", "minicpm-v26"):
        walls = [x["wall_s"] for x in lines if x["model"] == model]
        assert len(walls) == 20
        assert by_model[model]["metrics"]["duration_s"] == pytest.approx(sum(walls))  # 20 calls one after another
    assert not any("tag" in r["config"] for r in f.runs)


def test_rows_whose_label_changes_with_every_item_stay_rows() -> None:
    text = "model,image,resolution,latency_ms\n" + "".join(
        f"m,img_{i}.png,{224 + 32 * i},{10 + i}\n" for i in range(6))
    assert len(imp("items.csv", text.encode()).runs) == 6
