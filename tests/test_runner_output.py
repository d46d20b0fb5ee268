"""A sweep's runs are never lost (issue 9, cases 2, 3 and 7): two sweeps in one second, a sweep
killed with SIGKILL, and a result folder that cannot be written."""

from __future__ import annotations

import builtins
import errno
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from db import Store
from ingest import open_store
from joulebench.paths import results_dir, sweeps_dir
from runner import SweepOptions, run_sweep

REPO = Path(__file__).resolve().parent.parent
JOULEBENCH = str(Path(sys.executable).with_name("joulebench"))
ENV = dict(os.environ, PYTHONUNBUFFERED="1", HF_HUB_OFFLINE="1")


def _local_runs(db: Path) -> list[tuple[Any, ...]]:
    with Store.open(db) as store:
        return store.query("SELECT r.batch_size, r.status, r.error, r.origin_file_name FROM runs r "
                           "JOIN sources s USING (source_id) WHERE s.kind = 'local' ORDER BY r.batch_size").rows()


def test_two_sweeps_started_in_the_same_second_keep_every_run(seeded_db: Path) -> None:
    cmd = [JOULEBENCH, "run", "--workload", "bert-tiny", "--batch-size", "1,2", "--seq-len", "16", "--steps", "2",
           "--warmup", "1", "--no-idle", "--db", str(seeded_db)]
    procs = [subprocess.Popen(cmd, cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    open_store(seeded_db).close()  # a sweep that found the database busy queued its file: ingest it
    files = sorted(results_dir(seeded_db).glob("joulebench-run-*.json"))
    assert len(files) == 2
    runs = _local_runs(seeded_db)
    assert len(runs) == 4 and {r[3] for r in runs} == {f.name for f in files}


def test_a_sweep_killed_with_sigkill_is_recovered_at_the_next_open(seeded_db: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "killed.json"
    cmd = [JOULEBENCH, "run", "--workload", "bert-tiny", "--batch-size", "1,2,4", "--seq-len", "16", "--warmup", "1",
           "--duration", "3", "--no-idle", "--db", str(seeded_db), "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line, "the sweep ended before the second run"
            if "run 2/3" in line:
                break
        time.sleep(0.5)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert _local_runs(seeded_db) == []  # killed before its import: nothing in the database yet
    assert len(list(sweeps_dir(seeded_db).glob("sweep-*.json"))) == 1

    assert main(["db", "info", "--db", str(seeded_db)]) == 0
    printed = capsys.readouterr().out
    assert "recovered" in printed and "killed.json" in printed and "2 run(s) recovered" in printed
    runs = _local_runs(seeded_db)
    assert [(r[0], r[1]) for r in runs] == [(1, "ok"), (2, "interrupted")]
    assert "the process was killed during this run" in runs[1][2]
    assert list(sweeps_dir(seeded_db).glob("sweep-*.json")) == []  # recovered once
    open_store(seeded_db).close()
    assert len(_local_runs(seeded_db)) == 2


class _FullDisk:
    """`open` for joulebench.files that fails with ENOSPC under the given folders."""

    def __init__(self, *full: Path) -> None:
        self.full = [str(f) for f in full]

    def __call__(self, file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if "x" in mode or "w" in mode:
            if any(str(file).startswith(f) for f in self.full):
                raise OSError(errno.ENOSPC, "No space left on device", str(file))
        return builtins.open(file, mode, *args, **kwargs)


def _sweep(db: Path, out: Path, stream: io.StringIO) -> Any:
    opts = SweepOptions(workloads=["bert-tiny"], batch_sizes=[1, 2], seq_lens=[16], steps=2, warmup=1, idle=False,
                        device="cpu", db=str(db), out=out)
    return run_sweep(opts, stream=stream)


def test_a_full_disk_sends_the_result_file_to_a_folder_that_can_take_it(seeded_db: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    full = tmp_path / "full"
    monkeypatch.setattr("joulebench.files.open", _FullDisk(full), raising=False)
    stream = io.StringIO()
    result = _sweep(seeded_db, full / "sweep.json", stream)
    said = stream.getvalue()
    assert f"{full / 'sweep.json'}: cannot write it (ENOSPC, the disk is full)" in said
    assert result.out_path == results_dir(seeded_db) / "sweep.json" and result.out_path.exists()
    assert f"written to {result.out_path} instead" in said
    assert result.ingest.status == "imported" and len(_local_runs(seeded_db)) == 2
    assert not list(full.glob("*")) if full.exists() else True  # no .partial left behind
    assert list(sweeps_dir(seeded_db).glob("*.json")) == []


def test_when_no_folder_can_be_written_the_runs_are_imported_from_memory(seeded_db: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("joulebench.files.open", _FullDisk(Path("/")), raising=False)  # every folder is full
    stream = io.StringIO()
    result = _sweep(seeded_db, tmp_path / "out" / "sweep.json", stream)
    said = stream.getvalue()
    assert "no folder could take the result file" in said and "ENOSPC" in said
    assert result.out_path is None
    assert result.ingest.status == "imported" and len(_local_runs(seeded_db)) == 2
    leftovers = [p for p in tmp_path.rglob("*") if p.name.endswith(".partial")]
    assert leftovers == []


def test_a_result_folder_blocked_by_a_file_falls_back(seeded_db: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the result folder should be")
    stream = io.StringIO()
    result = _sweep(seeded_db, blocker / "sweep.json", stream)
    assert "cannot write it" in stream.getvalue() and result.out_path == results_dir(seeded_db) / "sweep.json"
    assert len(_local_runs(seeded_db)) == 2


FULL_DISK_SWEEP = r"""
import builtins, errno, json, sys
from pathlib import Path
from types import SimpleNamespace

import ingest
import joulebench.files as files
import runner.output as output
from joulebench.errors import FileWriteError
from runner.output import ResultSink
from runner.sweep import SweepResult, finish

db, home, fixture = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
output.user_data_dir = lambda: home  # the user's data folder: another disk, which has room
sink = ResultSink(db.parent / "results" / "full.json", str(db))
sink.start(recover=True)  # the marker is made while the disk still takes it
full = str(db.parent)


def full_open(file, mode="r", *args, **kwargs):
    if ("w" in mode or "x" in mode) and str(file).startswith(full):
        raise OSError(errno.ENOSPC, "No space left on device", str(file))
    return builtins.open(file, mode, *args, **kwargs)


def import_bytes(*args, **kwargs):
    raise FileWriteError(db, OSError(errno.ENOSPC, "No space left on device", str(db)))


files.open = full_open  # from now on the disk of the database is full: the results and the marker cannot be written
ingest.import_bytes = import_bytes  # nor can the database take the runs
result = SweepResult()
for run in json.loads(fixture.read_text())["runs"]:
    result.runs.append(run)
    sink.add(run)
finish(result, sink, SimpleNamespace(pending=None), ingest=True, stream=sys.stderr)
"""


def test_a_run_whose_import_a_full_disk_refused_is_imported_at_the_next_open(
        seeded_db: Path, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 40: a disk-full `joulebench run` promised an import at the next open; after space was freed it never
    happened (its file had gone to a fallback folder the marker, on the full disk, could not be told of)."""
    home = tmp_path_factory.mktemp("home")  # not beside the database: on the disk that has room
    fixture = REPO / "tests" / "fixtures" / "result_v1_cpu_runs.json"
    done = subprocess.run([sys.executable, "-c", FULL_DISK_SWEEP, str(seeded_db), str(home), str(fixture)],
                          cwd=REPO, env=dict(ENV, TMPDIR=str(home)), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    written = home / "results" / "full.json"
    assert f"the runs were not imported: {written} holds them; the next open of the database imports it" \
        in done.stderr, done.stderr
    assert "ENOSPC" in done.stderr and written.exists()
    assert _local_runs(seeded_db) == []  # nothing imported yet (the disk was full)
    assert len(list(sweeps_dir(seeded_db).glob("sweep-*.json"))) == 1

    # space is freed (the child that filled it has gone); the next open keeps the promise
    assert main(["db", "info", "--db", str(seeded_db)]) == 0
    printed = capsys.readouterr().out
    assert "recovered" in printed and "full.json" in printed and "2 run(s) recovered" in printed
    stated = sorted((r["config"]["batch_size"], r["status"]) for r in json.loads(fixture.read_text())["runs"])
    assert [(r[0], r[1]) for r in _local_runs(seeded_db)] == stated  # every run, as the sweep recorded it
    assert list(sweeps_dir(seeded_db).glob("sweep-*.json")) == []
