"""Issue 30 (3): the password lockout, through the real server. Streamlit's server (uvicorn) believed
X-Forwarded-For from 127.0.0.1 by default, so a local client sending a new address with each guess was never
slowed down. Now `joulebench app` believes the header only from a proxy named with --trusted-proxy: without
one every guess counts against the connecting address; with one, each forwarded client has its own count.
Guesses come from Chromium sessions whose every request (the websocket's too) carries the header."""

from __future__ import annotations

import base64
import os
import re
import shutil
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from explorer.access import Client, Throttle, client, given_password, parse_proxies, protected, stands_for_many
from tests.helpers import free_port
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
    """Submit a password on a page that shows no answer yet; the message the app answers with. (A page that
    shows the last guess's alert cannot tell the next answer from it on a loaded machine: its text may not
    change, and the rerun may not have begun 300 ms after the click, so every guess gets a page of its own.)"""
    alerts = page.locator('[data-testid="stAlert"]')
    assert alerts.count() == 0, "a page answers one guess: open another (_sign_in_page) for the next"
    page.get_by_label("Password", exact=True).fill(text)
    page.get_by_role("button", name="Sign in").click()
    alerts.first.wait_for(timeout=120_000)
    return str(alerts.first.inner_text())


DELAY = re.compile(r"Try again in (\d+) s")


def _fail_until_slowed(browser: Any, url: str, forwarded_for: str, failures: int = 7) -> list[str]:
    """`failures` wrong guesses, each on a new page and each after the wait the last one was given (so every
    one counts, however slow the machine): after 7 the client waits 16 s, time enough for the next guesses to
    meet the wait on any machine."""
    said = []
    for i in range(failures):
        page = _sign_in_page(browser, url, forwarded_for)
        said.append(_guess(page, f"guess {i}"))
        page.context.close()
        delay = DELAY.search(said[-1])
        if delay and i < failures - 1:
            time.sleep(int(delay.group(1)) + 0.5)
    return said


def test_a_new_forwarded_address_per_guess_gets_no_fresh_start(tmp_path: Path, browser: Any) -> None:
    with _app(tmp_path) as url:
        pages = [_sign_in_page(browser, url, f"203.0.113.{i}") for i in range(1, 5)]  # all loaded first
        said = [_guess(page, f"guess {i}") for i, page in enumerate(pages)]  # then guessed back to back
    assert said[:2] == ["Wrong password.", "Wrong password."], said
    assert all(SLOWED.search(s) for s in said[2:]), said  # was "Wrong password." with no wait, every time


def test_clients_forwarded_by_a_trusted_proxy_are_throttled_separately(tmp_path: Path, browser: Any) -> None:
    with _app(tmp_path, "--trusted-proxy", "127.0.0.1") as url:
        second, first = _sign_in_page(browser, url, "198.51.100.8"), _sign_in_page(browser, url, "198.51.100.7")
        said = _fail_until_slowed(browser, url, "198.51.100.7")
        other = _guess(second, "guess")
        again = _guess(first, PASSWORD)  # even the right password waits while this client is slowed down
    assert said[:2] == ["Wrong password.", "Wrong password."] and all(SLOWED.search(s) for s in said[2:]), said
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


def test_every_loopback_address_is_one_shared_client() -> None:
    """Issue 40: 127.0.0.11 and 127.0.0.12 were two clients, so the 11th guess from a new 127.x address was fresh."""
    for address in ("127.0.0.1", "127.0.0.11", "127.255.255.254", "::1", "::ffff:127.0.0.12", "0.0.0.0", "[::1]"):
        assert stands_for_many(address), address
        assert client(address, None, None, ()) == Client("loopback", True), address
    for address in ("192.0.2.5", "10.0.0.1", "::ffff:192.0.2.5", "fe80::1", "not an address"):
        assert not stands_for_many(address), address


def test_which_endpoints_need_the_password() -> None:
    for path in ("/_stcore/metrics", "/_stcore/metrics/", "//_stcore//metrics", "/base/_stcore/metrics",
                 "/_stcore/agent/interact", "/_stcore/agent/mcp", "/_stcore/script-health-check"):
        assert protected(path), path
    for path in ("/", "/_stcore/health", "/_stcore/host-config", "/compare", "/static/js/main.js"):
        assert not protected(path), path
    basic = "Basic " + base64.b64encode(b"anyone:pass:word").decode()
    assert given_password(basic) == "pass:word" and given_password("Bearer pass") == "pass"
    assert given_password(None) is None and given_password("Basic !!!") is None and given_password("Digest x") is None


def _get(url: str, host: str | None = None, password: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url)
    if host is not None:
        request.add_header("Host", host)
    if password is not None:
        request.add_header("Authorization", "Basic " + base64.b64encode(f"me:{password}".encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return int(r.status), r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return int(e.code), e.read().decode("utf-8", "replace")


def test_the_metrics_endpoint_needs_the_password_for_any_host(tmp_path: Path) -> None:
    """Issue 40: /_stcore/metrics answered without the password (cache function names, sessions), for any Host."""
    with _app(tmp_path) as url:
        metrics = f"{url}/_stcore/metrics"
        for host in (None, "localhost", "evil.example", "127.0.0.1:1"):
            status, body = _get(metrics, host)
            assert status == 401 and "needs its password" in body and "cache" not in body, (host, status, body[:200])
        assert _get(f"{url}/_stcore/health")[0] == 200  # what a load balancer asks stays open
        status, body = _get(metrics, "evil.example", PASSWORD)
        assert status == 200 and "# TYPE" in body, body[:300]  # the real metrics, with the password
        assert _get(metrics, None, "wrong")[0] == 401
        assert _get(metrics, None, "wrong")[0] == 401  # two free failures, then the throttle
        status, body = _get(metrics, "evil.example", "wrong")
        assert status == 429 and "Try again in 1 s" in body, body
        time.sleep(1.5)  # the wait is over (loopback is shared: slowed, never locked out)
        assert _get(metrics, None, PASSWORD)[0] == 200


class _Relay:
    """A TCP relay on 127.0.0.1:`port` to `target`, whose connections to the target leave from `source` (any
    127.x address: what a local client can choose freely)."""

    def __init__(self, target: int, source: str) -> None:
        self.target, self.source = target, source
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                inbound, _ = self.listener.accept()
            except OSError:
                return  # closed
            try:
                outbound = socket.create_connection(("127.0.0.1", self.target), timeout=30,
                                                    source_address=(self.source, 0))
            except OSError:  # the server has stopped (the test is over): refuse this connection
                inbound.close()
                continue
            outbound.settimeout(None)
            for a, b in ((inbound, outbound), (outbound, inbound)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self.listener.close()


def test_guesses_from_other_loopback_addresses_count_as_one_client(tmp_path: Path, browser: Any) -> None:
    """Issue 40: wrong guesses from 127.0.0.11, then the right password from 127.0.0.12, signed in at once."""
    with _app(tmp_path) as url:
        port = int(url.rsplit(":", 1)[1])
        relays = [_Relay(port, f"127.0.0.{i}") for i in range(11, 14)]
        try:
            second = _sign_in_page(browser, f"http://127.0.0.1:{relays[1].port}", "198.51.100.2")
            third = _sign_in_page(browser, f"http://127.0.0.1:{relays[2].port}", "198.51.100.3")
            said = _fail_until_slowed(browser, f"http://127.0.0.1:{relays[0].port}", "198.51.100.1")
            other = _guess(second, PASSWORD)
            wrong = _guess(third, "guess again")
        finally:
            for relay in relays:
                relay.close()
    assert said[:2] == ["Wrong password.", "Wrong password."] and all(SLOWED.search(s) for s in said[2:]), said
    assert SLOWED.search(other), other  # was: signed in at once from the next address
    assert SLOWED.search(wrong), wrong


def test_the_relay_reaches_the_server_from_its_source_address() -> None:
    """The relay above is what makes the server see 127.0.0.11: checked on a plain socket server."""
    seen: list[str] = []
    server = socket.create_server(("127.0.0.1", free_port()))
    relay = _Relay(int(server.getsockname()[1]), "127.0.0.11")
    try:
        with socket.create_connection(("127.0.0.1", relay.port), timeout=30):
            server.settimeout(30)
            conn, peer = server.accept()
            seen.append(peer[0])
            conn.close()
    finally:
        relay.close()
        server.close()
    assert seen == ["127.0.0.11"]
