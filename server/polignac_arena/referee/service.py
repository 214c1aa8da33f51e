"""The gRPC service: authenticates a stream, takes its Hello, and hands it to its match.

A message that does not decode (bad protobuf, invalid UTF-8 in a string) is not an error
of the service: the request deserializer turns it into an :class:`Undecodable`, which is a
MALFORMED fault mid-match and ``INVALID_ARGUMENT`` in place of the Hello.

The tokens of matches that are over (or called off) are remembered, a bounded number of
them, so that a late stream hears why its seat is gone (``FAILED_PRECONDITION``: the match
is over, the seat forfeited) rather than that its token is unknown.

gRPC shows the end of the client's side of a stream the same way whether the client
half-closed it or the call was cancelled (a reset, a message over the size limit): the
service tells them apart by whether the call ends within :data:`HALF_CLOSE_PROBE_S` after.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Final

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac_arena.referee import texts
from polignac_arena.referee.host import MatchHost
from polignac_arena.referee.journal import token_digest
from polignac_arena.referee.seat_stream import SeatConnection
from polignac_arena.referee.versions import refusal as version_refusal
from polignac_arena.settings import NAME_MAX, VERSION_MAX, is_display_name, is_version_text

__all__ = ["HALF_CLOSE_PROBE_S", "MAX_ENDED_TOKENS", "SERVICE_NAME", "RefereeService", "Undecodable", "decode_request", "serve_stream"]

log = logging.getLogger(__name__)
SERVICE_NAME: Final = pb.DESCRIPTOR.services_by_name["RefereeService"].full_name
MAX_ENDED_TOKENS: Final = 10_000
"""Seat tokens of ended matches whose end a late stream is told of; older ones are forgotten (then UNAUTHENTICATED)."""
HALF_CLOSE_PROBE_S: Final = 0.25
"""After the client's side of a stream ends, how long the call must stay up for it to be a half-close, not a break."""


@dataclass(frozen=True, slots=True)
class Undecodable:
    """A message from a bot that is not a PlayRequest."""

    reason: str


def decode_request(data: bytes) -> pb.PlayRequest | Undecodable:
    """The PlayRequest in ``data``, or why it is none: never raises, so gRPC never fails the call for it."""
    request = pb.PlayRequest()
    try:
        request.ParseFromString(data)
    except DecodeError as exc:
        return Undecodable(f"{len(data)} bytes that do not decode: {str(exc)[:100]}")
    return request


def serve_stream(
    server: grpc.aio.Server,
    service: str,
    method: str,
    behavior: Callable[..., Awaitable[None]],
    decode: Callable[[bytes], object],
    encode: Callable[..., bytes],
) -> None:
    """Serve ``service`` on ``server`` as one stream-stream ``method``: ``behavior`` runs each call, ``decode`` reads each
    request, ``encode`` writes each response."""
    handlers = {method: grpc.stream_stream_rpc_method_handler(behavior, request_deserializer=decode, response_serializer=encode)}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
    server.add_registered_method_handlers(service, handlers)


class RefereeService:
    """polignac.v1.RefereeService: one stream per seat, driven by that seat's MatchHost.

    ``on_attach`` is called with the host and seat once a seat's Hello is accepted.
    """

    def __init__(self, write_timeout_s: float = 5.0, on_attach: Callable[[MatchHost, int], None] | None = None) -> None:
        # By the SHA-256 of the token: a resumed match knows no more of its remote seats' tokens.
        self._seats: dict[bytes, tuple[MatchHost, int]] = {}
        # Token digest -> the status and text that say why its seat is gone.
        self._ended: collections.OrderedDict[bytes, tuple[grpc.StatusCode, str]] = collections.OrderedDict()
        self._write_timeout_s = write_timeout_s
        self._on_attach = on_attach

    def add_to(self, server: grpc.aio.Server) -> None:
        """Serve this service on ``server``, with a request deserializer that never raises."""
        serve_stream(server, SERVICE_NAME, "Play", self.Play, decode_request, pb.PlayResponse.SerializeToString)

    def register(self, host: MatchHost, seats: Iterable[int] | None = None) -> None:
        """Accept streams bearing the tokens of ``host``'s seats (only of ``seats`` when given)."""
        chosen = range(len(host.token_digests)) if seats is None else seats
        for seat in chosen:
            self._seats[host.token_digests[seat]] = (host, seat)

    def unregister(self, host: MatchHost) -> None:
        """Refuse ``host``'s tokens from now on, with the reason (the match is over, the seat forfeited; or, for a
        suspended match, ``UNAVAILABLE``: the league is stopping and its seats come back when it is up again)."""
        for seat, digest in enumerate(host.token_digests):
            if self._seats.pop(digest, None) is not None:
                if host.suspended:
                    self._ended[digest] = (grpc.StatusCode.UNAVAILABLE, texts.RESTARTING.format(match_id=host.match_id, seat=seat))
                else:
                    self._ended[digest] = (grpc.StatusCode.FAILED_PRECONDITION, host.closing_words(seat))
                self._ended.move_to_end(digest)
        while len(self._ended) > MAX_ENDED_TOKENS:
            self._ended.popitem(last=False)

    def _token(self, context: grpc.aio.ServicerContext[object, object]) -> str:
        for key, value in context.invocation_metadata() or ():
            if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
                return value[len("Bearer ") :].strip()
        return ""

    def _seat_of(self, token: str) -> tuple[MatchHost, int] | None:
        # The lookup is by the token's SHA-256, which a guess cannot steer: no timing hint about tokens.
        return self._seats.get(token_digest(token)) if token else None

    async def Play(self, request_iterator: AsyncIterator[pb.PlayRequest], context: grpc.aio.ServicerContext[object, object]) -> None:
        token = self._token(context)
        seated = self._seat_of(token)
        if seated is None:
            gone = self._ended.get(token_digest(token)) if token else None
            if gone is not None:
                await context.abort(*gone)
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, texts.UNKNOWN_TOKEN)
            return
        host, seat = seated
        startup_s = host.time_control.startup_ms / 1000
        try:
            async with asyncio.timeout(startup_s):
                first = await context.read()
        except TimeoutError:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, f"no Hello within {startup_s:g} s")
            return
        if first is grpc.aio.EOF:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the stream was closed before a Hello")
            return
        if isinstance(first, Undecodable):
            log.info("match %s: seat %s opened with a message that is not a PlayRequest: %s", host.match_id, seat, first.reason)
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the first message is not a PlayRequest: {first.reason}")
            return
        hello = first.hello if first.WhichOneof("message") == "hello" else None
        if hello is None:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be a Hello")
            return
        unspoken = version_refusal(hello.protocol_version, host.rules)
        if unspoken is not None:
            log.info("match %s: seat %s refused at its Hello: %s", host.match_id, seat, unspoken)
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, unspoken)
            return
        if not is_display_name(hello.bot_name) or not is_version_text(hello.bot_version, empty=True):
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"bot_name must be 1 to {NAME_MAX} printable characters, bot_version up to {VERSION_MAX}"
            )
            return
        conn = SeatConnection(context, hello.bot_name, hello.bot_version, self._write_timeout_s)
        refusal = host.attach(seat, conn)
        if refusal is not None:
            await context.abort(*refusal)
            return
        if self._on_attach is not None:
            self._on_attach(host, seat)
        reader = asyncio.ensure_future(_read(host, seat, conn, context))
        try:
            await conn.done.wait()
        finally:
            reader.cancel()
            host.post_gone(seat, conn)
        if conn.end_status is not None:
            await context.abort(*conn.end_status)


async def _read(host: MatchHost, seat: int, conn: SeatConnection, context: grpc.aio.ServicerContext[object, object]) -> None:
    """Hand a seat's messages to its host, from its Welcome until it forfeits or its stream ends."""
    try:
        await conn.welcomed.wait()  # what comes before the Welcome waits in the stream (flow control holds a flood)
        while not conn.read_stopped:
            if not conn.room.is_set():
                await conn.room.wait()
            message = await context.read()
            if conn.read_stopped:
                return
            if message is grpc.aio.EOF:
                # A broken call (reset, cancelled, a message over the limit) also reads as EOF,
                # and then its handler is cancelled at once, which cancels this probe too.
                await asyncio.sleep(HALF_CLOSE_PROBE_S)
                host.post_closed(seat, conn)
                return
            if isinstance(message, Undecodable):
                host.post_undecodable(seat, conn, message.reason)
            else:
                host.post_message(seat, conn, message)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the stream broke (too large a message, reset, ...)
        log.info("stream of seat %s broke: %r", seat, exc)
        host.post_gone(seat, conn)
