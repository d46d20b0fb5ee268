"""Issue 39: JSON encoded twice (a JSON string that holds JSON, as `json.dump(model.model_dump_json())` writes it),
decoded once by the general JSON path and read as any JSON record. The real file (attribution in
tests/fixtures/formats/SOURCES.md, section general_table) states no unit for any of its numbers, so it is refused
with what it holds and mapped in one choice; the same document with units in its keys is read unaided.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from importers import load, load_source
from importers.base import Source
from importers.general_table import twice_encoded
from importers.mapping import apply, read_table, recipe_from
from importers.mapping_guess import guess
from joulebench.errors import NothingToImportError, ResultFileError

REFUSED = Path(__file__).parent / "fixtures" / "general_table_refused"  # refused unaided: no number states its unit
RESNET = REFUSED / "edge-vision-resnet18_tensorrt_20241025-083233.json"


def _inner() -> dict:
    outer = json.loads(RESNET.read_text())
    assert isinstance(outer, str)  # the file is one JSON string
    return json.loads(outer)


def test_the_real_file_is_decoded_once_and_its_unitless_numbers_named() -> None:
    with pytest.raises(NothingToImportError) as err:
        load(RESNET.read_bytes(), RESNET.name)
    said = str(err.value)
    assert "a JSON string that holds JSON" in said and "decoded once" in said
    assert "total_time, avg_latency, avg_throughput) states its unit" in said
    assert "decode it once (json.loads)" not in said  # it is decoded: nothing for the person to do there
    assert "map its columns on the Upload page" in said


def test_twice_encoded_gives_the_inner_document_and_no_more() -> None:
    assert twice_encoded(RESNET.read_text()) == _inner()
    assert twice_encoded(json.dumps(json.dumps(json.dumps({"a": 1})))) is None  # three times: one level only
    assert twice_encoded('"hello world"') is None and twice_encoded('{"a": 1}') is None
    assert twice_encoded('"{not json"') is None and twice_encoded(None) is None


def test_the_real_file_maps_in_one_choice_with_its_own_values() -> None:
    source = Source.single(RESNET.read_bytes(), RESNET.name)
    table = read_table(source)
    inner = _inner()
    assert table.kind == "records" and len(table.rows) == 1
    row = dict(zip(table.header, table.rows[0][1], strict=True))
    assert row["avg_latency"] == repr(inner["avg_latency"]) and row["config.dtype"] == "float16"
    choices = {**guess(table), "avg_latency": ("latency_avg_ms", "s")}  # the one choice: the file states no unit
    recipe = recipe_from("edge-vision torch_trt", table, choices, {"mode": "infer"})
    imported, fmt = load_source(apply(recipe, source).source)
    run = imported.runs[0]
    assert fmt == "general-table"
    assert run["metrics"]["latency_avg_ms"] == pytest.approx(inner["avg_latency"] * 1e3)  # 0.604928 ms
    assert run["config"]["model"] == "resnet18" and run["config"]["precision"] == "fp16"  # dtype float16


def test_the_same_document_with_units_in_its_keys_is_read_unaided() -> None:
    inner = _inner()
    stated = {"config": inner["config"], "total_time_s": inner["total_time"], "avg_latency_s": inner["avg_latency"],
              "avg_throughput_samples_per_s": inner["avg_throughput"]}
    imported, fmt = load(json.dumps(json.dumps(stated, indent=4)).encode(), "resnet18_tensorrt.json")
    run = imported.runs[0]
    m, c = run["metrics"], run["config"]
    assert fmt == "general-table" and len(imported.runs) == 1
    assert m["latency_avg_ms"] == pytest.approx(0.6049279993772508)
    assert m["duration_s"] == pytest.approx(6.3695361328125)
    assert m["throughput_sps"] == pytest.approx(1653.0892949730548)
    assert c["model"] == "resnet18" and c["precision"] == "fp16" and c["engine"] == "tensorrt"
    assert any("encoded twice): decoded once" in w for w in imported.warnings)


@pytest.mark.parametrize(("data", "expected"), [
    (b'"hello world"', "a JSON string holding text ('hello world'), not JSON"),
    (b'"12.5"', "a JSON string holding text ('12.5'), not JSON"),
    (json.dumps(json.dumps(json.dumps({"energy_j": 5.0}))).encode(), "encoded more than twice"),
    (b'"{\\"energy_j\\": 5.0"', "encoded more than twice or cut"),
    (json.dumps(json.dumps({"config": {"model": "x"}})).encode(), "decoded once): no figures in it"),
])
def test_a_json_string_that_holds_no_readable_json_is_refused_clearly(data: bytes, expected: str) -> None:
    with pytest.raises(ResultFileError) as err:
        load(data, "result.json")
    assert expected in str(err.value)


def test_a_table_whose_first_header_cell_is_quoted_stays_a_table() -> None:
    data = b'"Model","Metric","Value","Unit"\n"llama","Energy",120,J\n"llama","Duration",10,s\n'
    imported, fmt = load(data, "long.csv")
    assert fmt == "general-table" and imported.runs[0]["metrics"]["energy_j"] == 120
    assert read_table(Source.single(data, "long.csv")).kind == "long"
