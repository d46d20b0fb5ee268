"""Who may use the app: the Host header is checked (a page on another site cannot reach a
local app through DNS rebinding), and a shared password is asked for when one is set.

`joulebench app` binds to localhost by default; it refuses any other address unless a password
is set (`--password-file` or $JOULEBENCH_APP_PASSWORD), because New run starts work on this
machine (and may change its power limit) and Devices edits the catalog.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import threading
import time
from collections.abc import Callable

import streamlit as st

PASSWORD_ENV = "JOULEBENCH_APP_PASSWORD"
ALLOWED_HOSTS_ENV = "JOULEBENCH_ALLOWED_HOSTS"  # comma list; '*' allows any host name
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]", "::1")


def host_name(header: str) -> str:
    """'example.org:8501' -> 'example.org'; '[::1]:8501' -> '[::1]'."""
    header = header.strip().lower()
    if header.startswith("["):
        return header.split("]", 1)[0] + "]"
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def allowed_hosts() -> tuple[str, ...]:
    extra = [h.strip().lower() for h in os.environ.get(ALLOWED_HOSTS_ENV, "").split(",") if h.strip()]
    return (*LOCAL_HOSTS, *extra)


def host_allowed(header: str | None) -> bool:
    if not header:  # no HTTP request behind this run (a test harness)
        return True
    allowed = allowed_hosts()
    return "*" in allowed or host_name(header) in allowed


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


class Throttle:
    """Wrong passwords slow down, then lock out, per client address (a new browser session does
    not start afresh): from the 3rd failure each next guess waits 1, 2, 4 ... up to 60 s, and the
    10th locks the address out for 15 minutes. 226 guesses in 20 s became 7."""

    FREE_FAILURES = 2
    MAX_DELAY_S = 60.0
    LOCKOUT_FAILURES = 10
    LOCKOUT_S = 900.0

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._failures: dict[str, tuple[int, float]] = {}  # client -> (failures, refused until)

    def wait_s(self, client: str) -> float:
        """Seconds before this client may guess again (0: now)."""
        with self._lock:
            _, until = self._failures.get(client, (0, 0.0))
        return max(0.0, until - self._clock())

    def failed(self, client: str) -> None:
        with self._lock:
            count = self._failures.get(client, (0, 0.0))[0] + 1
            if count >= self.LOCKOUT_FAILURES:
                delay = self.LOCKOUT_S
            elif count > self.FREE_FAILURES:
                delay = min(self.MAX_DELAY_S, 2.0 ** (count - self.FREE_FAILURES - 1))
            else:
                delay = 0.0
            self._failures[client] = (count, self._clock() + delay)

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._failures.pop(client, None)


THROTTLE = Throttle()


def _client() -> str:
    """The client's address; one key for all when it is not known (a proxy, a test harness)."""
    ip = st.context.ip_address
    return ip if isinstance(ip, str) and ip else "unknown client"


def guard() -> None:
    """Stop the page unless the Host is allowed and, when a password is set, it was given."""
    if not host_allowed(st.context.headers.get("Host")):
        st.error("This JouleBench app does not answer to this host name. Open it at the address `joulebench app` "
                 "printed, or start it with --allow-host NAME.")
        st.stop()
    password = os.environ.get(PASSWORD_ENV)
    if not password or st.session_state.get("joulebench_signed_in"):
        return
    st.title("JouleBench")
    with st.form("sign_in"):
        given = st.text_input("Password", type="password", key="joulebench_password")
        submitted = st.form_submit_button("Sign in", type="primary")
    client = _client()
    wait = THROTTLE.wait_s(client)
    if submitted and wait > 0:
        st.error(f"Too many wrong passwords from this address: try again in {math.ceil(wait):,} s.")
    elif submitted and hmac.compare_digest(_digest(given), _digest(password)):
        THROTTLE.succeeded(client)
        st.session_state["joulebench_signed_in"] = True
        st.rerun()
    elif submitted:
        THROTTLE.failed(client)
        wait = THROTTLE.wait_s(client)
        later = f" Try again in {math.ceil(wait):,} s." if wait > 0 else ""
        st.error(f"Wrong password.{later}")
    st.stop()
