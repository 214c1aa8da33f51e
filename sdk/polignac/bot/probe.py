"""What a league's gRPC port speaks, TLS or plaintext: a one-line diagnosis for a client that keeps failing to connect.

gRPC reports a client that speaks plaintext to a TLS port (or TLS to a plaintext port) only
as ``UNAVAILABLE``, which reads like a server that is down, and a client that follows the
usual retry rule retries forever.  :func:`tls_mismatch` asks the port itself: it opens one
TCP connection and either starts a TLS handshake (does the port answer as TLS?) or sends the
HTTP/2 preface in the clear (does it answer as plaintext HTTP/2?).
"""

from __future__ import annotations

import contextlib
import socket
import ssl
from typing import Final

__all__ = ["PROBE_TIMEOUT_S", "speaks_tls", "tls_mismatch"]

PROBE_TIMEOUT_S: Final = 3.0
_PREFACE: Final = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # and an empty SETTINGS frame
_SETTINGS: Final = 0x04


def _endpoint(address: str) -> tuple[str, int] | None:
    if address.startswith(("unix:", "unix-abstract:")):
        return None
    host, _, port = address.rpartition(":")
    if not port.isdigit():
        return None
    return host.strip("[]") or "localhost", int(port)


def speaks_tls(address: str, timeout_s: float = PROBE_TIMEOUT_S) -> bool | None:
    """True when ``address`` (``host:port``) answers a TLS handshake, False when it answers plaintext HTTP/2, None when unsure."""
    endpoint = _endpoint(address)
    if endpoint is None:
        return None
    try:
        with socket.create_connection(endpoint, timeout=timeout_s) as sock:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE  # only asks whether it speaks TLS at all; nothing is sent over it
            with contextlib.suppress(ssl.SSLError, NotImplementedError):
                context.set_alpn_protocols(["h2"])
            try:
                with context.wrap_socket(sock, server_hostname=endpoint[0]):
                    return True
            except ssl.SSLError:
                pass
        with socket.create_connection(endpoint, timeout=timeout_s) as sock:
            sock.sendall(_PREFACE)
            header = sock.recv(9)
            return False if len(header) >= 4 and header[3] == _SETTINGS else None
    except OSError:
        return None


def tls_mismatch(address: str, client_tls: bool, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """One line saying how the client's choice (``client_tls``) disagrees with what ``address`` speaks, or None when it does not
    (or cannot be told)."""
    server_tls = speaks_tls(address, timeout_s)
    if server_tls is None or server_tls == client_tls:
        return None
    if server_tls:
        return (
            f"{address} speaks TLS, and this client connected in plaintext: trust the league's certificate authority"
            " (root_certificates=..., or POLIGNAC_TLS_CA=ca.pem; --ca for polignac league connect)"
        )
    return (
        f"{address} speaks plaintext (no TLS), and this client connected with TLS: leave out the certificate authority"
        " (unset POLIGNAC_TLS_CA) or pass insecure=True; plaintext is for loopback addresses only"
    )
