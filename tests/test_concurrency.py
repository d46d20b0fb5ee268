"""Many users, one server: sessions that open pages at the same moment all get their page, and the server
keeps answering (issue 30: two sessions opening Devices deadlocked it, polars worker threads waiting for the
GIL inside `map_elements` while a script thread in `to_pandas` waited for them)."""

from __future__ import annotations

import os
import re
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl

from decision.text import plot_text
from explorer import charts
from tests.helpers import app_pages, app_session
from tests.test_browser import app_server

REPO = Path(__file__).resolve().parent.parent
# Everything the app server's process imports and runs in its script threads.
APP_CODE = ["app.py", "explorer", "pages", "db", "ingest", "importers", "tuning", "energy", "joulebench"]
# Polars calls that run a Python function on polars' own worker threads (they need the GIL there).
USER_FUNCTIONS = re.compile(r"\.(map_elements|map_batches|map_rows|map_groups|rolling_map)\(")
SESSIONS = 6
PASSES = 2
WAIT_S = 30  # a page that has not finished its run by then counts as hung


def test_no_polars_user_functions_in_the_app_process() -> None:
    found = []
    for entry in APP_CODE:
        root = REPO / entry
        for path in [root] if root.is_file() else sorted(root.rglob("*.py")):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if USER_FUNCTIONS.search(line):
                    found.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert found == [], ("a Python function inside polars can deadlock the app server (polars' threads wait for "
                         "the GIL a script thread holds): use an expression, or format a list in Python:\n"
                         + "\n".join(found))


def test_chart_text_is_made_literal_as_plot_text_does() -> None:
    names = ["A100 <b>80GB</b>", "R&D <br> box", "a&amp;b", "plain", "", None, "<a href='x'>link</a>"]
    frame = charts._literal(pl.DataFrame({"device_name": names, "n": list(range(len(names)))}), "device_name")
    assert frame["device_name"].to_list() == [None if n is None else plot_text(n) for n in names]


def _walk(url: str, session: int, pages: list[tuple[str, str]], passes: int) -> list[str]:
    """One session through every page `passes` times, starting at page session // 2 (so the sessions open the
    same pages in pairs at the same time, and different pages at once); what went wrong."""
    problems = []
    with app_session(url, WAIT_S) as app:
        for k in range(passes * len(pages)):
            title, path = pages[(session // 2 + k) % len(pages)]
            try:
                run = app.open(path, WAIT_S)
            except TimeoutError as e:
                return [*problems, f"session {session} on {title}: not finished within {WAIT_S} s ({e})"]
            if run.exceptions or run.errors or run.not_found or not run.titles:
                problems.append(f"session {session} on {title}: exceptions {run.exceptions}, errors {run.errors}, "
                                f"not found {run.not_found}, titles {run.titles}")
    return problems


def test_sessions_open_every_page_at_once_and_the_server_stays_healthy(tmp_path: Path) -> None:
    """SESSIONS sessions, each over its own websocket as a browser's, on a fresh database (the app creates it at
    the first visit): all go through every page at the same time, twice; every page finishes within WAIT_S with
    no error or exception box, and the server answers its health check at the end."""
    pages = app_pages()
    env = dict(os.environ, JOULEBENCH_DB=str(tmp_path / "fresh.duckdb"), HF_HUB_OFFLINE="1")
    with app_server([], env, tmp_path) as url:
        with ThreadPoolExecutor(SESSIONS) as pool:
            walks = [pool.submit(_walk, url, i, pages, PASSES) for i in range(SESSIONS)]
            problems = [p for w in walks for p in w.result(timeout=PASSES * len(pages) * WAIT_S + 30)]
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as answer:
                health = f"HTTP {answer.status}"
        except OSError as e:
            health = f"no answer ({e})"
    assert (problems, health) == ([], "HTTP 200"), "\n".join([*problems, f"health check afterwards: {health}"])
