"""Whether serve-bench's --target is served on this machine: only then do this machine's sensors measure the
server. A server elsewhere is measured only through its own power log (`--power-log`, e.g. the server's
tegrastats or nvidia-smi log over the run), and the runs' device is the one named for it (`--server-device`):
this machine is the client, and its power, device and software say nothing of the server."""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def host_of(target: str) -> str:
    return (urlsplit(target).hostname or "").lower()


def _bindable(address: str) -> bool:
    """An address is this machine's when a socket can bind to it (no packet leaves the machine)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.bind((address, 0))
        return True
    except OSError:
        return False


def on_this_machine(target: str) -> bool:
    """The URL's host is this machine: a loopback name or address, this machine's host name, or an address
    bound to one of its interfaces. A name is resolved once (an unknown name: not this machine)."""
    host = host_of(target)
    if not host or host in LOCAL_NAMES or host in {socket.gethostname().lower(), socket.getfqdn().lower()}:
        return bool(host)
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        try:
            addresses = {str(info[4][0]) for info in socket.getaddrinfo(host, None)}
        except (OSError, UnicodeError):
            return False
        return bool(addresses) and all(on_this_machine(f"http://[{a}]" if ":" in a else f"http://{a}")
                                       for a in addresses)
    return ip.is_loopback or ip.is_unspecified or _bindable(str(ip))
