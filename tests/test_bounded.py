"""The app reads uploaded files in a child process bounded in time and memory (issue 17, F4): a file
that makes an importer spin or swell is refused with its name, and the server keeps answering."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from explorer import bounded, upload
from joulebench.errors import ResultFileError


def test_work_that_runs_past_its_time_is_stopped_and_refused_naming_the_file():
    start = time.monotonic()
    with pytest.raises(ResultFileError, match=r"^slow\.csv: \(whole file\): reading it took longer than 2 s"):
        bounded.call(time.sleep, 30, name="slow.csv", time_limit_s=2)
    assert time.monotonic() - start < 20  # stopped at its limit, not after the 30 s it asked for


def test_work_that_swells_past_its_memory_is_refused_naming_the_file():
    with pytest.raises(ResultFileError, match=r"^bomb\.json: \(whole file\): reading it needed more than 1 GB"):
        bounded.call(bytearray, 4 * 1024**3, name="bomb.json", memory_limit_bytes=1024**3)


def test_a_preview_in_the_child_gives_the_same_answer_as_here(fixture_file: Path):
    data = fixture_file.read_bytes()
    here = upload.read_preview(fixture_file.name, data)
    there = upload.preview(fixture_file.name, data)
    assert there == here and there.runs > 0 and not there.error


def test_a_refusal_in_the_child_comes_back_as_the_same_clear_message():
    data = b'{"format": "joulebench-result", "schema_version": 99, "runs": []}'
    there = upload.preview("future.json", data)
    assert there.error.startswith("future.json: schema_version: 99 is newer than this JouleBench reads")
