"""Ingest speed: a large power trace, or an archive of many result files.

    .venv/bin/python benchmarks/ingest_speed.py [--samples 2000000]
    .venv/bin/python benchmarks/ingest_speed.py --members 1000
    .venv/bin/python benchmarks/ingest_speed.py --samples 2000; ... --members 3      # smallest: seconds each

Samples: writes a synthetic nvidia-smi CSV (the full query with units in the header and cells, 10 ms
sampling), imports it into a fresh database through the same path as `joulebench import`, and prints
samples per second for each stage and end to end. Target: >= 1M samples/s.

Members: zips `--members` real JouleBench result files (the test fixture, two runs each, own run ids),
imports the zip into a fresh seeded database with `joulebench import` (one process, as a person runs it)
and prints members per second. Target: the Upload page's member limit (importers.archive.UPLOAD_MAX_MEMBERS)
read within its time limit (explorer.bounded.TIME_LIMIT_S), preview and import, with room to spare: at least
2 x UPLOAD_MAX_MEMBERS / TIME_LIMIT_S members/s.

A miss is printed beside the target (exit code 0). The import process waits at most --wait-limit-s and the whole
run --limit-s: past either, `FAILED: <what> after N s` on stderr and exit code 1.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import waits  # noqa: E402

from db import Store  # noqa: E402
from importers import Hints, load  # noqa: E402
from tests.helpers import results_zip  # noqa: E402

HEADER = (
    "timestamp, name, uuid, pstate, memory.total [MiB], memory.used [MiB], memory.free [MiB], "
    "temperature.gpu, utilization.memory [%], utilization.gpu [%], power.management, power.draw [W]\n"
)


def synthetic_log(samples: int) -> bytes:
    lines = [HEADER]
    for i in range(samples):
        ms = i * 10
        s, ms = divmod(ms, 1000)
        m, s = divmod(s, 60)
        h, m = divmod(m, 60)
        lines.append(
            f"2024/10/13 {h % 24:02d}:{m:02d}:{s:02d}.{ms:03d}, NVIDIA GeForce GTX 1650, GPU-0000, P0, "
            f"4096 MiB, 473 MiB, 3427 MiB, 50, 7 %, 25 %, Enabled, {19 + (i % 97) / 10:.2f} W\n"
        )
    return "".join(lines).encode()


def archive(members: int, wait_s: float) -> None:
    from explorer.bounded import TIME_LIMIT_S
    from importers.archive import UPLOAD_MAX_MEMBERS

    with tempfile.TemporaryDirectory() as tmp:
        db, path = Path(tmp) / "bench.duckdb", Path(tmp) / "results.zip"
        Store.open(db).close()  # created and seeded first: creating a database is not import speed
        path.write_bytes(results_zip(members))
        t0 = time.perf_counter()
        done = waits.run([sys.executable, "-m", "cli.main", "import", str(path), "--db", str(db)], wait_s,
                         f"`joulebench import` of {members:,} result files", capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parent.parent)
        elapsed = time.perf_counter() - t0
        with Store.open_read_only(db) as store:
            added = store.info().sources.filter(pl.col("kind") == "upload").height
    if done.returncode != 0 or added != members:
        raise waits.BenchmarkFailed(f"`joulebench import` exited with code {done.returncode} and added {added} of "
                                    f"{members} files: {done.stderr[-2000:]}")
    target = 2 * UPLOAD_MAX_MEMBERS / TIME_LIMIT_S
    print(f"{members:,} result files in one zip, `joulebench import` (process start included): {elapsed:6.1f} s")
    print(f"{members / elapsed:7.1f} members/s (target >= {target:.0f}: {UPLOAD_MAX_MEMBERS:,} members previewed and "
          f"imported within the Upload page's {TIME_LIMIT_S:.0f} s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=2_000_000)
    parser.add_argument("--members", type=int, default=0, help="measure an archive of this many result files instead")
    waits.add_limits(parser, limit_s=1800, wait_s=600)
    args = parser.parse_args()
    if args.members:
        return waits.main(lambda: archive(args.members, args.wait_limit_s), args.limit_s)
    return waits.main(lambda: samples(args.samples), args.limit_s)


def samples(count: int) -> None:
    n = min(count, 8_640_000)  # one day at 10 ms keeps the synthetic clock monotonic
    data = synthetic_log(n)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        with Store.open(db, seed_reference=False) as store:  # warm-up: one-time imports are not ingest speed
            warm, warm_fmt = load(synthetic_log(100), "warm-up.csv", hints=Hints(mode="train"))
            store.ingest(warm, "upload", warm_fmt)
        t0 = time.perf_counter()
        loaded, fmt = load(data, "gpu_power.csv", hints=Hints(mode="train"))
        t1 = time.perf_counter()
        with Store.open(db, seed_reference=False) as store:
            t2 = time.perf_counter()
            report = store.ingest(loaded, "upload", fmt)
            t3 = time.perf_counter()
            stored = store.query("SELECT count(*) AS n FROM power_samples")["n"][0] - 100
    if stored != n or report.runs_added != 1:
        raise waits.BenchmarkFailed(f"{stored:,} of {n:,} samples stored, {report.runs_added} runs added (1 expected)")
    print(f"{n:,} samples, {len(data) / 1e6:.0f} MB of nvidia-smi CSV")
    print(f"convert + validate: {t1 - t0:6.2f} s  {n / (t1 - t0) / 1e6:5.2f} M samples/s")
    print(f"ingest (DuckDB):    {t3 - t2:6.2f} s  {n / (t3 - t2) / 1e6:5.2f} M samples/s")
    total = (t1 - t0) + (t3 - t2)
    print(f"end to end:         {total:6.2f} s  {n / total / 1e6:5.2f} M samples/s (target >= 1.00)")


if __name__ == "__main__":
    sys.exit(main())
