from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from joulebench import resultfile
from joulebench.errors import ResultFileError
from joulebench.resultfile import load_result_bytes


def _doc(fixture_file: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(fixture_file.read_text())
    return loaded


def _problems(data: bytes, name: str = "bad.json") -> str:
    with pytest.raises(ResultFileError) as info:
        load_result_bytes(data, name)
    message = info.value.format_message()
    assert message.startswith(f"{name}: ")
    return message


def test_fixture_loads_plain_and_gzip(fixture_file: Path) -> None:
    data = fixture_file.read_bytes()
    plain = load_result_bytes(data, "a.json")
    packed = load_result_bytes(gzip.compress(data), "a.json.gz")
    assert plain.document == packed.document
    assert len(plain.document["runs"]) == 2
    assert plain.content_sha256 != packed.content_sha256  # identity is the bytes received


def test_truncated_file_names_line_and_column(fixture_file: Path) -> None:
    message = _problems(fixture_file.read_bytes()[:300])
    assert "not valid JSON at line" in message and "truncated" in message


def test_wrong_value_names_field_and_expectation(fixture_file: Path) -> None:
    doc = _doc(fixture_file)
    doc["runs"][0]["config"]["batch_size"] = 0
    message = _problems(json.dumps(doc).encode())
    assert "runs[0].config.batch_size" in message
    assert "at least 1" in message


def test_unknown_field_lists_allowed_fields(fixture_file: Path) -> None:
    doc = _doc(fixture_file)
    doc["runs"][1]["config"]["batchsize"] = 3
    message = _problems(json.dumps(doc).encode())
    assert "runs[1].config: unknown field(s) 'batchsize'" in message
    assert "batch_size" in message


def test_missing_required_field(fixture_file: Path) -> None:
    doc = _doc(fixture_file)
    del doc["runs"][0]["device"]
    assert "runs[0]: 'device' is a required property; add it" in _problems(json.dumps(doc).encode())


def test_zero_energy_is_refused_with_the_fix(fixture_file: Path) -> None:
    doc = _doc(fixture_file)
    doc["runs"][0]["metrics"]["energy_j"] = 0
    message = _problems(json.dumps(doc).encode())
    assert "runs[0].metrics.energy_j" in message and "energy_missing_reason" in message


def test_future_version_is_refused_by_number(fixture_file: Path) -> None:
    doc = _doc(fixture_file)
    doc["schema_version"] = 7
    assert "schema_version: 7 is newer" in _problems(json.dumps(doc).encode())


def test_other_json_is_not_a_result_file() -> None:
    assert "not a JouleBench result file" in _problems(b'{"benchmark": {"name": "x"}}')
    assert "top level must be a JSON object" in _problems(b"[1, 2]")


def test_nan_and_binary_and_deep_nesting_are_refused(fixture_file: Path) -> None:
    text = fixture_file.read_text().replace('"energy_j": 0.91', '"energy_j": NaN')
    assert "NaN is not a number JSON allows" in _problems(text.encode())
    assert "not UTF-8" in _problems(b"\xff\xfe\x00garbage")
    deep = '{"format": "joulebench-result", "schema_version": 1, "runs": [], "x": ' + "[" * 5000 + "]" * 5000 + "}"
    assert "usable JSON" in _problems(deep.encode()) or "nested deeper" in _problems(deep.encode())


def test_gzip_bomb_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resultfile, "MAX_DOCUMENT_BYTES", 1024 * 1024)
    bomb = gzip.compress(b" " * (4 * 1024 * 1024))
    assert "decompresses to more than 1 MiB" in _problems(bomb)


def test_corrupt_gzip() -> None:
    assert "gzip data is corrupt" in _problems(gzip.compress(b'{"a": 1}')[:15])


def test_trace_lengths_must_pair_up(fixture_file: Path) -> None:
    doc = _doc(fixture_file)
    doc["runs"][0]["power_traces"][0]["power_w"].pop()
    message = _problems(json.dumps(doc).encode())
    assert "runs[0].power_traces[0]: t_s has 4 values, power_w 3" in message


def test_duplicate_run_ids_in_one_file(fixture_file: Path) -> None:
    doc = _doc(fixture_file)
    doc["runs"][1]["run_id"] = doc["runs"][0]["run_id"]
    assert "appears twice" in _problems(json.dumps(doc).encode())


def test_round_trip_write(tmp_path: Path, fixture_file: Path) -> None:
    doc = _doc(fixture_file)
    for name in ("out.json", "out.json.gz"):
        resultfile.dump_document(doc, tmp_path / name)
        assert resultfile.load_result_file(tmp_path / name).document == doc
