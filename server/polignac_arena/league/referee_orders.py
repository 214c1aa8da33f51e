"""What the league and its referee processes say to each other over their pipe (pickled, one message at a time).

The league sends :class:`PlayOrder`, :class:`SeatAnswer`, :class:`Cancel` and :class:`Ping`; a
referee process answers with :class:`Ready` once it listens, then per match :class:`Hosted`,
:class:`Offer` (a remote seat to hand out, answered with a :class:`SeatAnswer`),
:class:`Withdraw`, :class:`Seated`, and last :class:`Played` or :class:`NotPlayed`; each
:class:`Ping` gets a :class:`Pong`.  The module holds values only (no I/O), so both sides and
the tests read the same types.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from polignac import Ruleset
from polignac_arena.games import Game
from polignac_arena.league.entrants import LeagueFixture
from polignac_arena.league.limits import GrpcLimits
from polignac_arena.seats.base import SeatLimits
from polignac_arena.settings import SeatKind, TimeControl

if TYPE_CHECKING:  # the referee and the node's builds bring grpc, which the values do not need
    from polignac_arena.executors.node import ShippedBot
    from polignac_arena.referee.match_end import MatchResult

__all__ = [
    "Cancel",
    "Hosted",
    "NotPlayed",
    "NotPlayedKind",
    "Offer",
    "Ping",
    "PlayOrder",
    "Played",
    "Pong",
    "Ready",
    "SeatAnswer",
    "Seated",
    "Withdraw",
    "WorkerSettings",
]


@dataclass(frozen=True)
class WorkerSettings:
    """What a referee process needs to serve: where, with which certificate, under which limits."""

    host: str
    port: int
    """0: a port the OS chooses."""
    tls_cert: Path | None
    tls_key: Path | None
    limits: GrpcLimits
    ipv6_prefix: int
    trusted_proxies: tuple[str, ...]
    max_matches: int
    """Matches the process referees at once; an order past it is refused (:attr:`NotPlayedKind.FULL`)."""
    seat_kind: SeatKind
    advertise: str = ""
    """The host named in :class:`Ready` ("": ``host``): the name bots reach a referee on a Ray node by."""
    node: str = ""
    """The name of the Ray node the referee runs on, said back in :class:`Ready` ("": this machine)."""


@dataclass(frozen=True)
class PlayOrder:
    """Referee this match: what :func:`~polignac_arena.league.play.play_league_match` plays, as the ladder orders it and a
    referee process receives it over the pipe (the callbacks stay on each side)."""

    match_id: str
    fixture: LeagueFixture
    rules: Ruleset
    time_control: TimeControl
    limits: SeatLimits
    trusted: bool
    record_path: Path | None
    game: Game | None
    reattach_grace_s: float
    shipped: tuple[ShippedBot | None, ...] = ()
    """Each seat's uploaded version as a Ray node receives it (None for a remote seat), for a referee on a node, which
    has none of the league's folders; empty: the fixture's folders are at hand."""


@dataclass(frozen=True)
class SeatAnswer:
    """Whether the remote bot of ``seat`` took its seat (the answer to an :class:`Offer`)."""

    match_id: str
    seat: int
    taken: bool


@dataclass(frozen=True)
class Cancel:
    """Stop this match (the league drains, or the ladder was cancelled): it ends aborted."""

    match_id: str


@dataclass(frozen=True)
class Ping:
    number: int


@dataclass(frozen=True)
class Pong:
    number: int


@dataclass(frozen=True)
class Ready:
    """The process listens: remote bots of its matches open their Play streams to ``address``."""

    address: str
    node: str = ""
    """The Ray node it runs on ("": the league's machine)."""


@dataclass(frozen=True)
class Hosted:
    match_id: str


@dataclass(frozen=True)
class Offer:
    """Hand the remote bot of ``seat`` its seat token (through the league's lobby)."""

    match_id: str
    seat: int
    seat_token: str


@dataclass(frozen=True)
class Withdraw:
    """Tell the remote bot of ``seat`` that the match it was offered is called off, and why."""

    match_id: str
    seat: int
    reason: str


@dataclass(frozen=True)
class Seated:
    """Every remote bot took its seat: the league schedules the match."""

    match_id: str


@dataclass(frozen=True)
class Played:
    """The match ended with a result (finished, or aborted by the referee itself)."""

    result: MatchResult


class NotPlayedKind(StrEnum):
    DECLINED = "declined"
    """A remote bot did not take its seat (``labels``: seat -> label of each)."""
    CANCELLED = "cancelled"
    """Stopped by a :class:`Cancel`: aborted."""
    FULL = "full"
    """The process already referees as many matches as it may."""
    ERROR = "error"
    """The match cannot be played as seated (the arena's own failure)."""


@dataclass(frozen=True)
class NotPlayed:
    """The match ended without a result."""

    match_id: str
    kind: NotPlayedKind
    detail: str
    labels: tuple[tuple[int, str], ...] = ()
