"""The referee's gRPC servers: where seats connect, the operator's health and reflection, shutdown.

Seats reach a referee in one of two ways.  A match made with :meth:`RefereeServer.create_match`
takes its seats on the referee's main address (TCP, or a shared unix socket), where every
match's tokens are accepted.  A match made with :meth:`RefereeServer.create_seated_match`
gives each seat a unix socket of its own (:mod:`polignac_arena.referee.listener`), the only
way sandboxed seats reach the referee; a seat given no socket there takes its seat on the
main address instead (a remote bot, as in a league).  Health and reflection are served on
the operator address alone, when one is given: never where seats connect.

Plaintext is served on loopback only (``127.0.0.0/8``, ``::1``, ``localhost``, ``unix:``):
any other address needs TLS credentials, as seat tokens and moves cross the network there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import signal
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import grpc
import grpc.aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from polignac import Ruleset
from polignac_arena.loopback import is_loopback_address as is_loopback
from polignac_arena.record_lines import RerunOf
from polignac_arena.referee.host import MatchHost
from polignac_arena.referee.listener import SeatListener
from polignac_arena.referee.match_end import MatchResult
from polignac_arena.referee.options import MAX_RECEIVE_BYTES, MAX_SEND_BYTES, server_options
from polignac_arena.referee.service import SERVICE_NAME, RefereeService
from polignac_arena.settings import TimeControl

__all__ = [
    "MAX_RECEIVE_BYTES",
    "MAX_SEND_BYTES",
    "SERVICE_NAME",
    "PlaintextRefused",
    "RefereeServer",
    "is_loopback",
    "raise_open_files_limit",
    "server_options",
]

log = logging.getLogger(__name__)

_LISTENER_GRACE_S = 1.0
"""How long a finished match's seat sockets wait for their streams to close (they have returned by then)."""


def raise_open_files_limit() -> int:
    """Raise this process's soft ``RLIMIT_NOFILE`` to its hard limit (a referee holds many sockets); returns the soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft == resource.RLIM_INFINITY or soft >= target:
        return soft
    with contextlib.suppress(ValueError, OSError):  # a kernel cap below the hard limit: keep what we have
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class PlaintextRefused(ValueError):
    """A plaintext address that is not loopback: it needs TLS credentials."""


def _check_plaintext(address: str | None, credentials: grpc.ServerCredentials | None, what: str) -> None:
    if address is not None and credentials is None and not is_loopback(address):
        raise PlaintextRefused(
            f"{what} {address!r} is not a loopback address: serve it with TLS credentials"
            " (plaintext only on 127.0.0.0/8, ::1, localhost or a unix: socket)"
        )


def _bind(server: grpc.aio.Server, address: str, credentials: grpc.ServerCredentials | None = None) -> str:
    """Bind ``address`` on ``server`` (with TLS when ``credentials`` are given); the address to reach it (the real port for port 0)."""
    try:
        port = server.add_insecure_port(address) if credentials is None else server.add_secure_port(address, credentials)
    except RuntimeError as exc:
        raise OSError(f"cannot listen on {address!r}: {exc}") from None
    if address.startswith("unix:"):
        return address
    return f"{address.rsplit(':', 1)[0]}:{port}"


class RefereeServer:
    """A referee hosting any number of matches.

    ``address`` (``127.0.0.1:0``, ``unix:/path``, or None for none) is the main address, where
    matches of :meth:`create_match` (and the socketless seats of :meth:`create_seated_match`)
    take their seats; ``operator_address`` (None: not served) serves the standard health
    service and reflection.  With ``credentials`` (``grpc.ssl_server_credentials``) both are
    served with TLS; without, each must be a loopback address (:class:`PlaintextRefused`).  ``options``
    (channel arguments) and ``interceptors`` apply to the main address's server (a league's limits).
    """

    def __init__(
        self,
        address: str | None = "127.0.0.1:0",
        *,
        credentials: grpc.ServerCredentials | None = None,
        operator_address: str | None = None,
        max_streams: int = 2048,
        write_timeout_s: float = 5.0,
        options: Sequence[tuple[str, int]] = (),
        interceptors: Sequence[grpc.aio.ServerInterceptor] = (),
    ) -> None:
        _check_plaintext(address, credentials, "the referee address")
        _check_plaintext(operator_address, credentials, "the operator address")
        self.requested_address = address
        self._credentials = credentials
        self.requested_operator_address = operator_address
        self.address = ""
        self.operator_address = ""
        self._write_timeout_s = write_timeout_s
        self.service = RefereeService(write_timeout_s)
        self._server: grpc.aio.Server | None = None
        if address is not None:
            self._server = grpc.aio.server(options=[*server_options(max_streams, remote=True), *options], interceptors=list(interceptors))
            self.service.add_to(self._server)
        self.health: health.HealthServicer | None = None
        self._operator: grpc.aio.Server | None = None
        if operator_address is not None:
            self._operator = grpc.aio.server(options=server_options(16))
            self.health = health.aio.HealthServicer() if hasattr(health, "aio") else health.HealthServicer()
            health_pb2_grpc.add_HealthServicer_to_server(self.health, self._operator)
        self._service_names = [SERVICE_NAME]
        self._started = False
        self._matches: dict[str, tuple[MatchHost, asyncio.Task[MatchResult] | None]] = {}
        self._listeners: dict[str, list[SeatListener]] = {}
        self._stopping = False
        self.stopping = asyncio.Event()
        """Set when the shutdown begins (a signal, :meth:`stop`): whoever is starting seats for it gives up."""
        self._stop_task: asyncio.Future[None] | None = None
        self._stopped = asyncio.Event()

    def add_service(self, add: Callable[[grpc.aio.Server], None], *, name: str | None = None) -> None:
        """Serve another service on the main address beside the referee's (a league's lobby); before :meth:`start`.

        ``add`` registers it on the gRPC server (as a generated ``add_XServicer_to_server``
        does); ``name``, its full name, is listed by reflection on the operator address.
        """
        if self._server is None:
            raise RuntimeError("this referee has no main address to serve another service on")
        if self._started:
            raise RuntimeError("services are added before the referee starts")
        add(self._server)
        if name is not None:
            self._service_names.append(name)

    async def start(self) -> str:
        """Bind and start serving; returns the main address (the real port for port 0), empty when there is none."""
        self._started = True
        if self._operator is not None:
            names = [*self._service_names, health.SERVICE_NAME, reflection.SERVICE_NAME]
            reflection.enable_server_reflection(names, self._operator)
        if self._server is not None and self.requested_address is not None:
            self.address = _bind(self._server, self.requested_address, self._credentials)
        if self._operator is not None and self.requested_operator_address is not None:
            self.operator_address = _bind(self._operator, self.requested_operator_address, self._credentials)
        for server in (self._server, self._operator):
            if server is not None:
                await server.start()
        await self._set_health(health_pb2.HealthCheckResponse.SERVING)
        if self.address:
            log.info("referee serving on %s", self.address)
        if self.operator_address:
            log.info("referee health and reflection on %s", self.operator_address)
        return self.address

    async def _set_health(self, status: int) -> None:
        if self.health is None:
            return
        for name in ("", SERVICE_NAME):
            result = self.health.set(name, status)
            if asyncio.iscoroutine(result):
                await result

    def _new_host(
        self,
        rules: Ruleset,
        seed: int,
        time_control: TimeControl | None,
        match_id: str | None,
        record_path: Path | None,
        exit_status: Callable[[int], Awaitable[int | None]] | None,
        rerun: RerunOf | None = None,
    ) -> MatchHost:
        if self._stopping:
            raise RuntimeError("the referee is shutting down")
        host = MatchHost(rules, seed, time_control, match_id=match_id, record_path=record_path, exit_status=exit_status, rerun=rerun)
        if host.match_id in self._matches:
            raise ValueError(f"match id {host.match_id!r} is already in use")
        return host

    def create_match(
        self,
        rules: Ruleset,
        seed: int,
        time_control: TimeControl | None = None,
        *,
        match_id: str | None = None,
        record_path: Path | None = None,
        exit_status: Callable[[int], Awaitable[int | None]] | None = None,
    ) -> MatchHost:
        """A new match whose seats' tokens are accepted on the main address from now on; run it with :meth:`run_match`."""
        if self._server is None:
            raise RuntimeError("this referee has no main address: give each seat a socket with create_seated_match")
        host = self._new_host(rules, seed, time_control, match_id, record_path, exit_status)
        self.service.register(host)
        self._matches[host.match_id] = (host, None)
        return host

    async def create_seated_match(
        self,
        rules: Ruleset,
        seed: int,
        time_control: TimeControl | None = None,
        *,
        sockets: Sequence[Path | None],
        match_id: str | None = None,
        record_path: Path | None = None,
        exit_status: Callable[[int], Awaitable[int | None]] | None = None,
        prepare: Callable[[MatchHost], None] | None = None,
        rerun: RerunOf | None = None,
    ) -> MatchHost:
        """A new match whose seat ``i`` connects only through the unix socket ``sockets[i]``, listening on return.

        A seat whose socket is None takes its seat on the main address instead (a remote
        bot): its token is accepted there from now on.  Each socket's folder must exist; the
        socket is removed once its seat has said Hello.  Run the match with :meth:`run_match`,
        or drop it unplayed with :meth:`discard_match`.  ``prepare(host)`` is called before any
        seat can connect (a resumed match takes up its journal then).  ``rerun`` starts the
        match at a hand of another (:class:`~polignac_arena.record_lines.RerunOf`).
        """
        if len(sockets) != rules.players:
            raise ValueError(f"the ruleset seats {rules.players} players but {len(sockets)} sockets were given")
        remote = [seat for seat, path in enumerate(sockets) if path is None]
        if remote and self._server is None:
            raise ValueError(f"seats {remote} have no socket and this referee has no main address for them")
        host = self._new_host(rules, seed, time_control, match_id, record_path, exit_status, rerun)
        if prepare is not None:
            prepare(host)
        listeners = [SeatListener(host, seat, Path(path), self._write_timeout_s) for seat, path in enumerate(sockets) if path is not None]
        # Registered before they start, so that a shutdown meanwhile stops them (each start is
        # awaited before its stop) and refuses those not started yet.
        self._listeners[host.match_id] = listeners
        self._matches[host.match_id] = (host, None)
        try:
            for listener in listeners:
                await listener.start()
        except BaseException:
            self._matches.pop(host.match_id, None)
            await self._stop_listeners(host.match_id, 0)
            raise
        self.service.register(host, seats=remote)
        return host

    async def discard_match(self, host: MatchHost, reason: str = "the league called it off", *, keep_record: bool = False) -> None:
        """Drop a created match that will not be played: its seat sockets are removed, and a seat that joined (or
        is joining, or comes later) is refused with ``FAILED_PRECONDITION`` and ``reason``.  It leaves no record,
        unless ``keep_record``: then its record (no action, its result aborted) says why it was called off."""
        if self._matches.get(host.match_id, (None, None))[1] is not None:
            raise RuntimeError(f"match {host.match_id!r} is running: abort it instead")
        # A stream whose token passed before may still be saying Hello: the host, called off, refuses it.
        if not keep_record:
            host.record_path = None
        host.call_off(reason)
        self.service.unregister(host)
        try:
            await host.run()
        finally:
            self._matches.pop(host.match_id, None)
            await self._stop_listeners(host.match_id, 0)

    async def _stop_listeners(self, match_id: str, grace: float | None) -> None:
        listeners = self._listeners.pop(match_id, [])
        if listeners:
            await asyncio.gather(*(listener.stop(grace) for listener in listeners), return_exceptions=True)

    async def run_match(self, host: MatchHost) -> MatchResult:
        """Run a created match to its end; its tokens are refused afterwards."""
        task = asyncio.ensure_future(host.run())
        self._matches[host.match_id] = (host, task)
        closing = asyncio.ensure_future(self._close_seat_sockets(host))
        try:
            return await task
        finally:
            closing.cancel()
            self.service.unregister(host)
            self._matches.pop(host.match_id, None)
            await self._stop_listeners(host.match_id, _LISTENER_GRACE_S)

    async def _close_seat_sockets(self, host: MatchHost) -> None:
        """Once seating is over nobody may join: every seat socket is closed to newcomers, and the servers of
        seats that never joined stop, so a bot that floods its socket with connections costs the arena
        nothing from then on."""
        await host.seated.wait()
        listeners = self._listeners.get(host.match_id, [])
        for listener in listeners:
            listener.close_to_newcomers()
        unjoined = [listener for listener in listeners if host.conns[listener.seat] is None]
        await asyncio.gather(*(listener.stop_serving() for listener in unjoined), return_exceptions=True)

    @property
    def running_matches(self) -> list[MatchHost]:
        """Matches created and not yet finished."""
        return [host for host, _ in self._matches.values()]

    async def stop(self, grace: float = 5.0) -> None:
        """Graceful shutdown: NOT_SERVING, abort running matches (recorded as aborted), then stop.

        Calling it again (a second signal, a ``finally``) waits for the first shutdown to end.
        """
        if self._stop_task is None:
            self._stop_task = asyncio.ensure_future(self._shutdown(grace))
        await asyncio.shield(self._stop_task)

    async def _shutdown(self, grace: float) -> None:
        self._stopping = True
        self.stopping.set()
        await self._set_health(health_pb2.HealthCheckResponse.NOT_SERVING)
        tasks = []
        for host, task in list(self._matches.values()):
            host.abort("the referee is shutting down")
            if task is not None:
                tasks.append(task)
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
        for match_id in list(self._listeners):
            await self._stop_listeners(match_id, grace)
        for server in (self._server, self._operator):
            if server is not None:
                await server.stop(grace)
        self._stopped.set()

    def install_signal_handlers(self) -> Callable[[], None]:
        """Make SIGTERM and SIGINT stop the server gracefully; returns a function that removes the handlers."""
        loop = asyncio.get_running_loop()

        def stop() -> None:
            log.warning("signal received: shutting down the referee")
            if self._stop_task is None:
                self._stop_task = asyncio.ensure_future(self._shutdown(5.0))

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop)

        def remove() -> None:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)

        return remove

    async def wait_for_termination(self) -> None:
        """Wait until the referee has stopped."""
        await self._stopped.wait()
