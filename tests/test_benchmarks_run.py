"""Every benchmark runs at its smallest size, so none can rot (issue 31): each is started as a person starts it
(its own process, from the repository root), must exit 0 and print its figure beside its target. And a wait
that runs out ends a benchmark with exit code 1 and `FAILED: <what> after N s`, with what it started stopped.

A figure that misses its target is a result: power_settings_switch and serve_client_schedule exit 1 on a miss
(their convention), which passes here when the verdict says so and nothing FAILED. team_store measures a
DuckLake with a SQLite catalog (cheaper here than starting PostgreSQL). gpu_generation_evidence.sh needs a GPU:
its syntax, its refusal without one, and its step time limit (with stand-ins for nvidia-smi and joulebench)."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "benchmarks"

_VERDICT, _LOAD = r"(OK    |MISSED)", r"\(load [\d.]+\)"  # explorer_scale's summary: verdict, load average
# (script, arguments, patterns its output must hold, what may end it with exit code 1 as a result, time limit s)
SMALLEST = {
    "explorer_scale": (["--runs", "100", "--samples-per-run", "10", "--pages", "Devices"],
                       [rf"\n  {_VERDICT} +[\d.]+ s <= 5 s  {_LOAD}  open grading \d[\d,]* ungraded runs",
                        rf"\n  {_VERDICT} +[\d.]+ s <= 5 s  {_LOAD}  regrade of \d[\d,]* graded runs",
                        rf"\n  {_VERDICT} +[\d.]+ s <= 0\.5 s  {_LOAD}  in-process warm",
                        rf"\n  {_VERDICT} +[\d.]+ s <= 5 s  {_LOAD}  Compare's first chart after navigation",
                        rf"\n  {_VERDICT} +[\d.]+ s <= 2 s  {_LOAD}  Compare, a later visit \(from the menu\)",
                        rf"\n  {_VERDICT} +[\d.]+ s <= 2 s  {_LOAD}  Devices, warm",
                        rf"\n  {_VERDICT} +[\d.]+ s <= 5 s  {_LOAD}  Compare's first chart, fresh server, runs "
                        r"being regraded"], None, 240),
    "team_store": (["--runs", "100", "--samples-per-run", "10"],
                   [r"push: \d[\d,]* runs and \d[\d,]* samples in [\d.]+ s = [\d,]+ runs/s, [\d,]+ samples/s",
                    r"lake / file: cold [\d.]+x \(target <= 3x\), warm [\d.]+x \(target <= 2x\)"], None, 120),
    "ingest_speed": (["--samples", "2000"],
                     [r"end to end: +[\d.]+ s +[\d.]+ M samples/s \(target >= 1\.00\)"], None, 60),
    "ingest_speed --members": (["--members", "3"],
                               [r"[\d.]+ members/s \(target >= \d+: [\d,]+ members previewed and imported"], None, 60),
    "soak_app --sessions": (["--sessions", "1", "--minutes", "0.05"],
                            [r"1 sessions x 0\.05 min: \d+ pages in \d+ s = [\d.]+ pages/s",
                             r"slowest page: .+, [\d.]+ s",
                             r"target: every page within 60 s, no error, the server healthy -> met"], None, 90),
    "soak_app --imports": (["--imports", "1", "--runs", "0"],
                           [r"runs shown by the app: (\d+) of \1 expected; inbox: 0 waiting, 0 rejected",
                            r"target: every run visible, an empty inbox, nothing rejected -> met"], None, 120),
    "page_times": (["--visits", "1", "--pages", "Compare,Run detail"],
                   [r"Compare +[\d.]+ +[\d.]+ +[\d.]+  <= 2 s warm: (met|MISSED)",
                    r"Run detail +[\d.]+ +[\d.]+ +[\d.]+  <= 2 s warm: (met|MISSED)",
                    r"load average \(1, 5, 15 min\): [\d.]+ [\d.]+ [\d.]+ on \d+ cores"], None, 120),
    "power_settings_switch": ([], [r"slowest device switch: [\d.]+ s \(target < 2 s\): (met|MISSED)"],
                              r"\(target < 2 s\): MISSED", 90),
    "requests_scale": (["--points", "2", "--per-point", "1000", "--gaps", "4"],
                       [r"store [\d.]+ s \+ aggregate [\d.]+ s = [\d.]+ s \(target <= 10 s\), peak [\d,]+ MB "
                        r"\(target <= 1024 MB\): (met|MISSED)",
                        r"goodput for a new SLO over 2,000 requests: [\d.]+ s warm .*target <= 1 s: (met|MISSED)"],
                       None, 90),
    "sampler_overhead": (["--seconds", "0.5"], [r"sampler CPU cost: [\d.]+ % of one core .*target <= 1 %"], None, 60),
    "serve_client_schedule": (["--requests", "20", "--tokens", "2", "--gap-ms", "5"],
                              [r"20 requests at 50/s \(poisson\).*; 0 failed",
                               r"client: [\d.]+ s CPU over [\d.]+ s; waited for a CPU while runnable: ",
                               r"p99 [\d.]+ ms vs target <= 2 ms: (meets|MISSES)"], r"<= 2 ms: MISSES", 60),
    "serve_client_fidelity": (["--requests", "6", "--tokens", "4", "--gap-ms", "5", "--first-ms", "20"],
                              [r"TTFT mean: client [\d.]+ ms, bare httpx .*target 0\.98-1\.02\): (met|MISSED)",
                               r"ITL mean: client [\d.]+ ms, bare httpx .*target 0\.98-1\.02\): (met|MISSED)"],
                              None, 60),
    "harness_overhead": (["--workload", "bert-tiny", "--batch-size", "1", "--seq-len", "16", "--warmup", "1",
                          "--steps", "3", "--rounds", "2", "--threads", "1"],
                         [r"ratio runner / bare: [\d.]+", r"target >= 0\.99: (met|NOT met|not shown)"], None, 90),
    "generation_fidelity": (["--batch-size", "1", "--seq-len", "8", "--max-new-tokens", "4", "--warmup", "1",
                             "--steps", "1", "--rounds", "2", "--threads", "1"],
                            [r"ratio runner / bare: [\d.]+", r"target >= 0\.98: (met|NOT met|not shown)"], None, 90),
}


def run_benchmark(script: str, args: list[str], tmp_path: Path, timeout_s: float) -> subprocess.CompletedProcess[str]:
    """The benchmark as a person runs it; its temp files (and the marker of everything it starts) in a temp folder
    of its own, removed after."""
    # a short TMPDIR: Chromium's singleton socket path must fit in 108 bytes (pytest-xdist's tmp paths do not)
    short = Path(tempfile.mkdtemp(prefix="jb-bench-"))
    try:
        env = dict(os.environ, TMPDIR=str(short), HF_HUB_OFFLINE="1")
        done = subprocess.run([sys.executable, str(BENCH / f"{script}.py"), *args], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=timeout_s, check=False)
        assert_all_stopped(short)
    finally:
        shutil.rmtree(short, ignore_errors=True)
    return done


def started_by(marker: Path) -> list[str]:
    """The processes alive with `marker` in their environment (TMPDIR): what a benchmark started and left."""
    found = []
    needle = str(marker).encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if needle in (proc / "environ").read_bytes():
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                found.append(f"{proc.name}: {cmdline[:200]}")
        except OSError:  # ended meanwhile, or not ours
            continue
    return found


def assert_all_stopped(marker: Path) -> None:
    """Stopped means gone within a few seconds (a server's children end after its SIGTERM, not with it)."""
    deadline = time.monotonic() + 90
    while (left := started_by(marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"the benchmark left processes running: {left}"


@pytest.mark.parametrize("name", list(SMALLEST))
def test_smallest_size_runs_and_prints_its_figure_beside_its_target(name: str, tmp_path: Path) -> None:
    args, patterns, miss, timeout_s = SMALLEST[name]
    script = name.split()[0]
    done = run_benchmark(script, args, tmp_path, timeout_s)
    output = done.stdout + done.stderr
    ok = done.returncode == 0 or (done.returncode == 1 and miss is not None and re.search(miss, done.stdout)
                                  and "FAILED:" not in output)
    assert ok, f"{name} exited with code {done.returncode}:\n{output[-3000:]}"
    for pattern in patterns:
        assert re.search(pattern, done.stdout), f"{name}: no {pattern!r} in its output:\n{done.stdout[-3000:]}"


def test_explorer_scale_stops_with_the_reason_when_the_app_does_not_answer_in_time(tmp_path: Path) -> None:
    """The app cannot answer its health check in 10 ms: exit code 1, the reason, the app and Chromium stopped."""
    done = run_benchmark("explorer_scale", ["--runs", "1", "--samples-per-run", "1", "--wait-limit-s", "0.01"],
                         tmp_path, 120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED: the app's health check (/_stcore/health) after 0.01 s" in done.stderr, done.stderr[-3000:]


def test_a_benchmark_past_its_whole_limit_stops_with_the_reason(tmp_path: Path) -> None:
    """The watchdog every benchmark runs under (benchmarks/waits.py), for work a wait cannot interrupt."""
    started = time.monotonic()
    done = run_benchmark("sampler_overhead", ["--seconds", "30", "--limit-s", "1"], tmp_path, 60)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED: the benchmark to finish (--limit-s) after 1 s" in done.stderr
    assert time.monotonic() - started < 20  # not the 60 s the sampler would have run


def test_gpu_evidence_script_checks_its_syntax_and_refuses_without_a_gpu(tmp_path: Path) -> None:
    script = str(BENCH / "gpu_generation_evidence.sh")
    assert subprocess.run(["bash", "-n", script], check=False, timeout=60).returncode == 0
    usage = subprocess.run(["bash", script], capture_output=True, text=True, check=False, timeout=60)
    assert usage.returncode == 2 and "usage:" in usage.stderr
    env = dict(os.environ, OUT=str(tmp_path / "out"), NVIDIA_SMI=str(tmp_path / "no-nvidia-smi"))
    done = subprocess.run(["bash", script, "bert"], capture_output=True, text=True, env=env, check=False, timeout=60)
    assert done.returncode == 1 and "FAILED: no NVIDIA GPU" in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()  # stopped before anything was written


def test_gpu_evidence_step_past_its_limit_is_stopped_with_the_reason(tmp_path: Path) -> None:
    """Stand-ins for what a lent GPU machine has: an nvidia-smi that lists a GPU, a joulebench run that hangs."""
    smi, jb = tmp_path / "nvidia-smi", tmp_path / "joulebench"
    smi.write_text("#!/bin/sh\necho 'GPU 0: stand-in'\n")
    jb.write_text("#!/bin/sh\nsleep 120\n")
    smi.chmod(0o755)
    jb.chmod(0o755)
    env = dict(os.environ, OUT=str(tmp_path / "out"), NVIDIA_SMI=str(smi), JOULEBENCH=str(jb), LIMIT_S="1",
               TMPDIR=str(tmp_path))
    started = time.monotonic()
    done = subprocess.run(["bash", str(BENCH / "gpu_generation_evidence.sh"), "bert"], capture_output=True,
                          text=True, env=env, check=False, timeout=60)
    assert done.returncode == 1 and "FAILED: the BERT run after 1 s" in done.stderr, done.stderr
    assert time.monotonic() - started < 30
    assert_all_stopped(tmp_path)


def test_a_page_the_benchmark_does_not_time_is_refused_with_the_pages_it_does() -> None:
    """--pages names pages by their titles: an unknown one ends the run before anything starts, naming the known."""
    sys.path.insert(0, str(BENCH))
    try:
        import waits
    finally:
        sys.path.remove(str(BENCH))
    chosen = waits.pages_option([("Compare", "compare"), ("Run detail", "run_detail?run_id={run_id}")])
    assert chosen(" Run detail,Compare ") == [("Run detail", "run_detail?run_id={run_id}"), ("Compare", "compare")]
    for bad, said in (("Comprae", "not a page: Comprae; give one or more of Compare, Run detail"),
                      (" , ", "not a page: (none given)")):
        with pytest.raises(argparse.ArgumentTypeError, match=re.escape(said)):
            chosen(bad)
