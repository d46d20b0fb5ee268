"""Team store at scale: push throughput, and Compare on a DuckLake against the same data in a DuckDB file.

Builds a local database of synthetic runs and power samples (db.synthetic, as benchmarks/explorer_scale.py),
pushes it to a fresh DuckLake with `db.push` (runs/s and samples/s), then times the Compare page's data and
figures cold (open, load every run, build the figures) and warm (a filter changed) on the file and on the
lake in the same process, and prints the ratios.

    .venv/bin/python benchmarks/team_store.py [--runs 100000] [--samples-per-run 100] [--store URL --data-path P]
                                              [--browser]
    .venv/bin/python benchmarks/team_store.py --runs 100 --samples-per-run 10           # smallest: seconds

--browser also starts `joulebench app` on the lake and times its pages in a real browser as
benchmarks/explorer_scale.py does on a file (Compare's first chart <= 5 s on a fresh server, every page <= 2 s
warm), each figure beside its target with the load average.

Without --store the lake's catalog is SQLite in a temp folder; give a PostgreSQL URL to measure that.
Targets: Compare warm on the lake within 2x the file, cold within 3x (a miss is printed, exit code 0). The whole
run is time-limited (--limit-s: the push and the reads run in this process): past it, `FAILED: ...` on stderr and
exit code 1.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import waits  # noqa: E402

WARM_RATIO_TARGET = 2.0
COLD_RATIO_TARGET = 3.0


def time_compare(open_store, label: str) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    from statistics import median

    from explorer_scale import compare_figures

    from db import queries
    from explorer import compare

    started = time.perf_counter()
    with open_store() as store:
        runs = queries.runs_table(store)
    compare_figures(runs, compare.Selection())
    cold = time.perf_counter() - started
    warm = []
    for device in sorted(runs["device_name"].unique().to_list())[:5]:
        t0 = time.perf_counter()
        compare_figures(runs, compare.Selection({"device": (device,)}))
        warm.append(time.perf_counter() - t0)
    print(f"{label}: cold {cold:.2f} s ({runs.height:,} runs), warm median {median(warm):.3f} s")
    return cold, median(warm)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--samples-per-run", type=int, default=100)
    ap.add_argument("--store", help="a DuckLake URL (default: a SQLite catalog in a temp folder)")
    ap.add_argument("--data-path", help="the lake's data path (default: beside a SQLite catalog)")
    ap.add_argument("--browser", action="store_true", help="time the app's pages on the lake in a real browser")
    waits.add_limits(ap, limit_s=3600, wait_s=120)
    args = ap.parse_args()
    return waits.main(lambda: measure(args), args.limit_s)


def measure(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="joulebench-team-") as tmp:
        return measure_in(args, Path(tmp))


def measure_in(args: argparse.Namespace, tmp: Path) -> int:
    from db import Store
    from db.lake import LakeUrl
    from db.push import push
    from db.synthetic import fill

    local = tmp / "local.duckdb"
    t0 = time.perf_counter()
    with Store.open(local) as store:
        fill(store, args.runs, args.samples_per_run)
        runs, samples = store.query("SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM power_samples)").row(0)
    print(f"local database: {runs:,} runs, {samples:,} power samples, built in {time.perf_counter() - t0:.1f} s")
    url = args.store or f"ducklake:sqlite:{tmp / 'team.sqlite'}"
    lake = LakeUrl.parse(url, args.data_path)
    report = push(local, lake, machine="benchmark")
    print(f"push: {report.runs_pushed:,} runs and {report.samples_pushed:,} samples in {report.seconds:.1f} s = "
          f"{report.runs_pushed / report.seconds:,.0f} runs/s, {report.samples_pushed / report.seconds:,.0f} "
          f"samples/s ({report.sources_pushed} sources, {report.retries} retries)")
    file_cold, file_warm = time_compare(lambda: Store.open_read_only(local), "DuckDB file")
    lake_cold, lake_warm = time_compare(lambda: Store.open_team_store(url, data_path=args.data_path), "DuckLake")
    print(f"lake / file: cold {lake_cold / file_cold:.2f}x (target <= {COLD_RATIO_TARGET:g}x), warm "
          f"{lake_warm / file_warm:.2f}x (target <= {WARM_RATIO_TARGET:g}x)")
    if args.browser:
        import explorer_scale

        from db.lake import DATA_ENV_VAR, STORE_ENV_VAR

        with Store.open_read_only(local) as store:
            run_id = str(store.query("SELECT min(run_id) FROM runs WHERE run_id LIKE 'syn-%'").item())
        store_env = {STORE_ENV_VAR: url, **({DATA_ENV_VAR: args.data_path} if args.data_path else {})}
        explorer_scale.in_browser(local, args.wait_limit_s, run_id, store_env=store_env, label="team store: ")
        print("\nfigure beside its target (load average when measured):")
        for what, seconds, target, load_average in explorer_scale.RESULTS:
            print(f"  {'OK    ' if seconds <= target else 'MISSED'} {seconds:7.2f} s <= {target:g} s  "
                  f"(load {load_average:.1f})  {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
