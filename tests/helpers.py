"""Shared test helpers."""

from __future__ import annotations

import io
import socket
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RESULT_FIXTURE = Path(__file__).parent / "fixtures" / "result_v1_cpu_runs.json"


def results_zip(members: int, *, prefix: str = "results") -> bytes:
    """`members` real JouleBench result files (the CPU fixture, each with its own run ids), zipped: for the
    archive tests and benchmarks/ingest_speed.py."""
    base = RESULT_FIXTURE.read_text()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(members):
            doc = base.replace("1c1f0e6a0001", f"{i:08d}0001").replace("1c1f0e6a0002", f"{i:08d}0002")
            zf.writestr(f"{prefix}/r{i:05d}.json", doc)
    return buf.getvalue()


# A second process that holds a DuckDB file until a line arrives on its stdin.
HOLDER = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
print("holding", flush=True)
sys.stdin.readline()
con.close()
"""


@contextmanager
def database_held_by_another_process(db_path: Path) -> Iterator[subprocess.Popen[str]]:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db_path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        yield holder
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(timeout=120)


def release(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None
    holder.stdin.write("\n")
    holder.stdin.flush()
    holder.wait(timeout=120)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def shown(markdown: str) -> str:
    """The text a reader sees in a Markdown string the app escaped (backslash escapes removed)."""
    import re

    return re.sub(r"\\(.)", r"\1", markdown).replace("\u2060", "")  # escapes and the word joiners of esc()


TEXT_ELEMENTS = ("markdown", "caption", "title", "header", "subheader", "info", "warning", "error", "success")


def open_page(page: str, params: dict[str, Any]) -> Any:
    """A page of the app (app.py's navigation, JOULEBENCH_DB set by the caller) run in AppTest with
    the link's parameters; fails on any exception the page raised."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"), default_timeout=120).run()
    at.switch_page(f"pages/{page}.py")
    at.query_params.update(params)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def page_texts(at: Any) -> list[str]:
    """Every text element's value on the page, as Markdown (escapes kept)."""
    return [str(e.value) for kind in TEXT_ELEMENTS for e in getattr(at, kind)]


def table_texts(at: Any, rows: int = 200) -> list[str]:
    """The page's tables as text, one line per row (a Styler's frame read through .data)."""
    lines = []
    for frame in at.dataframe:
        data = getattr(frame.value, "data", frame.value)
        lines += [" | ".join(str(v) for v in row) for row in data.astype(str).values.tolist()[:rows]]
    return lines



def app_pages() -> list[tuple[str, str]]:
    """Every page of app.py's navigation as (title, URL path); '' is Overview, the default page."""
    from explorer import nav

    return [(title, "" if path == nav.OVERVIEW else path.stem) for path, title, _ in nav.PAGES]


@dataclass
class PageRun:
    """What one page sent a session: its h1 title, the text of its error boxes and of its exception boxes
    (Streamlit's own, for an uncaught exception), and how long it took."""

    path: str
    seconds: float
    titles: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    not_found: bool = False


class AppSession:
    """One browser session of a running app, over its websocket as the browser speaks to it (Streamlit's
    protobuf messages): ask for a page, read what the script sends until it has finished."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws

    def open(self, path: str, timeout_s: float, query: str = "") -> PageRun:
        """Run page `path` ('' for the default page); TimeoutError when it has not finished within timeout_s."""
        import time

        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        back = BackMsg()
        back.rerun_script.query_string = query
        back.rerun_script.page_name = path
        started = time.monotonic()
        run = PageRun(path, 0.0)
        self.ws.send(back.SerializeToString())
        while True:
            left = started + timeout_s - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"page {path or 'Overview'!r} did not finish within {timeout_s:.0f} s")
            msg = ForwardMsg.FromString(self.ws.recv(timeout=left))
            kind = msg.WhichOneof("type")
            if kind == "page_not_found":
                run.not_found = True
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                element = msg.delta.new_element
                if element.WhichOneof("type") == "heading" and element.heading.tag == "h1":
                    run.titles.append(element.heading.body)
                elif element.WhichOneof("type") == "alert" and element.alert.format == element.alert.ERROR:
                    run.errors.append(element.alert.body)
                elif element.WhichOneof("type") == "exception":
                    run.exceptions.append(f"{element.exception.type}: {element.exception.message}")
            elif kind == "script_finished" and msg.script_finished != msg.FINISHED_EARLY_FOR_RERUN:
                run.seconds = time.monotonic() - started
                return run


@contextmanager
def app_session(url: str, timeout_s: float) -> Iterator[AppSession]:
    """A new session of the app at `url` (http://localhost:PORT), closed on exit."""
    from websockets.sync.client import connect

    with connect(url.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"],  # type: ignore[list-item]
                 open_timeout=timeout_s, close_timeout=2, max_size=None, ping_interval=None) as ws:
        yield AppSession(ws)


def ingest_runs(db: Path, template: Path, path: Path, **hints: Any) -> list[dict]:
    """`path` imported into a copy of `template` at `db` through the real import service; each run as Run detail
    reads it back from the store."""
    import shutil

    from db import Store
    from db.queries import run_detail
    from importers import Hints
    from importers.archive import sources_from_path
    from ingest import import_source

    shutil.copy(template, db)
    report, imported = import_source(sources_from_path(path)[0], db=db, hints=Hints(**hints))
    assert report.status == "imported" and report.runs_added == len(imported.runs)
    with Store.open(db, seed_reference=False) as store:
        rows = [run_detail(store, r["run_id"]) for r in imported.runs]
    return [r for r in rows if r is not None]


def read_while_served(db: Path, sql: str, params: list[Any] | None = None, wait_s: float = 30) -> list[tuple]:
    """The rows of `sql` on a database a running app server also opens now and then: a read-only look, retried
    while the server holds it (up to `wait_s`)."""
    import time

    from db.connection import connect

    deadline = time.monotonic() + wait_s
    while True:
        try:
            con = connect(db, read_only=True, wait_s=10)
            break
        except Exception:
            assert time.monotonic() < deadline, f"{db} stayed locked for {wait_s:g} s"
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def readers_of_other_fixtures(new: set[str], own_folders: set[str]) -> list[tuple[str, str]]:
    """(file, reader) for every fixture outside `own_folders` that one of the `new` readers would take: a new
    reader must leave the formats read before to their own readers."""
    import importers
    from importers.archive import sources_from_path
    from joulebench.errors import JouleBenchError

    formats = Path(__file__).parent / "fixtures" / "formats"
    taken = []
    for path in sorted(p for p in formats.rglob("*") if p.is_file() and p.name != "SOURCES.md"):
        if path.parent.name in own_folders:
            continue
        for source in sources_from_path(path):
            try:
                name = importers.detect(source).NAME
            except JouleBenchError:
                continue
            if name in new:
                taken.append((str(path), name))
    return taken


def mutated(data: bytes, cut: float, at: float, junk: bytes) -> bytes:
    """A file cut to 30-100 % of its length (`cut` 0-1) with `junk` inserted at fraction `at`: hypothesis input."""
    data = data[: max(1, int(len(data) * (0.3 + 0.7 * cut)))]
    i = int(len(data) * at)
    return data[:i] + junk + data[i:]


def runs_or_refusal(data: bytes, name: str, **load_kw: Any) -> list[dict]:
    """The runs `data` imports as, or none when it is refused, the refusal then naming the file and saying more
    than its name (the fuzz tests' rule: a mutated file gives a document or a clear refusal, never a traceback)."""
    from importers import load
    from joulebench.errors import JouleBenchError

    try:
        f, _ = load(data, name, **load_kw)
    except JouleBenchError as e:
        message = e.format_message()
        assert message.startswith(name) and len(message) > len(name) + 10
        return []
    return f.runs


@contextmanager
def local_http_server(handler: type) -> Iterator[str]:
    """A threaded HTTP server on a free localhost port answering with `handler`; its URL, shut down after."""
    import http.server
    import threading

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def sample_data_without(into: Path, runs_files: str, devices: set[str]) -> Path:
    """A copy of sample_data/ as it was before some reference files came: without the runs files matching
    `runs_files` (a glob) and the catalog rows of `devices`, which they added (for a store seeded before them)."""
    import csv
    import shutil

    data = Path(__file__).resolve().parents[1] / "sample_data"
    folder = into / "sample_data_before"
    shutil.copytree(data, folder, ignore=shutil.ignore_patterns(runs_files))
    with (data / "devices.csv").open(newline="", encoding="utf-8") as fh:
        kept = [r for r in csv.DictReader(fh) if r["name"] not in devices]
    with (folder / "devices.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(kept[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(kept)
    return folder


def count_good(rows: list[dict], limits: dict[str, float]) -> tuple[int, int]:
    """(completed, good) of stored requests (db.requests rows) for `limits` (ttft, itl, tpot, e2e -> ms), counted
    here one request at a time: the tests' own reading of each limit, against decision.goodput's vectorised one."""
    import math

    completed = good = 0
    for r in rows:
        if not r.get("counted", True) or r["status"] not in ("ok", "empty"):  # a result file writes only False
            continue
        completed += 1
        if r["status"] != "ok":
            continue
        out = r["output_tokens_server"] if r.get("output_tokens_server") is not None else r["output_tokens_client"]
        ok = r["ttft_ms"] <= limits.get("ttft", math.inf)
        if "e2e" in limits:
            ok = ok and r["e2e_ms"] <= limits["e2e"]
        if out > 1:
            if "tpot" in limits:
                ok = ok and (r["e2e_ms"] - r["ttft_ms"]) / (out - 1) <= limits["tpot"]
            if "itl" in limits:
                ok = ok and all(g <= limits["itl"] for g in r["itl_ms"])
        good += ok
    return completed, good


def load_fixture(path: Path, name: str | None = None) -> tuple[list[dict], str, tuple[str, ...]]:
    """(runs, format, warnings) of a fixture file imported unaided (as file `name`, by default its own)."""
    from importers import load

    imported, fmt = load(path.read_bytes(), name or path.name)
    return imported.runs, fmt, imported.warnings


def refusal(data: bytes, name: str) -> str:
    """The message an import of `data` (as file `name`) is refused with; fails the test when it is read."""
    import pytest

    from importers import load
    from joulebench.errors import ResultFileError

    with pytest.raises(ResultFileError) as err:
        load(data, name)
    return str(err.value)


def field_key(header: str) -> str | None:
    """The field a column header is read as by the general table reader, None when it is not read."""
    from importers.table_fields import measure_field

    field = measure_field(header)[0]
    return None if field is None else field.key


def unaided(folder: Path, name: str, data: bytes | None = None) -> Any:
    """A held-out fixture imported as its user uploads it: no hints, under its writer's file name; `data` in place of
    the file's bytes where a test alters it."""
    from importers import Hints, load
    return load((folder / name).read_bytes() if data is None else data, name, hints=Hints())[0]

