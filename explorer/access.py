"""Who may use the app: the Host header is checked (a page on another site cannot reach a
local app through DNS rebinding), and a shared password is asked for when one is set.

`joulebench app` binds to localhost by default; it refuses any other address unless a password
is set (`--password-file` or $JOULEBENCH_APP_PASSWORD), because New run starts work on this
machine (and may change its power limit) and Devices edits the catalog.
"""

from __future__ import annotations

import hashlib
import hmac
import os

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
    if submitted and hmac.compare_digest(_digest(given), _digest(password)):
        st.session_state["joulebench_signed_in"] = True
        st.rerun()
    if submitted:
        st.error("Wrong password.")
    st.stop()
