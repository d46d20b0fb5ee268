"""Explorer at scale: 100,000 runs and 10 million power samples.

Builds (or reuses, with --keep) a database of synthetic runs (db.synthetic), then times: grading every run (an
open that finds them ungraded, and a regrade of graded ones, as after a migration), the Compare page's data and
figures in this process (cold: open, load the runs, build every figure; warm: a filter changed), and in a real
browser (Debian chromium) on a freshly started `joulebench app`: Compare's first chart after navigation, a later
visit, every other page warm (its second visit, from navigation to its script finished), and, on a copy whose
runs are ungraded, Compare while the regrade runs in the background (the pages are not blocked by it).

    .venv/bin/python benchmarks/explorer_scale.py [--runs 100000] [--samples-per-run 100] [--keep DIR] [--no-browser]
                                                  [--pages Overview,Devices]
    .venv/bin/python benchmarks/explorer_scale.py --runs 100 --samples-per-run 10 --pages Devices  # smallest

--pages names the pages besides Compare that are timed warm (their menu titles; all of them by default).
--keep DIR keeps the built database in DIR (scale-RUNS-SAMPLES.duckdb, its runs ungraded) and reuses it on the
next run: building 100,000 runs takes a minute. Every figure is printed beside its target with the machine's
1-minute load average at the time (other work on a 2-core machine slows everything). Targets: grading <= 5 s,
Compare's first chart on a fresh server <= 5 s, a later visit and every other page warm <= 2 s, in-process warm
<= 0.5 s; a miss is printed as such (exit code 0). Every wait is time-limited (--wait-limit-s, the whole run
--limit-s): a server that does not answer, or a page that does not draw, ends it with `FAILED: <what> after
N s` on stderr and exit code 1, the app stopped by its PID.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from statistics import median

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import waits  # noqa: E402  (benchmarks/waits.py, beside this script)

WARM_TARGET_S = 0.5
COLD_TARGET_S = 5.0
GRADING_TARGET_S = 5.0
PAGE_WARM_TARGET_S = 2.0
SERVER_WAIT_S = 120.0  # the app's health check must answer within this, and each page's drawing within this
# (menu title, the page's own title) of the pages timed warm in the browser besides Compare
OTHER_PAGES = [("Overview", "JouleBench"), ("Decide", "Decide what to buy"), ("Run detail", "Run detail"),
               ("Cost & buying guide", "Cost & buying guide"), ("Power settings", "Power settings"),
               ("Devices", "Devices")]
RESULTS: list[tuple[str, float, float, float]] = []  # (what, seconds, target, load average when measured)


def load() -> float:
    return os.getloadavg()[0]


def result(what: str, seconds: float, target: float) -> float:
    RESULTS.append((what, seconds, target, load()))
    print(f"{what}: {seconds:.2f} s (target <= {target:g} s, load average {load():.1f})", flush=True)
    return seconds


def build(path: Path, runs: int, samples_per_run: int) -> float:
    from db import Store
    from db.synthetic import fill

    started = time.perf_counter()
    with Store.open(path) as store:
        fill(store, runs, samples_per_run)
        counts = store.query("SELECT (SELECT count(*) FROM runs) AS runs, (SELECT count(*) FROM power_samples) AS s")
        store.con.execute("CHECKPOINT")  # the file whole, without a WAL beside it: it is copied and moved
    print(
        f"database: {counts['runs'][0]:,} runs, {counts['s'][0]:,} power samples, "
        f"{path.stat().st_size / 1e6:.0f} MB, built in {time.perf_counter() - started:.1f} s"
    )
    return time.perf_counter() - started


def time_grading(base: Path, work: Path) -> None:
    """Every run graded in one transaction: by the open that finds them ungraded (a copy of the built database,
    its runs stored without grades), then again by grade_all, as after a migration that regrades (db.grading)."""
    from db import Store

    shutil.copy(base, work)
    started = time.perf_counter()
    with Store.open(work) as store:
        opened = time.perf_counter() - started
        graded = int(store.query("SELECT count(*) FROM runs WHERE trust_grade IS NOT NULL").item())
        result(f"open grading {graded:,} ungraded runs", opened, GRADING_TARGET_S)
        started = time.perf_counter()
        graded = store.grade_all()
        result(f"regrade of {graded:,} graded runs (grade_all)", time.perf_counter() - started, GRADING_TARGET_S)


def compare_figures(runs, selection):  # type: ignore[no-untyped-def]
    """What pages/compare.py computes for one rerun, minus the Streamlit calls (the pandas
    Styler of the table, at most compare.MAX_TABLE_ROWS rows, is left out)."""
    import polars as pl

    from decision import cost
    from decision.money import CostSettings
    from decision.pareto import pareto_front
    from explorer import charts, compare, compare_ratios

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
    compare_ratios.ratio_table(bar_frame, metric)
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


def drawn_s(page, url: str, wait_s: float, *, chart: bool) -> float:  # type: ignore[no-untyped-def]
    """Seconds from navigation to the page drawn: its first chart (`chart`) or its title, and its script
    finished (Streamlit's running indicator gone)."""
    start = time.perf_counter()
    with waits.browser_wait(f"{url} to draw", wait_s):
        page.goto(url, timeout=wait_s * 1000)
        target = ".js-plotly-plot, [data-testid=stPlotlyChart]" if chart else "h1"
        page.locator(target).first.wait_for(timeout=wait_s * 1000)
        page.wait_for_timeout(100)  # the running indicator appears a moment after the rerun starts
        page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=wait_s * 1000)
    return time.perf_counter() - start - 0.1


def clicked_s(page, menu: str, title: str, wait_s: float, *, chart: bool) -> float:  # type: ignore[no-untyped-def]
    """Seconds from a click on the page's menu entry (navigation within the app, as a person moves between
    pages) to its title shown, its script finished and (`chart`) its first chart drawn."""
    start = time.perf_counter()
    with waits.browser_wait(f"{menu} to draw after its menu entry was clicked", wait_s):
        page.locator('[data-testid="stSidebarNav"] a', has_text=menu).first.click(timeout=wait_s * 1000)
        page.locator("h1", has_text=title).first.wait_for(timeout=wait_s * 1000)
        page.wait_for_timeout(100)  # the running indicator appears a moment after the rerun starts
        page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=wait_s * 1000)
        if chart:
            page.locator(".js-plotly-plot, [data-testid=stPlotlyChart]").first.wait_for(timeout=wait_s * 1000)
    return time.perf_counter() - start - 0.1


def in_browser(db: Path, wait_s: float, run_id: str, *, ungraded: bool = False, store_env: dict[str, str] | None = None,
               label: str = "", pages: Sequence[tuple[str, str]] = OTHER_PAGES) -> None:
    """A fresh `joulebench app` on `db` (or the store `store_env` names: a team store): Compare's first chart
    after navigation, then (graded) a later visit and every other page's second visit; (ungraded) only the
    first chart, drawn while the grader works. `label` starts every figure's name; `pages`: the other pages timed."""
    from playwright.sync_api import sync_playwright

    env = dict(os.environ, JOULEBENCH_DB=str(db), HF_HUB_OFFLINE="1", **(store_env or {}))

    def note(what: str, seconds: float, target: float) -> float:
        return result(label + what, seconds, target)

    port = waits.free_port()
    url = f"http://localhost:{port}"
    started = time.perf_counter()
    log = tempfile.TemporaryFile()  # the app's output: its line saying what it warmed (explorer.warm), and when
    proc = waits.popen([sys.executable, "-m", "cli", "app", "--port", str(port)], cwd=REPO, env=env,
                       stdout=log, stderr=subprocess.STDOUT)
    try:
        waits.wait_http(f"{url}/_stcore/health", wait_s, "the app's health check (/_stcore/health)", proc)
        print(f"app started (health check answers) in {time.perf_counter() - started:.2f} s", flush=True)
        with sync_playwright() as pw:
            with waits.browser_wait("Chromium to start", waits.BROWSER_START_S):
                browser = pw.chromium.launch(executable_path=waits.CHROMIUM, headless=True,
                                             args=waits.CHROMIUM_ARGS, timeout=waits.BROWSER_START_S * 1000)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                if ungraded:
                    first = drawn_s(page, f"{url}/compare", wait_s, chart=True)
                    told = page.get_by_text("Trust grades are being recomputed").count() > 0
                    note(f"Compare's first chart, fresh server, runs being regraded (note shown: {told})", first,
                         COLD_TARGET_S)
                else:
                    every_page(page, url, wait_s, run_id, note, pages)
            finally:
                browser.close()
    finally:
        ended = proc.poll()  # the app ended on its own (not stopped here): its last lines say why
        waits.stop(proc)
        log.seek(0)
        lines = log.read().decode(errors="replace").splitlines()
        log.close()
        for line in lines:
            if "warmed in" in line:
                print(f"{label}{line.strip()} (started in the background with the server)", flush=True)
        if ended is not None:
            print("the app ended by itself; its last lines:\n" + "\n".join(lines[-15:]), file=sys.stderr, flush=True)
    if ungraded:  # the grader the app started ends when its write is done
        import db.regrade as regrade
        from db import Store

        waits.wait_until(lambda: not regrade.running(db), wait_s, "the background regrade to finish")
        with Store.open_reading(db) as store:
            left = int(store.query("SELECT count(*) FROM runs WHERE trust_grade IS NULL").item())
            waiting = regrade.marked(store.con)
        print(f"background regrade finished {time.perf_counter() - started:.1f} s after the app was started: "
              f"{left:,} runs left without a grade, {'still marked' if waiting else 'nothing marked'}", flush=True)


def every_page(page, url: str, wait_s: float, run_id: str, note,  # type: ignore[no-untyped-def]
               pages: Sequence[tuple[str, str]]) -> None:
    """Compare's first chart on a fresh server, a later visit, and every other page's second visit."""
    note("Compare's first chart after navigation, fresh server",
         drawn_s(page, f"{url}/compare", wait_s, chart=True), COLD_TARGET_S)
    note("Run detail of one run (its address), first visit",
         drawn_s(page, f"{url}/run_detail?run_id={run_id}", wait_s, chart=False), COLD_TARGET_S)
    drawn_s(page, url, wait_s, chart=False)
    note("Compare, a later visit (its address: the app loaded anew)",
         drawn_s(page, f"{url}/compare", wait_s, chart=True), PAGE_WARM_TARGET_S)
    for menu, title in pages:  # each visited once, then timed on its second visit
        clicked_s(page, menu, title, wait_s, chart=False)
        clicked_s(page, "Compare", "Compare", wait_s, chart=True)
        note(f"{menu}, warm (second visit, from the menu)",
             clicked_s(page, menu, title, wait_s, chart=False), PAGE_WARM_TARGET_S)
    note("Compare, a later visit (from the menu)", clicked_s(page, "Compare", "Compare", wait_s, chart=True),
         PAGE_WARM_TARGET_S)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--samples-per-run", type=int, default=100)
    parser.add_argument("--keep", type=Path, help="keep the built database in this folder, and reuse it")
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--pages", type=waits.pages_option(OTHER_PAGES), default=OTHER_PAGES,
                        help="the pages besides Compare timed warm, by menu title, comma-separated (default: all: "
                             f"{', '.join(menu for menu, _ in OTHER_PAGES)})")
    waits.add_limits(parser, limit_s=3600, wait_s=SERVER_WAIT_S)
    args = parser.parse_args()
    return waits.main(lambda: measure(args), args.limit_s)


def measure(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        base = folder / f"scale-{args.runs}-{args.samples_per_run}.duckdb"
        if base.exists():
            print(f"database: reusing {base}")
        else:
            build(Path(tmp) / base.name, args.runs, args.samples_per_run)
            shutil.move(Path(tmp) / base.name, base)  # whole, or not there
        work = Path(tmp) / "graded.duckdb"
        time_grading(base, work)
        cold, warm = time_cold_and_warm(work)
        result("in-process cold: open, load, Compare figures", cold, COLD_TARGET_S)
        result("in-process warm: Compare figures after a filter change (median)", warm, WARM_TARGET_S)
        if not args.no_browser:
            from db import Store

            with Store.open_reading(work) as store:
                run_id = str(store.query("SELECT coalesce(min(run_id) FILTER (WHERE run_id LIKE 'syn-%'), "
                                         "min(run_id)) FROM runs").item())
            in_browser(work, args.wait_limit_s, run_id, pages=args.pages)
            ungraded = Path(tmp) / "ungraded.duckdb"
            shutil.copy(base, ungraded)
            in_browser(ungraded, args.wait_limit_s, run_id, ungraded=True)
    print("\nfigure beside its target (load average when measured):")
    for what, seconds, target, load_average in RESULTS:
        print(f"  {'OK    ' if seconds <= target else 'MISSED'} {seconds:7.2f} s <= {target:g} s  "
              f"(load {load_average:.1f})  {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
