"""People's matches against the built-in bots: one seat played from a browser, the others by the SDK's bots.

A signed-in author starts one (the league's game and table size, a points limit, a built-in
bot for each other seat); the league's own referee plays it (:func:`run_local_match`), the
author's seat is a :class:`~polignac_arena.league.human_seat.HumanSeat` and the others are
started by the league's seat launcher.  A human match is never rated, never listed, and seen by
its author only: the live ones and each author's last few finished ones are kept in memory
(a restart forgets them).  Limits: one live match per author, ``[limits] human_matches`` in
the whole league, and the clock of ``[limits] human_move_s`` a decision (docs/league.md).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
from dataclasses import dataclass, field
from typing import Final

from polignac.bots import BUILTIN_BOTS
from polignac.jsontypes import JsonObject
from polignac.rules import Ruleset
from polignac_arena.league.config import LeagueConfig
from polignac_arena.league.human_seat import HumanSeat
from polignac_arena.record_lines import JsonLine, RerunOf
from polignac_arena.rerun_source import RerunSource
from polignac_arena.runner import run_local_match
from polignac_arena.seats import SeatLauncher, launcher_for
from polignac_arena.seats.base import BuildLimits, BuildResult, SeatContext, SeatLimits, SeatProcess
from polignac_arena.seats.inprocess import InProcessSeat
from polignac_arena.settings import TimeControl
from polignac_arena.submission import Submission, builtin_submission

__all__ = ["FINISHED_KEPT", "OPPONENTS", "HumanMatch", "HumanMatchRefused", "HumanMatches"]

log = logging.getLogger(__name__)

OPPONENTS: Final = tuple(BUILTIN_BOTS)
"""The bots a person may seat against themself: the SDK's built-in bots (never an author's upload)."""
FINISHED_KEPT: Final = 3
"""Finished human matches kept per author (their replays), the oldest forgotten first."""
MIN_LIMIT: Final = 1


class HumanMatchRefused(Exception):
    """A human match that cannot be started: ``http_status`` (400, 409, 429, 503) and the message say why."""

    def __init__(self, message: str, http_status: int) -> None:
        super().__init__(message)
        self.message = message
        self.http_status = http_status


@dataclass
class HumanMatch:
    """One person's match: its seat, its opponents, and once over its record."""

    id: str
    author: str
    seat: HumanSeat
    opponents: tuple[str, ...]
    rules: Ruleset
    seed: int
    human: int = 0
    """The person's seat."""
    status: str = "playing"
    record: list[JsonLine] = field(default_factory=list)
    error: str = ""
    task: asyncio.Task[None] | None = None

    @property
    def live(self) -> bool:
        return self.task is not None and not self.task.done()


class _HumanSeatLauncher(SeatLauncher):
    """The league's launcher for every seat but the person's, which takes the :class:`HumanSeat`."""

    def __init__(self, base: SeatLauncher, human: int, seat: HumanSeat) -> None:
        self.kind = base.kind
        self._base = base
        self._human = human
        self._seat = seat

    def unavailable(self) -> str | None:
        return self._base.unavailable()

    def refuses(self, submission: Submission, trusted: bool) -> str | None:
        return None if submission.builtin else self._base.refuses(submission, trusted)

    async def start(self, context: SeatContext) -> SeatProcess:
        if context.seat == self._human:
            return InProcessSeat(asyncio.ensure_future(self._seat.play(f"unix:{context.referee_socket}", context.token)))
        return await self._base.start(context)

    async def build(
        self, submission: Submission, limits: SeatLimits, *, timeout_s: float, trusted: bool = False, caps: BuildLimits | None = None
    ) -> BuildResult:
        return await self._base.build(submission, limits, timeout_s=timeout_s, trusted=trusted, caps=caps)


class HumanMatches:
    """Starts, follows and keeps the league's human matches (in the league's event loop)."""

    def __init__(self, config: LeagueConfig, *, launcher: SeatLauncher | None = None) -> None:
        self.config = config
        self._launcher = launcher
        self._matches: dict[str, HumanMatch] = {}

    @property
    def live_count(self) -> int:
        return sum(1 for match in self._matches.values() if match.live)

    def limits(self) -> tuple[int, int]:
        """The points limits a person may choose: 1 to the league's own."""
        return MIN_LIMIT, self.config.rules.limit

    def start(self, author: str, opponents: list[str], limit: int) -> HumanMatch:
        """Start ``author``'s match against ``opponents`` (one built-in name a seat) to ``limit`` points; the person sits at seat 0."""
        low, high = self.limits()
        if not low <= limit <= high:
            raise HumanMatchRefused(f"the points limit must be {low} to {high}, got {limit}", 400)
        try:
            rules = dataclasses.replace(self.config.rules, limit=limit)
        except ValueError as exc:
            raise HumanMatchRefused(str(exc), 400) from None
        return self._start(author, opponents, rules, 0, secrets.randbits(31), None)

    def start_from(self, author: str, source: RerunSource, seat: int, opponent: str) -> HumanMatch:
        """Start ``author``'s match in ``seat`` of a recorded match from its rerun hand on (the same deals, the totals so far).

        Every other seat takes the built-in ``opponent``; the record's rules and limit hold.
        """
        rules = source.rules
        if not 0 <= seat < rules.players:
            raise HumanMatchRefused(f"the match seats {rules.players}: take a seat 0 to {rules.players - 1}, got {seat}", 400)
        return self._start(author, [opponent] * (rules.players - 1), rules, seat, source.header.seed, source.rerun)

    def _start(self, author: str, opponents: list[str], rules: Ruleset, seat: int, seed: int, rerun: RerunOf | None) -> HumanMatch:
        players = rules.players
        if len(opponents) != players - 1:
            raise HumanMatchRefused(f"this league's tables seat {players}: choose {players - 1} opponents, got {len(opponents)}", 400)
        for name in opponents:
            if name not in OPPONENTS:
                raise HumanMatchRefused(f"no built-in bot {name[:40]!r}: choose among {', '.join(OPPONENTS)}", 400)
        if any(m.live and m.author == author for m in self._matches.values()):
            raise HumanMatchRefused("you are playing a match already: finish it (or let its clock run out) first", 409)
        cap = self.config.author_limits.human_matches
        if self.live_count >= cap:
            raise HumanMatchRefused(f"the league hosts {cap} human matches at once and all are taken: try again in a while", 429)
        match = HumanMatch(
            id=secrets.token_hex(8), author=author, seat=HumanSeat(author), opponents=tuple(opponents), rules=rules, seed=seed, human=seat
        )
        self._forget_old(author)
        self._matches[match.id] = match
        match.task = asyncio.ensure_future(self._play(match, rerun))
        return match

    def get(self, author: str, match_id: str) -> HumanMatch | None:
        """``author``'s match ``match_id``; another's is as unknown as a missing one."""
        match = self._matches.get(match_id)
        return match if match is not None and match.author == author else None

    def of_author(self, author: str) -> list[HumanMatch]:
        return [m for m in self._matches.values() if m.author == author]

    def _forget_old(self, author: str) -> None:
        finished = [m for m in self._matches.values() if m.author == author and not m.live]
        for old in finished[: max(0, len(finished) - FINISHED_KEPT + 1)]:
            del self._matches[old.id]

    async def _play(self, match: HumanMatch, rerun: RerunOf | None) -> None:
        bots = [builtin_submission(name) for name in match.opponents]
        bots.insert(match.human, dataclasses.replace(builtin_submission("random"), name=match.author, version="human"))
        base = self._launcher or launcher_for(self.config.seat_kind)
        move_ms = round(self.config.author_limits.human_move_s * 1000)
        clock = TimeControl(move_ms=move_ms, bank_ms=0, startup_ms=self.config.time.startup_ms)
        try:
            result, _ = await run_local_match(
                bots,
                match.rules,
                match.seed,
                clock,
                launcher=_HumanSeatLauncher(base, match.human, match.seat),
                limits=self.config.limits,
                trusted=self.config.trusted,
                game=self.config.game,
                match_id=f"{self.config.name}-human-{match.id}",
                rerun=rerun,
            )
        except asyncio.CancelledError:
            match.status = "aborted"
            raise
        except Exception as exc:  # one person's match that fails must not touch the league
            log.warning("human match %s of %s failed: %s", match.id, match.author, exc)
            match.status, match.error = "error", str(exc) or type(exc).__name__
        else:
            match.status, match.record = result.status.value, list(result.record)
        finally:
            match.seat.ended = match.seat.ended or {"places": [], "totals": [], "status": match.status}
            match.seat.ended["status"] = match.status
            match.seat.changed.set()

    async def stop(self) -> None:
        """Abort every live match (the league is stopping)."""
        tasks = [m.task for m in self._matches.values() if m.task is not None and not m.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def describe(match: HumanMatch) -> JsonObject:
    """The page's view of a match: the seat's snapshot, with the match's own status."""
    state = match.seat.snapshot()
    state.update(id=match.id, status=match.status, error=match.error, limit=match.rules.limit, live=match.live)
    return state
