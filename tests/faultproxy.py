"""A fault-injecting TCP proxy on loopback, for tests and benchmarks/league_chaos.py.

Every connection to the proxy's address is carried to ``target`` by a :class:`Link`, which
can be told, at any moment and apart from the proxy's other links, to:

* **freeze**: carry no byte either way, without closing anything, as a dead path does (a
  NAT that forgot the connection, a Wi-Fi change, a cable pulled); what the two ends send
  meanwhile waits in the proxy (up to :data:`FROZEN_BUFFER_BYTES` a way, then the proxy stops
  reading), and an end that closes its side is noted but not passed on until the thaw, when
  the waiting bytes and the close go through in order;
* **reset** both ends (a TCP RST to each), or one end only, leaving the other holding a
  connection that carries nothing and never closes (the other end must find out by itself);
* add **latency** and **jitter** (each chunk waits ``latency ± jitter`` seconds, in order), and
  cap the **bandwidth** (bytes a second, each way).

The proxy's own :meth:`FaultProxy.freeze`, :meth:`FaultProxy.reset`, :meth:`FaultProxy.set_latency`
and :meth:`FaultProxy.set_bandwidth` act on every open link, and freezing, latency and
bandwidth also on the links made later (a path, not a connection, is what breaks).  The
proxy listens on 127.0.0.1 only and connects only to a loopback target.

Each link keeps when it was frozen and when each end closed its side: the time a peer took
to find a dead path (:meth:`Link.detection_s`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ipaddress
import random
import socket
import struct
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = ["FROZEN_BUFFER_BYTES", "FaultProxy", "Link", "Side", "fault_proxy"]

FROZEN_BUFFER_BYTES: Final = 1 << 20
"""Bytes a link holds per direction while it cannot deliver them; past that it stops reading (TCP pushes back)."""
_CHUNK: Final = 65536

Side = Literal["client", "server"]
"""An end of a link: the client that connected to the proxy, or the server it reaches."""


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _split(target: str) -> tuple[str, int]:
    host, _, port = target.rpartition(":")
    host = host.strip("[]")
    if not _loopback(host) or not port.isdigit():
        raise ValueError(f"the proxy carries connections to a loopback host:port only, not {target!r}")
    return host, int(port)


def _check_latency(latency_s: float, jitter_s: float) -> None:
    if latency_s < 0 or jitter_s < 0:
        raise ValueError(f"latency and jitter must be >= 0, got {latency_s!r} and {jitter_s!r}")


def _check_bandwidth(bytes_per_s: float | None) -> None:
    if bytes_per_s is not None and bytes_per_s <= 0:
        raise ValueError(f"bandwidth must be > 0 bytes a second, got {bytes_per_s!r}")


def _rst(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST rather than a FIN (SO_LINGER 0), as a reset path does."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


@dataclass
class _Way:
    """One direction of a link: bytes read from one end, waiting for their time to reach the other."""

    queue: collections.deque[tuple[float, bytes]] = field(default_factory=collections.deque)
    buffered: int = 0
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    room: asyncio.Event = field(default_factory=asyncio.Event)
    ended: Literal["", "eof", "reset"] = ""
    """How the sending end closed its side: a FIN, a reset (or error), or not yet."""
    last_delivery: float = 0.0
    next_send: float = 0.0
    """Under a bandwidth cap: when the next piece may leave."""

    def __post_init__(self) -> None:
        self.room.set()


class Link:
    """One connection through the proxy."""

    def __init__(self, proxy: FaultProxy, number: int, down: asyncio.StreamWriter, up: asyncio.StreamWriter) -> None:
        self.proxy = proxy
        self.number = number
        self.opened_at = time.monotonic()
        self.latency_s = proxy.latency_s
        self.jitter_s = proxy.jitter_s
        self.bytes_per_s = proxy.bytes_per_s
        self.frozen_at: float | None = None
        """When the link was last frozen (None: never)."""
        self.thawed_at: float | None = None
        """When it was last thawed (None: never, or frozen now)."""
        self.closed_at: dict[Side, float] = {}
        """When each end closed its side (FIN or reset), as the proxy saw it."""
        self.carried: dict[Side, int] = {"client": 0, "server": 0}
        """Bytes delivered from each end to the other."""
        self._writers: dict[Side, asyncio.StreamWriter] = {"client": down, "server": up}
        self._thawed = asyncio.Event()
        self._thawed.set()
        self._dead: set[Side] = set()  # ends reset alone: nothing reaches them, nothing from them is carried
        self._tasks: list[asyncio.Task[None]] = []
        self.done = asyncio.Event()
        """Set when both ends are closed and the link carries nothing more."""

    @property
    def frozen(self) -> bool:
        return not self._thawed.is_set()

    def freeze(self) -> None:
        """Stop carrying bytes both ways, closing nothing."""
        if not self.frozen:
            self.frozen_at = time.monotonic()
            self.thawed_at = None
            self._thawed.clear()

    def thaw(self) -> None:
        """Carry bytes again: what waited goes through first, in order, then any close that came meanwhile."""
        if self.frozen:
            self.thawed_at = time.monotonic()
        self._thawed.set()

    def reset(self, side: Side | None = None) -> None:
        """A TCP RST to both ends, or to ``side`` alone: the other end then holds a connection that carries nothing."""
        sides: tuple[Side, ...] = ("client", "server") if side is None else (side,)
        for end in sides:
            self._dead.add(end)
            self.closed_at.setdefault(end, time.monotonic())
            _rst(self._writers[end])
        if side is None:
            self._finish()
        else:
            self.freeze()  # the survivor's bytes go nowhere, and its own close is still noted

    def set_latency(self, latency_s: float, jitter_s: float = 0.0) -> None:
        """Delay each chunk of this link by ``latency_s ± jitter_s``, each way."""
        _check_latency(latency_s, jitter_s)
        self.latency_s, self.jitter_s = latency_s, jitter_s

    def set_bandwidth(self, bytes_per_s: float | None) -> None:
        """Cap each way of this link at ``bytes_per_s``; None lifts the cap."""
        _check_bandwidth(bytes_per_s)
        self.bytes_per_s = bytes_per_s

    def detection_s(self, side: Side) -> float | None:
        """How long after the link froze ``side`` closed its side, having found it dead (None: it did not close during
        the last freeze)."""
        closed = self.closed_at.get(side)
        if closed is None or self.frozen_at is None or closed < self.frozen_at:
            return None
        if self.thawed_at is not None and closed > self.thawed_at:
            return None
        return closed - self.frozen_at

    def start(self, down_reader: asyncio.StreamReader, up_reader: asyncio.StreamReader) -> None:
        upward, downward = _Way(), _Way()
        self._tasks += [
            asyncio.ensure_future(self._read("client", down_reader, upward)),
            asyncio.ensure_future(self._deliver("client", "server", upward)),
            asyncio.ensure_future(self._read("server", up_reader, downward)),
            asyncio.ensure_future(self._deliver("server", "client", downward)),
        ]

    async def _read(self, source: Side, reader: asyncio.StreamReader, way: _Way) -> None:
        try:
            while True:
                if not way.room.is_set():
                    await way.room.wait()
                data = await reader.read(_CHUNK)
                if not data:
                    way.ended = "eof"
                    break
                if source in self._dead:
                    continue
                way.queue.append((time.monotonic(), data))
                way.buffered += len(data)
                if way.buffered >= FROZEN_BUFFER_BYTES:
                    way.room.clear()
                way.arrived.set()
        except (ConnectionError, OSError):
            way.ended = "reset"
        self.closed_at.setdefault(source, time.monotonic())
        way.arrived.set()
        if self._dead and source not in self._dead:
            # The other end was reset alone: now that this one has closed too, nothing is left to carry.
            asyncio.get_running_loop().call_soon(self._finish)

    async def _deliver(self, source: Side, destination: Side, way: _Way) -> None:
        writer = self._writers[destination]
        rng = self.proxy.rng
        try:
            while True:
                while not way.queue and not way.ended:
                    way.arrived.clear()
                    await way.arrived.wait()
                if not self._thawed.is_set():
                    await self._thawed.wait()
                if not way.queue:
                    break  # the source closed and everything it sent went through
                arrived, data = way.queue[0]
                delay = self.latency_s + (rng.uniform(-self.jitter_s, self.jitter_s) if self.jitter_s else 0.0)
                due = max(way.last_delivery, arrived + max(0.0, delay))
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not self._thawed.is_set():
                    continue  # frozen while it waited: it waits for the thaw like the rest
                way.queue.popleft()
                way.buffered -= len(data)
                if way.buffered < FROZEN_BUFFER_BYTES:
                    way.room.set()
                way.last_delivery = due
                if destination in self._dead:
                    continue
                await self._write(writer, data, way)
                self.carried[source] += len(data)
        except (ConnectionError, OSError):
            self.closed_at.setdefault(destination, time.monotonic())
            _rst(self._writers[source])
            return
        if destination in self._dead:
            return
        if way.ended == "reset":
            _rst(writer)
        else:
            with contextlib.suppress(OSError, RuntimeError):
                writer.write_eof()

    async def _write(self, writer: asyncio.StreamWriter, data: bytes, way: _Way) -> None:
        """Write ``data``; under a bandwidth cap, in pieces of a twentieth of a second's worth, each in its turn."""
        rate = self.bytes_per_s
        if not rate:
            writer.write(data)
            await writer.drain()
            return
        piece = max(1, int(rate / 20))
        for start in range(0, len(data), piece):
            chunk = data[start : start + piece]
            wait = way.next_send - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(chunk)
            await writer.drain()
            way.next_send = max(time.monotonic(), way.next_send) + len(chunk) / rate

    async def run(self) -> None:
        """Carry bytes until both ways are over."""
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._finish()

    def _finish(self) -> None:
        for task in self._tasks:
            task.cancel()
        for writer in self._writers.values():
            writer.transport.abort()
        self.done.set()


class FaultProxy:
    """Listens on 127.0.0.1 (a port the OS chooses) and carries each connection to ``target`` through a :class:`Link`.

    ``seed`` seeds the jitter; ``local``, a loopback address, is where the carried connections come from (the target
    sees its clients there: per-address limits count them apart from 127.0.0.1's).
    """

    def __init__(self, target: str, *, seed: int = 0, local: str | None = None) -> None:
        self._target = _split(target)
        if local is not None and not _loopback(local):
            raise ValueError(f"the proxy connects from a loopback address only, not {local!r}")
        self.local = local
        self.rng = random.Random(seed)
        self.latency_s = 0.0
        self.jitter_s = 0.0
        self.bytes_per_s: float | None = None
        self._path_frozen = False
        self.links: list[Link] = []
        """Every link made so far, open or closed, oldest first."""
        self.address = ""
        self._server: asyncio.Server | None = None
        self._runs: set[asyncio.Task[None]] = set()
        self._new_link = asyncio.Event()

    @property
    def open_links(self) -> list[Link]:
        return [link for link in self.links if not link.done.is_set()]

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.address = f"127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self.address

    def retarget(self, target: str) -> None:
        """Carry new connections to ``target`` (a restarted server on another port); open links stay as they are."""
        self._target = _split(target)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._target, local_addr=(self.local, 0) if self.local else None)
        except OSError:
            _rst(writer)
            return
        link = Link(self, len(self.links), writer, up_writer)
        if self._path_frozen:
            link.freeze()
        self.links.append(link)
        self._new_link.set()
        link.start(reader, up_reader)
        run = asyncio.ensure_future(link.run())
        self._runs.add(run)
        run.add_done_callback(self._runs.discard)
        with contextlib.suppress(asyncio.CancelledError):  # the loop is closing: the link is reset by stop(), or dies with it
            await asyncio.shield(run)

    async def next_link(self, after: int) -> Link:
        """The first link made once ``after`` links exist (waits for it)."""
        while len(self.links) <= after:
            self._new_link.clear()
            await self._new_link.wait()
        return self.links[after]

    # -- faults on the whole path -----------------------------------------------------------

    def freeze(self) -> None:
        """Freeze every open link, and every link made until :meth:`thaw`."""
        self._path_frozen = True
        for link in self.open_links:
            link.freeze()

    def thaw(self) -> None:
        self._path_frozen = False
        for link in self.open_links:
            link.thaw()

    @property
    def frozen(self) -> bool:
        return self._path_frozen

    def reset(self, side: Side | None = None) -> int:
        """Reset every open link (see :meth:`Link.reset`); how many."""
        links = self.open_links
        for link in links:
            link.reset(side)
        return len(links)

    def set_latency(self, latency_s: float, jitter_s: float = 0.0) -> None:
        """Delay each chunk by ``latency_s ± jitter_s`` on every open link and on later ones."""
        _check_latency(latency_s, jitter_s)
        self.latency_s, self.jitter_s = latency_s, jitter_s
        for link in self.open_links:
            link.set_latency(latency_s, jitter_s)

    def set_bandwidth(self, bytes_per_s: float | None) -> None:
        """Cap each way of every open link (and of later ones) at ``bytes_per_s``; None lifts the cap."""
        _check_bandwidth(bytes_per_s)
        self.bytes_per_s = bytes_per_s
        for link in self.open_links:
            link.set_bandwidth(bytes_per_s)

    async def stop(self) -> None:
        """Stop listening and reset every link."""
        if self._server is not None:
            self._server.close()
        for link in self.open_links:
            link.reset()
        if self._runs:
            await asyncio.gather(*self._runs, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()


@contextlib.asynccontextmanager
async def fault_proxy(target: str, *, seed: int = 0, local: str | None = None) -> AsyncIterator[FaultProxy]:
    """A started :class:`FaultProxy` to ``target`` (from ``local``), stopped (every link reset) on the way out."""
    proxy = FaultProxy(target, seed=seed, local=local)
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.stop()
