"""A loopback TCP proxy that can be cut: every connection through it is reset at once, as a broken network does.

The conformance report cuts a bot's match stream with it to make the bot reattach; the league's
tests use it the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Final

__all__ = ["CuttableProxy", "cuttable_proxy"]

_CHUNK: Final = 65536


class CuttableProxy:
    """Forwards each connection to ``target`` (``host:port``) until :meth:`cut`; new connections work after a cut."""

    def __init__(self, target: str) -> None:
        host, port = target.rsplit(":", 1)
        self._target = (host, int(port))
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self.address = ""
        self.connections = 0
        self.cuts = 0

    async def start(self) -> str:
        """Listen on a loopback port the system picks; returns ``127.0.0.1:PORT``."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.address = f"127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self.address

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._target)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer), return_exceptions=True)
        self._writers -= {writer, up_writer}

    def cut(self) -> None:
        """Reset every connection open now, both sides."""
        self.cuts += 1
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def stop(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
    finally:
        writer.transport.abort()


@contextlib.asynccontextmanager
async def cuttable_proxy(target: str) -> AsyncIterator[CuttableProxy]:
    """A started :class:`CuttableProxy` to ``target``, stopped on the way out."""
    proxy = CuttableProxy(target)
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.stop()
