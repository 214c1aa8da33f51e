"""The league's lobby: LobbyService.Lobby, where bots that run on their authors' machines are online.

A bot's Lobby stream carries its author's API token.  The stream is checked against a
:class:`LobbyDirectory` (the league's store of authors, tokens and bots), which names the
author of a token and lets that author claim a bot; the bot is then online in
:class:`OnlineBots`, the registry the ladder reads and assigns matches through.  The flow,
statuses and limits are in docs/protocol.md, "Remote bots".

One stream per bot label: a second Join of a label that is online replaces the first
stream, which ends with ``ABORTED`` (a restarted bot is back at once, without waiting
for the server to notice that its old connection is dead).

Besides Assignments, the lobby tells a bot when a match it was offered is called off
(``Withdrawn``: another bot declined) and when the ladder leaves it out for a while
(``Paused``: it declined or did not answer), so that nobody waits for what will not come.
"""

from __future__ import annotations

import asyncio
import collections
import datetime as dt
import logging
import time
from collections.abc import AsyncIterator, Callable, Container
from dataclasses import dataclass, field
from typing import Final, Protocol

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

from polignac import Ruleset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.wire import ruleset_to_pb
from polignac_arena.league.grpc_front import direct_peer
from polignac_arena.peers import peer_host as peer_address
from polignac_arena.referee.service import serve_stream
from polignac_arena.referee.versions import SPOKEN, parse_version
from polignac_arena.settings import NAME_MAX, VERSION_MAX, TimeControl, is_display_name, is_version_text

__all__ = [
    "LOBBY_SERVICE_NAME",
    "AssignmentSpec",
    "ClaimRefused",
    "LobbyDirectory",
    "LobbyService",
    "OnlineBot",
    "OnlineBots",
    "peer_address",
]

log = logging.getLogger(__name__)
LOBBY_SERVICE_NAME: Final = pb.DESCRIPTOR.services_by_name["LobbyService"].full_name
MAX_UNSOLICITED: Final = 16
"""Replies that answer no pending assignment a stream may send before it is closed."""
MAX_REASON: Final = 200
"""Characters of a decline's reason that are kept (the rest is dropped)."""
MAX_WITHDRAWN: Final = 64
"""Withdrawn matches a session remembers, so that a late reply to one is not counted as unsolicited."""


class ClaimRefused(Exception):
    """The directory will not let this author connect this bot: ``code`` is the status the stream ends with."""

    def __init__(self, reason: str, code: grpc.StatusCode = grpc.StatusCode.FAILED_PRECONDITION) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


class LobbyDirectory(Protocol):
    """What the lobby needs of the league's store; its methods may block (they run in a thread)."""

    def author_of(self, token: str, peer: str) -> str | None:
        """The author whose API token this is; None for a missing, unknown or revoked token.

        The directory throttles bad tokens by ``peer`` (gRPC's ``context.peer()``: count them by
        :func:`peer_address`) itself, and may block to do so.
        """
        ...

    def claim(self, author: str, bot_name: str, bot_version: str) -> str:
        """The label ("name@version") under which ``author``'s bot is online.

        Raises :class:`ClaimRefused`: ``PERMISSION_DENIED`` for another author's bot,
        ``FAILED_PRECONDITION`` for a disabled bot or a limit reached.
        """
        ...


@dataclass(frozen=True, slots=True)
class AssignmentSpec:
    """A match to offer an online bot (the Assignment message, in Python)."""

    match_id: str
    seat: int
    seat_token: str
    address: str
    """Where the bot opens its Play stream; empty: the address its Lobby stream reached."""
    rules: Ruleset
    time_control: TimeControl
    reply_ms: int = 5000

    def to_pb(self) -> pb.Assignment:
        tc = self.time_control
        return pb.Assignment(
            match_id=self.match_id,
            seat=self.seat,
            seat_token=self.seat_token,
            address=self.address,
            rules=ruleset_to_pb(self.rules),
            time_control=pb.TimeControl(move_ms=tc.move_ms, bank_ms=tc.bank_ms, startup_ms=tc.startup_ms),
            reply_ms=self.reply_ms,
        )


@dataclass(frozen=True, slots=True)
class OnlineBot:
    """One bot online in the lobby, as the ladder sees it."""

    label: str
    name: str
    version: str
    author: str
    since: dt.datetime
    busy: int
    """Matches it accepted that the ladder has not reported finished (:meth:`OnlineBots.finished`)."""


@dataclass(eq=False)
class _Session:
    """The league's end of one Lobby stream."""

    label: str
    name: str
    version: str
    author: str
    context: grpc.aio.ServicerContext[object, object]
    write_timeout_s: float
    since: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    pending: dict[str, asyncio.Future[bool]] = field(default_factory=dict)
    busy: set[str] = field(default_factory=set)
    withdrawn: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=MAX_WITHDRAWN))
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    status: tuple[grpc.StatusCode, str] | None = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def send(self, event: pb.LobbyEvent) -> bool:
        """Write one event; False (and the session ended) if it cannot be written in time."""
        if self.ended.is_set():
            return False
        try:
            async with self._lock, asyncio.timeout(self.write_timeout_s):
                await self.context.write(event)
            return True
        except Exception as exc:  # grpc raises several kinds when a stream is gone; a timeout too
            log.info("lobby: write to %s failed: %r", self.label, exc)
        self.end(None)
        return False

    def end(self, status: tuple[grpc.StatusCode, str] | None) -> None:
        """End the stream (with ``status``, or OK / as it broke): the handler returns, and pending assignments are declined."""
        if self.ended.is_set():
            return
        self.status = status
        self.ended.set()
        for future in self.pending.values():
            if not future.done():
                future.set_result(False)


class OnlineBots:
    """The bots online in the lobby: what the ladder lists, assigns matches to, and waits on."""

    def __init__(self, on_change: Callable[[], None] | None = None) -> None:
        self._sessions: dict[str, _Session] = {}
        self._names: dict[str, int] = {}  # bot name -> its sessions in _sessions
        self._changed = asyncio.Event()
        self._on_change = on_change
        self._pauses: dict[str, tuple[float, str]] = {}  # label -> (time.monotonic() it ends, why)
        self._notices: set[asyncio.Future[bool]] = set()  # events on their way (kept so they are not collected)

    def online(self) -> list[OnlineBot]:
        """The bots online now, by label."""
        return [
            OnlineBot(s.label, s.name, s.version, s.author, s.since, len(s.busy))
            for label, s in sorted(self._sessions.items())
            if not s.ended.is_set()
        ]

    def names(self) -> Container[str]:
        """The names of the bots whose Lobby streams are open (one ending counts until its handler returns), to ask
        whether a name is among them.

        Unlike :meth:`online` it costs nothing per bot: each Join asks it, from a thread, about
        its author's bots.  It is a live view, and any thread may ask it ``in``, which is one
        dictionary look-up; iterating over it is for the event loop's thread only.
        """
        return self._names.keys()

    async def changed(self) -> None:
        """Return at the next change: a bot came online or went offline."""
        await self._changed.wait()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()
        if self._on_change is not None:
            self._on_change()

    async def assign(self, label: str, spec: AssignmentSpec) -> bool:
        """Offer ``spec`` to the bot ``label``: True when it accepts, False when it declines, is gone or is offline.

        A bot that does not answer within ``spec.reply_ms`` is taken offline: its stream
        ends with ``DEADLINE_EXCEEDED``.
        """
        session = self._sessions.get(label)
        if session is None or session.ended.is_set():
            return False
        if spec.match_id in session.pending or spec.match_id in session.busy:
            raise ValueError(f"match {spec.match_id!r} is already assigned to {label!r}")
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        session.pending[spec.match_id] = future
        try:
            if not await session.send(pb.LobbyEvent(assignment=spec.to_pb())):
                return False
            try:
                async with asyncio.timeout(spec.reply_ms / 1000):
                    accepted = await future
            except TimeoutError:
                detail = f"no answer to assignment {spec.match_id!r} within {spec.reply_ms} ms: the bot is taken offline"
                log.info("lobby: %s: %s", label, detail)
                session.end((grpc.StatusCode.DEADLINE_EXCEEDED, detail))
                return False
        finally:
            session.pending.pop(spec.match_id, None)
        if accepted and not session.ended.is_set():
            session.busy.add(spec.match_id)
            return True
        return False

    def finished(self, label: str, match_id: str) -> None:
        """The match ``match_id`` that ``label`` accepted is over: it no longer counts as busy."""
        session = self._sessions.get(label)
        if session is not None:
            session.busy.discard(match_id)

    def kick(self, label: str, code: grpc.StatusCode, detail: str) -> bool:
        """End the Lobby stream of ``label`` with ``code`` and ``detail``; False when it is not online."""
        session = self._sessions.get(label)
        if session is None or session.ended.is_set():
            return False
        session.end((code, detail))
        return True

    def withdraw(self, label: str, match_id: str, reason: str) -> None:
        """Tell ``label`` that the match ``match_id`` it was offered is called off (``Withdrawn``); a pending offer is dropped."""
        session = self._sessions.get(label)
        if session is None or session.ended.is_set():
            return
        session.withdrawn.append(match_id)
        session.busy.discard(match_id)
        future = session.pending.get(match_id)
        if future is not None and not future.done():
            future.set_result(False)
        log.info("lobby: %s: match %s withdrawn: %s", label, match_id, reason)
        self._tell(session, pb.LobbyEvent(withdrawn=pb.Withdrawn(match_id=match_id, reason=reason[:500])))

    def pause(self, label: str, seconds: float, reason: str) -> None:
        """Note that the ladder leaves ``label`` out for ``seconds``, and tell it why (``Paused``), now and when it joins again."""
        now = time.monotonic()
        for ended in [other for other, (until, _) in self._pauses.items() if until <= now]:
            del self._pauses[ended]  # kept only while they last: one per bot paused now
        self._pauses[label] = (now + seconds, reason)
        session = self._sessions.get(label)
        if session is not None:
            self._tell(session, self._paused_event(label))

    def _paused_event(self, label: str) -> pb.LobbyEvent | None:
        until, reason = self._pauses.get(label, (0.0, ""))
        left_ms = int((until - time.monotonic()) * 1000)
        if left_ms <= 0:
            self._pauses.pop(label, None)
            return None
        return pb.LobbyEvent(paused=pb.Paused(pause_ms=left_ms, reason=reason[:500]))

    def _tell(self, session: _Session, event: pb.LobbyEvent | None) -> None:
        if event is None:
            return
        notice = asyncio.ensure_future(session.send(event))
        self._notices.add(notice)
        notice.add_done_callback(self._notices.discard)

    def _add(self, session: _Session) -> None:
        old = self._sessions.get(session.label)
        if old is not None:
            old.end((grpc.StatusCode.ABORTED, f"bot {session.label!r} joined on another stream, which replaces this one"))
        else:
            self._count_name(session.name, 1)
        self._sessions[session.label] = session
        self._notify()

    def _remove(self, session: _Session) -> None:
        if self._sessions.get(session.label) is session:
            del self._sessions[session.label]
            self._count_name(session.name, -1)
        session.end(session.status)
        self._notify()

    def _count_name(self, name: str, step: int) -> None:
        count = self._names.get(name, 0) + step
        if count > 0:
            self._names[name] = count
        else:
            self._names.pop(name, None)


class _Undecodable:
    """A message that is not a LobbyRequest (never None: gRPC reads a None message as no message)."""


def _decode(data: bytes) -> pb.LobbyRequest | _Undecodable:
    request = pb.LobbyRequest()
    try:
        request.ParseFromString(data)
    except DecodeError:
        return _Undecodable()
    return request


def _token(context: grpc.aio.ServicerContext[object, object]) -> str:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
            return value[len("Bearer ") :].strip()
    return ""


def _bad_name(name: str, version: str) -> bool:
    return not is_display_name(name) or not is_version_text(version, empty=True)


class LobbyService:
    """polignac.v1.LobbyService: authenticates each Lobby stream through ``directory`` and keeps the bot online in ``bots``."""

    def __init__(
        self,
        directory: LobbyDirectory,
        bots: OnlineBots | None = None,
        *,
        reattach_grace_ms: int = 10_000,
        join_timeout_s: float = 10.0,
        write_timeout_s: float = 5.0,
        on_offline: Callable[[str], None] | None = None,
        client_peer: Callable[[str], str] = direct_peer,
    ) -> None:
        self.directory = directory
        self.client_peer = client_peer
        """Names the client behind a gRPC peer (the league's front's, when it stands before gRPC)."""
        self.bots = bots if bots is not None else OnlineBots()
        self.reattach_grace_ms = reattach_grace_ms
        self._join_timeout_s = join_timeout_s
        self._write_timeout_s = write_timeout_s
        self._on_offline = on_offline
        """Called (in a thread: it may block) with each label that goes offline."""
        self._noting: set[asyncio.Future[None]] = set()  # on_offline calls under way

    async def settle(self) -> None:
        """Wait for the ``on_offline`` calls under way (before what they write to is closed)."""
        if self._noting:
            await asyncio.gather(*self._noting, return_exceptions=True)

    def add_to(self, server: grpc.aio.Server) -> None:
        """Serve this service on ``server`` (whose options bound the size of a message)."""
        serve_stream(server, LOBBY_SERVICE_NAME, "Lobby", self.Lobby, _decode, pb.LobbyEvent.SerializeToString)

    def _admit(self, token: str, peer: str, join: pb.Join | None) -> tuple[str | None, str | ClaimRefused | None]:
        """The author of ``token`` and, for a known author and a ``join`` to claim, its label or why it is refused.

        In a thread: the directory may block.
        """
        author = self.directory.author_of(token, peer)
        if author is None or join is None:
            return author, None
        try:
            return author, self.directory.claim(author, join.bot_name, join.bot_version)
        except ClaimRefused as exc:
            return author, exc

    async def Lobby(self, request_iterator: AsyncIterator[pb.LobbyRequest], context: grpc.aio.ServicerContext[object, object]) -> None:
        # The Join is read before the token is judged: a call the server ends while the client
        # still writes its first message ends, on the client, with gRPC's own INTERNAL error in
        # place of the status it was sent (UNAUTHENTICATED), and the client would retry.
        timed_out = False
        first: object = None
        try:
            async with asyncio.timeout(self._join_timeout_s):
                first = await context.read()
        except TimeoutError:
            timed_out = True
        join = first.join if isinstance(first, pb.LobbyRequest) and first.WhichOneof("message") == "join" else None
        refusal = None if timed_out else _refusal(join)
        token = _token(context)
        # One trip to a thread for both the token and the claim: the claim is made only for a good token and a
        # well-formed Join, and the refusals keep their order (a bad token first, whatever else is wrong).
        peer = self.client_peer(context.peer())
        author, claimed = await asyncio.to_thread(self._admit, token, peer, None if refusal else join) if token else (None, None)
        if author is None:
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED, "missing, unknown or revoked API token (send 'authorization: Bearer <token>')"
            )
            return
        if timed_out:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, f"no Join within {self._join_timeout_s:g} s")
            return
        if refusal is not None:
            await context.abort(*refusal)
            return
        if isinstance(claimed, ClaimRefused):
            await context.abort(claimed.code, claimed.reason)
            return
        assert join is not None and claimed is not None  # a Join with no refusal is claimed
        label = claimed
        session = _Session(label, join.bot_name, join.bot_version, author, context, self._write_timeout_s)
        # Online before Joined is written: whoever sees Joined may assign at once.  Joined still
        # goes first, as nothing can take the session's write lock before this task does.
        self.bots._add(session)
        reader: asyncio.Future[None] | None = None
        try:
            if await session.send(pb.LobbyEvent(joined=pb.Joined(label=label, reattach_grace_ms=self.reattach_grace_ms))):
                log.info("lobby: %s (author %s) is online", label, author)
                paused = self.bots._paused_event(label)
                if paused is not None:
                    await session.send(paused)
                reader = asyncio.ensure_future(_read_replies(session, context))
                await session.ended.wait()
        finally:
            if reader is not None:
                reader.cancel()
            self.bots._remove(session)
            log.info("lobby: %s is offline", label)
            if self._on_offline is not None:
                noting = asyncio.get_running_loop().run_in_executor(None, self._on_offline, label)
                self._noting.add(noting)
                noting.add_done_callback(self._noting.discard)
        if session.status is not None:
            await context.abort(*session.status)


def _refusal(join: pb.Join | None) -> tuple[grpc.StatusCode, str] | None:
    """Why a stream's first message is refused before the directory is asked about it; None: it is a Join to claim."""
    if join is None:
        return grpc.StatusCode.INVALID_ARGUMENT, "the first message must be a Join"
    if parse_version(join.protocol_version) is None:
        return (
            grpc.StatusCode.FAILED_PRECONDITION,
            f"protocol version {join.protocol_version[:20]!r} is not supported; this league speaks {SPOKEN}",
        )
    if _bad_name(join.bot_name, join.bot_version):
        return grpc.StatusCode.INVALID_ARGUMENT, f"bot_name must be 1 to {NAME_MAX} printable characters, bot_version up to {VERSION_MAX}"
    return None


async def _read_replies(session: _Session, context: grpc.aio.ServicerContext[object, object]) -> None:
    """Hand each AssignmentReply to the assignment it answers, until the stream ends; junk ends the stream."""
    unsolicited = 0
    try:
        while True:
            message = await context.read()
            if message is grpc.aio.EOF:
                session.end(None)
                return
            if not isinstance(message, pb.LobbyRequest) or message.WhichOneof("message") != "reply":
                what = message.WhichOneof("message") if isinstance(message, pb.LobbyRequest) else None
                detail = f"after Join only AssignmentReply messages may be sent, got {what or 'a message that does not decode'}"
                session.end((grpc.StatusCode.INVALID_ARGUMENT, detail))
                return
            reply = message.reply
            if reply.match_id in session.withdrawn:
                continue  # a reply that crossed the Withdrawn on the way
            future = session.pending.get(reply.match_id)
            if future is None or future.done():
                unsolicited += 1
                if unsolicited > MAX_UNSOLICITED:
                    session.end(
                        (grpc.StatusCode.INVALID_ARGUMENT, f"more than {MAX_UNSOLICITED} replies that answer no pending assignment")
                    )
                    return
                continue
            if not reply.accept:
                log.info("lobby: %s declined match %s: %r", session.label, reply.match_id[:64], reply.reason[:MAX_REASON])
            future.set_result(reply.accept)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the stream broke (reset, too large a message, ...)
        log.info("lobby: stream of %s broke: %r", session.label, exc)
        session.end(None)
