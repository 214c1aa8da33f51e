"""One seat's own unix socket: a gRPC server that serves that seat's stream and nothing else.

A sandboxed seat reaches the referee only through its socket, so whatever it does there
(thousands of connections, streams it never uses, health watches) stays its own:

- the server serves RefereeService alone (no health, no reflection), and only the token of
  its seat (another seat's token is refused with UNAUTHENTICATED);
- gRPC accepts at most :data:`MAX_SEAT_CONNECTIONS` connections at once and closes the
  ones beyond at once, so the arena's descriptors stay bounded per seat;
- as soon as the seat's Hello is accepted (or seating ends without it), the socket is
  closed to newcomers: the path then holds a *tarpit*, a socket of the arena's that listens
  with no room and never accepts, so a bot that keeps connecting waits in ``connect()`` at no
  cost to anyone instead of spinning on errors (the seat's stream carries on over its open
  connection); at the end of the match the path is removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from pathlib import Path
from typing import Final

import grpc.aio

from polignac_arena.referee.host import MatchHost
from polignac_arena.referee.options import server_options
from polignac_arena.referee.service import RefereeService

__all__ = ["MAX_SEAT_CONNECTIONS", "MAX_SEAT_STREAMS", "SeatListener"]

log = logging.getLogger(__name__)

MAX_SEAT_CONNECTIONS: Final = 4
"""Connections one seat may hold open to its socket at once; gRPC closes any beyond at once."""
MAX_SEAT_STREAMS: Final = 4
"""Streams at once on one connection to a seat socket (a bot needs one)."""


class SeatListener:
    """Listens on ``path`` for the one stream of ``seat`` of ``host``."""

    def __init__(self, host: MatchHost, seat: int, path: Path, write_timeout_s: float = 5.0) -> None:
        self.host = host
        self.seat = seat
        self.path = path
        self.service = RefereeService(write_timeout_s, on_attach=self._attached)
        self.service.register(host, seats=(seat,))
        self._server = grpc.aio.server(options=server_options(MAX_SEAT_STREAMS, max_connections=MAX_SEAT_CONNECTIONS))
        self.service.add_to(self._server)
        self._starting = False
        self._started = asyncio.Event()  # start() has returned (or failed)
        self._stopped = False
        self._tarpit: socket.socket | None = None
        self._server_stopped = False

    async def start(self) -> None:
        """Bind the socket (reachable by any local user: the seat's token guards it) and serve."""
        if self._stopped:
            raise RuntimeError("the referee is shutting down")
        self._starting = True
        try:
            try:
                self._server.add_insecure_port(f"unix:{self.path}")
            except RuntimeError as exc:
                raise OSError(f"cannot listen on {str(self.path)!r}: {exc}") from None
            await self._server.start()
            os.chmod(self.path, 0o666)  # sandboxed seats run as users of their own
        finally:
            self._started.set()

    def _attached(self, host: MatchHost, seat: int) -> None:
        self.close_to_newcomers()

    def close_to_newcomers(self) -> None:
        """Put a tarpit in the socket's place: the server keeps the connections it has and gets no new one."""
        if self._tarpit is not None or self._stopped:
            return
        spare = self.path.with_name(f".{self.path.name}.tarpit")
        tarpit = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with contextlib.suppress(FileNotFoundError):
                spare.unlink()
            tarpit.bind(str(spare))
            tarpit.listen(0)  # room for one connection, never accepted: the next connect() waits
            os.chmod(spare, 0o666)
            os.replace(spare, self.path)  # the one step that takes the server's socket out of reach
        except OSError as exc:
            tarpit.close()
            log.warning("seat %s: cannot put a tarpit at %s (%s): removing the socket instead", self.seat, self.path, exc)
            self.remove_socket()
            return
        self._tarpit = tarpit

    def remove_socket(self) -> None:
        """Unlink the socket file (the server's or the tarpit): nothing can connect any more."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        if self._tarpit is not None:
            self._tarpit.close()
            self._tarpit = None

    async def stop_serving(self, grace: float | None = 0) -> None:
        """Refuse the seat's token and stop the server (after ``grace`` seconds); the path keeps what it holds.

        A start under way is waited for first: gRPC must not stop a server it is starting.
        """
        self.service.unregister(self.host)
        if self._starting and not self._server_stopped:
            self._server_stopped = True
            await self._started.wait()
            await self._server.stop(grace)

    async def stop(self, grace: float | None) -> None:
        """Refuse the seat's token, end its stream (after ``grace`` seconds) and remove the socket."""
        self._stopped = True
        await self.stop_serving(grace)
        self.remove_socket()
