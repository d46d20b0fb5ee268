"""Shared test helpers."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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
        holder.wait(timeout=30)


def release(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None
    holder.stdin.write("\n")
    holder.stdin.flush()
    holder.wait(timeout=30)


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
