"""The referee's gRPC server: the service, health, reflection, limits, graceful shutdown."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
import grpc.aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from polignac import Ruleset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac._proto.polignac.v1.referee_pb2_grpc import add_RefereeServiceServicer_to_server
from polignac_arena.referee.host import MatchHost, MatchResult, TimeControl
from polignac_arena.referee.service import RefereeService

__all__ = ["SERVICE_NAME", "RefereeServer", "server_options"]

log = logging.getLogger(__name__)
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["RefereeService"].full_name

MAX_RECEIVE_BYTES = 16 * 1024
"""A Decision is a few dozen bytes; anything near this is an attack, not a bot."""
MAX_SEND_BYTES = 1024 * 1024


def server_options(max_streams: int = 2048) -> list[tuple[str, int]]:
    """The channel arguments of the referee: message limits, stream cap, keepalive, no port sharing."""
    return [
        ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
        ("grpc.max_send_message_length", MAX_SEND_BYTES),
        ("grpc.max_concurrent_streams", max_streams),
        # Find dead peers: ping every 20 s of silence, give up after 10 s without an answer.
        ("grpc.keepalive_time_ms", 20_000),
        ("grpc.keepalive_timeout_ms", 10_000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
        ("grpc.http2.max_ping_strikes", 2),
        # A port already in use must fail loudly, not be shared with another referee.
        ("grpc.so_reuseport", 0),
    ]


class RefereeServer:
    """A referee listening on one address (``127.0.0.1:0``, ``unix:/path``), hosting any number of matches."""

    def __init__(self, address: str = "127.0.0.1:0", *, max_streams: int = 2048, write_timeout_s: float = 5.0) -> None:
        self.requested_address = address
        self.address = ""
        self.service = RefereeService(write_timeout_s)
        self.health = health.aio.HealthServicer() if hasattr(health, "aio") else health.HealthServicer()
        self._server = grpc.aio.server(options=server_options(max_streams))
        add_RefereeServiceServicer_to_server(self.service, self._server)  # type: ignore[no-untyped-call]  # generated code
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self._server)
        reflection.enable_server_reflection([SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME], self._server)
        self._matches: dict[str, tuple[MatchHost, asyncio.Task[MatchResult] | None]] = {}
        self._stopping = False
        self._stop_task: asyncio.Future[None] | None = None

    async def start(self) -> str:
        """Bind and start serving; returns the address bots should use (the real port for port 0)."""
        try:
            port = self._server.add_insecure_port(self.requested_address)
        except RuntimeError as exc:
            raise OSError(f"cannot listen on {self.requested_address!r}: {exc}") from None
        if self.requested_address.startswith("unix:"):
            self.address = self.requested_address
        else:
            host = self.requested_address.rsplit(":", 1)[0]
            self.address = f"{host}:{port}"
        await self._server.start()
        await self._set_health(health_pb2.HealthCheckResponse.SERVING)
        log.info("referee serving on %s", self.address)
        return self.address

    async def _set_health(self, status: int) -> None:
        for name in ("", SERVICE_NAME):
            result = self.health.set(name, status)
            if asyncio.iscoroutine(result):
                await result

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
        """A new match whose seats' tokens are accepted from now on; run it with :meth:`run_match`."""
        if self._stopping:
            raise RuntimeError("the referee is shutting down")
        host = MatchHost(rules, seed, time_control, match_id=match_id, record_path=record_path, exit_status=exit_status)
        if host.match_id in self._matches:
            raise ValueError(f"match id {host.match_id!r} is already in use")
        self.service.register(host)
        self._matches[host.match_id] = (host, None)
        return host

    async def run_match(self, host: MatchHost) -> MatchResult:
        """Run a created match to its end; its tokens are refused afterwards."""
        task = asyncio.ensure_future(host.run())
        self._matches[host.match_id] = (host, task)
        try:
            return await task
        finally:
            self.service.unregister(host)
            self._matches.pop(host.match_id, None)

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
        await self._set_health(health_pb2.HealthCheckResponse.NOT_SERVING)
        tasks = []
        for host, task in list(self._matches.values()):
            host.abort("the referee is shutting down")
            if task is not None:
                tasks.append(task)
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
        await self._server.stop(grace)

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
        """Wait until the server stops."""
        await self._server.wait_for_termination()
