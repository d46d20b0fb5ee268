"""serve-bench as its own process against a hostile server (tests/hostile_server.py): peak memory under gzip
bombs and a 200 MB line (VmHWM in the child), SIGTERM during the warm-up, and kill -9 mid-point
(the point in progress recorded as interrupted when the store next opens). Every process is stopped by PID.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.hostile_server import HostileServer, bomb

REPO = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, PYTHONUNBUFFERED="1", HF_HUB_OFFLINE="1")
MAX_RSS_BYTES = 1024**3
# runs `joulebench` in this child and writes its peak resident memory to argv[1]: VmHWM of /proc/self/status, the
# high-water mark of this program's own memory (ru_maxrss is not: Linux carries the forking parent's peak across
# fork and exec, so a child of a 1.2 GB test worker read 1.2 GB before doing anything)
MEASURED = ("import re, sys\nfrom cli.main import main\ntry:\n    code = main(sys.argv[2:])\nfinally:\n"
            "    kib = re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1)\n"
            "    open(sys.argv[1], 'w').write(str(int(kib) * 1024))\n"
            "sys.exit(code)\n")


def _bench(url: str, tmp: Path, *extra: str) -> list[str]:
    return ["serve-bench", "--target", url, "--concurrency", "2", "--requests", "4", "--output-tokens", "4",
            "--prompt-tokens", "8", "--device", "cpu", "--db", str(tmp / "jb.duckdb"), "--out", str(tmp / "out.json"),
            *extra]


def test_bombs_and_a_200_mb_line_stay_under_1_gb(tmp_path: Path) -> None:
    bomb("models")
    bomb("stream")
    for mode in ("gzip_models", "gzip_stream", "long_line"):
        rss = tmp_path / f"{mode}.rss"
        started = time.monotonic()
        with HostileServer(mode) as server:
            done = subprocess.run([sys.executable, "-c", MEASURED, str(rss),
                                   *_bench(server.url, tmp_path, "--warmup-requests", "0", "--request-timeout", "30")],
                                  cwd=REPO, env=ENV, capture_output=True, text=True, timeout=180)
        assert "Traceback" not in done.stderr, done.stderr[-2000:]
        assert int(rss.read_text()) <= MAX_RSS_BYTES, (mode, rss.read_text())
        print(f"{mode}: peak RSS {int(rss.read_text()) / 2**20:.0f} MiB, {time.monotonic() - started:.1f} s")
        if mode == "gzip_models":
            assert done.returncode == 2 and "bytes decompressed" in done.stderr
        else:
            assert "too large" in json.loads((tmp_path / "out.json").read_text())["runs"][0]["notes"]


def _started(proc: subprocess.Popen[str], text: str, limit_s: float = 120.0) -> None:
    assert proc.stderr is not None
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        assert line, "serve-bench ended early"
        if text in line:
            return
    raise AssertionError(f"{text!r} not printed within {limit_s} s")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_the_warm_up_stops_it_and_records_the_point(sig: int, tmp_path: Path,
                                                                    bare_template: Path) -> None:
    shutil.copy(bare_template, tmp_path / "jb.duckdb")
    with HostileServer("slow_body") as server:
        proc = subprocess.Popen([sys.executable, "-m", "runner",
                                 *_bench(server.url, tmp_path, "--warmup-requests", "2", "--request-timeout", "120")],
                                cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            _started(proc, "warming up: 2 request(s)")
            time.sleep(1.0)
            proc.send_signal(sig)
            started = time.monotonic()
            proc.communicate(timeout=60)
            stopped_s = time.monotonic() - started
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert stopped_s < 15.0  # not the warm-up's 2 x 120 s
    assert proc.returncode == 128 + sig
    (run,) = json.loads((tmp_path / "out.json").read_text())["runs"]
    assert run["status"] == "interrupted" and "during the warm-up" in run["error"]


def test_kill_9_mid_point_leaves_the_point_interrupted_at_the_next_open(tmp_path: Path, bare_template: Path) -> None:
    from db import Store
    from ingest import open_store
    from joulebench.paths import sweeps_dir

    db = tmp_path / "jb.duckdb"
    shutil.copy(bare_template, db)
    with HostileServer("slow_body") as server:
        proc = subprocess.Popen([sys.executable, "-m", "runner",
                                 *_bench(server.url, tmp_path, "--warmup-requests", "0", "--request-timeout", "120")],
                                cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            _started(proc, "sending 4 requests")
            time.sleep(1.0)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert len(list(sweeps_dir(db).glob("sweep-*.json"))) == 1
    open_store(db).close()  # the next open recovers the killed sweep
    with Store.open(db) as store:
        rows = store.query("SELECT status, error, workload, max_concurrency FROM runs").rows()
    assert [(r[0], r[2], r[3]) for r in rows] == [("interrupted", "serve-bench", 2)]
    assert "the process was killed during this run" in rows[0][1]
