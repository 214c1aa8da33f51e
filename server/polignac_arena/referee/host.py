"""One match hosted by the referee: seats, the clock, faults, events, the record.

The host runs as one asyncio task.  Everything that seats send (decisions, junk,
disconnects) and everything from outside (a bot's process exiting, an abort) arrives in
one inbox and is handled by that task alone, so the engine is only ever touched from
one place and in a well-defined order.

The clock is the host's: ``time.monotonic`` from the moment a request is written to the
moment its answer is taken from the inbox.  A decision may take ``move_ms``; beyond that
it draws on the seat's bank; the first request to each seat allows ``startup_ms`` instead
of ``move_ms``, whatever becomes of it (a seat that times out on it gets ``move_ms`` next).
gRPC deadlines play no part in it.

Every seat hears the Welcome first: a seat's stream is read from its Welcome on (what it
sends before waits in the stream), and a departure before the Welcomes is judged after
them.  A seat that forfeits is no longer read, but its stream stays open until the match
ends and it receives MatchEnded like the others.

A seat allowed to reattach (:meth:`MatchHost.allow_reattach`, for bots that play over the
network) whose stream breaks mid-match is *away* rather than forfeited: its clock runs on
(a request pending or made while it is away times out at its deadline, as ever), and a new
stream with its token and a Hello within the grace takes the seat back.  It hears a Welcome
again, then the pending request, if one is pending, with the current view and the time
left; what happened while it was away is in that view, not replayed as events.  A new
stream with its token also takes the seat from a stream the referee still holds (one whose
connection died without a word): the old stream ends with ``ABORTED``.  For such a seat a
half-close is a departure too: its stream ends with ``UNAVAILABLE`` and the seat is away;
past the grace the seat forfeits as DISCONNECTED.

A stream the referee ends on its own ends with the status its :class:`SeatConnection`
holds (:attr:`SeatConnection.end_status`); the texts are in docs/protocol.md.

Beside this module: the seats and the calls of other tasks (:mod:`.seat_door`), the events
each seat is sent (:mod:`.seat_events`), a decision read (:mod:`.decision_reading`), what a
fault does (:mod:`.fault_effects`) and how the match ends (:mod:`.match_end`).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import grpc

from polignac import Card, Contract, Match, Phase, Ruleset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.events import HandEnded
from polignac.values import Forfeit, Penalty
from polignac.wire import TrickMessages, request_to_pb, ruleset_to_pb
from polignac_arena.decision_notes import AnswerNotes
from polignac_arena.record_lines import (
    ActionLine,
    AwayLine,
    BackLine,
    FaultLine,
    HandEndedLine,
    JsonLine,
    RecordLine,
    RerunOf,
    ResumedLine,
)
from polignac_arena.referee import texts
from polignac_arena.referee.decision_reading import Malformed, read_decision
from polignac_arena.referee.fault_effects import apply_ruling, exit_fault, fault_notice
from polignac_arena.referee.faults import Fault, rule_on_fault
from polignac_arena.referee.inbox import InboxItem
from polignac_arena.referee.journal import JournalState
from polignac_arena.referee.match_end import MatchResult, MatchSuspended, header_line, match_ended, result_line
from polignac_arena.referee.record import write_record
from polignac_arena.referee.seat_door import SeatDoor
from polignac_arena.referee.seat_events import SeatEvents
from polignac_arena.referee.seat_stream import SeatConnection
from polignac_arena.settings import TimeControl
from polignac_arena.statuses import ActionStatus, MatchStatus

__all__ = ["MAX_REQUEST_ID", "MatchHost"]

log = logging.getLogger(__name__)

# How long to wait for a bot's process to be reported dead after its stream ends,
# to tell CRASHED from DISCONNECTED.
_EXIT_PROBE_S = 0.5
MAX_REQUEST_ID = (1 << 53) - 1
"""Request ids stay at or below this, so that clients holding numbers as doubles (JSON) keep them exact."""

# What a seat can send or suffer before the Welcomes: judged after them, so the Welcome comes first.
_SEAT_KINDS = frozenset({"message", "undecodable", "closed", "gone", "exited"})


class MatchHost(SeatDoor):
    """Hosts one match: create it, hand each bot its token, then ``await host.run()``.

    What other tasks call on it (seating streams, posting what they send, stopping the
    match) is its :class:`~polignac_arena.referee.seat_door.SeatDoor`'s.
    """

    def __init__(
        self,
        rules: Ruleset,
        seed: int,
        time_control: TimeControl | None = None,
        *,
        match_id: str | None = None,
        record_path: Path | None = None,
        exit_status: Callable[[int], Awaitable[int | None]] | None = None,
        reattach_grace_s: Mapping[int, float] | None = None,
        rerun: RerunOf | None = None,
    ) -> None:
        match = Match(rules, seed) if rerun is None else rerun.start.match(rules, seed)
        super().__init__(rules, match, match_id or secrets.token_hex(6))
        self.rerun = rerun
        """The match this one reruns from one of its hands (its deals and totals), if any."""
        self.seed = seed
        self.time_control = time_control or TimeControl()
        self.record_path = record_path
        n = rules.players
        self.fault_counts: list[dict[str, int]] = [{} for _ in range(n)]
        self._faults = [0] * n
        self._bank_ms = [float(self.time_control.bank_ms)] * n
        self._asked = [False] * n  # the seat has had its first request (and with it the start-up allowance)
        self._timed_out: list[int | None] = [None] * n  # the request of each seat that timed out last
        self._events = SeatEvents(n)
        self._pb_tricks = TrickMessages()  # this hand's completed tricks, public to every seat
        self._exit_status = exit_status
        self._request_id = secrets.randbelow(1 << 20)  # not guessable from 0, and far below MAX_REQUEST_ID
        self._pending: tuple[int, int] | None = None  # (seat, request_id) awaited now
        self._withdrawn: set[tuple[int, int]] = set()  # requests a forfeit made moot: late answers are not faults
        self._lines: list[RecordLine] = []
        self._recorded_events = 0
        self.started_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        self.seated = asyncio.Event()
        """Set once seating is over: every seat has joined or forfeited, so no seat can join any more."""
        self.on_message_sent: Callable[[int, pb.PlayResponse], None] | None = None
        """Test hook: called with every message the host sends to a seat."""
        self.notes = AnswerNotes(n)
        """Each answer's debug text and stderr, put on its line (whoever starts the seats sets ``notes.stderr_of``)."""
        self._pending_clock: tuple[float, float, float] = (0.0, 0.0, 0.0)  # the pending request's start, allowance and bank (ms)
        self.seats_started: float | None = None
        """When the seats were started, on ``time.monotonic()``, if that was before the run (seats started ahead): their
        start-up allowance counts from then, as it does from the run for seats started just before it (None: from the run)."""
        self.on_first_request: Callable[[float], object] | None = None
        """Called once, with ``time.monotonic()``, as the match's first decision request goes out (a league's table refill time)."""
        for seat, grace_s in (reattach_grace_s or {}).items():
            self.allow_reattach(seat, grace_s)

    def restore(self, state: JournalState, away_detail: str) -> None:
        """Take up the match where its journal left it (before the match is registered or run).

        The remote seats (those the journal has a token digest for) are away from now, with
        their grace (:meth:`allow_reattach` first), and come back with their old seat tokens; the
        other seats join anew with this host's tokens.  The record goes on from the journal's
        lines, with a ``resumed`` line and an ``away`` line per remote seat (``away_detail``).
        """
        head = state.head
        self.match = state.match
        self._lines = list(state.lines)
        self.started_at = head.started_at
        self._recorded_events = self.match.event_count
        for seat in range(self.rules.players):
            self._events.catch_up(seat, self.match)  # the next view is complete: no old events
        if state.names is not None and state.versions is not None:
            self.names, self.versions = list(state.names), list(state.versions)
        for seat, bank in state.banks.items():
            self._bank_ms[seat] = bank
        request_ids = [line.request_id or 0 for line in self._lines if isinstance(line, ActionLine | FaultLine)]
        if any(request_ids):
            self._request_id = max(request_ids) % MAX_REQUEST_ID
        for line in self._lines:  # the fault counts, as _fault made them: one per fault, a penalty being part of one
            if isinstance(line, FaultLine):
                self._count_fault(line.seat, line.fault.value)
            elif isinstance(line, ActionLine) and line.seat is not None and line.status not in (None, ActionStatus.OK):
                if isinstance(line.action, Penalty):
                    continue
                self._count_fault(line.seat, line.status.value)
                if isinstance(line.action, Forfeit):
                    self._forfeits[line.seat] = f"{line.status.value}: {line.detail or ''}"
        # A stop between a hand's last action and its end line left the line out: a replay needs it in its place.
        ended = [event for event in self.match.events if isinstance(event, HandEnded)]
        for event in ended[sum(isinstance(line, HandEndedLine) for line in self._lines) :]:
            self._add(HandEndedLine.of(event))
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        hand = self.match.hand_number
        self._add(ResumedLine(hand=hand, at=now, detail="the league server stopped during this match; it resumed it from its journal"))
        for seat, digest in enumerate(head.remote):
            if digest is None or seat in self.match.forfeited:
                continue
            self.token_digests[seat] = digest
            self._joined[seat] = True
            grace = self._grace.get(seat)
            if grace is None:
                continue  # no grace here: it must say Hello within startup_ms, as at a start
            self._away[seat] = time.monotonic() + grace
            self._add(AwayLine(seat=seat, hand=hand, detail=f"{away_detail}; it may come back within {grace:g} s"))

    def _count_fault(self, seat: int, kind: str) -> None:
        self._faults[seat] += 1
        self.fault_counts[seat][kind] = self.fault_counts[seat].get(kind, 0) + 1

    def _add(self, line: RecordLine) -> None:
        """One more line of the record, journaled as it is made."""
        line = self.notes.on_line(line, len(self._lines))
        self._lines.append(line)
        if self.journal is not None:
            self.journal.write(line.to_dict())

    def _journal(self, line: JsonLine, *, flush: bool = True) -> None:
        """A line only the journal keeps (names, time banks); ``flush=False`` for one that the next line flushes."""
        if self.journal is not None:
            self.journal.write(line, flush=flush)

    # -- the match ------------------------------------------------------------------------

    async def run(self) -> MatchResult:
        """Play the whole match and return its result (never raises for a bot's behaviour)."""
        status = MatchStatus.FINISHED
        try:
            if not self.match.is_over:  # a resumed match may have had its last action before the stop
                await self._seat_everyone()
            while not self.match.is_over and not self._halted:
                await self._turn()
            if self._suspended is not None and not self.match.is_over:
                self._suspend_streams()
                raise MatchSuspended(self.match_id, self._suspended)
            if self._aborted is not None:
                status = MatchStatus.ABORTED
        except MatchSuspended:
            raise
        except Exception:  # a bug here must not take the referee down: record it as an error
            log.exception("match %s failed", self.match_id)
            status = MatchStatus.ERROR
        return await self._finish(status)

    async def _seat_everyone(self) -> None:
        since = time.monotonic() if self.seats_started is None else self.seats_started
        deadline = since + self.time_control.startup_ms / 1000
        n = self.rules.players
        later: list[InboxItem] = []  # what befell seated seats before their Welcome
        # An away seat (a remote one, after the league restarted) is not waited for: it has its grace.
        while not self._halted and any(self.conns[s] is None and s not in self.match.forfeited and s not in self._away for s in range(n)):
            item = await self._next_item(deadline)
            if item is None:
                break
            if item[1] in _SEAT_KINDS and self.conns[item[0]] is not None:
                later.append(item)
            else:
                await self._handle_item(item)
        for seat in range(n):
            if self._halted or seat in self._away:
                continue
            if self.conns[seat] is None and seat not in self.match.forfeited and not self.match.is_over:
                await self._fault(seat, Fault.TIMEOUT, f"did not connect and say Hello within {self.time_control.startup_ms} ms", 0)
        self.seated.set()
        self._journal({"type": "seated", "names": list(self.names), "versions": list(self.versions)})
        await self._welcome_everyone()
        for item in later:
            if not self._halted:
                await self._handle_item(item)

    async def _welcome_everyone(self) -> None:
        if self._called_off is not None or self._suspended is not None:
            return  # nobody hears a Welcome for a match that will not be played (here: a suspended one goes on later)
        for seat, conn in enumerate(self.conns):
            if conn is not None and seat not in self.match.forfeited and not conn.welcomed.is_set():
                await self._welcome(seat, conn)

    async def _welcome(self, seat: int, conn: SeatConnection) -> None:
        tc = self.time_control
        welcome = pb.Welcome(
            match_id=self.match_id,
            seat=seat,
            ruleset=ruleset_to_pb(self.rules),
            time_control=pb.TimeControl(move_ms=tc.move_ms, bank_ms=tc.bank_ms, startup_ms=tc.startup_ms),
            seat_names=self.names,
        )
        # The Welcome travels alone: a bot must know its seat before it reads any event.
        await self._send(seat, pb.PlayResponse(welcome=welcome), with_events=False)
        conn.welcomed.set()

    async def _next_item(self, deadline: float) -> InboxItem | None:
        """The next inbox item, or None once ``deadline`` (on ``time.monotonic``) has passed.

        An away seat whose grace runs out first yields a ``grace_over`` item instead.
        """
        while True:
            soonest = min(self._away.values(), default=deadline)
            item = await self._inbox.get_until(min(deadline, soonest))
            if item is not None:
                if item[1] == "message" or item[1] == "undecodable":
                    item[2][-1].took_one()
                return item
            now = time.monotonic()
            for seat, until in self._away.items():
                if until <= now:
                    return (seat, "grace_over", None)
            if now >= deadline:
                return None

    async def _turn(self) -> None:
        match = self.match
        seat = match.to_act
        assert seat is not None
        conn = self.conns[seat]
        if conn is not None and conn.broken and seat in self._grace:
            self._go_away(seat, conn, "lost its stream")
            conn = None
        if (conn is None and seat not in self._away) or (conn is not None and conn.broken):
            # A seat without a working stream cannot answer; its departure is in the inbox or overdue.
            await self._fault(seat, Fault.DISCONNECTED, texts.NO_STREAM, 0)
            return
        self.notes.catch_up(self._lines, (seat,))
        tc = self.time_control
        self._request_id = self._request_id + 1 if self._request_id < MAX_REQUEST_ID else 1
        request_id = self._request_id
        view = match.view(seat)
        allowance = tc.move_ms if self._asked[seat] else max(tc.move_ms, tc.startup_ms)
        self._asked[seat] = True
        bank = self._bank_ms[seat]
        # The whole message, pending events included, is composed before the clock starts.
        request = request_to_pb(request_id, view, allowance, int(bank), self._pb_tricks)
        message = pb.PlayResponse(events=self._events.since_last(seat, self.match, self._away), decision_request=request)
        start = time.monotonic()
        if self.on_first_request is not None:
            first, self.on_first_request = self.on_first_request, None
            first(start)
        deadline = start + (allowance + bank) / 1000
        self._pending = (seat, request_id)
        self._pending_clock = (start, allowance, bank)
        await self._send(seat, message, with_events=False)  # an away seat is sent it when it is back
        hand, state = match.hand_number, match.event_count
        while True:
            item = await self._next_item(deadline)
            if item is not None:
                who, kind, payload = item
                answer = (
                    kind == "message"
                    and who == seat
                    and payload[0].WhichOneof("message") == "decision"
                    and payload[0].decision.request_id == request_id
                )
                if answer and payload[1] >= deadline:
                    # It waited in the inbox behind slow work (another seat's stuck write): the
                    # clock is its arrival, so it is the late answer, dropped, and this a timeout.
                    log.info("match %s: seat %s answered request %s after its deadline; dropped", self.match_id, seat, request_id)
                    item = None
            if item is None:
                self._pending = None
                self._bank_ms[seat] = 0.0
                self._journal({"type": "bank", "seat": seat, "bank_ms": 0.0}, flush=False)  # the timeout's line follows
                self._timed_out[seat] = request_id
                ms = (time.monotonic() - start) * 1000
                self.notes.expect(seat, request_id, "")
                await self._fault(seat, Fault.TIMEOUT, f"no decision within {allowance + bank:.0f} ms", request_id, ms=ms, answers=True)
                return
            if answer:
                self._pending = None
                message, received_at, _ = payload
                ms = (received_at - start) * 1000
                self._bank_ms[seat] = max(0.0, bank - max(0.0, ms - allowance))
                self._journal({"type": "bank", "seat": seat, "bank_ms": self._bank_ms[seat]}, flush=False)  # the decision's line follows
                self.notes.expect(seat, request_id, message.decision.debug)
                await self._judge_decision(seat, request_id, view.phase, message.decision, ms)
                return
            await self._handle_item(item)
            if self._halted or match.is_over or match.event_count != state or match.hand_number != hand:
                # Someone else's forfeit changed the table: this request no longer stands.
                self._pending = None
                self._withdrawn.add((seat, request_id))
                return

    async def _judge_decision(self, seat: int, request_id: int, phase: Phase, decision: pb.Decision, ms: float) -> None:
        reading = read_decision(decision, phase, self.rules)
        if isinstance(reading, Malformed):
            await self._fault(seat, Fault.MALFORMED, reading.detail, request_id, reading.reply, ms, answers=True)
            return
        await self._apply_or_fault(seat, request_id, reading.decision, reading.reply, ms)

    async def _apply_or_fault(self, seat: int, request_id: int, decision: Card | Contract, reply: str, ms: float) -> None:
        match = self.match
        if not match.is_legal(decision):
            legal = ", ".join(str(d) for d in match.legal_decisions())
            await self._fault(seat, Fault.ILLEGAL, f"{reply!r} is not legal now; legal: {legal}", request_id, reply, ms, answers=True)
            return
        hand = match.hand_number
        match.apply(decision)
        self._add(
            ActionLine(
                seat=seat,
                hand=hand,
                action=str(decision),
                request_id=request_id,
                reply=reply,
                status=ActionStatus.OK,
                ms=round(ms, 3),
            )
        )
        self._note_hand_ends()

    # -- everything that is not the awaited decision ----------------------------------------

    async def _handle_item(self, item: InboxItem) -> None:
        seat, kind, payload = item
        if kind == "abort":
            self._aborted = str(payload)
            return
        if kind == "suspend":
            return
        if kind == "joined":
            return
        if kind == "back":
            await self._back(seat, payload)
            return
        if kind == "replaced":
            self._add(
                AwayLine(
                    seat=seat, hand=self.match.hand_number, detail="a new stream with its seat token replaced the one the referee held"
                )
            )
            if self.seated.is_set():
                await self._back(seat, payload)  # welcomed again, asked again
            else:
                self._add(BackLine(seat=seat, hand=self.match.hand_number))  # welcomed with everyone
            return
        if seat in self.match.forfeited or self.match.is_over:
            return  # a forfeited seat's leftovers
        if kind in ("gone", "closed") and payload is not self.conns[seat]:
            return  # the end of a stream the seat has already left (it is away, or back on a new one)
        if kind == "grace_over":
            grace = self._grace[seat]
            if self._away.pop(seat, None) is not None:
                await self._fault(seat, Fault.DISCONNECTED, texts.NOT_BACK.format(grace=f"{grace:g}"), 0)
            return
        if kind == "message":
            message = payload[0]
            what = message.WhichOneof("message")
            if what == "decision":
                await self._unawaited_decision(seat, message.decision.request_id)
            else:
                await self._fault(seat, Fault.MALFORMED, f"unexpected {what or 'empty'} message after Hello", 0)
        elif kind == "undecodable":
            reason = payload[0]
            log.info("match %s: seat %s sent a message that is not a PlayRequest: %s", self.match_id, seat, reason)
            await self._fault(seat, Fault.MALFORMED, f"a message that is not a PlayRequest ({reason})", 0)
        elif kind == "exited":
            await self._fault(seat, *exit_fault(payload), 0)
        elif kind in ("gone", "closed"):
            conn = self.conns[seat]
            if conn is not None and kind == "gone":
                conn.broken = True
            code = None
            if self._exit_status is not None:
                # A crash shows first as a broken stream: give the exit status a moment to arrive.
                try:
                    async with asyncio.timeout(_EXIT_PROBE_S):
                        code = await self._exit_status(seat)
                except TimeoutError:
                    code = None
            if code is not None:
                await self._fault(seat, *exit_fault(code), 0)
            elif conn is not self.conns[seat]:
                return  # while the exit status was awaited, a new stream took the seat (attach ended this one)
            elif conn is not None and seat in self._grace:
                self._go_away(seat, conn, "closed its side of the stream (a half-close)" if kind == "closed" else "lost its stream")
            elif kind == "closed":
                await self._fault(seat, Fault.DISCONNECTED, texts.HALF_CLOSED, 0)
            else:
                why = conn.broken_why if conn is not None and conn.broken_why else texts.STREAM_BROKE
                await self._fault(seat, Fault.DISCONNECTED, why, 0)

    def _go_away(self, seat: int, conn: SeatConnection, why: str) -> None:
        """A seat allowed to reattach lost its stream: it is away until it comes back or its grace runs out.

        ``why`` completes "seat N ...".  The stream ends (``UNAVAILABLE``: come back) if it is still open.
        """
        grace = self._grace[seat]
        conn.end(grpc.StatusCode.UNAVAILABLE, texts.AWAY.format(seat=seat, why=why, grace=f"{grace:g}"))
        self.conns[seat] = None
        self._away[seat] = time.monotonic() + grace
        log.info("match %s: seat %s %s; it is away and may come back within %g s", self.match_id, seat, why, grace)
        self._add(AwayLine(seat=seat, hand=self.match.hand_number, detail=f"{why}; it may come back within {grace:g} s"))

    async def _back(self, seat: int, conn: SeatConnection) -> None:
        """An away seat reattached: Welcome it again, then send it the pending request if it is its own."""
        if self.conns[seat] is not conn:
            return
        self._add(BackLine(seat=seat, hand=self.match.hand_number))
        log.info("match %s: seat %s is back", self.match_id, seat)
        # Events it missed are not replayed: the view in its next request is complete.
        self._events.catch_up(seat, self.match)
        await self._welcome(seat, conn)
        pending = self._pending
        if pending is None or pending[0] != seat or self.match.is_over or seat in self.match.forfeited:
            return
        start, allowance, bank = self._pending_clock
        elapsed = (time.monotonic() - start) * 1000
        move_left = max(1, int(allowance - elapsed))
        bank_left = max(0, int(bank - max(0.0, elapsed - allowance)))
        request = request_to_pb(pending[1], self.match.view(seat), move_left, bank_left, self._pb_tricks)
        await self._send(seat, pb.PlayResponse(decision_request=request), with_events=False)

    async def _unawaited_decision(self, seat: int, request_id: int) -> None:
        """A Decision that is not the answer the referee waits for."""
        if (seat, request_id) in self._withdrawn:
            self._withdrawn.discard((seat, request_id))  # another seat's forfeit made the request moot
            return
        if request_id == self._timed_out[seat]:
            # The answer to the request that just timed out: the timeout was its fault already.
            self._timed_out[seat] = None
            log.info("match %s: seat %s answered request %s after it timed out; dropped", self.match_id, seat, request_id)
            return
        pending = self._pending
        if pending is not None and pending[0] == seat:
            detail = f"request_id {request_id} is not the pending request's ({pending[1]})"
            await self._fault(seat, Fault.STALE, detail, pending[1])
        else:
            await self._fault(seat, Fault.STALE, f"request_id {request_id} answers no pending request", 0)

    # -- faults ---------------------------------------------------------------------------

    async def _fault(
        self,
        seat: int,
        fault: Fault,
        detail: str,
        request_id: int,
        reply: str | None = None,
        ms: float | None = None,
        *,
        answers: bool = False,
    ) -> None:
        """Apply the fault policy (faults.rule_on_fault) to one fault of ``seat``.

        ``request_id`` is the request the fault concerns, 0 for none; ``answers`` says the
        fault stands in for the answer to it (a timeout, a wrong answer), so the fallback is played.
        """
        match = self.match
        if match.is_over or seat in match.forfeited:
            return
        self._count_fault(seat, fault.value)
        answers = answers and match.to_act == seat
        ruling = rule_on_fault(self.rules, fault, self._faults[seat], answers, joined=self._joined[seat])
        fallback = apply_ruling(match, self.rules, seat, fault, ruling, self._add, detail=detail, request_id=request_id, reply=reply, ms=ms)
        if ruling.forfeit:
            self._forfeits[seat] = f"{fault.value}: {detail}"
        self._note_hand_ends()
        notice = fault_notice(fault, ruling, detail, request_id, fallback, self._faults[seat])
        conn = self.conns[seat]
        if conn is not None:
            if ruling.forfeit:
                conn.read_stopped = True
            if not conn.broken:
                await self._send(seat, pb.PlayResponse(fault_notice=notice))

    # -- messages to seats ------------------------------------------------------------------

    async def _send(self, seat: int, message: pb.PlayResponse, with_events: bool = True) -> bool:
        conn = self.conns[seat]
        if conn is None:
            return False
        if not conn.welcomed.is_set() and message.WhichOneof("payload") != "welcome":
            return False  # a stream that reattached hears nothing before its Welcome, which is on its way
        if with_events:
            message.events.extend(self._events.since_last(seat, self.match, self._away))
        if self.on_message_sent is not None:
            self.on_message_sent(seat, message)
        ok = await conn.send(message)
        if not ok:
            self._inbox.put_nowait((seat, "gone", conn))
        return ok

    # -- records ------------------------------------------------------------------------------

    def _note_hand_ends(self) -> None:
        for event in self.match.events_since(self._recorded_events):
            if isinstance(event, HandEnded):
                self._add(HandEndedLine.of(event))
        self._recorded_events = self.match.event_count

    async def _finish(self, status: MatchStatus) -> MatchResult:
        match = self.match
        ended = match_ended(status, match)
        # Every seat still connected hears the end, those that forfeited too (without the events since).
        sends = [
            self._send(seat, pb.PlayResponse(match_ended=ended), with_events=seat not in match.forfeited)
            for seat, conn in enumerate(self.conns)
            if conn is not None and not conn.broken and not conn.done.is_set()
        ]
        await asyncio.gather(*sends, return_exceptions=True)
        for conn in self.conns:
            if conn is not None:
                conn.close()
        self.notes.catch_up(self._lines, range(self.rules.players))
        seats = list(zip(self.names, self.versions, strict=True))
        header = header_line(self.match_id, self.rules, self.seed, self.time_control, seats, self.started_at, self.rerun)
        lines = (header, *self._lines, result_line(status, match, self.fault_counts, self._aborted))
        places = match.places if status is MatchStatus.FINISHED else None
        result = MatchResult(
            self.match_id, status, places, match.totals, tuple(self.names), tuple(self.versions), self.fault_counts, lines, self.record_path
        )
        if self.record_path is not None:
            write_record(self.record_path, result.record)  # the JSON form made once, for the file and the store
        if self.journal is not None:
            self.journal.close()  # its owner removes it once the result is stored
        self.result = result
        return result
