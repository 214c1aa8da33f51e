"""The door of a hosted match: who sits at each seat, and what other tasks call on the host.

The referee's service seats streams here (:meth:`SeatDoor.attach`) and posts what they send;
whoever runs the match aborts, calls off or suspends it here.  All of it lands in the
host's inbox, for its task (:class:`polignac_arena.referee.host.MatchHost`) to handle.
"""

from __future__ import annotations

import logging
import secrets
import time

import grpc

from polignac import Match, Ruleset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac_arena.referee import texts
from polignac_arena.referee.inbox import Inbox
from polignac_arena.referee.journal import JournalWriter, token_digest
from polignac_arena.referee.match_end import MatchResult
from polignac_arena.referee.seat_stream import Refusal, SeatConnection

__all__ = ["SeatDoor"]

log = logging.getLogger(__name__)


class SeatDoor:
    """A match's seats and the calls other tasks make on its host (the host's task handles what they post)."""

    def __init__(self, rules: Ruleset, match: Match, match_id: str) -> None:
        self.rules = rules
        self.match = match
        self.match_id = match_id
        self.tokens = tuple(secrets.token_urlsafe(24) for _ in range(rules.players))
        self.token_digests = [token_digest(token) for token in self.tokens]
        """What the referee accepts each seat's stream by (a resumed match knows only the digests of its remote seats')."""
        self.journal: JournalWriter | None = None
        """Where every line of the record goes as it is made, so that a restarted league can resume the match."""
        n = rules.players
        self.conns: list[SeatConnection | None] = [None] * n
        self.names = [f"seat{s}" for s in range(n)]
        self.versions = [""] * n
        self.result: MatchResult | None = None
        self._inbox = Inbox()
        self._aborted: str | None = None
        self._joined = [False] * n  # the seat said Hello once (it may be away now)
        self._grace: dict[int, float] = {}  # seat -> seconds it may be away
        self._away: dict[int, float] = {}  # seat -> time.monotonic() its grace runs out
        self._called_off: str | None = None  # why the match will not be played (call_off)
        self._forfeits: dict[int, str] = {}  # seat -> why it forfeited
        self._suspended: str | None = None  # why the match stops without a result, to be resumed (suspend)

    def allow_reattach(self, seat: int, grace_s: float) -> None:
        """Let ``seat`` come back within ``grace_s`` seconds when its stream breaks, instead of forfeiting at once."""
        if type(seat) is not int or not 0 <= seat < self.rules.players:
            raise ValueError(f"seat must be 0..{self.rules.players - 1}, got {seat!r}")
        if not isinstance(grace_s, int | float) or not 0 < grace_s <= 3600:
            raise ValueError(f"reattach grace must be a number of seconds in (0, 3600], got {grace_s!r}")
        self._grace[seat] = float(grace_s)

    @property
    def _halted(self) -> bool:
        """The match stops here: aborted, or suspended to be resumed."""
        return self._aborted is not None or self._suspended is not None

    def suspend(self, reason: str) -> None:
        """Stop the match without a result, its journal kept, to be resumed when the league starts again: ``run``
        then raises :class:`~polignac_arena.referee.match_end.MatchSuspended` (a match without a journal, or already
        over, is aborted instead)."""
        if self.journal is None or not self.journal.open:
            self.abort(reason)
            return
        # The journal is the state a restart takes up: nothing after this point goes in it.
        self.journal.close()
        self._suspended = reason
        self._inbox.put_nowait((-1, "suspend", reason))  # wakes the match's task, which stops at once

    @property
    def suspended(self) -> bool:
        return self._suspended is not None

    def _suspend_streams(self) -> None:
        """Every stream ends with ``UNAVAILABLE``: a remote seat comes back to the restarted league with its token."""
        for seat, conn in enumerate(self.conns):
            if conn is not None:
                conn.end(grpc.StatusCode.UNAVAILABLE, texts.RESTARTING.format(match_id=self.match_id, seat=seat))
        log.info("match %s suspended: %s", self.match_id, self._suspended)

    @property
    def away(self) -> frozenset[int]:
        """The seats whose stream broke and that may still come back."""
        return frozenset(self._away)

    # -- called from the service (other tasks) --------------------------------------------

    def attach(self, seat: int, conn: SeatConnection) -> Refusal | None:
        """Seat a connection that said Hello; returns why not (a status and its text), or ``None`` when seated.

        A seat allowed to reattach takes its seat from a stream the referee still holds: that
        one ends with ``ABORTED``.
        """
        if self._suspended is not None:
            return grpc.StatusCode.UNAVAILABLE, texts.RESTARTING.format(match_id=self.match_id, seat=seat)
        over = self._called_off is not None or self.result is not None or self._aborted is not None or self.match.is_over
        if over or seat in self.match.forfeited:
            return grpc.StatusCode.FAILED_PRECONDITION, self.closing_words(seat)
        old = self.conns[seat]
        if old is not None:
            if seat not in self._grace:
                return grpc.StatusCode.ALREADY_EXISTS, f"seat {seat} is already connected"
            self.conns[seat] = conn
            old.end(grpc.StatusCode.ABORTED, texts.REPLACED.format(seat=seat))
            log.info("match %s: a new stream of seat %s replaces the one the referee held", self.match_id, seat)
            self._inbox.put_nowait((seat, "replaced", conn))
            return None
        self.conns[seat] = conn
        if self._away.pop(seat, None) is not None:
            # Its name stays the one the record and the other seats know.
            self._inbox.put_nowait((seat, "back", conn))
            return None
        self.names[seat] = conn.name
        self.versions[seat] = conn.version
        self._joined[seat] = True
        self._inbox.put_nowait((seat, "joined", None))
        return None

    def post_message(self, seat: int, conn: SeatConnection, message: pb.PlayRequest) -> None:
        """A message from a seat's stream, stamped with the time it was read: that stops the seat's clock."""
        conn.read_one()
        self._inbox.put_nowait((seat, "message", (message, time.monotonic(), conn)))

    def post_undecodable(self, seat: int, conn: SeatConnection, reason: str) -> None:
        """A message from a seat's stream that is not a PlayRequest (bad protobuf, bad UTF-8)."""
        conn.read_one()
        self._inbox.put_nowait((seat, "undecodable", (reason, conn)))

    def post_closed(self, seat: int, conn: SeatConnection) -> None:
        """The bot closed its side of the stream (a half-close): it may still read ours."""
        if self.conns[seat] is conn:
            self._inbox.put_nowait((seat, "closed", conn))

    def post_gone(self, seat: int, conn: SeatConnection) -> None:
        """A seat's stream ended (or broke)."""
        if self.conns[seat] is conn:
            self._inbox.put_nowait((seat, "gone", conn))

    def post_exit(self, seat: int, code: int | None) -> None:
        """The process of a seat exited (reported by whoever started it)."""
        self._inbox.put_nowait((seat, "exited", code))

    def abort(self, reason: str) -> None:
        """Stop the match as soon as possible; it is recorded as aborted."""
        self._inbox.put_nowait((-1, "abort", reason))

    def call_off(self, reason: str) -> None:
        """The match will not be played: nobody is welcomed, streams that said Hello end now with
        ``FAILED_PRECONDITION`` and ``reason``, later ones are refused so; run it to let it end."""
        if self._called_off is not None:
            return
        self._called_off = reason
        for seat, conn in enumerate(self.conns):
            if conn is not None:
                if self._suspended is not None:  # a resumed match stopped again before it ran: its seats come back later
                    conn.end(grpc.StatusCode.UNAVAILABLE, texts.RESTARTING.format(match_id=self.match_id, seat=seat))
                else:
                    conn.end(grpc.StatusCode.FAILED_PRECONDITION, self.closing_words(seat))
        self.abort(f"called off before it began: {reason}")

    def closing_words(self, seat: int) -> str:
        """Why the token of ``seat`` cannot take its seat any more: the text a late stream is refused with."""
        if self._called_off is not None:
            return texts.CALLED_OFF.format(match_id=self.match_id, reason=self._called_off)
        over = self.result is not None or self._aborted is not None or self.match.is_over
        why = self._forfeits.get(seat)
        if why is not None:
            now = "the match is over" if over else "the match goes on without it"
            return texts.FORFEITED.format(seat=seat, match_id=self.match_id, why=why, now=now)
        status = self.result.status.value if self.result is not None else ("aborted" if self._aborted is not None else "finished")
        return texts.MATCH_OVER.format(match_id=self.match_id, status=status)
