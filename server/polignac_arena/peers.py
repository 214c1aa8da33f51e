"""Who a client is, for the limits kept per address: its address key, and whether it is a trusted proxy.

One IPv6 host is usually given a whole network (a /64), so per-address limits count the IPv6
addresses of one network of ``ipv6_prefix`` bits as one address; an IPv4-mapped IPv6 address
counts as its IPv4 address.  gRPC names a peer ``ipv4:127.0.0.1:52000`` or
``ipv6:%5B::1%5D:52000``: :func:`peer_host` takes the host out of that.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from collections.abc import Iterable

__all__ = ["TrustedProxies", "address_key", "peer_host"]


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def address_key(host: str, ipv6_prefix: int = 64) -> str:
    """The address a per-address limit counts ``host`` under; a host that is no IP address is its own key.

    >>> address_key("192.0.2.7"), address_key("2001:db8::1"), address_key("2001:db8::2"), address_key("::ffff:192.0.2.7")
    ('192.0.2.7', '2001:db8::/64', '2001:db8::/64', '192.0.2.7')
    >>> address_key("::1", 128), address_key("unix:/run/x.sock")
    ('::1/128', 'unix:/run/x.sock')
    """
    ip = _ip(host)
    if ip is None:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, ipv6_prefix), strict=False))
    return str(ip)


def peer_host(peer: str) -> str:
    """The address of a gRPC peer without its port, as HTTP names a client: ``ipv4:127.0.0.1:52000`` -> ``127.0.0.1``.

    Each connection has a port of its own: what counts a client by its peer would start afresh
    on every new connection.  A peer of another kind (``unix:...``) is kept whole.

    >>> peer_host("ipv4:127.0.0.1:52000"), peer_host("ipv6:%5B::1%5D:52000"), peer_host("unix:/run/x.sock")
    ('127.0.0.1', '::1', 'unix:/run/x.sock')
    """
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        host = urllib.parse.unquote(rest).rpartition(":")[0].strip("[]")
        if host:
            return host
    return peer


class TrustedProxies:
    """The proxies whose ``X-Forwarded-For`` names the client: addresses or networks (``10.0.0.0/8``, ``::1``).

    >>> proxies = TrustedProxies(["10.0.0.0/8", "::1"])
    >>> "10.1.2.3" in proxies, "::1" in proxies, "192.0.2.7" in proxies, "not an address" in proxies
    (True, True, False, False)
    """

    def __init__(self, networks: Iterable[str] = ()) -> None:
        self.texts = tuple(networks)
        self._networks = [ipaddress.ip_network(text, strict=False) for text in self.texts]

    def __bool__(self) -> bool:
        return bool(self._networks)

    def __contains__(self, host: object) -> bool:
        ip = _ip(host) if isinstance(host, str) else None
        if ip is None:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return any(ip.version == network.version and ip in network for network in self._networks)
