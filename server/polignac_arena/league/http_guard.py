"""The league's web listener: uvicorn's HTTP protocol behind an accept loop that caps connections and times them out.

uvicorn times out a connection only between requests (``timeout_keep_alive``): one whose TLS
handshake or request headers never complete stays open for good, and its TLS buffers (a
quarter of a megabyte each) with it.  So the league accepts connections itself
(:class:`ConnectionGuard`):

* a connection past ``max_connections_per_address`` from its address (an IPv6 network counted
  as one: :func:`polignac_arena.peers.address_key`; trusted proxies exempt), or past the
  address's ``new_connections_per_s`` (a token bucket as deep as the per-address cap), is
  closed at once, before any TLS work (a handshake costs the server CPU);
* past ``max_connections`` in all, a connection waiting for its client (its handshake, its next
  request's headers) is dropped to make room: the longest waiting of the address that holds
  the most connections.  A flood from many addresses cannot hold more than the cap (and the
  few dropped connections still on their way out: :data:`DROPPING_MAX`), nor push out the
  client of an address that holds fewer (a quick visitor, a page that polls);
* the TLS handshake must end within ``handshake_timeout_s`` (asyncio's own timeout);
* each request's headers must be in within ``header_timeout_s`` of the connection's start or
  of the previous response's end: the ASGI wrapper (:meth:`ConnectionGuard.asgi`) tells the
  guard when a request reached the app, which is when its headers were complete;
* between requests uvicorn's keep-alive timeout applies, and h11 refuses headers larger than
  ``max_header_kb``; an upload's body has its own timeout (the authors' API).

:class:`GuardedServer` is the uvicorn server that accepts through the guard and leaves signals
to the league.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
import struct
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Final

import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from polignac_arena.league.limits import HttpLimits
from polignac_arena.peers import TrustedProxies, address_key

__all__ = ["ConnectionGuard", "GuardedServer"]

log = logging.getLogger(__name__)

DROPPING_MAX: Final = 16
"""Connections dropped to make room that may be on their way out at once: past it a new one is refused instead, so that
the connections held (the cap, and these) bound the memory even when the loop is slow to tear dropped ones down."""
IDLE_AFTER: Final = 64
"""Connections closed since the last call of ``on_idle`` before the next (it collects garbage: not after every visitor)."""
CHURN_AFTER: Final = 64
CHURN_EVERY_S: Final = 0.1
"""Under a flood the last connection never closes: ``on_idle`` is then called after this many closed, at most ten times a
second (a TLS connection that failed or was dropped in its handshake is kept by a cycle with its error: its buffers wait
for the collector, which costs what came since the server started only)."""
_RESET: Final = struct.pack("ii", 1, 0)
"""SO_LINGER on, zero seconds: a refused connection is reset, and leaves nothing waiting in TIME_WAIT."""


class _Rates:
    """New connections per address: a token bucket each, ``burst`` deep and refilled at ``per_s``; ``keep`` addresses at most."""

    def __init__(self, per_s: float, burst: int, keep: int = 10_000) -> None:
        self.per_s = per_s
        self.burst = float(burst)
        self.keep = keep
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def allow(self, key: str) -> bool:
        now = time.monotonic()
        tokens, last = self._buckets.pop(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.per_s)
        allowed = tokens >= 1
        self._buckets[key] = (tokens - 1 if allowed else tokens, now)  # re-inserted: the order is of last use
        while len(self._buckets) > self.keep:
            self._buckets.popitem(last=False)
        return allowed


class _Slot:
    """One admitted connection's place in the counts; released once, whichever way the connection ends."""

    def __init__(self, guard: ConnectionGuard, key: str) -> None:
        self.guard = guard
        self.key = key
        self.held = True
        self.dropped = False

    def waiting(self, drop: Callable[[], object]) -> None:
        """The connection waits for its client (a handshake, a request's headers): ``drop`` ends it if room is needed."""
        if self.held and not self.dropped:
            waiting = self.guard._waiting.setdefault(self.key, OrderedDict())
            waiting[self] = drop
            waiting.move_to_end(self)

    def busy(self) -> None:
        waiting = self.guard._waiting.get(self.key)
        if waiting is not None:
            waiting.pop(self, None)
            if not waiting:
                del self.guard._waiting[self.key]

    def dropping(self) -> None:
        """Dropped to make room: still counted until it is gone (its buffers are), but room for another already."""
        self.busy()
        if self.held and not self.dropped:
            self.dropped = True
            self.guard._dropping += 1

    def release(self) -> None:
        self.busy()
        if self.held:
            self.held = False
            if self.dropped:
                self.guard._dropping -= 1
            self.guard._release(self.key)


class _Detachable(asyncio.Transport):
    """The connection's transport as uvicorn's protocol sees it, let go of once the connection is lost.

    uvicorn's protocol and its request cycle hold each other, so they wait for the cycle
    collector once the connection is gone; through this they do not hold the TLS transport,
    whose buffers (a quarter of a megabyte) go back as soon as the connection is lost.
    """

    _KEPT = ("peername", "sockname", "sslcontext")

    def __init__(self, target: asyncio.Transport) -> None:
        super().__init__()
        self._target: asyncio.Transport | None = target
        self._kept = {name: target.get_extra_info(name) for name in self._KEPT}

    def detach(self) -> None:
        self._target = None

    def get_extra_info(self, name: str, default: object = None) -> object:
        if self._target is not None:
            return self._target.get_extra_info(name, default)
        return self._kept.get(name, default)

    def is_closing(self) -> bool:
        return self._target is None or self._target.is_closing()

    def close(self) -> None:
        if self._target is not None:
            self._target.close()

    def abort(self) -> None:
        if self._target is not None:
            self._target.abort()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._target is not None:
            self._target.write(data)

    def writelines(self, list_of_data: Iterable[bytes | bytearray | memoryview]) -> None:
        if self._target is not None:
            self._target.writelines(list_of_data)

    def write_eof(self) -> None:
        if self._target is not None:
            self._target.write_eof()

    def can_write_eof(self) -> bool:
        return self._target is not None and self._target.can_write_eof()

    def pause_reading(self) -> None:
        if self._target is not None:
            self._target.pause_reading()

    def resume_reading(self) -> None:
        if self._target is not None:
            self._target.resume_reading()

    def is_reading(self) -> bool:
        return self._target is not None and self._target.is_reading()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        if self._target is not None:
            self._target.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        assert self._target is not None, "the connection is gone"
        return self._target.get_protocol()

    def get_write_buffer_size(self) -> int:
        return 0 if self._target is None else self._target.get_write_buffer_size()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        if self._target is not None:
            self._target.set_write_buffer_limits(high, low)


class _GuardedProtocol(asyncio.Protocol):
    """uvicorn's protocol for one connection, with the header timer of the guard around it."""

    def __init__(self, guard: ConnectionGuard, inner: asyncio.Protocol, slot: _Slot) -> None:
        self.guard = guard
        self.inner = inner
        self.slot = slot
        self.transport: asyncio.Transport | None = None
        self.shown: _Detachable | None = None
        self.client: tuple[str, int] | None = None
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)  # a stream server's
        self.transport = transport
        peer = transport.get_extra_info("peername")
        if isinstance(peer, tuple) and len(peer) >= 2:
            self.client = (str(peer[0]), int(peer[1]))
            self.guard._connections[self.client] = self
        self.waiting()
        self.shown = _Detachable(transport)
        self.inner.connection_made(self.shown)
        if self.slot.dropped:  # dropped to make room as its handshake ended
            transport.abort()

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self.busy()
        if self.client is not None and self.guard._connections.get(self.client) is self:
            del self.guard._connections[self.client]
        self.slot.release()
        self.inner.connection_lost(exc)
        if self.shown is not None:
            self.shown.detach()
        self.transport = None

    def waiting(self) -> None:
        """Waiting for a request's headers: they must be in within the header timeout."""
        self.busy()
        self.timer = asyncio.get_running_loop().call_later(self.guard.limits.header_timeout_s, self._too_slow)
        if self.transport is not None:
            self.slot.waiting(self.transport.abort)

    def busy(self) -> None:
        """A request is with the app (or the connection is over): no header timer."""
        self.slot.busy()
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _too_slow(self) -> None:
        self.timer = None
        self.guard.timed_out += 1
        if self.transport is not None:
            self.transport.abort()


class ConnectionGuard:
    """Accepts the web listener's connections within the limits, and hands each to uvicorn's protocol (see the module notes)."""

    def __init__(self, limits: HttpLimits, *, ipv6_prefix: int = 64, ssl_context: ssl.SSLContext | None = None) -> None:
        self.limits = limits
        self.ipv6_prefix = ipv6_prefix
        self.ssl_context = ssl_context
        self.proxies = TrustedProxies(limits.trusted_proxies)
        self.open = 0
        """Connections admitted and not yet closed (TLS handshakes included)."""
        self.per_address: Counter[str] = Counter()
        self.refused = 0
        """Connections closed at once, over a cap (for the operator's figures and the tests)."""
        self.timed_out = 0
        """Connections closed for headers that did not come in time."""
        self.evicted = 0
        """Waiting connections dropped to make room for new ones."""
        self._rates = _Rates(limits.new_connections_per_s, limits.max_connections_per_address)
        self._connections: dict[tuple[str, int], _GuardedProtocol] = {}
        self._dropping = 0
        """Connections dropped to make room and not gone yet: counted in ``open`` (their memory is), not against the cap."""
        self._waiting: dict[str, OrderedDict[_Slot, Callable[[], object]]] = {}
        """The connections waiting for their clients, by address, longest waiting first, with how to drop each."""
        self._starting: set[asyncio.Task[None]] = set()
        self._accepting: asyncio.Task[None] | None = None
        self._on_idle: Callable[[], object] | None = None
        self._closed_since_idle = 0
        self._last_idle = 0.0

    # -- the accept loop ---------------------------------------------------------------------------

    def start(self, sock: socket.socket, protocol: Callable[[], asyncio.Protocol], on_idle: Callable[[], object] | None = None) -> None:
        """Accept on the listening ``sock``, each admitted connection served by a new ``protocol()``.

        ``on_idle`` is called when the last open connection closes, after :data:`IDLE_AFTER` at least have
        closed since its last call (the league gives memory back then).
        """
        sock.setblocking(False)
        self._on_idle = on_idle
        self._accepting = asyncio.ensure_future(self._accept(sock, protocol))

    async def close(self) -> None:
        """Stop accepting; drop the connections still in their TLS handshake (uvicorn closes the others)."""
        tasks = [task for task in (self._accepting, *self._starting) if task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _accept(self, sock: socket.socket, protocol: Callable[[], asyncio.Protocol]) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                conn, peer = await loop.sock_accept(sock)
            except OSError as exc:  # out of descriptors, or the peer gave up while queued: go on accepting
                log.warning("web: accepting a connection failed: %s", exc)
                await asyncio.sleep(0.05)
                continue
            host = str(peer[0]) if isinstance(peer, tuple) else str(peer)
            key = address_key(host, self.ipv6_prefix)
            if not self._admit(key, host):
                self.refused += 1
                with contextlib.suppress(OSError):
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET)
                conn.close()
                continue
            task = asyncio.ensure_future(self._serve(conn, _Slot(self, key), protocol))
            self._starting.add(task)
            task.add_done_callback(self._starting.discard)

    def _admit(self, key: str, host: str) -> bool:
        if host not in self.proxies and (self.per_address[key] >= self.limits.max_connections_per_address or not self._rates.allow(key)):
            return False
        if self.open - self._dropping >= self.limits.max_connections:
            if not self._waiting or self._dropping >= DROPPING_MAX:
                return False
            hog = max(self._waiting, key=lambda address: self.per_address[address])
            if self.per_address[hog] <= self.per_address[key]:
                return False  # room would be made at the expense of an address holding no more than this one
            slot, drop = next(iter(self._waiting[hog].items()))
            slot.dropping()
            drop()
            self.evicted += 1
        self.open += 1
        self.per_address[key] += 1
        return True

    def _release(self, key: str) -> None:
        self.open -= 1
        self.per_address[key] -= 1
        if self.per_address[key] <= 0:
            del self.per_address[key]
        self._closed_since_idle += 1
        if self._on_idle is None or self._closed_since_idle < IDLE_AFTER:
            return
        if self.open == 0 or (self._closed_since_idle >= CHURN_AFTER and time.monotonic() - self._last_idle >= CHURN_EVERY_S):
            self._closed_since_idle = 0
            self._last_idle = time.monotonic()
            self._on_idle()

    async def _serve(self, conn: socket.socket, slot: _Slot, protocol: Callable[[], asyncio.Protocol]) -> None:
        loop = asyncio.get_running_loop()
        tls_timeout = None if self.ssl_context is None else self.limits.handshake_timeout_s  # refused without TLS
        task = asyncio.current_task()
        if task is not None:
            slot.waiting(task.cancel)  # in its handshake
        try:
            await loop.connect_accepted_socket(
                lambda: _GuardedProtocol(self, protocol(), slot),
                conn,
                ssl=self.ssl_context,
                ssl_handshake_timeout=tls_timeout,
                ssl_shutdown_timeout=tls_timeout,
            )
        except (OSError, ssl.SSLError, TimeoutError, EOFError) as exc:  # a handshake that failed or took too long
            log.debug("web: a connection ended in its handshake: %r", exc)
            slot.release()
            conn.close()
        except asyncio.CancelledError:
            slot.release()
            conn.close()
            raise

    # -- the requests ------------------------------------------------------------------------------

    def asgi(self, app: ASGIApp) -> ASGIApp:
        """``app`` behind the header timer: a request that reached it had its headers complete."""

        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            client = scope.get("client") if scope.get("type") == "http" else None
            connection = self._connections.get(tuple(client)) if client else None
            if connection is None:
                await app(scope, receive, send)
                return
            connection.busy()
            try:
                await app(scope, receive, send)
            finally:
                if connection.transport is not None and not connection.transport.is_closing():
                    connection.waiting()

        return guarded


class GuardedServer:
    """uvicorn serving ``app`` on the listening ``sock`` through a :class:`ConnectionGuard`; signals are left to the league."""

    def __init__(self, app: ASGIApp, sock: socket.socket, guard: ConnectionGuard, *, on_idle: Callable[[], object] | None = None) -> None:
        limits = guard.limits
        config = uvicorn.Config(
            guard.asgi(app),
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=5,
            http="h11",
            timeout_keep_alive=max(1, round(limits.keepalive_s)),
            h11_max_incomplete_event_size=limits.max_header_kb * 1024,
            proxy_headers=False,  # X-Forwarded-For is read only from trusted proxies, by the league's own middleware
        )

        class Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield

            async def startup(self, sockets: list[socket.socket] | None = None) -> None:
                await super().startup(sockets=[])  # the app's lifespan; no listener of uvicorn's own
                if self.started:
                    guard.start(sock, self._protocol, on_idle)

            def _protocol(self) -> asyncio.Protocol:
                made: asyncio.Protocol = self.config.http_protocol_class(  # type: ignore[call-arg]  # uvicorn types it type[asyncio.Protocol], whose constructor takes no arguments
                    config=self.config, server_state=self.server_state, app_state=self.lifespan.state
                )
                return made

            async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
                await guard.close()
                await super().shutdown(sockets=[])

        self.server = Server(config)
        self.guard = guard

    async def serve(self) -> None:
        await self.server.serve()

    def stop(self) -> None:
        self.server.should_exit = True
