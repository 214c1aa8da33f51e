"""The gRPC service: authenticates a stream, takes its Hello, and hands it to its match."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
from typing import Any

import grpc
import grpc.aio

from polignac._proto.polignac.v1.referee_pb2_grpc import RefereeServiceServicer
from polignac_arena.referee.host import MatchHost, SeatConnection

__all__ = ["RefereeService"]

log = logging.getLogger(__name__)
SUPPORTED_MAJOR = "1"


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class RefereeService(RefereeServiceServicer):
    """polignac.v1.RefereeService: one stream per seat, driven by that seat's MatchHost."""

    def __init__(self, write_timeout_s: float = 5.0) -> None:
        self._seats: dict[bytes, tuple[MatchHost, int, str]] = {}
        self._write_timeout_s = write_timeout_s

    def register(self, host: MatchHost) -> None:
        """Accept streams bearing the tokens of ``host``'s seats."""
        for seat, token in enumerate(host.tokens):
            self._seats[_digest(token)] = (host, seat, token)

    def unregister(self, host: MatchHost) -> None:
        """Refuse ``host``'s tokens from now on."""
        for token in host.tokens:
            self._seats.pop(_digest(token), None)

    def _seat_of(self, context: grpc.aio.ServicerContext[Any, Any]) -> tuple[MatchHost, int] | None:
        token = ""
        for key, value in context.invocation_metadata() or ():
            if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
                token = value[len("Bearer ") :].strip()
        # Look up by digest, then compare in constant time: no timing hint about tokens.
        entry = self._seats.get(_digest(token))
        if entry is None or not hmac.compare_digest(entry[2].encode(), token.encode()):
            return None
        return entry[0], entry[1]

    async def Play(self, request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        seated = self._seat_of(context)
        if seated is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or unknown seat token (send 'authorization: Bearer <token>')")
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
            return
        hello = first.hello if first.WhichOneof("message") == "hello" else None
        if hello is None:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be a Hello")
            return
        major = hello.protocol_version.split(".")[0]
        if major != SUPPORTED_MAJOR:
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"protocol version {hello.protocol_version[:20]!r} is not supported; this referee speaks {SUPPORTED_MAJOR}",
            )
            return
        if (
            not 1 <= len(hello.bot_name) <= 64
            or not hello.bot_name.isprintable()
            or len(hello.bot_version) > 64
            or not hello.bot_version.isprintable()
        ):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "bot_name must be 1 to 64 printable characters, bot_version up to 64")
            return
        conn = SeatConnection(context, hello.bot_name, hello.bot_version, self._write_timeout_s)
        refusal = host.attach(seat, conn)
        if refusal is not None:
            code = grpc.StatusCode.ALREADY_EXISTS if "already" in refusal else grpc.StatusCode.FAILED_PRECONDITION
            await context.abort(code, refusal)
            return
        reader = asyncio.ensure_future(self._read(host, seat, conn, context))
        try:
            await conn.done.wait()
        finally:
            reader.cancel()
            host.post_gone(seat, conn)

    async def _read(self, host: MatchHost, seat: int, conn: SeatConnection, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        try:
            while not conn.done.is_set():
                message = await context.read()
                if message is grpc.aio.EOF:
                    break
                host.post_message(seat, message)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the stream broke (too large a message, reset, ...)
            log.info("stream of seat %s broke: %r", seat, exc)
        if not conn.done.is_set():
            host.post_gone(seat, conn)
