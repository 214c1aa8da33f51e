"""What the store hands out and takes in: its errors and its record types."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from polignac.jsontypes import JsonObject
from polignac_arena.statuses import MatchStatus, TournamentStatus

Rating = tuple[float, float]
"""``(mu, sigma)``."""

RateFunction = Callable[[Mapping[str, Rating], Sequence[str], Sequence[int]], Mapping[str, Rating]]
"""``rate(current, seats, places) -> new``: ``current`` holds the ratings of the table's bots that
have one in this tournament (a bot without one is absent: use its prior); ``seats`` are the bot
keys by seat and ``places`` their places (1 is first, ties share); ``new`` must give a rating for
every distinct bot of ``seats`` and nothing else.  It runs inside the store's write transaction:
it must be a pure function of its arguments and must not use the same :class:`Store`."""


GroupResults = Sequence[tuple[Sequence[str], Sequence[int]]]
"""The finished fixtures of a group so far, in schedule order: each its ``(seats, places)``."""


@dataclass(frozen=True)
class GroupRate:
    """A rate function for fixtures rated by group (a duplicate deal's seat rotations), passed where a
    :data:`RateFunction` goes.

    ``rate(before, results) -> new`` is called for each finished fixture the cursor passes:
    ``before`` holds the ratings of the group's bots before the group's first fixture (a bot
    without one is absent: use its prior), ``results`` the group's finished fixtures up to
    this one.  So after each fixture the ratings are the group so far rated at once, and after
    the last, the whole group.  ``new`` gives a rating for every distinct bot of ``results``
    and nothing else.  A group's fixtures must be consecutive.  The same rules as
    :data:`RateFunction`: pure, inside the write transaction, not this Store.
    """

    rate: Callable[[Mapping[str, Rating], GroupResults], Mapping[str, Rating]]


class StoreError(Exception):
    """The store cannot be opened or used, or refuses a request; the message says why."""


class NewerSchemaError(StoreError):
    """The file was written by a newer arena, with a schema this one does not know."""


class ConflictError(StoreError):
    """A write that contradicts what is stored: another digest, another config, a second result."""


class FixtureLike(Protocol):
    """What :meth:`Store.create_tournament` needs of a fixture (``schedule.Fixture`` has it)."""

    @property
    def index(self) -> int: ...
    @property
    def seats(self) -> Sequence[str]: ...
    @property
    def seed(self) -> int: ...
    @property
    def group(self) -> object: ...


@dataclass(frozen=True)
class Bot:
    """A registered bot version."""

    id: int
    name: str
    version: str
    path: str
    digest: str
    language: str
    added_at: str

    @property
    def key(self) -> str:
        """``name@version``, the bot's key in schedules and ratings."""
        return f"{self.name}@{self.version}"


@dataclass(frozen=True)
class Tournament:
    """A stored tournament (its schedule is in :meth:`Store.fixtures`)."""

    id: int
    name: str
    config: JsonObject
    source: str | None
    status: TournamentStatus
    created_at: str
    updated_at: str
    rating_cursor: int
    """The schedule index of the next fixture to rate: every fixture before it is rated (or void)."""


@dataclass(frozen=True)
class StoredFixture:
    """One scheduled match."""

    index: int
    seats: tuple[str, ...]
    seed: int
    group: Any


@dataclass(frozen=True)
class Recorded:
    """What :meth:`Store.record_result` did."""

    stored: bool
    """False when this very result (same fixture and match id) was already stored: nothing changed."""
    rated: tuple[int, ...]
    """The fixture indices the rating cursor passed, in order (void results included)."""
    cursor: int
    """The tournament's rating cursor afterwards."""


@dataclass(frozen=True)
class StoredResult:
    """A stored match result; ``record`` (its JSON lines, parsed) only from :meth:`Store.get_result`."""

    tournament_id: int
    tournament: str
    idx: int
    seats: tuple[str, ...]
    seed: int
    match_id: str
    status: MatchStatus
    final: bool
    places: tuple[int, ...] | None
    totals: tuple[int, ...]
    faults: tuple[dict[str, int], ...]
    hands: int
    penalties: tuple[int, ...]
    duration_s: float | None
    finished_at: str
    record_path: str | None
    record: list[JsonObject] | None = field(default=None, repr=False)
    node: str | None = None
    """The machine or cluster node that played it (None: not known)."""


@dataclass(frozen=True)
class NodeThroughput:
    """What one node played of a tournament: its final results and the time they span."""

    node: str
    """The node's name ("" for results that name none)."""
    matches: int
    busy_s: float
    """The matches' durations added up."""
    span_s: float
    """From the start of its first match to the end of its last."""

    @property
    def per_minute(self) -> float:
        """Matches per minute over its span (0 when nothing was timed)."""
        return 60.0 * self.matches / self.span_s if self.span_s > 0 else 0.0


@dataclass(frozen=True)
class LeaderboardRow:
    """One bot's line: rating (None before its first rated match) and statistics over finished results."""

    rank: int
    bot: str
    name: str
    version: str
    mu: float | None
    sigma: float | None
    matches: int
    wins: int
    """Matches in first place, shared first places included."""
    average_place: float | None
    average_penalty_per_hand: float | None
    faults: dict[str, int]
    recent_mu: tuple[float, ...] = ()
    """The bot's last mu values (at most 20, its prior included), oldest first: its trend."""

    @property
    def conservative(self) -> float | None:
        """``mu - 3 sigma``, the number the leaderboard is ordered by."""
        return None if self.mu is None or self.sigma is None else self.mu - 3 * self.sigma


@dataclass(frozen=True)
class HeadToHead:
    """Bot ``a`` against bot ``b`` over the finished matches where both sat at the table."""

    a: str
    b: str
    meetings: int
    a_ahead: int
    b_ahead: int
    ties: int
    mean_place_diff: float
    """The average of place(a) - place(b): negative when ``a`` usually finishes ahead."""


@dataclass(frozen=True)
class BotSummary:
    """One bot's leaderboard row (one tournament's, or all-time) with what a bot page shows besides."""

    row: LeaderboardRow
    """Its line, ranked among the leaderboard's bots."""
    places: dict[int, int]
    """Finished matches by place (1 is first); places never reached are absent."""
    penalty_sum: int
    hands: int
    first_played: str | None
    last_played: str | None
    """When its first and last finished matches ended (None before the first)."""
    tournaments: tuple[int, ...]
    """The ids of the tournaments it is in (scheduled, rated or played), oldest first."""


@dataclass(frozen=True)
class FaultEntry:
    """One seat of a final result where the bot faulted."""

    match_id: str
    tournament_id: int
    tournament: str
    bot: str
    seat: int
    faults: dict[str, int]
    finished_at: str


@dataclass(frozen=True)
class Progress:
    """How far a tournament has come."""

    total: int
    done: int
    """Fixtures with a final result (void ones included)."""
    void: int
    rated: int
    """The rating cursor: fixtures rated (or passed as void) in schedule order."""
    attempts: int
    """Aborted or errored matches kept as attempts (their fixtures were or will be run again)."""
    faults: dict[str, int]
    """Fault counts by kind over the final results."""

    @property
    def pending(self) -> int:
        """Fixtures without a final result."""
        return self.total - self.done


@dataclass(frozen=True)
class RatingPoint:
    """A bot's rating after fixture ``idx`` (-1: its initial rating)."""

    idx: int
    bot: str
    mu: float
    sigma: float
