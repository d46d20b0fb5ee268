"""Issue 30 (3): the password lockout, through the real server. Streamlit's server (uvicorn) believed
X-Forwarded-For from 127.0.0.1 by default, so a local client sending a new address with each guess was never
slowed down. Now `joulebench app` believes the header only from a proxy named with --trusted-proxy: without
one every guess counts against the connecting address; with one, each forwarded client has its own count.
Guesses come from Chromium sessions whose every request (the websocket's too) carries the header."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from explorer.access import Client, Throttle, client, parse_proxies
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, app_server

pytestmark = pytest.mark.browser
PASSWORD = "s3cret correct horse"
SLOWED = re.compile(r"Try again in \d+ s|Too many wrong passwords")


@contextmanager
def _app(tmp_path: Path, *extra: str) -> Iterator[str]:
    (tmp_path / "password").write_text(PASSWORD + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JOULEBENCH_", "FORWARDED_"))}
    with app_server(["--address", "127.0.0.1", "--db", str(tmp_path / "x.duckdb"), "--password-file",
                     str(tmp_path / "password"), *extra], dict(env, HF_HUB_OFFLINE="1"), tmp_path) as url:
        yield url.replace("localhost", "127.0.0.1")  # the server listens on IPv4 loopback only


@pytest.fixture
def browser():  # type: ignore[no-untyped-def]
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.fail("Chromium is missing: `make test` installs it (apt-get install chromium)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def _sign_in_page(browser: Any, url: str, forwarded_for: str) -> Any:
    """A new browser session whose requests say they were forwarded for `forwarded_for`, at the sign-in form."""
    page = browser.new_context(extra_http_headers={"X-Forwarded-For": forwarded_for}).new_page()
    page.goto(url)
    page.get_by_label("Password", exact=True).wait_for(timeout=60_000)
    return page


def _guess(page: Any, text: str) -> str:
    """Submit a password; the message the app answers with."""
    alerts = page.locator('[data-testid="stAlert"]')
    before = alerts.count()
    box = page.get_by_label("Password", exact=True)
    box.fill(text)
    page.get_by_role("button", name="Sign in").click()
    if before:  # the alert of the last guess is redrawn: wait for the rerun to finish
        page.wait_for_timeout(300)
        page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=30_000)
    alerts.first.wait_for(timeout=30_000)
    return str(alerts.first.inner_text())


def test_a_new_forwarded_address_per_guess_gets_no_fresh_start(tmp_path: Path, browser: Any) -> None:
    with _app(tmp_path) as url:
        pages = [_sign_in_page(browser, url, f"203.0.113.{i}") for i in range(1, 5)]  # all loaded first
        said = [_guess(page, f"guess {i}") for i, page in enumerate(pages)]  # then guessed back to back
    assert said[:2] == ["Wrong password.", "Wrong password."], said
    assert all(SLOWED.search(s) for s in said[2:]), said  # was "Wrong password." with no wait, every time


def test_clients_forwarded_by_a_trusted_proxy_are_throttled_separately(tmp_path: Path, browser: Any) -> None:
    with _app(tmp_path, "--trusted-proxy", "127.0.0.1") as url:
        first, second = _sign_in_page(browser, url, "198.51.100.7"), _sign_in_page(browser, url, "198.51.100.8")
        said = [_guess(first, f"guess {i}") for i in range(3)]
        other = _guess(second, "guess")
        again = _guess(first, PASSWORD)  # even the right password waits while this client is slowed down
    assert said[:2] == ["Wrong password.", "Wrong password."] and SLOWED.search(said[2]), said
    assert other == "Wrong password."  # the other client is not held up by the first one's guesses
    assert SLOWED.search(again), again


def test_who_a_guess_counts_against() -> None:
    proxies = parse_proxies("127.0.0.1, 10.0.0.0/8")
    assert client("192.0.2.5", None, None, ()) == Client("192.0.2.5", False)  # the TCP peer
    assert client(None, "203.0.113.9", None, ()) == Client("loopback", True)  # a header, no proxy named: ignored
    # a server that may have believed a header no proxy was named for (Streamlit started by hand): not a key
    assert client("203.0.113.9", "203.0.113.9", None, (), server_believes_others=True).shared
    assert client("203.0.113.9", "203.0.113.9", None, ()) == Client("203.0.113.9", False)  # `app`: the peer's own
    assert client("203.0.113.9", "203.0.113.9", None, proxies) == Client("203.0.113.9", False)
    assert client("10.1.2.3", None, None, proxies) == Client("10.1.2.3", True)  # a proxy that named no client
    assert client("192.0.2.5", None, "ada@lab.example", ()) == Client("user ada@lab.example", False)
    with pytest.raises(ValueError, match="never '\\*'"):
        parse_proxies("*")


def test_a_shared_address_is_slowed_down_but_never_locked_out() -> None:
    """One SSH-tunnel user must not lock every other tunnel user out for 15 minutes."""
    now = [0.0]
    t = Throttle(clock=lambda: now[0])
    for _ in range(3 * Throttle.LOCKOUT_FAILURES):
        t.failed("loopback", shared=True)
        now[0] += t.wait_s("loopback")
        t.failed("203.0.113.9")
    t.failed("loopback", shared=True)
    assert t.wait_s("loopback") == Throttle.MAX_DELAY_S
    assert t.wait_s("203.0.113.9") == Throttle.LOCKOUT_S  # one client's own key is locked out
