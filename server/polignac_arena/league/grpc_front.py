"""The league's public gRPC port: a TCP front that caps connections per address and relays the rest to gRPC.

gRPC has no cap on the connections of one address, and no way to be handed accepted sockets,
so the league listens on the public port itself (:class:`GrpcFront`) and gRPC on an internal
loopback port.  For each new connection the front:

* closes it at once with a reset, before a byte is read, when its address (an IPv6 network
  counted as one: :func:`polignac_arena.peers.address_key`) already holds
  ``max_per_address`` connections (trusted proxies are exempt), or when ``max_connections``
  are open in all;
* else opens a connection to gRPC's internal port, notes which client it carries (by its
  local port: gRPC's ``context.peer()`` names that port) and only then relays bytes both ways,
  untouched (TLS stays end to end), with flow control: a side whose peer does not read stops
  being read once the other's write buffer is full.

Whatever reads a client's address from gRPC asks :meth:`GrpcFront.client_peer` for the real
one.  Either side closing closes the other (after what it was still owed is written, or at
once when that does not drain in :data:`CLOSE_GRACE_S`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import struct
from collections import Counter
from collections.abc import Iterable
from typing import Final

from polignac_arena.peers import TrustedProxies, address_key

__all__ = ["CLOSE_GRACE_S", "INTERNAL_HOST", "GrpcFront", "direct_peer", "grpc_peer_name"]

log = logging.getLogger(__name__)

INTERNAL_HOST: Final = "127.0.0.1"
"""Where gRPC listens behind the front (a port the OS chooses)."""
BUFFER_HIGH: Final = 64 * 1024
"""Bytes waiting to be written to one side before the other side stops being read (one read more may come: asyncio
reads up to 256 KiB at a time)."""
CLOSE_GRACE_S: Final = 5.0
"""How long a side may take to take what it is still owed once the other side has closed; then it is reset."""
_RESET: Final = struct.pack("ii", 1, 0)
"""SO_LINGER on, zero seconds: a refused connection is reset, and leaves nothing waiting in TIME_WAIT."""


def direct_peer(peer: str) -> str:
    """The client address of a gRPC peer when no front stands before gRPC: the peer itself."""
    return peer


def grpc_peer_name(address: object) -> str:
    """A socket address as gRPC names a peer: ``ipv4:192.0.2.7:52000``, ``ipv6:%5B2001:db8::1%5D:52000``."""
    if isinstance(address, tuple) and len(address) >= 2:
        host, port = str(address[0]), int(address[1])
        return f"ipv6:%5B{host}%5D:{port}" if ":" in host else f"ipv4:{host}:{port}"
    return f"unknown:{address}"


def _reset(transport: asyncio.BaseTransport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET)
    transport.abort()  # type: ignore[attr-defined]  # every stream transport has abort()


class _Side(asyncio.Protocol):
    """One end of a relayed connection: what it reads goes to the other end."""

    def __init__(self, link: _Link) -> None:
        self.link = link
        self.transport: asyncio.Transport | None = None
        self.other: _Side | None = None
        self.eof = False
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.set_write_buffer_limits(high=BUFFER_HIGH)

    def data_received(self, data: bytes) -> None:
        other = self.other
        if other is not None and other.transport is not None and not other.lost:
            other.transport.write(data)

    def eof_received(self) -> bool:
        """A half-close is passed on; the connection closes once both ends have closed their halves."""
        self.eof = True
        other = self.other
        if other is None or other.transport is None or other.lost or other.eof:
            self.link.close()
            return False
        if other.transport.can_write_eof():
            other.transport.write_eof()
        return True

    def pause_writing(self) -> None:
        if self.other is not None and self.other.transport is not None:
            self.other.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.other is not None and self.other.transport is not None and not self.other.lost:
            self.other.transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.link.side_lost()


class _Link:
    """A client's connection and the one to gRPC that carries it; releases its place once both are gone."""

    def __init__(self, front: GrpcFront, key: str, peer: str) -> None:
        self.front = front
        self.key = key
        self.peer = peer
        """The client's address as gRPC would name it."""
        self.client = _Side(self)
        self.upstream = _Side(self)
        self.client.other, self.upstream.other = self.upstream, self.client
        self.internal: str | None = None
        """The upstream connection's name at gRPC (its local port), while it is in the front's table."""
        self.connecting: asyncio.Task[None] | None = None
        self.closing: asyncio.TimerHandle | None = None
        self.released = False

    async def connect(self, port: int, timeout_s: float) -> None:
        """Open the upstream connection, note whom it carries, then start reading the client."""
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout_s):
                await loop.create_connection(lambda: self.upstream, INTERNAL_HOST, port)
        except (OSError, TimeoutError) as exc:
            log.warning("grpc front: cannot reach gRPC on %s:%d: %s", INTERNAL_HOST, port, exc)
            self.upstream.connection_lost(None)
            return
        except asyncio.CancelledError:
            self.upstream.connection_lost(None)
            raise
        finally:
            self.connecting = None
        assert self.upstream.transport is not None
        self.internal = grpc_peer_name(self.upstream.transport.get_extra_info("sockname"))
        self.front._peers[self.internal] = self.peer
        if self.client.lost or self.client.transport is None:
            self.close()
        else:
            self.client.transport.resume_reading()

    def close(self) -> None:
        """Close both ends (each after what it is owed is written); reset them if that takes too long."""
        for side in (self.client, self.upstream):
            if side.transport is not None and not side.lost:
                side.transport.close()
        if self.closing is None and not self.released:
            self.closing = asyncio.get_running_loop().call_later(CLOSE_GRACE_S, self.abort)

    def abort(self) -> None:
        for side in (self.client, self.upstream):
            if side.transport is not None and not side.lost:
                _reset(side.transport)

    def side_lost(self) -> None:
        if self.client.lost and self.upstream.lost:
            self.release()
        else:
            self.close()

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        if self.closing is not None:
            self.closing.cancel()
        if self.internal is not None and self.front._peers.get(self.internal) == self.peer:
            del self.front._peers[self.internal]
        self.front._release(self)


class _Door(asyncio.Protocol):
    """The public port's first protocol for a client: it hands an admitted connection to its link, or resets it."""

    def __init__(self, front: GrpcFront) -> None:
        self.front = front

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        link = self.front._admit(transport)
        if link is None:
            self.front.refused += 1
            _reset(transport)
            return
        transport.set_protocol(link.client)
        link.client.connection_made(transport)
        transport.pause_reading()  # until gRPC's side is open and knows whom it carries
        link.connecting = asyncio.ensure_future(link.connect(self.front.internal_port, self.front.connect_timeout_s))


class GrpcFront:
    """The public gRPC port in front of gRPC's internal one (see the module notes).

    ``max_connections`` open in all, ``max_per_address`` from one address (an IPv6 network of
    ``ipv6_prefix`` bits counted as one; ``exempt`` addresses and networks, trusted proxies,
    are not held to it).
    """

    def __init__(
        self,
        *,
        max_connections: int,
        max_per_address: int,
        ipv6_prefix: int = 64,
        exempt: Iterable[str] = (),
        connect_timeout_s: float = 5.0,
        backlog: int = 1024,
    ) -> None:
        self.max_connections = max_connections
        self.max_per_address = max_per_address
        self.ipv6_prefix = ipv6_prefix
        self.exempt = TrustedProxies(exempt)
        self.connect_timeout_s = connect_timeout_s
        self.backlog = backlog
        self.internal_port = 0
        self.open = 0
        """Connections admitted whose two ends are not both closed yet."""
        self.per_address: Counter[str] = Counter()
        self.refused = 0
        """Connections reset at once, over a cap (for the operator's figures and the tests)."""
        self._peers: dict[str, str] = {}
        self._links: set[_Link] = set()
        self._server: asyncio.Server | None = None
        self._gone = asyncio.Event()
        """Set when the last link is released (what :meth:`close` waits for)."""

    @property
    def table_size(self) -> int:
        """Upstream connections whose client the front knows (one per open relayed connection)."""
        return len(self._peers)

    def client_peer(self, peer: str) -> str:
        """The client behind a gRPC peer: the real address of a connection the front carries, else ``peer`` itself
        (a process of this machine that reached gRPC's internal port directly)."""
        return self._peers.get(peer, peer)

    async def start(self, host: str, port: int, internal_port: int) -> int:
        """Listen on ``host:port`` (port 0: one the OS chooses) and carry each admitted connection to gRPC on
        ``internal_port`` of :data:`INTERNAL_HOST`; returns the port listened on."""
        self.internal_port = internal_port
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Door(self), host or None, port, backlog=self.backlog)
        return int(self._server.sockets[0].getsockname()[1])

    def stop_listening(self) -> None:
        """Take no new connection (the ones open go on: gRPC may still be ending their calls)."""
        if self._server is not None:
            self._server.close()

    async def close(self) -> None:
        """Stop listening and reset every connection still open; returns once they are all gone."""
        self.stop_listening()
        for link in list(self._links):
            if link.connecting is not None:
                link.connecting.cancel()
            link.abort()
        await asyncio.gather(*(link.connecting for link in list(self._links) if link.connecting is not None), return_exceptions=True)
        for link in list(self._links):
            if link.upstream.transport is None and not link.upstream.lost:  # cancelled before it began
                link.upstream.connection_lost(None)
        if self._links:
            self._gone.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._gone.wait(), CLOSE_GRACE_S)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    def _admit(self, transport: asyncio.Transport) -> _Link | None:
        address = transport.get_extra_info("peername")
        host = str(address[0]) if isinstance(address, tuple) else str(address)
        key = address_key(host, self.ipv6_prefix)
        if self.open >= self.max_connections:
            return None
        if self.per_address[key] >= self.max_per_address and host not in self.exempt:
            return None
        self.open += 1
        self.per_address[key] += 1
        link = _Link(self, key, grpc_peer_name(address))
        self._links.add(link)
        return link

    def _release(self, link: _Link) -> None:
        self._links.discard(link)
        if not self._links:
            self._gone.set()
        self.open -= 1
        self.per_address[link.key] -= 1
        if self.per_address[link.key] <= 0:
            del self.per_address[link.key]
