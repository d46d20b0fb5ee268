"""An import is all or nothing in every path (issue 30, defect 5): an archive over the Upload page's limits
is refused before a member is read; an import stopped by its time limit, by SIGKILL or by Ctrl-C commits
nothing; a retry then adds the whole set once. Real zips of real result files, real child processes, the
real DuckDB file."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest

from db import Store
from explorer import bounded, upload
from importers import archive
from joulebench.errors import ResultFileError
from tests.helpers import results_zip

FIXTURE = Path(__file__).parent / "fixtures" / "result_v1_cpu_runs.json"
REPO = Path(__file__).resolve().parent.parent


def source_count(db: Path) -> int:
    with Store.open_read_only(db) as store:
        return store.info().sources.height


def stall_converter(marker: str, stall_at: int, stall_s: float | None) -> None:
    """Make the import's converter stop for `stall_s` (None: until just past the bounded child's time limit)
    at its `stall_at`-th file, after writing `marker`: the moment to stop an import in the middle, whatever
    the machine's speed (used in the child processes)."""
    import importers

    real = importers.load_source
    calls = 0

    def load(source: Any, hints: Any = None) -> Any:
        nonlocal calls
        calls += 1
        if calls == stall_at:
            Path(marker).write_text("stalled")
            time.sleep(stall_s if stall_s is not None else max(0.0, (bounded._deadline or 0) - time.monotonic()) + 0.5)
        return real(source, hints)

    importers.load_source = load


def stalling_upload(name: str, data: bytes, db: str, marker: str, stall_at: int, stall_s: float | None) -> Any:
    """The Upload page's import (the bounded child's side), stalling in the middle."""
    stall_converter(marker, stall_at, stall_s)
    return upload.import_here(name, data, db)


CLI_CHILD = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C as a terminal sends it, also from a background job
from tests.test_import_atomic import stall_converter
stall_converter(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))
from cli.main import main
sys.exit(main(["import", sys.argv[4], "--db", sys.argv[5]]))
"""


def wait_for(marker: Path, child: subprocess.Popen[bytes], timeout_s: float = 300) -> None:
    end = time.monotonic() + timeout_s
    while not marker.exists():
        assert child.poll() is None, f"the import ended (exit code {child.returncode}) before it was stopped"
        assert time.monotonic() < end, "the import never reached the file where it stalls"
        time.sleep(0.05)


def kill_at(marker: Path, child: subprocess.Popen[bytes]) -> None:
    """SIGKILL `child` once it stalls at the marked file (and in any case before returning)."""
    try:
        wait_for(marker, child)
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=120)


def test_a_zip_over_the_upload_member_limit_is_refused_before_reading_and_nothing_is_committed(
        seeded_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = results_zip(archive.UPLOAD_MAX_MEMBERS + 1)
    before = source_count(seeded_db)
    message = (rf"^many\.zip: \(whole archive\): {archive.UPLOAD_MAX_MEMBERS + 1:,} members; the Upload page imports "
               rf"at most {archive.UPLOAD_MAX_MEMBERS:,}")
    with pytest.raises(ResultFileError, match=message) as refused:
        upload.import_upload("many.zip", data, str(seeded_db))  # the page's own path: the bounded child
    assert "joulebench import many.zip" in refused.value.format_message()  # the fix, named
    assert source_count(seeded_db) == before
    assert upload.preview("many.zip", data).error == refused.value.format_message()  # the preview says so first

    def never(*args: object) -> bytes:
        raise AssertionError("a member was read")

    monkeypatch.setattr(archive, "_read_member", never)  # refused from the archive's directory, no member read
    with pytest.raises(ResultFileError, match=message):
        upload.import_here("many.zip", data, str(seeded_db))
    assert source_count(seeded_db) == before


def test_an_upload_stopped_by_its_time_limit_commits_nothing_then_a_retry_adds_the_whole_set_once(
        seeded_db: Path, tmp_path: Path) -> None:
    members = 30
    data = results_zip(members)
    before = source_count(seeded_db)
    marker = tmp_path / "stalled"
    # the converter stalls at the 5th file (4 are converted by then) until past the limit (20 s: time for a child
    # on a loaded machine to start and reach that file)
    with pytest.raises(ResultFileError, match=r"^results\.zip: \(whole file\): reading it took longer than 20 s") as e:
        bounded.call(stalling_upload, "results.zip", data, str(seeded_db), str(marker), 5, None,
                     name="results.zip", time_limit_s=20)
    assert marker.exists()  # it was stopped in the middle, not before it began
    assert source_count(seeded_db) == before
    assert bounded.STOPPED in e.value.format_message()  # the sentence every stopping path writes

    reports = upload.import_here("results.zip", data, str(seeded_db))  # the retry, to the end
    assert [r.status for r in reports] == ["imported"] * members
    assert sum(r.runs_added for r in reports) == 2 * members
    assert source_count(seeded_db) == before + members
    again = upload.import_here("results.zip", data, str(seeded_db))
    assert {r.status for r in again} == {"already_imported"} and source_count(seeded_db) == before + members


def test_every_path_that_stops_an_import_writes_the_same_sentence() -> None:
    """Issue 40: under load the time limit met the child in another stage (the parent's kill), whose message lacked
    "nothing was imported"; now the check, the kill and the out-of-memory paths say the same thing."""
    assert bounded.STOPPED.endswith(bounded.NOTHING_IMPORTED)
    assert bounded.STOPPED in bounded.stopped_message("a.zip", 8).format_message()
    source = Path(bounded.__file__).read_text()
    assert source.count("stopped_message(name, ") == 2  # the child's own check and the parent's kill
    assert "so it was stopped;" not in source  # the old kill message, which claimed nothing either way


PARENT = """
import sys, time
from tests.test_import_atomic import stalling_upload
from explorer import bounded
bounded.call(stalling_upload, "results.zip", open(sys.argv[1], "rb").read(), sys.argv[2], sys.argv[3], 20, 3600.0,
             name="results.zip", time_limit_s=600)
"""


def test_the_import_child_dies_with_the_app_and_commits_nothing(seeded_db: Path, tmp_path: Path) -> None:
    """Issue 40: kill -9 of the app mid-upload left its import child running, which committed its runs."""
    from tests.test_app_stop import _alive, _descendants

    zip_path = tmp_path / "results.zip"
    zip_path.write_bytes(results_zip(30))
    marker = tmp_path / "stalled"
    before = source_count(seeded_db)
    app = subprocess.Popen([sys.executable, "-c", PARENT, str(zip_path), str(seeded_db), str(marker)], cwd=REPO,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children: set[int] = set()
    try:
        wait_for(marker, app, timeout_s=300)  # the child is in the middle of the import, stalled
        children = _descendants(app.pid)
        assert children, "the import child was not found below the app"
        os.kill(app.pid, signal.SIGKILL)  # kill -9 of the app
        app.wait(timeout=60)
        end = time.monotonic() + 120  # a generous ceiling: the kernel kills the child at once
        while any(_alive(pid) for pid in children) and time.monotonic() < end:
            time.sleep(0.1)
        left = [pid for pid in children if _alive(pid)]
        assert not left, f"the import child outlived the app: {left}"
    finally:
        for pid in (app.pid, *children):  # only what this test started, by its PID
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        app.wait(timeout=60)
    assert source_count(seeded_db) == before  # nothing committed


def test_a_child_whose_parent_is_gone_commits_nothing(seeded_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check before the commit: a child whose parent ended (where no signal killed it) rolls back."""
    monkeypatch.setattr(bounded, "_parent", os.getppid() + 1 if os.getppid() > 1 else 2)
    before = source_count(seeded_db)
    with pytest.raises(bounded.ParentGone):
        upload.import_here("results.zip", results_zip(3), str(seeded_db))
    assert source_count(seeded_db) == before


@pytest.mark.parametrize("path", ["upload child", "command line"])
def test_an_import_killed_in_the_middle_commits_nothing_then_a_retry_adds_the_whole_set_once(
        path: str, seeded_db: Path, tmp_path: Path) -> None:
    members = 30
    data = results_zip(members)
    zip_path = tmp_path / "results.zip"
    zip_path.write_bytes(data)
    marker = tmp_path / "stalled"
    before = source_count(seeded_db)
    if path == "upload child":  # the Upload page's child exactly as explorer.bounded starts it
        request = bounded.request(stalling_upload, "results.zip", data, str(seeded_db), str(marker), 20, 3600.0,
                                  name="results.zip", time_limit_s=600)
        child = subprocess.Popen([sys.executable, "-m", "explorer.bounded"], stdin=subprocess.PIPE,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
        assert child.stdin is not None
        child.stdin.write(request)
        child.stdin.close()
    else:
        child = subprocess.Popen([sys.executable, "-c", CLI_CHILD, str(marker), "20", "3600", str(zip_path),
                                  str(seeded_db)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    kill_at(marker, child)
    assert source_count(seeded_db) == before

    reports = upload.import_here("results.zip", data, str(seeded_db))
    assert [r.status for r in reports] == ["imported"] * members
    assert source_count(seeded_db) == before + members


def test_ctrl_c_in_a_command_line_import_commits_nothing(seeded_db: Path, tmp_path: Path) -> None:
    zip_path = tmp_path / "results.zip"
    zip_path.write_bytes(results_zip(30))
    marker = tmp_path / "stalled"
    before = source_count(seeded_db)
    child = subprocess.Popen([sys.executable, "-c", CLI_CHILD, str(marker), "20", "3600", str(zip_path),
                              str(seeded_db)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO)
    try:
        wait_for(marker, child)
        os.kill(child.pid, signal.SIGINT)
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            child.wait(timeout=30)
    assert child.returncode != 0, err
    assert source_count(seeded_db) == before


DRAIN_CHILD = """
import sys
from tests.test_import_atomic import stall_converter
stall_converter(sys.argv[1], 20, 3600)
from ingest import open_store
open_store(sys.argv[2]).close()
"""


def test_an_upload_queued_while_the_database_is_busy_is_queued_and_drained_all_or_nothing(
        seeded_db: Path, tmp_path: Path) -> None:
    from ingest.inbox import pending
    from ingest.service import open_store
    from tests.helpers import database_held_by_another_process, release

    members = 30
    data = results_zip(members)
    before = source_count(seeded_db)
    with database_held_by_another_process(seeded_db) as holder:
        reports = upload.import_here("results.zip", data, str(seeded_db))
        release(holder)
    assert [r.status for r in reports] == ["queued"] * members and len(pending(seeded_db)) == members

    marker = tmp_path / "stalled"  # the next open drains the inbox: killed at its 20th file
    child = subprocess.Popen([sys.executable, "-c", DRAIN_CHILD, str(marker), str(seeded_db)], cwd=REPO)
    kill_at(marker, child)
    assert source_count(seeded_db) == before and len(pending(seeded_db)) == members

    with open_store(seeded_db) as store:
        assert store.info().sources.height == before + members
    assert pending(seeded_db) == []


def test_a_file_whose_values_break_a_database_rule_is_refused_and_the_rest_of_the_archive_imported(
        seeded_db: Path) -> None:
    import json

    docs = {f"r{i}.json": FIXTURE.read_text().replace("1c1f0e6a0001", f"{i:08d}0001")
            .replace("1c1f0e6a0002", f"{i:08d}0002") for i in range(5)}
    bad = json.loads(docs["r2.json"])
    bad["runs"][0]["power_traces"].append(dict(bad["runs"][0]["power_traces"][0]))  # one domain twice
    docs["r2.json"] = json.dumps(bad)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, doc in docs.items():
            zf.writestr(name, doc)
    before = source_count(seeded_db)
    reports = upload.import_here("mixed.zip", buf.getvalue(), str(seeded_db))
    assert [r.status for r in reports] == ["imported", "imported", "rejected", "imported", "imported"]
    assert "mixed/r2.json: power_traces: a run lists the same domain twice" in reports[2].message
    assert source_count(seeded_db) == before + 4
