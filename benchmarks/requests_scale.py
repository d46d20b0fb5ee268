"""Every request kept (issue 38) at scale: storing and aggregating 1,000,000 requests (10 points x 100,000) in a
store, target <= 10 s and <= 1 GB peak; recomputing goodput for a new SLO over them warm, target <= 1 s.

Synthetic requests (NumPy, seeded: lognormal TTFT, --gaps inter-token gaps each, 2 % failed) are written through
db.requests into a freshly migrated DuckDB file in one transaction, then each point's figures are computed from its
stored requests by joulebench.requests.aggregate (the one aggregation), then goodput for an SLO the runs never saw
(decision.goodput over db.requests.slo_frame, read once as the app's cache would hold it), and the same through the
app's own path: the requests read by explorer.data.slo_frame (its cache on the store's data version; warm: a cache
hit) and Decide's and Compare's section logic (decision.goodput.answer over a runs frame of the points: which are
serving points, each point's goodput, its table and sentences), for a new SLO each time. The timings exclude
making the synthetic requests (printed apart); the peak is the process's resident peak (everything included).
Usage: python benchmarks/requests_scale.py [--points 10 --per-point 100000 --gaps 16]
(smallest: --points 2 --per-point 1000 --gaps 4). A figure that misses its target is printed beside it (exit 0);
past --limit-s: `FAILED: ...`, exit code 1.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import waits  # benchmarks/waits.py, beside this script

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import duckdb  # noqa: E402

import db.requests as db_requests  # noqa: E402
import joulebench.requests as jr  # noqa: E402
from db.migrate import apply_migrations  # noqa: E402
from decision.goodput import goodput, parse_slo  # noqa: E402


def synthetic_point(rng: np.random.Generator, n: int, gaps: int) -> pl.DataFrame:
    """n requests of one point as joulebench.requests.frame makes them, built a column at a time."""
    ttft = rng.lognormal(np.log(80.0), 0.5, n)
    gap = rng.lognormal(np.log(12.0), 0.3, (n, gaps))
    failed = rng.random(n) < 0.02
    send = np.sort(rng.uniform(0, n / 50.0, n))
    itl = pl.Series("itl_ms", gap).cast(pl.List(pl.Float64))
    ok = ~failed
    frame = pl.DataFrame({
        "request_index": np.arange(n, dtype=np.int64), "scheduled_send_s": send, "send_s": send + 0.0003,
        "ttft_ms": np.where(ok, ttft, np.nan), "itl_ms": itl, "itl_kept": np.full(n, jr.GAPS_EVERY),
        "itl_count": np.full(n, gaps, dtype=np.int64), "itl_sum_ms": gap.sum(axis=1), "itl_min_ms": gap.min(axis=1),
        "itl_max_ms": gap.max(axis=1), "e2e_ms": np.where(ok, ttft + gap.sum(axis=1), np.nan),
        "prompt_tokens_server": np.full(n, 512, dtype=np.int64),
        "prompt_tokens_client": np.full(n, 512, dtype=np.int64),
        "output_tokens_server": np.full(n, gaps + 1, dtype=np.int64),
        "output_tokens_client": np.full(n, gaps + 1, dtype=np.int64),
        "status": np.where(ok, "ok", "failed"), "error_class": pl.Series([None] * n, dtype=pl.String),
        "counted": np.ones(n, dtype=bool)})
    blank = ~pl.col("status").eq("ok")
    return frame.with_columns(
        pl.col("ttft_ms").fill_nan(None), pl.col("e2e_ms").fill_nan(None),
        *[pl.when(blank).then(None).otherwise(pl.col(c)).alias(c)
          for c in ("itl_ms", "itl_count", "itl_sum_ms", "itl_min_ms", "itl_max_ms", "output_tokens_server",
                    "output_tokens_client")],
        pl.when(blank).then(pl.lit(jr.GAPS_NONE)).otherwise(pl.col("itl_kept")).alias("itl_kept"),
        pl.when(blank).then(pl.lit("HTTP 503")).otherwise(None).alias("error_class"),
    ).select(list(jr.frame_schema()))


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def run(points: int, per_point: int, gaps: int) -> int:
    rng = np.random.default_rng(38)
    total, made_s, stored_s = points * per_point, 0.0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        con = duckdb.connect(str(Path(tmp) / "requests.duckdb"))
        apply_migrations(con)
        con.execute("BEGIN TRANSACTION")
        for p in range(points):  # each point's requests made, then stored: a file's runs arrive one by one
            t0 = time.perf_counter()
            frame = synthetic_point(rng, per_point, gaps)
            made_s += time.perf_counter() - t0
            t1 = time.perf_counter()
            run_id = f"point-{p}"
            sets = pa.Table.from_pylist([{"run_id": run_id, "requests_in_source": per_point, "requests_kept": per_point,
                                          "retention_note": None}], schema=db_requests.SET_SCHEMA)
            db_requests.insert(con, db_requests.table(run_id, frame), sets)
            stored_s += time.perf_counter() - t1
            del frame
        t1 = time.perf_counter()
        con.execute("COMMIT")
        stored_s += time.perf_counter() - t1
        t2 = time.perf_counter()
        figures = {p: db_requests.aggregate(con, f"point-{p}").metrics for p in range(points)}
        aggregated_s = time.perf_counter() - t2
        t3 = time.perf_counter()
        requests = db_requests.slo_frame_con(con)
        read_s = time.perf_counter() - t3
        runs = pl.DataFrame({"run_id": [f"point-{p}" for p in range(points)], "duration_s": [per_point / 50.0] * points,
                             "energy_j": [3000.0] * points})
        times = []
        for limit in (90.0, 100.0, 110.0):  # a new SLO each time: nothing of the previous one reused
            t4 = time.perf_counter()
            answer = goodput(requests, runs, parse_slo(f"ttft<={limit:g}ms,itl<=20ms,tpot<=15ms,e2e<=2s"))
            times.append(time.perf_counter() - t4)
        con.close()
        app = app_path(str(Path(tmp) / "requests.duckdb"), points, per_point)
    whole_s, peak = stored_s + aggregated_s, peak_mb()
    verdict = "met" if whole_s <= 10 and peak <= 1024 else "MISSED"
    load = os.getloadavg()
    print(f"{total:,} requests ({points} points x {per_point:,}, {gaps} gaps each) made in {made_s:.2f} s "
          f"(not counted); load average {load[0]:.1f} on {os.cpu_count()} cores")
    print(f"store {stored_s:.2f} s + aggregate {aggregated_s:.2f} s = {whole_s:.2f} s (target <= 10 s), "
          f"peak {peak:,.0f} MB (target <= 1024 MB): {verdict}")
    print(f"point 0: TTFT p99 {figures[0]['ttft_p99_ms']:.1f} ms, ITL p50 {figures[0]['itl_p50_ms']:.2f} ms over "
          f"{figures[0]['requests_completed']:,} completed")
    best = min(times)
    print(f"goodput for a new SLO over {total:,} requests: {best:.3f} s warm (best of {len(times)}; target <= 1 s: "
          f"{'met' if best <= 1 else 'MISSED'}); the requests' SLO columns read once in {read_s:.2f} s; "
          f"point 0: {answer['requests_good'][0]:,} of {answer['requests_completed'][0]:,} good")
    cold_s, warm_read_s, app_times = app
    best_app = min(app_times)
    print(f"in the app (explorer.data.slo_frame + decision.goodput.answer, its table and sentences): a new SLO "
          f"{best_app:.3f} s warm (best of {len(app_times)}, slowest {max(app_times):.3f} s; target <= 1 s: "
          f"{'met' if max(app_times) <= 1 else 'MISSED'}); the cached read {warm_read_s * 1000:.1f} ms warm, "
          f"{cold_s:.2f} s cold")
    return 0


def app_path(path: str, points: int, per_point: int) -> tuple[float, float, list[float]]:
    """The app's path for a new SLO: (cold read s, warm read s, [answer s per SLO])."""
    import streamlit.logger

    streamlit.logger.set_log_level("error")  # outside a server, every cache says it has no runtime
    from decision.goodput import answer as section_answer
    from explorer import data

    runs = pl.DataFrame({
        "run_id": [f"point-{p}" for p in range(points)], "device_name": ["H100 SXM"] * points,
        "mode": ["infer"] * points, "workload": ["llm-serve"] * points, "load_kind": ["rate"] * points,
        "request_rate_per_s": [10.0 * (p + 1) for p in range(points)], "engine": ["vllm"] * points,
        "duration_s": [per_point / 50.0] * points, "energy_j": [3000.0] * points,
        "goodput_slo": pl.Series([None] * points, dtype=pl.String),
        "goodput_requests_per_s": pl.Series([None] * points, dtype=pl.Float64),
        "goodput_requests_per_j": pl.Series([None] * points, dtype=pl.Float64)})
    t0 = time.perf_counter()
    data.slo_frame(path)
    cold_s = time.perf_counter() - t0
    times, warm_read_s = [], 0.0
    for limit in (95.0, 105.0, 115.0):
        t1 = time.perf_counter()
        requests = data.slo_frame(path)
        warm_read_s = time.perf_counter() - t1
        found = section_answer(runs, requests, parse_slo(f"ttft_p90<={limit:g}ms,itl<=20ms,tpot<=15ms,e2e<=2s"))
        found.table()
        found.sentences()
        times.append(time.perf_counter() - t1)
    assert found.counted == points
    return cold_s, warm_read_s, times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=10)
    parser.add_argument("--per-point", type=int, default=100_000)
    parser.add_argument("--gaps", type=int, default=16)
    waits.add_limits(parser, limit_s=300.0)
    args = parser.parse_args()
    return waits.main(lambda: run(args.points, args.per_point, args.gaps), args.limit_s)


if __name__ == "__main__":
    sys.exit(main())
