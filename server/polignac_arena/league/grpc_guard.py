"""The league's gRPC endpoint under its limits: gRPC's own channel arguments, and a cap on streams per address.

gRPC core bounds what it can: connections in all (``grpc.max_allowed_incoming_connections``:
those past it are closed at once), the TLS and HTTP/2 handshake
(``grpc.server_handshake_timeout_ms``), a connection with no call open
(``grpc.max_connection_idle_ms``) and the streams of one connection
(``grpc.max_concurrent_streams``).  It has no cap per address: :class:`CallsPerAddress`, a
server interceptor, ends a stream past ``max_calls_per_address`` open at once from one address
(an IPv6 network counted as one) with ``RESOURCE_EXHAUSTED`` before the service sees it.  Nor has
it a cap on the connections of one address: the league's front
(:mod:`polignac_arena.league.grpc_front`) holds those, and tells who a peer really is.
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable

import grpc
import grpc.aio

from polignac_arena.league.grpc_front import direct_peer
from polignac_arena.league.limits import GrpcLimits
from polignac_arena.peers import address_key, peer_host

__all__ = ["CallsPerAddress", "grpc_options"]


def grpc_options(limits: GrpcLimits, *, fronted: bool = False) -> list[tuple[str, int]]:
    """The channel arguments of the league's gRPC server that carry ``limits`` (beside the referee's own, whose
    ``max_streams`` is ``limits.max_streams``).

    ``fronted``: the front holds the cap in all; gRPC's own, twice as high, is only a backstop (a
    connection the front has just closed may still count at gRPC for a moment).
    """
    return [
        ("grpc.max_allowed_incoming_connections", limits.max_connections * (2 if fronted else 1)),
        ("grpc.server_handshake_timeout_ms", round(limits.handshake_timeout_s * 1000)),
        ("grpc.max_connection_idle_ms", round(limits.idle_timeout_s * 1000)),
    ]


class CallsPerAddress(grpc.aio.ServerInterceptor):  # type: ignore[misc]  # grpc's stubs leave the base class untyped
    """Ends a stream (``RESOURCE_EXHAUSTED``) when its address already has ``limit`` open.

    ``client_peer`` names the client behind a gRPC peer (the league's front's, when it stands before gRPC).
    """

    def __init__(self, limit: int, ipv6_prefix: int = 64, client_peer: Callable[[str], str] = direct_peer) -> None:
        self.limit = limit
        self.ipv6_prefix = ipv6_prefix
        self.client_peer = client_peer
        self.open: Counter[str] = Counter()
        self.refused = 0

    async def intercept_service(
        self, continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]], details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None or handler.stream_stream is None:
            return handler
        behaviour = handler.stream_stream
        if inspect.isasyncgenfunction(behaviour):
            return handler._replace(stream_stream=self._streaming(behaviour))
        return handler._replace(stream_stream=self._awaiting(behaviour))

    def _key(self, context: grpc.aio.ServicerContext[object, object]) -> str:
        return address_key(peer_host(self.client_peer(context.peer())), self.ipv6_prefix)

    async def _enter(self, key: str, context: grpc.aio.ServicerContext[object, object]) -> None:
        if self.open[key] >= self.limit:
            self.refused += 1
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, f"more than {self.limit} streams at once from this address")
        self.open[key] += 1

    def _leave(self, key: str) -> None:
        self.open[key] -= 1
        if self.open[key] <= 0:
            del self.open[key]

    def _awaiting(self, behaviour: Callable[..., Awaitable[object]]) -> Callable[..., Awaitable[object]]:
        async def limited(requests: object, context: grpc.aio.ServicerContext[object, object]) -> object:
            key = self._key(context)
            await self._enter(key, context)
            try:
                return await behaviour(requests, context)
            finally:
                self._leave(key)

        return limited

    def _streaming(self, behaviour: Callable[..., AsyncIterator[object]]) -> Callable[..., AsyncIterator[object]]:
        async def limited(requests: object, context: grpc.aio.ServicerContext[object, object]) -> AsyncIterator[object]:
            key = self._key(context)
            await self._enter(key, context)
            try:
                async for response in behaviour(requests, context):
                    yield response
            finally:
                self._leave(key)

        return limited
