"""Every page meets a busy or damaged store with the same clear message, never Streamlit's error page
(issue 30: Compare, Decide, Devices and Cost showed it when another process held the database)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from db import connection
from explorer import data, nav
from tests.helpers import database_held_by_another_process

# The server's script: app.py beside pages/ would run a switched page without app.py (Streamlit's legacy
# multipage app), as AppTest does with app.py.
MAIN = nav.REPO_ROOT / "explorer" / "streamlit_main.py"
BUSY = "is held by another process"
NO_STORE_READ = {"New run", "Upload"}  # pages that read nothing from the store when they open


def _app() -> Any:
    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(str(MAIN), default_timeout=60).run()


def test_a_store_that_turns_busy_at_any_read_of_any_page_gives_the_message(
        db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process takes the database partway through a page: the page's first reads come from the cache,
    a later one of the same rerun finds the database held by a real second process. For every page and every
    read k of it (reads before k cached, read k on the store), the page ends with the busy message of the
    database, never an exception box (Compare, Decide, Devices and Cost raised it from findings, devices,
    exchange_rates and device_history); with k past the page's last read it renders whole."""
    monkeypatch.setattr(connection, "READ_ONLY_WAIT_S", 0.1)  # how long a read waits for the holder
    real_version = data.version
    reads = {"n": 0, "cached": 10_000, "rerun": 0}

    def version(path: str) -> str:  # the database's version as the n-th read of this rerun finds it
        reads["n"] += 1
        return real_version(path) + ("" if reads["n"] <= reads["cached"] else f"+written, rerun {reads['rerun']}")

    monkeypatch.setattr(data, "version", version)
    at = _app()
    for page, _, _ in nav.PAGES:  # every read of every page cached, the database free
        at.switch_page(f"../pages/{page.name}").run()
        assert not at.exception and not at.error, (page.name, at.exception, at.error)
    problems, told = [], set()
    with database_held_by_another_process(db):
        for page, title, _ in nav.PAGES:
            at.switch_page(f"../pages/{page.name}")
            for k in range(40):
                reads.update(n=0, cached=k, rerun=reads["rerun"] + 1)
                at.run()
                errors = [e.value for e in at.error]
                if at.exception or len(errors) > 1 or (errors and BUSY not in errors[0]):
                    problems.append(f"{title}, read {k}: exception {[e.value for e in at.exception]}, "
                                    f"errors {errors}")
                if not errors:
                    break  # k is past the page's last read
                told.add(title)
    assert problems == [], "\n".join(problems)
    assert told == {title for _, title, _ in nav.PAGES} - NO_STORE_READ


def test_a_damaged_database_gives_every_page_the_same_message(db: Path) -> None:
    """A database file overwritten with other bytes: every page says it is damaged and what to do, in one box."""
    db.write_bytes(b"not a database " * 4096)
    at = _app()
    for page, title, _ in nav.PAGES:
        at.switch_page(f"../pages/{page.name}").run()
        errors = [e.value for e in at.error]
        assert not at.exception and len(errors) == 1 and "damaged or unreadable" in errors[0], (title, errors)
