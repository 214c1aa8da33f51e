"""``polignac league connect``: any bot folder plays in a league from its author's machine.

The folder's bot joins the league's lobby under its ``bot.toml`` name and version.  For
each accepted assignment its command is started here, unsandboxed (it is the author's own
code on the author's own machine, as ``polignac match --trusted`` runs it), pointed at a
:class:`SeatRelay`: a RefereeService on a private unix socket whose one Play stream is
forwarded to the league (over TLS off loopback).  When the league's side of that stream
breaks, the relay opens it again with the seat token and the bot's own Hello, within the
league's reattach grace, and drops the repeated Welcome: the bot sees one stream, with at
most a request asked again.  A ``stdio`` bot goes through the arena's stdio bridge to the
relay, as it does to a referee.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import secrets
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Final

import grpc
import grpc.aio

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac._proto.polignac.v1.referee_pb2_grpc import RefereeServiceStub
from polignac.bot.league import DETECTION_S, REATTACH_CODES, RESTART_S, Backoff, ChannelSecurity, stay_online
from polignac.bot.stream import raise_if_cancelled, write
from polignac_arena.referee.options import server_options
from polignac_arena.referee.service import SERVICE_NAME
from polignac_arena.seats.base import SeatContext, SeatLimits, SeatProcess
from polignac_arena.seats.process import ProcessLauncher
from polignac_arena.settings import Transport
from polignac_arena.submission import Submission, load_submission

__all__ = ["SeatRelay", "connect_folder"]

log = logging.getLogger(__name__)

Status = Callable[[str], None]
_EXIT_WAIT_S: Final = 2.0
"""How long the relay's stream may outlive the bot's process (it is ending) before it is stopped."""
_STDERR_LINES: Final = 20
"""Lines of a bot's stderr shown to its author after each match."""


class SeatRelay:
    """A local RefereeService for one seat: its Play stream is forwarded to ``upstream`` with ``seat_token``."""

    def __init__(self, upstream: str, seat_token: str, security: ChannelSecurity, grace_s: float, on_status: Status | None = None) -> None:
        self.upstream = upstream
        self.local_token = secrets.token_urlsafe(24)
        """The token the local bot must present: the socket's folder is private, this guards it once more."""
        self._seat_token = seat_token
        self._security = security
        self._grace_s = grace_s
        self._say = on_status or (lambda text: log.info("%s", text))
        self._server: grpc.aio.Server | None = None
        self._taken = False
        self.done = asyncio.Event()
        """Set when the forwarded stream has ended (or the relay stopped)."""

    async def start(self, socket: Path) -> str:
        """Serve on the unix socket ``socket``; returns its address."""
        server = grpc.aio.server(options=server_options(4))
        handlers = {
            "Play": grpc.stream_stream_rpc_method_handler(
                self.Play, request_deserializer=pb.PlayRequest.FromString, response_serializer=pb.PlayResponse.SerializeToString
            )
        }
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
        address = f"unix:{socket}"
        server.add_insecure_port(address)
        await server.start()
        self._server = server
        return address

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(0.5)
        self.done.set()

    async def Play(self, request_iterator: AsyncIterator[pb.PlayRequest], context: grpc.aio.ServicerContext[object, object]) -> None:
        token = ""
        for key, value in context.invocation_metadata() or ():
            if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
                token = value[len("Bearer ") :].strip()
        if not hmac.compare_digest(token.encode(), self.local_token.encode()):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or unknown seat token")
            return
        if self._taken:
            await context.abort(grpc.StatusCode.ALREADY_EXISTS, "this seat is already connected")
            return
        self._taken = True
        try:
            first = await context.read()
            if first is grpc.aio.EOF or first.WhichOneof("message") != "hello":
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be a Hello")
                return
            await self._forward(first, context)
        finally:
            self.done.set()

    async def _forward(self, hello: pb.PlayRequest, context: grpc.aio.ServicerContext[object, object]) -> None:
        """Forward the bot's stream to the league and back, opening the league's side again when it breaks."""
        upstream: list[grpc.aio.StreamStreamCall | None] = [None]  # the league's call the bot's messages go to; None while there is none
        reader = asyncio.ensure_future(_bot_to_league(context, upstream))
        backoff = Backoff(0.05, 1.0)
        welcomed = False
        broke_at: float | None = None
        try:
            while True:
                async with self._security.channel(self.upstream) as channel:
                    stub = RefereeServiceStub(channel)
                    call = stub.Play(metadata=(("authorization", f"Bearer {self._seat_token}"),))
                    try:
                        await write(call, hello)
                        upstream[0] = call  # only now: nothing may reach the league before the Hello
                        while (message := await call.read()) is not grpc.aio.EOF:
                            if message.WhichOneof("payload") == "welcome":
                                broke_at = None
                                if welcomed:
                                    continue  # a reattached stream's Welcome: the bot has had it
                                welcomed = True
                            await context.write(message)
                        code, details = await call.code(), await call.details()
                    except grpc.aio.AioRpcError as exc:
                        raise_if_cancelled()
                        code, details = exc.code(), exc.details() or ""
                    finally:
                        upstream[0] = None
                if code == grpc.StatusCode.OK:
                    return
                now = time.monotonic()
                broke_at = broke_at if broke_at is not None else now
                if code not in REATTACH_CODES:
                    await context.abort(code, details)
                    return
                # The league's grace counts from its own finding, or, after a restart, from its start.
                window = self._grace_s + DETECTION_S + RESTART_S
                if now - broke_at > window:
                    await context.abort(code, f"the league's stream broke ({details}) and could not be opened again within {window:g} s")
                    return
                if welcomed:
                    self._say(f"the match stream broke ({code.name}); opening it again")
                raise_if_cancelled()
                await asyncio.sleep(backoff.next())
        finally:
            reader.cancel()


async def _bot_to_league(context: grpc.aio.ServicerContext[object, object], upstream: list[grpc.aio.StreamStreamCall | None]) -> None:
    """Pass the bot's messages on to the league's current call; one sent while there is none is dropped
    (the league asks again once the seat is back)."""
    with contextlib.suppress(Exception):  # the bot's stream broke: the league's side ends with the relay
        while (message := await context.read()) is not grpc.aio.EOF:
            call = upstream[0]
            if call is not None:
                with contextlib.suppress(Exception):
                    await call.write(message)
        call = upstream[0]
        if call is not None:
            await call.done_writing()  # the bot half-closed: so does the relay


async def play_through_relay(
    submission: Submission, assignment: pb.Assignment, address: str, security: ChannelSecurity, grace_s: float, say: Status
) -> None:
    """Start the bot for one assignment, pointed at a relay to the league, and wait for its match to end."""
    match_id = assignment.match_id[:64]
    say(f"playing match {match_id} (seat {assignment.seat})")
    relay = SeatRelay(address, assignment.seat_token, security, grace_s, say)
    process: SeatProcess | None = None
    bridge: asyncio.Future[None] | None = None
    with tempfile.TemporaryDirectory(prefix="polignac-connect-") as folder:  # private (0700): the socket lives here
        socket = Path(folder) / "relay.sock"
        workdir = Path(folder) / "work"
        workdir.mkdir()
        try:
            local = await relay.start(socket)
            context = SeatContext(
                seat=assignment.seat,
                token=relay.local_token,
                submission=submission,
                limits=SeatLimits().granted(submission.resources),
                referee_socket=socket,
                workdir=workdir,
                trusted=True,
                match_id=match_id,
            )
            process = await ProcessLauncher().start(context)
            if submission.transport is Transport.STDIO:
                from polignac_arena.seats.stdio_bridge import run_bridge

                bridge = asyncio.ensure_future(
                    run_bridge(process, local, relay.local_token, bot_name=submission.name, bot_version=submission.version)
                )
            exited = asyncio.ensure_future(process.wait())
            ended = asyncio.ensure_future(relay.done.wait())
            await asyncio.wait({exited, ended}, return_when=asyncio.FIRST_COMPLETED)
            if not ended.done():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(ended), _EXIT_WAIT_S)
            ended.cancel()
            exited.cancel()
        finally:
            await _clean_up(relay, process, bridge)
        _report(submission, match_id, process, say)


async def _clean_up(relay: SeatRelay, process: SeatProcess | None, bridge: asyncio.Future[None] | None) -> None:
    async def clean() -> None:
        if process is not None:
            await process.stop()
        if bridge is not None:
            bridge.cancel()
            await asyncio.gather(bridge, return_exceptions=True)
        await relay.stop()

    # Even when this is cancelled (the command is interrupted), the bot is stopped first.
    cleaning = asyncio.ensure_future(clean())
    try:
        await asyncio.shield(cleaning)
    except asyncio.CancelledError:
        await cleaning
        raise


def _report(submission: Submission, match_id: str, process: SeatProcess | None, say: Status) -> None:
    if process is None:
        return
    stderr = process.stderr_text().strip().splitlines()[-_STDERR_LINES:]
    for line in stderr:
        say(f"match {match_id}: {submission.name}: {line}")
    say(f"match {match_id} is over")


async def connect_folder(
    folder: Path, server: str, token: str, security: ChannelSecurity, *, max_matches: int = 1, on_status: Status | None = None
) -> None:
    """Keep the bot of ``folder`` online in the league at ``server`` and play each assigned match, until cancelled.

    Raises :class:`~polignac_arena.submission.SubmissionError` for a bad ``bot.toml`` and
    :class:`~polignac.bot.BotConnectionError` when the league refuses the bot.
    """
    submission = load_submission(folder)
    say = on_status or (lambda text: log.info("%s", text))

    async def play(assignment: pb.Assignment, address: str, grace_s: float) -> None:
        await play_through_relay(submission, assignment, address, security, grace_s, say)

    await stay_online(submission.name, submission.version, server, token, security, play, max_matches=max_matches, on_status=say)
