"""The next matches' seats, started while every table still plays, so that a freed table begins its next match at once.

When the ladder runs ``parallel`` matches, it picks the next table as it would once one frees
and, when its seats are all uploaded versions played on the league's referee, starts them: a
match of its own on the referee, fresh sandboxes as for any match (never a sandbox another
match used), whose bots start, connect and say Hello while the others play.  When a table
frees, the oldest such match begins: its bots are welcomed and asked at once, and their start
is off the ladder's path.

How far ahead: at most ``[ladder] seats_ahead`` matches wait so (and never more than
``parallel``: one a table), each holding a table's sandboxes; a version in one counts as
playing it, so no version has more than ``max_concurrent`` matches running or waiting.  Uploads
cannot raise either bound.  A table the ladder would pick with a remote bot is not seated
ahead (that bot takes its seat when it is offered one), nor are matches an executor plays.

A match that waits and can no longer be played (a version of it retired or disabled, the
league paused, draining or stopping) is called off: its seats are stopped, their sandboxes and
folder removed, and nothing is recorded (its index goes to the next table).  A seat that could
not start, or that ended while it waited, is that seat's failure as at any match's start: the
match is played, and the seat forfeits as crashed.

The clock is the one of a match whose seats start just before it: a seat's start-up allowance
(its Hello within ``startup_ms``) counts from its start, not from its turn; each decision's from
its request.  A bot's wait between its Hello and its Welcome is on no clock, as the wait for
the other seats' start is at any match.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field

from polignac_arena.league.entrants import LeagueFixture

__all__ = ["PAUSED", "RETIRED", "STOPPING", "AheadMatch", "SeatsAhead"]

PAUSED = "the league was paused"
STOPPING = "the league is stopping"
RETIRED = "the version {label!r} left the ladder"


@dataclass(eq=False)
class AheadMatch:
    """A match whose seats are being started, or are up, before a table is free for it."""

    fixture: LeagueFixture
    match_id: str
    go: asyncio.Future[str | None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    """Its turn: None when it begins, else why it is called off (what the match waits for)."""
    task: asyncio.Task[None] | None = None
    """The ladder's task that plays it (set once it is made)."""
    began: float | None = None
    """When it began (``time.monotonic()``); None while it waits."""

    def begin(self) -> None:
        """Its table is free: it begins now."""
        self.began = time.monotonic()
        if not self.go.done():
            self.go.set_result(None)

    def call_off(self, reason: str) -> None:
        """It will not be played: its seats are stopped and nothing is recorded."""
        if not self.go.done():
            self.go.set_result(reason)


class SeatsAhead:
    """The matches waiting with their seats started, oldest first, at most ``limit`` (and one a table)."""

    def __init__(self, limit: int) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError(f"seats_ahead must be an integer >= 0, got {limit!r}")
        self.limit = limit
        self._waiting: list[AheadMatch] = []

    def __len__(self) -> int:
        return len(self._waiting)

    def __iter__(self) -> Iterator[AheadMatch]:
        return iter(list(self._waiting))

    def has_room(self, parallel: int) -> bool:
        """Whether one more match may be seated ahead of ``parallel`` tables."""
        return len(self._waiting) < min(self.limit, parallel)

    def add(self, fixture: LeagueFixture, match_id: str) -> AheadMatch:
        match = AheadMatch(fixture, match_id)
        self._waiting.append(match)
        return match

    def next(self) -> AheadMatch | None:
        """The oldest match waiting, taken out of the queue (the caller begins it), or None."""
        return self._waiting.pop(0) if self._waiting else None

    def forget(self, match: AheadMatch) -> None:
        """``match`` ended before its turn (called off, or failed): it waits no more."""
        if match in self._waiting:
            self._waiting.remove(match)

    def call_off_all(self, reason: str) -> list[AheadMatch]:
        """Call off every match waiting; them (their tasks end once their seats are stopped)."""
        called, self._waiting = self._waiting, []
        for match in called:
            match.call_off(reason)
        return called

    def call_off_stale(self, active: Collection[str]) -> list[AheadMatch]:
        """Call off every match waiting with a version no longer among the ``active`` labels; them."""
        called = []
        for match in list(self._waiting):
            gone = next((entrant.label for entrant in match.fixture.seats if entrant.label not in active), None)
            if gone is not None:
                self._waiting.remove(match)
                match.call_off(RETIRED.format(label=gone))
                called.append(match)
        return called

    def labels(self) -> Iterator[str]:
        """The labels seated in the matches waiting, once per seat."""
        return (entrant.label for match in self._waiting for entrant in match.fixture.seats)
