"""Play one league match on the league's referee: uploaded versions in sandboxed seats, remote bots on its address.

An uploaded version's seat is started as in any local match (:class:`~polignac_arena.match_seats.MatchSeats`:
a unix socket of its own in a private match folder, the seat launcher's sandbox).  A remote
bot's seat takes its place on the referee's main address: its seat token is accepted there,
and the ``remote`` callback hands it to the bot (through the lobby) and says whether the bot
took it.  Every remote seat is asked before any uploaded seat starts, so a bot that declines
or does not answer costs nothing: the match is dropped unplayed (:class:`RemoteDeclined`) and
the caller seats another table.

Cancelled (a drain past its deadline), the match is aborted: its record says so, and every
seat is stopped before the cancellation goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from polignac import Ruleset
from polignac_arena.games import Game, GameRefused, check_seating, game_of
from polignac_arena.league.entrants import LeagueFixture
from polignac_arena.match_folder import match_folder
from polignac_arena.match_seats import MatchSeats, finish_shielded
from polignac_arena.referee import MatchHost, MatchResult, RefereeServer, TimeControl
from polignac_arena.runner import bot_seed
from polignac_arena.seats import SeatLauncher, SeatLimits

__all__ = ["ABORT_WAIT_S", "LeagueMatchError", "RemoteDeclined", "RemoteHandOut", "play_league_match"]

ABORT_WAIT_S = 10.0
"""How long a cancelled match may take to end as aborted (a seat's stuck write is bounded by the referee's write timeout)."""

RemoteHandOut = Callable[[int, str, str], Awaitable[bool]]
"""``remote(seat, match_id, seat_token)``: hand a remote bot its seat; True when it will play it."""


class LeagueMatchError(RuntimeError):
    """A league match that cannot be played as seated: nothing of it is left running."""


class RemoteDeclined(LeagueMatchError):
    """Remote bots declined their seats or did not answer: the match was not played."""

    def __init__(self, match_id: str, labels: dict[int, str]) -> None:
        self.match_id = match_id
        self.labels = labels
        """Seat -> label of each remote bot that did not take its seat."""
        seats = ", ".join(f"seat {seat} ({label!r})" for seat, label in sorted(labels.items()))
        super().__init__(f"match {match_id!r} not played: the remote bot in {seats} declined or did not answer")


async def play_league_match(
    server: RefereeServer,
    fixture: LeagueFixture,
    *,
    rules: Ruleset,
    time_control: TimeControl,
    launcher: SeatLauncher,
    limits: SeatLimits,
    trusted: bool,
    match_id: str,
    record_path: Path | None,
    remote: RemoteHandOut,
    game: Game | None = None,
    reattach_grace_s: float = 0.0,
    on_seated: Callable[[], object] | None = None,
) -> MatchResult:
    """Play ``fixture`` on ``server`` (started, with a main address when a seat is remote) and return its result.

    Raises :class:`RemoteDeclined` when a remote bot does not take its seat, and
    :class:`LeagueMatchError` for a seating the league should never make (a bot that does
    not play the game, seat kinds that cannot run here); cancelled, the match is recorded
    as aborted and every seat stopped.  ``reattach_grace_s``: how long a remote seat
    whose stream breaks may come back (0: not at all).  ``on_seated()`` is called once every
    remote bot took its seat, before any uploaded seat starts (the ladder schedules the match then).
    """
    if len(fixture.seats) != rules.players:
        raise LeagueMatchError(f"the ruleset seats {rules.players} players but fixture {fixture.index} has {len(fixture.seats)}")
    uploaded = {seat: entrant.submission for seat, entrant in enumerate(fixture.seats) if entrant.submission is not None}
    try:
        check_seating(uploaded.values(), game or game_of(rules))
    except GameRefused as exc:
        raise LeagueMatchError(str(exc)) from None
    if uploaded:
        reason = launcher.unavailable() or launcher.refusal(trusted)
        if reason is not None:
            raise LeagueMatchError(f"{launcher.kind} seats cannot run league matches here: {reason}")
    with match_folder() as root:
        seats = MatchSeats(root, rules.players)
        sockets = [seats.socket(seat) if seat in uploaded else None for seat in range(rules.players)]
        host = await server.create_seated_match(
            rules, fixture.seed, time_control, sockets=sockets, match_id=match_id, record_path=record_path, exit_status=seats.exit_status
        )
        if reattach_grace_s:
            for seat in range(rules.players):
                if seat not in uploaded:  # a remote seat may lose its connection and come back
                    host.allow_reattach(seat, reattach_grace_s)
        running: asyncio.Future[MatchResult] | None = None
        try:
            await _hand_out(fixture, host, remote)
            if on_seated is not None:
                on_seated()
            for seat, submission in uploaded.items():
                await seats.start(
                    server, host, launcher, seat, submission, limits=limits, trusted=trusted, bot_seed=bot_seed(fixture.seed, seat)
                )
            running = asyncio.ensure_future(server.run_match(host))
            return await asyncio.shield(running)
        except asyncio.CancelledError:
            if running is None:  # cancelled while seating: the match still ends as aborted, on the record
                running = asyncio.ensure_future(server.run_match(host))
            host.abort("the league stopped this match")
            await asyncio.wait({running}, timeout=ABORT_WAIT_S)
            raise
        finally:
            await finish_shielded(_clean_up(server, host, seats, running))


async def _hand_out(fixture: LeagueFixture, host: MatchHost, remote: RemoteHandOut) -> None:
    """Hand every remote seat its token, all at once; raise :class:`RemoteDeclined` unless every bot takes its seat."""
    seats = [seat for seat, entrant in enumerate(fixture.seats) if entrant.remote]
    answers = await asyncio.gather(*(remote(seat, host.match_id, host.tokens[seat]) for seat in seats))
    declined = {seat: fixture.seats[seat].label for seat, taken in zip(seats, answers, strict=True) if taken is not True}
    if declined:
        raise RemoteDeclined(host.match_id, declined)


async def _clean_up(server: RefereeServer, host: MatchHost, seats: MatchSeats, running: asyncio.Future[MatchResult] | None) -> None:
    """Stop every seat; end the match (dropped if it never ran, cancelled if it outlived its abort)."""
    await seats.stop()
    if running is None:
        await server.discard_match(host)
    elif not running.done():
        running.cancel()
        await asyncio.wait({running})
