"""Whether a host or a listening address is this machine only: where plaintext may be served and spoken."""

from __future__ import annotations

import ipaddress

__all__ = ["is_loopback_address", "is_loopback_host"]


def is_loopback_host(host: str) -> bool:
    """``localhost``, ``127.0.0.0/8`` or ``::1`` (brackets allowed); a host name may resolve to anything, so it is not.

    >>> [is_loopback_host(h) for h in ("127.9.9.9", "[::1]", "localhost", "0.0.0.0", "10.0.0.1", "local")]
    [True, True, True, False, False, False]
    """
    host = host.removeprefix("[").removesuffix("]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_loopback_address(address: str) -> bool:
    """A listening address reachable from this machine only: a unix socket, or ``host:port`` on a loopback host.

    >>> [is_loopback_address(a) for a in ("unix:/tmp/s", "127.0.0.2:0", "[::1]:5", "localhost:80", "0.0.0.0:1", "[::]:1", "host:1")]
    [True, True, True, True, False, False, False]
    """
    if address.startswith(("unix:", "unix-abstract:")):
        return True
    return is_loopback_host(address.rsplit(":", 1)[0] if ":" in address else address)
