"""Play in a league from the author's machine: stay online in its lobby and play each match it assigns.

The bot joins ``LobbyService.Lobby`` with its author's API token, accepts each Assignment
(up to ``max_matches`` at a time, declining the rest), and plays it on an ordinary Play
stream with the assignment's seat token, exactly as a bot the referee starts would.  A
Play stream that breaks mid-match is opened again with the same seat token and a Hello
until the league's reattach grace runs out, with room for the league to notice the break
and to restart (it takes its matches up again); the lobby stream is opened again with backoff
whenever it drops, so a bot stays online across a restart of the server.  An assignment
the league withdraws (another bot declined) is dropped.  The flow is in docs/protocol.md,
"Remote bots".

A connection whose path dies without a word (a NAT that forgot it, a Wi-Fi change) is
found by HTTP/2 keepalive pings (:data:`KEEPALIVE_OPTIONS`, at the rate the league permits),
so the bot notices within seconds and comes back, rather than waiting forever.

Security: a league off this machine is reached over TLS only (the system's roots, or
``root_certificates`` / ``POLIGNAC_TLS_CA``); a loopback address is plaintext unless
certificates are given.  A client whose choice disagrees with what the league's port speaks
is told so in one line (:mod:`polignac.bot.probe`) instead of retrying forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import grpc
import grpc.aio

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac._proto.polignac.v1.referee_pb2_grpc import LobbyServiceStub, RefereeServiceStub
from polignac.bot.base import Bot
from polignac.bot.probe import tls_mismatch
from polignac.bot.stream import CHANNEL_OPTIONS, BotConnectionError, Conversation, MatchOutcome, converse, raise_if_cancelled, write
from polignac.errors import PolignacError
from polignac.wire import PROTOCOL_VERSION, ruleset_from_pb

__all__ = [
    "DETECTION_S",
    "KEEPALIVE_OPTIONS",
    "KEEPALIVE_TIMEOUT_MS",
    "KEEPALIVE_TIME_MS",
    "REATTACH_CODES",
    "RESTART_S",
    "TLS_CA_ENV",
    "Backoff",
    "ChannelSecurity",
    "PlayAssignment",
    "is_loopback",
    "play_in_league",
    "play_seat",
    "stay_online",
]

log = logging.getLogger(__name__)

TLS_CA_ENV: Final = "POLIGNAC_TLS_CA"
"""A PEM file of the certificate authorities to trust for the league (instead of the system's)."""
# The lobby stream is not opened again after these: they will not change by trying again.
_FINAL: Final = frozenset(
    {
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.ABORTED,  # another connection of the same bot replaced this one
        grpc.StatusCode.UNIMPLEMENTED,
    }
)
# A Play stream is opened again after these, within the grace: a lost connection, or the
# referee not yet done with the broken stream (ALREADY_EXISTS).
REATTACH_CODES: Final = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.ALREADY_EXISTS,
    }
)
_LOBBY_BACKOFF_S: Final = (0.5, 15.0)
_PLAY_BACKOFF_S: Final = (0.05, 1.0)
KEEPALIVE_TIME_MS: Final = 2_000
"""The client pings its connection this long after the last ping was answered (the league permits one a second) ..."""
KEEPALIVE_TIMEOUT_MS: Final = 3_000
"""... and drops it when a ping is not answered within this: a dead path is found within 5 s."""
KEEPALIVE_OPTIONS: Final = [
    ("grpc.keepalive_time_ms", KEEPALIVE_TIME_MS),
    ("grpc.keepalive_timeout_ms", KEEPALIVE_TIMEOUT_MS),
    ("grpc.http2.ping_timeout_ms", KEEPALIVE_TIMEOUT_MS),  # gRPC core waits for a ping's answer this long, whatever the above says
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),  # else gRPC core stops pinging a stream that is quiet between matches' moves
]
_LEAGUE_OPTIONS: Final = [*CHANNEL_OPTIONS, *KEEPALIVE_OPTIONS]
DETECTION_S: Final = 5.0
"""How long a league may take to find a dead path (docs/protocol.md, "Timings"): a seat's grace counts from then."""
RESTART_S: Final = 60.0
"""How much longer a broken Play stream is opened again, so that a seat outlasts a restart of the league: the league
resumes its matches when it starts again and gives their remote seats their grace anew from then."""
_SLOT_WAIT_S: Final = 5.0
"""How long an assignment that finds every slot taken waits for one to free (a match that ended may still be closing here)."""

Status = Callable[[str], None]


def _host(address: str) -> str:
    if address.startswith("["):
        return address[1 : address.find("]")]
    return address.rsplit(":", 1)[0] if address.count(":") == 1 else address


def is_loopback(address: str) -> bool:
    """Whether ``address`` (``host:port``, ``[v6]:port``, ``unix:path``) stays on this machine."""
    if address.startswith(("unix:", "unix-abstract:")):
        return True
    host = _host(address)
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _read_certificates(value: bytes | str | os.PathLike[str] | None) -> bytes | None:
    if value is None:
        value = os.environ.get(TLS_CA_ENV) or None
        if value is None:
            return None
    if isinstance(value, bytes):
        return value
    try:
        return Path(value).read_bytes()
    except OSError as exc:
        raise BotConnectionError(f"cannot read the certificate authorities in {str(value)!r}: {exc.strerror}") from None


@dataclass(frozen=True, slots=True)
class ChannelSecurity:
    """How to reach a league: TLS with these roots (None: the system's), or plaintext on loopback."""

    root_certificates: bytes | None = None
    insecure: bool = False

    @classmethod
    def of(cls, root_certificates: bytes | str | os.PathLike[str] | None = None, insecure: bool = False) -> ChannelSecurity:
        """From ``root_certificates`` (PEM bytes, or a file), else ``POLIGNAC_TLS_CA``; ``insecure`` forces plaintext on loopback."""
        return cls(None if insecure else _read_certificates(root_certificates), insecure)

    def plaintext(self, address: str) -> bool:
        """Whether ``address`` is reached in plaintext: on loopback, without certificates or when insecure.

        Raises :class:`BotConnectionError` for an insecure address off loopback.
        """
        local = is_loopback(address)
        if self.insecure and not local:
            raise BotConnectionError(f"insecure (plaintext) connections are for loopback addresses only, not {address!r}")
        return local and (self.insecure or self.root_certificates is None)

    def channel(self, address: str) -> grpc.aio.Channel:
        """A channel to ``address`` (with keepalive): plaintext on loopback without certificates (or when insecure), TLS otherwise."""
        if self.plaintext(address):
            return grpc.aio.insecure_channel(address, options=_LEAGUE_OPTIONS)
        credentials = grpc.ssl_channel_credentials(root_certificates=self.root_certificates)
        return grpc.aio.secure_channel(address, credentials, options=_LEAGUE_OPTIONS)

    async def mismatch(self, address: str) -> str | None:
        """One line when this client's TLS choice disagrees with what ``address`` speaks (None: it agrees, or cannot be told)."""
        return await asyncio.to_thread(tls_mismatch, address, not self.plaintext(address))


class Backoff:
    """Exponential delays with jitter between ``low`` and ``high`` seconds."""

    def __init__(self, low: float, high: float) -> None:
        self.low, self.high = low, high
        self._next = low

    def reset(self) -> None:
        self._next = self.low

    def next(self) -> float:
        delay = self._next * random.uniform(0.8, 1.2)
        self._next = min(self.high, self._next * 2)
        return delay


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def play_seat(
    bot: Bot, address: str, seat_token: str, security: ChannelSecurity, grace_s: float, on_status: Status | None = None
) -> MatchOutcome:
    """Play one seat of one match, opening its Play stream again if it breaks, until ``grace_s`` after it broke, plus the
    time the referee may take to find the break (its grace counts from then) and the time a restart of the league may
    take (:data:`RESTART_S`); a league that answers that the seat is gone stops it sooner."""
    state = Conversation()
    backoff = Backoff(*_PLAY_BACKOFF_S)
    broke_at: float | None = None  # when the stream broke: the grace counts from then, not from each try
    welcomes = 0
    while True:
        async with security.channel(address) as channel:
            stub = RefereeServiceStub(channel)
            call = stub.Play(metadata=_auth(seat_token))
            try:
                outcome = await converse(bot, call, state)
                code, details = await call.code(), await call.details()
            except grpc.aio.AioRpcError as exc:
                raise_if_cancelled()
                outcome, code, details = state.outcome, exc.code(), exc.details() or ""
        if outcome.status is not None or code == grpc.StatusCode.OK:
            return outcome
        if code not in REATTACH_CODES:
            raise BotConnectionError(f"the referee ended the stream: {code.name}: {details}")
        now = time.monotonic()
        if state.welcomes > welcomes:
            broke_at = None  # it was back: a new break has a new grace
        welcomes = state.welcomes
        broke_at = broke_at if broke_at is not None else now
        if now - broke_at > grace_s + DETECTION_S + RESTART_S:
            raise BotConnectionError(
                f"the match stream broke ({code.name}: {details}) and could not be opened again"
                f" within {grace_s + DETECTION_S + RESTART_S:g} s"
            )
        if on_status is not None and state.welcomed:
            on_status(f"the match stream broke ({code.name}); opening it again")
        raise_if_cancelled()
        await asyncio.sleep(backoff.next())


PlayAssignment = Callable[[pb.Assignment, str, float], Awaitable[None]]
"""Plays one accepted assignment, given it, the address of its Play stream and the reattach grace in seconds."""
Accepts = Callable[[pb.Assignment], str | None]
"""Whether to take an assignment: None takes it, a reason declines it."""


async def play_in_league(
    bot: Bot,
    server: str,
    token: str,
    security: ChannelSecurity,
    *,
    max_matches: int = 1,
    on_status: Status | None = None,
) -> None:
    """Stay online in the lobby at ``server`` and play every match assigned with ``bot``, until cancelled (see :func:`stay_online`)."""
    say = on_status or _log

    async def play(assignment: pb.Assignment, address: str, grace_s: float) -> None:
        await _play_assignment(bot, assignment, address, security, grace_s, say)

    def accepts(assignment: pb.Assignment) -> str | None:
        try:
            rules = ruleset_from_pb(assignment.rules)
        except PolignacError as exc:
            return f"cannot read the assignment's rules: {exc}"[:200]
        return bot.accepts(rules)

    await stay_online(bot.name, bot.version, server, token, security, play, max_matches=max_matches, on_status=say, accepts=accepts)


async def stay_online(
    name: str,
    version: str,
    server: str,
    token: str,
    security: ChannelSecurity,
    play: PlayAssignment,
    *,
    max_matches: int = 1,
    on_status: Status | None = None,
    accepts: Accepts | None = None,
) -> None:
    """Stay online in the lobby at ``server`` as the bot ``name`` ``version``; ``play`` each match accepted, until cancelled.

    ``accepts`` may decline an assignment (with a reason) before it is played.

    Up to ``max_matches`` matches are played at a time; assignments beyond are declined (the
    league offers one match at a time: one that comes as the last ends waits a moment for it).
    Raises :class:`BotConnectionError` when the league refuses the bot for good (a bad
    token, another author's bot, a protocol it does not speak, another connection of
    the same bot) or speaks TLS where this client does not (or the reverse); any other
    end of the lobby stream is followed by a new one.
    """
    if max_matches < 1:
        raise ValueError(f"max_matches must be at least 1, got {max_matches!r}")
    say = on_status or _log
    lobby = _LobbySession(PROTOCOL_VERSION, name, version, server, token, security, play, max_matches, say, accepts)
    backoff = Backoff(*_LOBBY_BACKOFF_S)
    checked = False  # whether the port's TLS was checked after a failure to connect
    try:
        while True:
            try:
                await lobby.run(backoff)
                reason = "the league closed the lobby stream"
            except grpc.aio.AioRpcError as exc:
                raise_if_cancelled()
                if exc.code() in _FINAL:
                    raise BotConnectionError(f"the league refused the bot: {exc.code().name}: {exc.details()}") from None
                if exc.code() == grpc.StatusCode.UNAVAILABLE and not lobby.joined and not checked:
                    checked = True
                    mismatch = await security.mismatch(server)
                    if mismatch is not None:
                        raise BotConnectionError(f"cannot join the league: {mismatch}") from None
                reason = f"{exc.code().name}: {exc.details()}"
            raise_if_cancelled()
            delay = backoff.next()
            say(f"offline ({reason}); joining again in {delay:.1f} s")
            await asyncio.sleep(delay)
    finally:
        await lobby.close()


def _log(text: str) -> None:
    log.info("%s", text)


class _LobbySession:
    """The bot's side of the lobby, across its streams: the matches it plays outlive any one stream."""

    def __init__(
        self,
        protocol: str,
        name: str,
        version: str,
        server: str,
        token: str,
        security: ChannelSecurity,
        play: PlayAssignment,
        max_matches: int,
        say: Status,
        accepts: Accepts | None,
    ) -> None:
        self.join = pb.Join(protocol_version=protocol, bot_name=name, bot_version=version)
        self.accepts = accepts
        self.server = server
        self.token = token
        self.security = security
        self.play = play
        self.max_matches = max_matches
        self.say = say
        self.matches: dict[str, asyncio.Task[None]] = {}  # match_id -> the task playing it
        self.joined = False
        """Joined at least once: the league's address and TLS are right."""
        self._slot_freed = asyncio.Event()
        self._answers: set[asyncio.Task[None]] = set()

    async def run(self, backoff: Backoff) -> None:
        """One lobby stream: Join, then answer assignments until the stream ends."""
        async with self.security.channel(self.server) as channel:
            stub = LobbyServiceStub(channel)
            call = stub.Lobby(metadata=_auth(self.token))
            await write(call, pb.LobbyRequest(join=self.join))
            event = await call.read()
            if event is grpc.aio.EOF:
                return
            if event.WhichOneof("event") != "joined":
                raise BotConnectionError(f"the league answered Join with {event.WhichOneof('event')!r}, not Joined")
            grace_s = event.joined.reattach_grace_ms / 1000
            backoff.reset()
            self.joined = True
            self.say(f"online as {event.joined.label} at {self.server}")
            writing = asyncio.Lock()  # one write at a time on the stream
            try:
                while (event := await call.read()) is not grpc.aio.EOF:
                    kind = event.WhichOneof("event")
                    if kind == "assignment":
                        answer = asyncio.ensure_future(self._answer(call, writing, event.assignment, grace_s))
                        self._answers.add(answer)
                        answer.add_done_callback(self._answers.discard)
                    elif kind == "withdrawn":
                        self._withdrawn(event.withdrawn)
                    elif kind == "paused":
                        paused = event.paused
                        self.say(f"paused: {paused.reason[:500]} ({paused.pause_ms / 1000:g} s)")
                    # Any other event is a later version's: not for this client.
            finally:
                for answer in list(self._answers):
                    answer.cancel()

    async def _answer(self, call: grpc.aio.StreamStreamCall, writing: asyncio.Lock, assignment: pb.Assignment, grace_s: float) -> None:
        """Accept ``assignment`` (waiting a moment for a slot if none is free) or decline it; start playing it."""
        refusal = self.accepts(assignment) if self.accepts is not None else None
        if refusal is not None:
            self.say(f"declining match {assignment.match_id[:64]}: {refusal[:200]}")
            await self._reply(call, writing, pb.AssignmentReply(match_id=assignment.match_id, accept=False, reason=refusal[:200]))
            return
        if self._busy() >= self.max_matches:
            wait_s = min(_SLOT_WAIT_S, assignment.reply_ms / 2000)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait_s):
                    while self._busy() >= self.max_matches:
                        self._slot_freed.clear()
                        await self._slot_freed.wait()
        busy = self._busy()
        accept = busy < self.max_matches
        reason = "" if accept else f"busy: playing {busy} match{'es' if busy > 1 else ''}"
        if accept:  # the task is there before the reply leaves: a Withdrawn that follows finds it
            task = asyncio.ensure_future(self.play(assignment, assignment.address or self.server, grace_s))
            self.matches[assignment.match_id] = task
            task.add_done_callback(lambda _: self._ended(assignment.match_id, task))
        await self._reply(call, writing, pb.AssignmentReply(match_id=assignment.match_id, accept=accept, reason=reason))

    @staticmethod
    async def _reply(call: grpc.aio.StreamStreamCall, writing: asyncio.Lock, reply: pb.AssignmentReply) -> None:
        """Write one reply; a stream that has ended takes none (its reader sees the end and the lobby is joined again)."""
        with contextlib.suppress(grpc.aio.AioRpcError, BotConnectionError):
            async with writing:
                await write(call, pb.LobbyRequest(reply=reply))

    def _busy(self) -> int:
        return sum(not task.done() for task in self.matches.values())

    def _ended(self, match_id: str, task: asyncio.Task[None]) -> None:
        if self.matches.get(match_id) is task:
            del self.matches[match_id]
        self._slot_freed.set()

    def _withdrawn(self, withdrawn: pb.Withdrawn) -> None:
        match_id = withdrawn.match_id[:64]
        task = self.matches.get(withdrawn.match_id)
        if task is not None and not task.done():
            task.cancel()
        self.say(f"match {match_id} withdrawn before it began: {withdrawn.reason[:500]}")

    async def close(self) -> None:
        tasks = [*self._answers, *self.matches.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _play_assignment(
    bot: Bot, assignment: pb.Assignment, address: str, security: ChannelSecurity, grace_s: float, say: Status
) -> None:
    match_id = assignment.match_id[:64]
    say(f"playing match {match_id} (seat {assignment.seat})")
    try:
        outcome = await play_seat(bot, address, assignment.seat_token, security, grace_s, say)
    except BotConnectionError as exc:
        say(f"match {match_id}: {exc}")
        return
    except Exception as exc:  # the bot's own code failed: this match is lost, the bot stays online
        log.exception("match %s: the bot failed", match_id)
        say(f"match {match_id}: the bot failed: {exc!r}")
        return
    status = outcome.status.value if outcome.status is not None else "ended without a result"
    say(f"match {match_id} {status}: places {list(outcome.places)}, totals {list(outcome.totals)}")
