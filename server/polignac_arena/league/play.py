"""Play one league match on the league's referee: uploaded versions in sandboxed seats, remote bots on its address.

An uploaded version's seat is started as in any local match (:class:`~polignac_arena.match_seats.MatchSeats`:
a unix socket of its own in a private match folder, the seat launcher's sandbox).  A remote
bot's seat takes its place on the referee's main address: its seat token is accepted there,
and the ``remote`` callback hands it to the bot (through the lobby) and says whether the bot
took it.  Every remote seat is asked, all at once, before any uploaded seat starts and before
anyone is welcomed, so a bot that declines or does not answer costs the others nothing: as
soon as one does, the match is called off unplayed (:class:`RemoteDeclined`), every other
remote bot is told through ``withdraw`` (its assignment withdrawn, its Play stream refused
with the reason), and the caller seats another table.

Once every remote bot took its seat, the match keeps a journal (``journal``:
:mod:`polignac_arena.referee.journal`), removed by the caller once the result is stored.
Cancelled (a drain past its deadline), a journaled match is suspended: it stops without a
result, its remote seats' streams end with ``UNAVAILABLE``, and :class:`MatchSuspended` is
raised; a league that starts again plays it on from its journal (``resume``): the remote
seats are away with their grace and come back with their old seat tokens, the uploaded
seats are started again.  A match cancelled before its journal began is aborted: its record
says so.  Either way every seat is stopped before the cancellation goes on.

A match of uploaded seats may have them started ahead (``go``: the ladder's
:mod:`polignac_arena.league.seats_ahead`): its seats start at once, and the match waits for
its turn before anything else; called off instead, it ends as if never made: no record, no
journal, its seats stopped and their folder removed (:class:`CalledOff`).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import ClassVar, TypeGuard

from polignac_arena.games import GameRefused, check_seating, game_of
from polignac_arena.league.entrants import LeagueFixture
from polignac_arena.league.referee_orders import PlayOrder
from polignac_arena.match_folder import match_folder
from polignac_arena.match_seats import MatchSeats, finish_shielded
from polignac_arena.referee import MatchHost, MatchResult, RefereeServer
from polignac_arena.referee.journal import JournalHead, JournalState, JournalWriter, token_digest
from polignac_arena.referee.match_end import MatchSuspended
from polignac_arena.runner import bot_seed
from polignac_arena.seats import SeatLauncher
from polignac_arena.statuses import MatchStatus

__all__ = [
    "ABORT_WAIT_S",
    "AWAY_AFTER_RESTART",
    "CalledOff",
    "LeagueMatchError",
    "MatchSuspended",
    "RemoteDeclined",
    "RemoteHandOut",
    "play_league_match",
]

log = logging.getLogger(__name__)

AWAY_AFTER_RESTART = "its stream ended when the league server stopped"
"""The ``away`` line of a remote seat in a resumed match."""
SUSPENDED = "the league server is stopping"

ABORT_WAIT_S = 10.0
"""How long a cancelled match may take to end as aborted (a seat's stuck write is bounded by the referee's write timeout)."""

RemoteHandOut = Callable[[int, str, str], Awaitable[bool]]
"""``remote(seat, match_id, seat_token)``: hand a remote bot its seat; True when it will play it."""
RemoteWithdraw = Callable[[int, str, str], None]
"""``withdraw(seat, match_id, reason)``: tell a remote bot that the match it was offered will not be played."""


def _no_withdraw(seat: int, match_id: str, reason: str) -> None:
    """For callers with nobody to tell."""


class LeagueMatchError(RuntimeError):
    """A league match that cannot be played as seated: nothing of it is left running."""


class MatchStopped(RuntimeError):
    """A match that ended early, for ``reason``; ``outcome`` says what became of it."""

    outcome: ClassVar[str] = "stopped"

    def __init__(self, match_id: str, reason: str) -> None:
        self.match_id = match_id
        self.reason = reason
        super().__init__(f"match {match_id!r} {self.outcome}: {reason}")


class CalledOff(LeagueMatchError, MatchStopped):
    """A match whose seats were started ahead was called off before it began: nothing of it is left, not even a record."""

    outcome = "called off before it began"


class RemoteDeclined(LeagueMatchError):
    """Remote bots declined their seats or did not answer: the match was not played."""

    def __init__(self, match_id: str, labels: dict[int, str]) -> None:
        self.match_id = match_id
        self.labels = labels
        """Seat -> label of each remote bot that did not take its seat."""
        seats = ", ".join(f"seat {seat} ({label!r})" for seat, label in sorted(labels.items()))
        self.reason = f"the remote bot in {seats} declined its seat or did not answer"
        """Why the match was called off, as the other bots are told."""
        super().__init__(f"match {match_id!r} not played: {self.reason}")


async def play_league_match(
    server: RefereeServer,
    order: PlayOrder,
    *,
    launcher: SeatLauncher,
    remote: RemoteHandOut,
    withdraw: RemoteWithdraw = _no_withdraw,
    on_seated: Callable[[], object] | None = None,
    journal: Path | None = None,
    resume: JournalState | None = None,
    on_hosted: Callable[[], object] | None = None,
    go: Awaitable[str | None] | None = None,
    on_first_request: Callable[[float], object] | None = None,
) -> MatchResult:
    """Play ``order`` (its fixture) on ``server`` (started, with a main address when a seat is remote) and return its result.

    Raises :class:`RemoteDeclined` when a remote bot does not take its seat (the match's
    record, with no action, says so), and
    :class:`LeagueMatchError` for a seating the league should never make (a bot that does
    not play the game, seat kinds that cannot run here); cancelled, the match is recorded
    as aborted and every seat stopped.  The order's ``reattach_grace_s``: how long a remote seat
    whose stream breaks may come back (0: not at all).  ``on_seated()`` is called once every
    remote bot took its seat, before any uploaded seat starts (the ladder schedules the match then).
    ``journal``: the match's journal file (None: none, the match cannot be resumed); with
    ``resume``, that journal read back: the match goes on from it, nobody is offered a seat,
    and the rules, seed and clock are the journal's.  Raises :class:`MatchSuspended` when
    cancelled once the journal began (see the module notes).  ``on_hosted()`` is called once the
    match is on the referee (its seats' tokens accepted), before anyone is offered a seat.

    ``go``: the seats are started ahead (every seat uploaded, not a resumed match): they start at
    once, then the match waits for ``go``.  None: it begins (``on_seated()``, its journal, its run),
    each seat's start-up allowance counted from its start as ever; a reason: it is called off (no
    record, every seat stopped) and :class:`CalledOff` raised.  ``on_first_request(at)`` is called
    with ``time.monotonic()`` as the first decision request goes out.
    """
    fixture, match_id, record_path, trusted = order.fixture, order.match_id, order.record_path, order.trusted
    rules, time_control = (order.rules, order.time_control) if resume is None else (resume.head.rules, resume.head.time_control)
    if len(fixture.seats) != rules.players:
        raise LeagueMatchError(f"the ruleset seats {rules.players} players but fixture {fixture.index} has {len(fixture.seats)}")
    uploaded = {seat: entrant.submission for seat, entrant in enumerate(fixture.seats) if entrant.submission is not None}
    try:
        check_seating(uploaded.values(), order.game or game_of(rules))
    except GameRefused as exc:
        raise LeagueMatchError(str(exc)) from None
    if go is not None and (resume is not None or len(uploaded) != rules.players):
        raise ValueError(f"only a new match of uploaded seats is seated ahead, not match {match_id!r}")
    if uploaded:
        reason = launcher.unavailable() or launcher.refusal(trusted)
        if reason is not None:
            raise LeagueMatchError(f"{launcher.kind} seats cannot run league matches here: {reason}")

    def prepare(host: MatchHost) -> None:
        if order.reattach_grace_s:
            for seat in range(rules.players):
                if seat not in uploaded:  # a remote seat may lose its connection and come back
                    host.allow_reattach(seat, order.reattach_grace_s)
        if resume is not None:
            if journal is not None:  # first: what the restore adds to the record (resumed, away) is journaled too
                host.journal = _open_journal(journal, host, fixture, resumed=True)
            host.restore(resume, AWAY_AFTER_RESTART)

    with match_folder() as root:
        seats = MatchSeats(root, rules.players)
        sockets = [seats.socket(seat) if seat in uploaded else None for seat in range(rules.players)]
        host = await server.create_seated_match(
            rules,
            fixture.seed,
            time_control,
            sockets=sockets,
            match_id=match_id,
            record_path=record_path,
            exit_status=seats.exit_status,
            prepare=prepare,
        )
        host.notes.stderr_of = seats.stderr_since_answer
        host.on_first_request = on_first_request
        if on_hosted is not None:
            on_hosted()
        running: asyncio.Future[MatchResult] | None = None
        called_off: str | None = None  # why the remote bots' answers (or the ladder) called it off
        keep_record = True  # a match called off by its remote bots' answers keeps a record that says so
        waiting = go is not None  # its seats are started ahead, and its turn has not come

        async def start_seats() -> None:
            for seat, submission in uploaded.items():
                await seats.start(
                    server, host, launcher, seat, submission, limits=order.limits, trusted=trusted, bot_seed=bot_seed(fixture.seed, seat)
                )

        try:
            if go is not None:
                await start_seats()
                started = time.monotonic()
                called_off, waiting = await go, False
                if called_off is not None:
                    keep_record = False
                    raise CalledOff(match_id, called_off)
                host.seats_started = started
                host.started_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
                if on_seated is not None:
                    on_seated()
            elif resume is None:
                try:
                    await _hand_out(fixture, host, remote, withdraw)
                except RemoteDeclined as exc:
                    called_off = exc.reason
                    raise
                if on_seated is not None:
                    on_seated()
            if journal is not None and resume is None:
                host.journal = _open_journal(journal, host, fixture, resumed=False)
            if go is None:
                await start_seats()
            running = asyncio.ensure_future(server.run_match(host))
            return await asyncio.shield(running)
        except asyncio.CancelledError:
            if waiting:  # cancelled before its turn: it goes as if called off
                keep_record = False
                raise
            if _has_result(running):
                return running.result()  # it ended before the stop reached it: its result stands
            if host.journal is not None and host.journal.open:
                host.suspend(SUSPENDED)  # to be resumed from its journal when the league starts again
                if running is not None:
                    await asyncio.wait({running}, timeout=ABORT_WAIT_S)
                    if _has_result(running):
                        return running.result()
                raise MatchSuspended(match_id, SUSPENDED) from None
            if running is None:  # cancelled while seating: the match still ends as aborted, on the record
                running = asyncio.ensure_future(server.run_match(host))
            host.abort("the league stopped this match")
            await asyncio.wait({running}, timeout=ABORT_WAIT_S)
            if _has_result(running) and running.result().status is MatchStatus.FINISHED:
                return running.result()  # it had ended (its seats' sockets were closing): its result stands
            raise
        finally:
            try:
                await finish_shielded(_clean_up(server, host, seats, running, called_off, keep_record))
            except asyncio.CancelledError:
                # A stop that came while the seats of a match with its result were being stopped: the result stands.
                if not _has_result(running):
                    raise


def _has_result(running: asyncio.Future[MatchResult] | None) -> TypeGuard[asyncio.Future[MatchResult]]:
    """Whether the match ran to a result (finished, or aborted by the referee itself)."""
    return running is not None and running.done() and not running.cancelled() and running.exception() is None


def _open_journal(path: Path, host: MatchHost, fixture: LeagueFixture, resumed: bool) -> JournalWriter | None:
    """The match's journal: begun (the head), or reopened to go on; None when it cannot be (logged: the match is played
    all the same, but a stop of the league voids it)."""
    try:
        if resumed:
            return JournalWriter.reopen(path)
        head = JournalHead(
            match_id=host.match_id,
            index=fixture.index,
            seed=fixture.seed,
            rules=host.rules,
            time_control=host.time_control,
            labels=tuple(entrant.label for entrant in fixture.seats),
            remote=tuple(token_digest(host.tokens[seat]) if entrant.remote else None for seat, entrant in enumerate(fixture.seats)),
            started_at=host.started_at,
        )
        return JournalWriter.create(path, head)
    except OSError as exc:
        log.warning("match %s has no journal (%s): it cannot be resumed if the league stops", host.match_id, exc)
        return None


async def _hand_out(fixture: LeagueFixture, host: MatchHost, remote: RemoteHandOut, withdraw: RemoteWithdraw) -> None:
    """Hand every remote seat its token, all at once; as soon as a bot does not take its seat, withdraw the
    others' and raise :class:`RemoteDeclined`."""
    asking = {
        asyncio.ensure_future(remote(seat, host.match_id, host.tokens[seat])): seat for seat, e in enumerate(fixture.seats) if e.remote
    }
    declined: dict[int, str] = {}
    pending = set(asking)
    try:
        while pending and not declined:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task.cancelled() or task.exception() is not None or task.result() is not True:
                    declined[asking[task]] = fixture.seats[asking[task]].label
    except asyncio.CancelledError:
        for seat in sorted(asking.values()):
            withdraw(seat, host.match_id, "the league stopped this match before it began")
        raise
    finally:
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
    if declined:
        error = RemoteDeclined(host.match_id, declined)
        for seat in sorted(set(asking.values()) - set(declined)):
            withdraw(seat, host.match_id, error.reason)
        raise error


async def _clean_up(
    server: RefereeServer,
    host: MatchHost,
    seats: MatchSeats,
    running: asyncio.Future[MatchResult] | None,
    called_off: str | None,
    keep_record: bool,
) -> None:
    """Stop every seat; end the match (called off if it never ran: with its record when a remote bot's answer did it,
    without when the ladder did; cancelled if it outlived its abort)."""
    await seats.stop()
    if running is None:
        reason = called_off or "the league stopped this match before it began"
        with contextlib.suppress(MatchSuspended):  # a resumed match stopped again before it ran: its journal stays
            await server.discard_match(host, reason, keep_record=keep_record and called_off is not None)
    elif not running.done():
        running.cancel()
        await asyncio.wait({running})
