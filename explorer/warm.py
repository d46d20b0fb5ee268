"""The server warmed before the first browser arrives: `joulebench app` runs `python -m explorer.warm run ...`,
which

1. imports what the pages import (plotly, pandas' Styler, polars, the explorer's modules: about 2 s on a
   2-core machine, which the first visit would otherwise wait for), in the main thread before the server
   starts: no page's script thread can then import a module beside it (two threads importing one package
   with import cycles, pandas for one, can meet it partly initialised);
2. starts Streamlit's server as `streamlit run` would, with one background thread that, while the server
   starts, makes Streamlit's first element quick (`first_element_ready`) and, once the server runs, makes the
   store ready (`data.prepare`'s work: create, migrate, seed, a regrade handed to the grader), reads whether a
   regrade is under way (the note every page reads first) and what the pages share (every run, the findings,
   the catalog, the exchange rates) into the caches every session reads (`explorer.data.reads`);
3. computes Compare's default view (its table, bars, ratios and figures) into the shared cache
   (`explorer.memo`), so the first visit to Compare finds it ready.

The thread only fills caches; a page never waits for it (a visit meanwhile computes what it needs itself,
or waits for the same cache entry being filled), and whatever it fails at (a busy store, a damaged one) is
left for the page to meet and say, with one line on stderr.
"""

from __future__ import annotations

import ast
import importlib
import logging
import sys
import threading
import time
from collections.abc import Iterator

from joulebench.paths import REPO_ROOT

RUNTIME_WAIT_S = 60.0  # the server normally runs within a second or two of the start


def page_modules() -> list[str]:
    """The modules the pages import at their top (read from their source: the list stays true as they change)."""
    from explorer import nav

    found: dict[str, None] = {}
    for path, _title, _icon in nav.PAGES:
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, ast.Import):
                found.update((alias.name, None) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found[node.module] = None
                found.update((f"{node.module}.{alias.name}", None) for alias in node.names)
    return list(found)


def _imported(names: list[str]) -> Iterator[str]:
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            continue  # `from x import function`: x.function is no module; x itself was imported
        yield name


def import_pages() -> int:
    """Import what the pages need, and what Streamlit's dataframe and chart elements import on first use.
    Streamlit warns "No runtime found" once per `st.cache_data` function declared before its server runs: it
    only checks the cache's settings then (the storage is looked up at each call, with the server running),
    so that warning is left out of the server's log here."""
    extra = ["pandas", "pandas.io.formats.style", "plotly.express", "plotly.graph_objects", "plotly.io",
             "pyarrow", "explorer.compare", "explorer.compare_ratios", "explorer.charts", "explorer.tables"]
    importlib.import_module("streamlit.runtime.caching.cache_data_api")  # sets its logger's level on import

    cache_log = logging.getLogger("streamlit.runtime.caching.cache_data_api")
    before = cache_log.level
    cache_log.setLevel(logging.ERROR)
    try:
        return len(list(_imported(extra + page_modules())))
    finally:
        cache_log.setLevel(before)


def first_element_ready() -> None:
    """Streamlit's first element of the process (any page's first `st.*` call) checks once whether it runs in
    a REPL by `inspect.stack()`, which resolves the path of every module imported (about 2,700 here: 0.4 s on
    a quiet 2-core machine, over 1 s on a loaded one). Done here, inspect keeps those paths, and the first
    visit's check takes milliseconds."""
    from streamlit import env_util

    env_util.is_repl()


def _server_started(wait_s: float) -> bool:
    """Wait until Streamlit's server runs (its runtime started): from then on its own imports are done, and
    this thread imports and reads as a page's script thread would."""
    from streamlit import runtime
    from streamlit.runtime.runtime import RuntimeState

    deadline = time.monotonic() + wait_s
    while not (runtime.exists() and runtime.get_instance().state in (
            RuntimeState.NO_SESSIONS_CONNECTED, RuntimeState.ONE_OR_MORE_SESSIONS_CONNECTED)):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def compare_default(path: str) -> None:
    """What pages/compare.py computes on a visit without filters (its default metric, no reference device, the
    default cost settings), through the same functions (`explorer.compare_view`), so the page finds every
    answer in the shared caches."""
    from explorer import compare, compare_view, data
    from explorer.params import UrlReader

    all_runs = data.runs(path)
    catalog, _ = data.devices(path)
    settings = UrlReader({}).cost_settings(data.currencies(path))
    runs = compare_view.costed(all_runs, catalog, data.rates(path), settings)
    for key in compare.FILTERS:
        if key != "run":
            compare.options(runs, key)
    selection = compare.Selection()
    chosen = compare.apply(runs, selection)
    _, named = compare.devices_of(chosen, selection)
    view = compare_view.view(chosen, named, data.findings(path), compare.METRICS[selection.metric], None,
                             settings.currency)
    if not view.bar_frame.is_empty():
        compare_view.bar_figure(view, settings.currency, False, False)
    compare_view.power_figure(view, False)
    compare_view.energy_figure(view, False)


def _read(path: str, said: list[str]) -> None:
    """The store made ready and the frames every page shares read into the caches; what it did in `said`."""
    from explorer import data

    started = time.perf_counter()
    try:
        data.made_ready(path)
        data.regrade_waiting(path)
        data.runs(path)
        data.findings(path)
        data.devices(path)
        data.exchange_rates(path)
        said.append(f"the store read in {time.perf_counter() - started:.1f} s")
    except Exception as e:  # the page meets it again and says it in its own words
        first = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
        said.append(f"reading stopped: {type(e).__name__}: {first}")


def warm(imported: str, runtime_wait_s: float = RUNTIME_WAIT_S) -> None:
    """The background thread's work (the module's docstring); one line on stderr says what it did."""
    started = time.perf_counter()
    steps = [imported]
    try:
        first_element_ready()  # while the server starts
        if not _server_started(runtime_wait_s):
            steps.append(f"the server did not start within {runtime_wait_s:g} s: nothing read")
            return
        from explorer import data

        path = data.db_path()
        _read(path, steps)
        t0 = time.perf_counter()
        compare_default(path)
        steps.append(f"Compare's default view computed in {time.perf_counter() - t0:.1f} s")
    except Exception as e:  # the page meets it again and says it in its own words
        first = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
        steps.append(f"stopped: {type(e).__name__}: {first}")
    finally:
        print(f"joulebench app warmed in {time.perf_counter() - started:.1f} s: {'; '.join(steps)}",
              file=sys.stderr, flush=True)


def start(imported: str) -> threading.Thread:
    thread = threading.Thread(target=warm, args=(imported,), name="joulebench-warm", daemon=True)
    thread.start()
    return thread


def main(argv: list[str]) -> None:
    """`streamlit <argv>` (the server), the pages' modules imported first and the reading thread started."""
    sys.path.insert(0, str(REPO_ROOT))
    t0 = time.perf_counter()
    modules = import_pages()
    from streamlit.web import cli

    from explorer.access import install_gate

    install_gate()  # the password before /_stcore/metrics and the other endpoints no page's script guards
    start(f"{modules} modules imported before the server started, in {time.perf_counter() - t0:.1f} s")
    sys.argv = ["streamlit", *argv]
    cli.main(prog_name="streamlit")


if __name__ == "__main__":
    main(sys.argv[1:])
