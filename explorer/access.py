"""Who may use the app: the Host header is checked (a page on another site cannot reach a
local app through DNS rebinding), and a shared password is asked for when one is set.

`joulebench app` binds to localhost by default; it refuses any other address unless a password
is set (`--password-file` or $JOULEBENCH_APP_PASSWORD), because New run starts work on this
machine (and may change its power limit) and Devices edits the catalog.

Wrong passwords are throttled per client (`Throttle`), and the client is one the server can vouch for:
the user signed in with Streamlit's own login (st.user) when it is configured, else the TCP peer. A
forwarded address (X-Forwarded-For) counts only when the peer is a proxy named with `joulebench app
--trusted-proxy ADDR` ($JOULEBENCH_TRUSTED_PROXIES): the app command passes the same list to the server
(uvicorn's FORWARDED_ALLOW_IPS, empty without one, so no header is believed), and each forwarded client is
then throttled on its own. A key that stands for several people is ONE client, slowed down but never locked
out, so one of them cannot lock the others out for 15 minutes: every loopback address (all of 127.0.0.0/8, ::1
and ::ffff:127.x: SSH tunnels, local proxies and every local user arrive from one of them, and a local client
may pick any 127.x source address it likes, so each is not a client of its own), the unspecified address, and a
trusted proxy that names no client.

Streamlit also answers HTTP endpoints outside the page's script, which `guard` cannot reach: `PasswordGate`, an
ASGI middleware `explorer.warm` puts in front of Streamlit's own, asks for the password (HTTP Basic, any user
name, or `Authorization: Bearer PASSWORD`) on those that tell what the app holds or let a client drive it
(`/_stcore/metrics`: its caches' function names and sizes and the sessions; the agent API; the script health
check), whatever the Host header, when a password is set; wrong ones count against the same throttle.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import math
import os
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

import streamlit as st

PASSWORD_ENV = "JOULEBENCH_APP_PASSWORD"
ALLOWED_HOSTS_ENV = "JOULEBENCH_ALLOWED_HOSTS"  # comma list; '*' allows any host name
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]", "::1")
TRUSTED_PROXIES_ENV = "JOULEBENCH_TRUSTED_PROXIES"  # comma list of addresses or networks (`app --trusted-proxy`)
FORWARDED_ENV = "FORWARDED_ALLOW_IPS"  # uvicorn's (Streamlit's server): whose X-Forwarded-For it believes

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_proxies(text: str) -> tuple[Network, ...]:
    """'127.0.0.1, 10.0.0.0/8' -> the networks; ValueError naming an entry that is not an address or a
    network ('*' is refused: it would believe any client's header)."""
    out = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        try:
            out.append(ipaddress.ip_network(item, strict=False))
        except ValueError as e:
            raise ValueError(f"{item[:60]!r} is not an IP address or network (e.g. 127.0.0.1, 10.0.0.0/8); name the "
                             "proxy's own address, never '*'") from e
    return tuple(out)


def trusted_proxies() -> tuple[Network, ...]:
    try:
        return parse_proxies(os.environ.get(TRUSTED_PROXIES_ENV, ""))
    except ValueError:
        return ()  # `joulebench app` checked it; a hand-made bad value trusts nobody


def _is_proxy(address: str, proxies: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in proxies)


def stands_for_many(address: str) -> bool:
    """Whether an address is shared by several people whatever they do: any loopback address (127.0.0.0/8, ::1,
    ::ffff:127.x; a local client chooses its source among them freely) or the unspecified one."""
    try:
        ip = ipaddress.ip_address(address.strip().strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    return any(a.is_loopback or a.is_unspecified for a in (ip, mapped) if a is not None)


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
    """Wrong passwords slow down, then lock out, per client (a new browser session does not start
    afresh): from the 3rd failure each next guess waits 1, 2, 4 ... up to 60 s, and the 10th locks
    the client out for 15 minutes. 226 guesses in 20 s became 7. A shared key (several people behind
    one address) is slowed the same way but never locked out."""

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

    def failed(self, client: str, *, shared: bool = False) -> None:
        with self._lock:
            count = self._failures.get(client, (0, 0.0))[0] + 1
            if count >= self.LOCKOUT_FAILURES and not shared:
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


@dataclass(frozen=True)
class Client:
    key: str
    shared: bool  # stands for several people: slowed down, never locked out


def client(ip: str | None, forwarded_for: str | None, user: str | None, proxies: tuple[Network, ...],
           server_believes_others: bool = False) -> Client:
    """Whom a sign-in attempt is counted against. `ip`: the address the server gives (the TCP peer, or with
    a trusted proxy the client it forwarded; None for loopback or no connection), `forwarded_for`: the
    request's X-Forwarded-For, `user`: Streamlit's signed-in user, if any; `server_believes_others`: the
    server was not told whose headers to believe (started without `joulebench app`: uvicorn then believes
    127.0.0.1's)."""
    if user:
        return Client(f"user {user}", False)
    if not ip or stands_for_many(ip):
        return Client("loopback", True)  # every SSH tunnel, unnamed local proxy and local user: any 127.x address
    if server_believes_others and forwarded_for and ip in {h.strip() for h in forwarded_for.split(",")}:
        # the address may be a claim the server believed: all such clients share one key
        return Client("forwarded by an unnamed proxy", True)
    if _is_proxy(ip, proxies):
        return Client(ip, True)  # a trusted proxy that named no client stands for all of its clients
    return Client(ip, False)


def _signed_in_user() -> str | None:
    try:
        if st.user.get("is_logged_in") is True:
            return str(st.user.get("sub") or st.user.get("email") or "") or None
    except Exception:  # noqa: BLE001 - no login configured, or no script context: no user
        return None
    return None


def _client() -> Client:
    ip = st.context.ip_address
    return client(ip if isinstance(ip, str) else None, st.context.headers.get("X-Forwarded-For"),
                  _signed_in_user(), trusted_proxies(),
                  os.environ.get(FORWARDED_ENV) != os.environ.get(TRUSTED_PROXIES_ENV, ""))  # as `app` sets them


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
    who = _client()
    wait = THROTTLE.wait_s(who.key)
    if submitted and wait > 0:
        st.error(f"Too many wrong passwords from this address: try again in {math.ceil(wait):,} s.")
    elif submitted and hmac.compare_digest(_digest(given), _digest(password)):
        THROTTLE.succeeded(who.key)
        st.session_state["joulebench_signed_in"] = True
        st.rerun()
    elif submitted:
        THROTTLE.failed(who.key, shared=who.shared)
        wait = THROTTLE.wait_s(who.key)
        later = f" Try again in {math.ceil(wait):,} s." if wait > 0 else ""
        st.error(f"Wrong password.{later}")
    st.stop()


# --- Streamlit's endpoints outside the page's script --------------------------------------------------

PROTECTED_PATHS = ("/_stcore/metrics", "/_stcore/agent/", "/_stcore/script-health-check")
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def protected(path: str) -> bool:
    """Whether an HTTP path (decoded, as the server routes it, under any base URL) needs the password."""
    path = "/" + "/".join(p for p in path.split("/") if p)  # '//_stcore//metrics/' routes nowhere else either
    return any(p.rstrip("/") in path for p in PROTECTED_PATHS)


def given_password(authorization: str | None) -> str | None:
    """The password an Authorization header carries: HTTP Basic (any user name) or Bearer; None without one."""
    if not authorization:
        return None
    kind, _, value = authorization.strip().partition(" ")
    if kind.lower() == "bearer":
        return value.strip()
    if kind.lower() == "basic":
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return None
        return decoded.partition(":")[2]
    return None


class PasswordGate:
    """ASGI middleware: the protected endpoints (`protected`) answer 401 without the app's password, 429 while
    the client is slowed down, whatever the Host header; everything else passes through untouched."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        password = os.environ.get(PASSWORD_ENV)
        if scope.get("type") != "http" or not password or not protected(str(scope.get("path", ""))):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        peer = scope.get("client")
        who = client(str(peer[0]) if peer else None, headers.get("x-forwarded-for"), None, trusted_proxies(),
                     os.environ.get(FORWARDED_ENV) != os.environ.get(TRUSTED_PROXIES_ENV, ""))
        wait = THROTTLE.wait_s(who.key)
        given = given_password(headers.get("authorization"))
        if wait > 0 and given is not None:
            await _refuse(send, 429, f"Too many wrong passwords from this address: try again in {math.ceil(wait):,} s.",
                          {"retry-after": str(math.ceil(wait))})
            return
        if given is not None and hmac.compare_digest(_digest(given), _digest(password)):
            THROTTLE.succeeded(who.key)
            await self.app(scope, receive, send)
            return
        if given is not None:
            THROTTLE.failed(who.key, shared=who.shared)
            wait = THROTTLE.wait_s(who.key)
            if wait > 0:
                await _refuse(send, 429, f"Wrong password. Try again in {math.ceil(wait):,} s.",
                              {"retry-after": str(math.ceil(wait))})
                return
        await _refuse(send, 401, "This JouleBench app needs its password for this address: send it as HTTP Basic "
                                 "authentication (any user name) or 'Authorization: Bearer PASSWORD'.",
                      {"www-authenticate": 'Basic realm="JouleBench", charset="UTF-8"'})


async def _refuse(send: Send, status: int, message: str, extra: dict[str, str]) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"cache-control", b"no-store"), *((k.encode(), v.encode()) for k, v in extra.items())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def install_gate() -> None:
    """Put `PasswordGate` first in the middleware of the Streamlit server this process is about to start
    (`explorer.warm`, before the server is built)."""
    from starlette.middleware import Middleware
    from streamlit.web.server.starlette import starlette_app

    if getattr(starlette_app.create_streamlit_middleware, "joulebench_gate", False):
        return
    own = starlette_app.create_streamlit_middleware

    def with_gate() -> list[Middleware]:
        return [Middleware(PasswordGate), *own()]  # type: ignore[arg-type]  # an ASGI class, as Starlette takes

    with_gate.joulebench_gate = True  # type: ignore[attr-defined]
    starlette_app.create_streamlit_middleware = with_gate
