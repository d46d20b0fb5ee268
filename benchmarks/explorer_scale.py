"""Explorer at scale: 100,000 runs and 10 million power samples.

Times the Compare page's data and figure building, cold (fresh process state: open the
database, load the runs, build every figure) and warm (runs already cached, a filter changed),
and the app's start to first paint of the Compare chart in a real browser (Debian chromium).

    .venv/bin/python benchmarks/explorer_scale.py [--runs 100000] [--samples-per-run 100] [--no-browser]
    .venv/bin/python benchmarks/explorer_scale.py --runs 100 --samples-per-run 10       # smallest: seconds

Targets: grading every run <= 5 s, warm <= 0.5 s, cold start <= 5 s (a miss is printed, exit code 0). Every wait
is time-limited (--wait-limit-s, the whole run --limit-s): a server that does not answer, or a chart that does
not paint, ends it with `FAILED: <what> after N s` on stderr and exit code 1, the app stopped by its PID.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import waits  # noqa: E402  (benchmarks/waits.py, beside this script)

WARM_TARGET_S = 0.5
COLD_TARGET_S = 5.0
GRADING_TARGET_S = 5.0
SERVER_WAIT_S = 120.0  # the app's health check must answer within this, and the chart paint within this


def build(path: Path, runs: int, samples_per_run: int) -> float:
    from db import Store
    from db.synthetic import fill

    started = time.perf_counter()
    with Store.open(path) as store:
        fill(store, runs, samples_per_run)
        counts = store.query("SELECT (SELECT count(*) FROM runs) AS runs, (SELECT count(*) FROM power_samples) AS s")
    print(
        f"database: {counts['runs'][0]:,} runs, {counts['s'][0]:,} power samples, "
        f"{path.stat().st_size / 1e6:.0f} MB, built in {time.perf_counter() - started:.1f} s"
    )
    return time.perf_counter() - started


def time_grading(path: Path) -> float:
    """Every run graded (trust grade, reasons, configuration aggregates) in one transaction, as an open does
    after a migration that regrades (db.grading, vectorised)."""
    from db import Store

    with Store.open(path) as store:
        started = time.perf_counter()
        graded = store.grade_all()
        elapsed = time.perf_counter() - started
    print(f"grading {graded:,} runs: {elapsed:.2f} s")
    return elapsed


def compare_figures(runs, selection):  # type: ignore[no-untyped-def]
    """What pages/compare.py computes for one rerun, minus the Streamlit calls (the pandas
    Styler of the table, at most compare.MAX_TABLE_ROWS rows, is left out)."""
    import polars as pl

    from decision import cost
    from decision.money import CostSettings
    from decision.pareto import pareto_front
    from explorer import charts, compare

    settings = CostSettings()
    costed = cost.with_cost(runs, {}, {}, cost.idle_power_by_device(runs), settings)
    chosen = compare.apply(costed, selection)
    measured = chosen.filter(pl.col("mode") != "idle")
    metric = compare.METRICS[selection.metric]
    compare.coverage(chosen, pl.DataFrame(schema={"subject_device": pl.String, "baseline_device": pl.String}))
    compare.config_table(measured, None, metric, settings.currency).head(compare.MAX_TABLE_ROWS)
    labelled, _ = compare.with_labels(measured)
    labelled, _ = compare.limit(labelled, "series", compare.MAX_SERIES)
    labelled, _ = compare.limit(labelled, "config", compare.MAX_CONFIGS)
    bar_frame = compare.bars(labelled, metric)
    figures = [charts.metric_bars(bar_frame, metric.label, metric.higher_is_better)]
    compare.ratio_table(bar_frame, metric)
    figures.append(charts.power_vs_throughput(labelled))
    points = compare.energy_time_points(labelled)
    figures.append(charts.energy_vs_time(points, pareto_front(points, "s_per_sample", "j_per_sample")))
    for fig in figures:
        fig.to_json()  # what Streamlit serialises for the browser
    return chosen.height


def time_cold_and_warm(path: Path) -> tuple[float, float]:
    from db import Store, queries
    from explorer import compare

    started = time.perf_counter()
    with Store.open(path) as store:
        runs = queries.runs_table(store)
    n = compare_figures(runs, compare.Selection())
    cold = time.perf_counter() - started
    print(f"cold: open + load {runs.height:,} runs + Compare figures ({n:,} runs selected): {cold:.2f} s")
    warm_times = []
    for device in sorted(runs["device_name"].unique().to_list())[:5]:
        t0 = time.perf_counter()
        compare_figures(runs, compare.Selection({"device": (device,)}))
        warm_times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    compare_figures(runs, compare.Selection())
    warm_times.append(time.perf_counter() - t0)
    warm = median(warm_times)
    print(
        f"warm: Compare figures after a filter change, median of {len(warm_times)}: {warm:.3f} s "
        f"(max {max(warm_times):.3f} s)"
    )
    return cold, warm


def time_first_paint(path: Path, wait_s: float) -> float:
    """From launching the app to the Compare chart painted; the browser is already running. The app's health
    check and the chart each wait at most wait_s."""
    from playwright.sync_api import sync_playwright

    env = dict(os.environ, JOULEBENCH_DB=str(path), HF_HUB_OFFLINE="1")
    with sync_playwright() as pw:
        with waits.browser_wait("Chromium to start", waits.BROWSER_START_S):
            browser = pw.chromium.launch(executable_path=waits.CHROMIUM, headless=True, args=waits.CHROMIUM_ARGS,
                                         timeout=waits.BROWSER_START_S * 1000)
        try:
            page = browser.new_page()
            url = f"http://localhost:{waits.free_port()}"
            started = time.perf_counter()
            proc = waits.popen([sys.executable, "-m", "cli", "app", "--port", url.rsplit(":", 1)[1]], cwd=REPO,
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                waits.wait_http(f"{url}/_stcore/health", wait_s, "the app's health check (/_stcore/health)", proc)
                with waits.browser_wait("the Compare chart to paint", wait_s):
                    page.goto(f"{url}/compare", timeout=wait_s * 1000)
                    page.locator(".js-plotly-plot").first.wait_for(timeout=wait_s * 1000)
                elapsed = time.perf_counter() - started
            finally:
                waits.stop(proc)
        finally:
            browser.close()
    print(f"app start to first Compare chart painted in the browser: {elapsed:.2f} s")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--samples-per-run", type=int, default=100)
    parser.add_argument("--no-browser", action="store_true")
    waits.add_limits(parser, limit_s=3600, wait_s=SERVER_WAIT_S)
    args = parser.parse_args()
    return waits.main(lambda: measure(args), args.limit_s)


def measure(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scale.duckdb"
        build(path, args.runs, args.samples_per_run)
        grading = time_grading(path)
        cold, warm = time_cold_and_warm(path)
        paint = None if args.no_browser else time_first_paint(path, args.wait_limit_s)
    print(f"\ngrading {grading:.2f} s (target <= {GRADING_TARGET_S:g} s): "
          f"{'OK' if grading <= GRADING_TARGET_S else 'MISSED'}")
    print(f"warm {warm:.3f} s (target <= {WARM_TARGET_S} s): {'OK' if warm <= WARM_TARGET_S else 'MISSED'}")
    print(f"cold {cold:.2f} s (target <= {COLD_TARGET_S} s): {'OK' if cold <= COLD_TARGET_S else 'MISSED'}")
    if paint is not None:
        verdict = "OK" if paint <= COLD_TARGET_S else "MISSED"
        print(f"first paint {paint:.2f} s (target <= {COLD_TARGET_S} s): {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
