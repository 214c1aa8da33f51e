"""The keepalive rule docs/protocol.md gives clients, as the referee's address enforces it on the wire.

gRPC clients rate-limit their own pings, so these tests speak raw HTTP/2 (a few frames by
hand): a client may ping at most once every ``MIN_PING_INTERVAL_MS`` while nothing else
flows, and after more than ``MAX_PING_STRIKES`` pings too soon it gets ``GOAWAY``
``ENHANCE_YOUR_CALM`` ``too_many_pings``.
"""

from __future__ import annotations

import asyncio
import struct
from dataclasses import dataclass
from typing import Any

from polignac_arena.referee import RefereeServer
from polignac_arena.referee.options import MAX_PING_STRIKES, MIN_PING_INTERVAL_MS
from tests.referee.helpers import run

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS, PING, GOAWAY = 0x4, 0x6, 0x7
ACK = 0x1
ENHANCE_YOUR_CALM = 0xB


@dataclass(frozen=True)
class Frame:
    kind: int
    flags: int
    payload: bytes


def frame(kind: int, flags: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + struct.pack(">BBI", kind, flags, 0) + payload


class RawHttp2:
    """A client connection that sends only what a test tells it, answers the server's SETTINGS and pings, and keeps every
    other frame it reads."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.acks = 0
        self.goaway: asyncio.Future[Frame] = asyncio.get_running_loop().create_future()
        self._acked = asyncio.Event()
        self._reading = asyncio.ensure_future(self._read())

    @classmethod
    async def open(cls, address: str) -> RawHttp2:
        host, port = address.rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(PREFACE + frame(SETTINGS, 0))
        await writer.drain()
        return cls(reader, writer)

    async def _read(self) -> None:
        try:
            while True:
                head = await self.reader.readexactly(9)
                length = int.from_bytes(head[:3], "big")
                got = Frame(head[3], head[4], await self.reader.readexactly(length))
                if got.kind == SETTINGS and not got.flags & ACK:
                    self.writer.write(frame(SETTINGS, ACK))
                elif got.kind == PING and not got.flags & ACK:
                    self.writer.write(frame(PING, ACK, got.payload))  # the server's keepalive: answered, as a client must
                elif got.kind == PING:
                    self.acks += 1
                    self._acked.set()
                elif got.kind == GOAWAY and not self.goaway.done():
                    self.goaway.set_result(got)
        except (asyncio.IncompleteReadError, ConnectionError):
            if not self.goaway.done():
                self.goaway.set_exception(ConnectionError("the server closed the connection without a GOAWAY"))

    async def ping(self) -> None:
        """Send a ping and wait for its answer (or for a GOAWAY)."""
        self._acked.clear()
        self.writer.write(frame(PING, 0, b"12345678"))
        await self.writer.drain()
        acked = asyncio.ensure_future(self._acked.wait())
        try:
            either: list[asyncio.Future[Any]] = [acked, self.goaway]
            await asyncio.wait(either, timeout=10, return_when=asyncio.FIRST_COMPLETED)
        finally:
            acked.cancel()

    async def close(self) -> None:
        self._reading.cancel()
        await asyncio.gather(self._reading, return_exceptions=True)
        self.writer.close()
        if not self.goaway.done():
            self.goaway.cancel()


def test_pings_faster_than_the_referee_permits_get_goaway_too_many_pings() -> None:
    async def scenario() -> None:
        server = RefereeServer("127.0.0.1:0")
        await server.start()
        client = await RawHttp2.open(server.address)
        try:
            for _ in range(MAX_PING_STRIKES + 2):
                await client.ping()  # each at once after the last one's answer: far under the interval
                if client.goaway.done():
                    break
            goaway = await asyncio.wait_for(client.goaway, 10)
            _, code = struct.unpack(">II", goaway.payload[:8])
            assert code == ENHANCE_YOUR_CALM and goaway.payload[8:] == b"too_many_pings", goaway
        finally:
            await client.close()
            await server.stop(grace=0)

    run(scenario())


def test_pings_at_the_permitted_rate_keep_the_connection() -> None:
    async def scenario() -> None:
        server = RefereeServer("127.0.0.1:0")
        await server.start()
        client = await RawHttp2.open(server.address)
        try:
            for _ in range(MAX_PING_STRIKES + 3):
                await client.ping()
                # The pace itself is what is tested: a little more than the permitted interval between pings.
                await asyncio.sleep(MIN_PING_INTERVAL_MS / 1000 * 1.3)
            assert client.acks == MAX_PING_STRIKES + 3
            assert not client.goaway.done(), "no GOAWAY for a client that pings at the permitted rate"
        finally:
            await client.close()
            await server.stop(grace=0)

    run(scenario())
