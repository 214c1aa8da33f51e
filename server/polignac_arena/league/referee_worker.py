"""A referee process of the league: its own gRPC server where remote bots play the matches the league hands it.

Started by :class:`~polignac_arena.league.referee_pool.RefereePool` as
``python -m polignac_arena.league.referee_worker FD``: ``FD`` is its end of a socket pair to the
league, carrying pickled :mod:`~polignac_arena.league.referee_orders` messages.  The first one
is its :class:`~polignac_arena.league.referee_orders.WorkerSettings`; it listens (TLS with the
league's certificate, behind the same connection front and limits as the league's own gRPC
address), says :class:`Ready`, then plays each :class:`PlayOrder` with
:func:`~polignac_arena.league.play.play_league_match`, asking the league to hand remote seats
out through its lobby (on a Ray node, its uploaded seats come from the node's cache:
:mod:`~polignac_arena.league.shipped_seats`).  The pipe closing (the league stopped, or died) ends every match it
referees as aborted and the process with them: it never outlives its league.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import sys
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

import grpc

from polignac_arena import memory
from polignac_arena.league import referee_orders as orders
from polignac_arena.league.config import ListenAddress
from polignac_arena.league.grpc_front import INTERNAL_HOST, GrpcFront, direct_peer
from polignac_arena.league.grpc_guard import CallsPerAddress, grpc_options
from polignac_arena.league.play import RemoteDeclined, play_league_match
from polignac_arena.league.shipped_seats import shipped_seats
from polignac_arena.log_format import LogFormat, configure_logging
from polignac_arena.referee import RefereeServer
from polignac_arena.referee.server import raise_open_files_limit
from polignac_arena.seats import launcher_for

__all__ = ["RefereeWorker", "main", "serve"]

log = logging.getLogger(__name__)


class RefereeWorker:
    """The process's state: its server, the matches it referees, the answers it waits for from the league."""

    def __init__(self, conn: Connection, settings: orders.WorkerSettings, fetch: Callable[[object], bytes] | None = None) -> None:
        self.conn = conn
        self.settings = settings
        self.fetch = fetch
        """How a shipped version's archive is fetched here (a Ray node's object store); None: orders ship nothing."""
        self.launcher = launcher_for(settings.seat_kind)
        self.server: RefereeServer | None = None
        self.front: GrpcFront | None = None
        self.matches: dict[str, asyncio.Task[None]] = {}
        self.answers: dict[tuple[str, int], asyncio.Future[bool]] = {}
        self.closed = asyncio.Event()

    def send(self, message: object) -> None:
        """One message to the league; a closed pipe (the league is gone) ends the process."""
        if self.closed.is_set():
            return
        try:
            self.conn.send(message)
        except (OSError, ValueError):
            self.closed.set()

    async def listen(self) -> str:
        """Start the gRPC server (and the front before it); the address remote bots reach."""
        settings, limits = self.settings, self.settings.limits
        credentials = None
        if settings.tls_cert is not None and settings.tls_key is not None:
            credentials = grpc.ssl_server_credentials([(settings.tls_key.read_bytes(), settings.tls_cert.read_bytes())])
        if limits.max_connections_per_address > 0:
            self.front = GrpcFront(
                max_connections=limits.max_connections,
                max_per_address=limits.max_connections_per_address,
                ipv6_prefix=settings.ipv6_prefix,
                exempt=settings.trusted_proxies,
                connect_timeout_s=limits.handshake_timeout_s,
            )
        public = str(ListenAddress(settings.host, settings.port))
        client_peer = self.front.client_peer if self.front is not None else direct_peer
        self.server = RefereeServer(
            public if self.front is None else f"{INTERNAL_HOST}:0",
            credentials=credentials,
            max_streams=limits.max_streams,
            options=grpc_options(limits, fronted=self.front is not None),
            interceptors=[CallsPerAddress(limits.max_calls_per_address, settings.ipv6_prefix, client_peer)],
        )
        address = await self.server.start()
        port = int(address.rpartition(":")[2])
        if self.front is not None:
            port = await self.front.start(settings.host, settings.port, port)
        return str(ListenAddress(settings.advertise or settings.host, port))

    def readable(self) -> None:
        """Read what the league sent (called by the loop when the pipe has something)."""
        try:
            while not self.closed.is_set() and self.conn.poll():
                self.handle(self.conn.recv())
        except (EOFError, OSError):
            self.closed.set()

    def handle(self, message: object) -> None:
        if isinstance(message, orders.Ping):
            self.send(orders.Pong(message.number))
        elif isinstance(message, orders.PlayOrder):
            if len(self.matches) >= self.settings.max_matches or message.match_id in self.matches:
                detail = f"this referee process already referees {len(self.matches)} matches (its limit: {self.settings.max_matches})"
                self.send(orders.NotPlayed(message.match_id, orders.NotPlayedKind.FULL, detail))
                return
            self.matches[message.match_id] = asyncio.ensure_future(self.play(message))
        elif isinstance(message, orders.SeatAnswer):
            answer = self.answers.get((message.match_id, message.seat))
            if answer is not None and not answer.done():
                answer.set_result(message.taken)
        elif isinstance(message, orders.Cancel):
            task = self.matches.get(message.match_id)
            if task is not None:
                task.cancel()
        else:
            log.warning("referee process: a message it does not know from the league: %r", type(message).__name__)

    async def offer(self, seat: int, match_id: str, seat_token: str) -> bool:
        """Ask the league to hand the remote bot of ``seat`` its seat; whether it took it."""
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.answers[(match_id, seat)] = answer
        try:
            self.send(orders.Offer(match_id, seat, seat_token))
            return await answer
        finally:
            self.answers.pop((match_id, seat), None)

    async def play(self, order: orders.PlayOrder) -> None:
        match_id = order.match_id
        assert self.server is not None
        try:
            launcher = self.launcher
            if order.shipped:
                if self.fetch is None:
                    raise RuntimeError("this referee process was sent shipped versions but fetches none")
                launcher = await shipped_seats(order, launcher, self.fetch, self.settings.node or "of the league")
            result = await play_league_match(
                self.server,
                order,
                launcher=launcher,
                remote=self.offer,
                withdraw=lambda seat, mid, reason: self.send(orders.Withdraw(mid, seat, reason)),
                on_seated=lambda: self.send(orders.Seated(match_id)),
                on_hosted=lambda: self.send(orders.Hosted(match_id)),
            )
        except RemoteDeclined as exc:
            self.send(orders.NotPlayed(match_id, orders.NotPlayedKind.DECLINED, exc.reason, tuple(sorted(exc.labels.items()))))
        except asyncio.CancelledError:
            self.send(orders.NotPlayed(match_id, orders.NotPlayedKind.CANCELLED, "the league stopped this match"))
        except Exception as exc:  # the arena's own failure: the league voids the match and goes on
            log.exception("referee process: match %s could not be played", match_id)
            self.send(orders.NotPlayed(match_id, orders.NotPlayedKind.ERROR, str(exc) or type(exc).__name__))
        else:
            self.send(orders.Played(result))
        finally:
            self.matches.pop(match_id, None)

    async def run(self) -> None:
        """Serve until the league closes the pipe; then every match ends aborted and the server stops."""
        raise_open_files_limit()
        loop = asyncio.get_running_loop()
        try:
            self.send(orders.Ready(await self.listen(), self.settings.node))
            # A full collection of what the process holds once it listens (its modules, gRPC's) takes tens of
            # milliseconds, paid by whichever seat waits for its request then: it is left out of later ones.
            memory.settle()
            loop.add_reader(self.conn.fileno(), self.readable)
            await self.closed.wait()
        finally:
            with contextlib.suppress(ValueError, OSError):
                loop.remove_reader(self.conn.fileno())
            tasks = list(self.matches.values())
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self.front is not None:
                self.front.stop_listening()
            if self.server is not None:
                await self.server.stop(grace=0.5)
            if self.front is not None:
                await self.front.close()


def serve(conn: Connection, settings: orders.WorkerSettings, fetch: Callable[[object], bytes] | None = None) -> None:
    """Referee for the league at the other end of ``conn`` until it closes (a process here, or a task on a Ray node, whose
    ``fetch`` brings the archives of the versions the league ships)."""
    asyncio.run(RefereeWorker(conn, settings, fetch).run())


def main(argv: list[str] | None = None) -> int:
    """``python -m polignac_arena.league.referee_worker FD [LOG_FORMAT]``: the process's body."""
    args = sys.argv[1:] if argv is None else argv
    configure_logging(LogFormat(args[1]) if len(args) > 1 else LogFormat.TEXT, "polignac referee process: ")
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the league ends this process through the pipe
    conn = Connection(socket.socket(fileno=int(args[0])).detach())
    settings: Any = conn.recv()
    if not isinstance(settings, orders.WorkerSettings):
        print("polignac referee process: the league sent no settings", file=sys.stderr)
        return 2
    serve(conn, settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
