"""Plain HTTP/1.1 connections of the arena's own to the Docker daemon, beside the docker SDK's pool.

The arena opens its own connections where the SDK's pool will not do:

* attaching to a container's streams (upgraded to raw sockets, in :mod:`.docker`);
* streaming an image build that a wall clock must be able to cut (:mod:`.docker_build`);
* removing a seat's container when the arena is out of file descriptors: each seat opens its
  :class:`DaemonLine` when it starts, so stopping it needs no new descriptor.

Only ``unix://`` and plain ``tcp://`` daemons are reached this way (TLS is the SDK's business).
"""

from __future__ import annotations

import contextlib
import errno
import http.client
import json
import os
import socket
import threading
import time
from typing import Any, Final
from urllib.parse import quote, urlencode, urlsplit

from polignac_arena.seats.base import SeatError

__all__ = ["DaemonLine", "DaemonUnreachable", "connect", "daemon_target", "out_of_descriptors"]

RETRY_FIRST_S: Final = 0.05
RETRY_LAST_S: Final = 1.0
_DESCRIPTOR_ERRORS: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


class DaemonUnreachable(SeatError):
    """No connection to the daemon could be made (or it broke) within the time allowed."""


def daemon_target(base_url: str) -> tuple[str, str | int]:
    """Where the arena opens its own connections to the daemon: ("unix", path) or (host, port)."""
    parts = urlsplit(base_url)
    if parts.scheme in ("unix", "http+unix"):
        return "unix", (parts.netloc + parts.path) if parts.scheme == "unix" else parts.path
    if parts.scheme in ("tcp", "http") and not os.environ.get("DOCKER_TLS_VERIFY"):
        return parts.hostname or "localhost", parts.port or 2375
    raise SeatError(f"docker seats talk to the daemon over unix:// or plain tcp:// only, not {base_url!r}")


def out_of_descriptors(exc: BaseException) -> bool:
    """Whether an error (or one it was raised from) says the process or the system ran out of descriptors."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _DESCRIPTOR_ERRORS:
            return True
        nested = [arg for arg in getattr(current, "args", ()) if isinstance(arg, BaseException)]
        current = current.__cause__ or current.__context__ or (nested[0] if nested else None)
    return False


def connect(base_url: str, timeout: float) -> socket.socket:
    """A connected socket to the daemon (one try)."""
    where, port = daemon_target(base_url)
    if where == "unix":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            sock.connect(str(port))
        except BaseException:
            sock.close()
            raise
        return sock
    return socket.create_connection((where, int(port)), timeout=timeout)


def connect_patiently(base_url: str, timeout: float, deadline: float) -> socket.socket:
    """:func:`connect`, tried again with growing pauses while descriptors are short, until ``deadline`` (monotonic)."""
    delay = RETRY_FIRST_S
    while True:
        try:
            return connect(base_url, timeout)
        except OSError as exc:
            if not out_of_descriptors(exc) or time.monotonic() + delay > deadline:
                raise DaemonUnreachable(f"cannot connect to the Docker daemon at {base_url}: {exc}") from None
        time.sleep(delay)
        delay = min(delay * 2, RETRY_LAST_S)


class _Connection(http.client.HTTPConnection):
    """An HTTP connection over a socket that is already open (it never opens one by itself)."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__("docker")
        self.sock = sock

    def connect(self) -> None:
        raise ConnectionResetError("the connection to the daemon was closed")


class DaemonLine:
    """One kept-alive connection to the daemon, opened in advance, for requests that must not need a new descriptor.

    A request that finds the line broken (the daemon closed it) opens another, retrying
    while the arena is short of descriptors, until the request's deadline.
    """

    def __init__(self, base_url: str, api_version: str, timeout: float = 10.0) -> None:
        self._base_url = base_url
        self._prefix = f"/v{api_version}"
        self._timeout = timeout
        self._lock = threading.Lock()
        self._connection: _Connection | None = _Connection(connect(base_url, timeout))

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def request(
        self, method: str, path: str, params: dict[str, str] | None = None, *, timeout: float | None = None, patience: float = 30.0
    ) -> tuple[int, Any]:
        """``method path`` (the API version is added); the status and the decoded JSON body (None when empty)."""
        url = self._prefix + quote(path) + (f"?{urlencode(params)}" if params else "")
        deadline = time.monotonic() + patience
        with self._lock:
            for attempt in range(2):
                if self._connection is None:
                    self._connection = _Connection(connect_patiently(self._base_url, self._timeout, deadline))
                connection = self._connection
                assert connection.sock is not None
                connection.sock.settimeout(timeout or self._timeout)
                try:
                    connection.request(method, url, headers={"Host": "docker", "Content-Length": "0"})
                    response = connection.getresponse()
                    body = response.read()
                except (OSError, http.client.HTTPException) as exc:
                    connection.close()
                    self._connection = None
                    if attempt or isinstance(exc, TimeoutError):
                        raise DaemonUnreachable(f"the Docker daemon did not answer {method} {path}: {exc}") from None
                    continue
                if response.will_close:
                    connection.close()
                    self._connection = None
                decoded: Any = None
                if body:
                    with contextlib.suppress(ValueError):
                        decoded = json.loads(body)
                    if decoded is None:
                        decoded = body.decode("utf-8", "replace")
                return response.status, decoded
        raise AssertionError("unreachable")
