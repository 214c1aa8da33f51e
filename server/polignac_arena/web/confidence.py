"""How sure the leaderboard is of its order: per adjacent pair the probability that the upper bot is really stronger,
runs of bots not separated at :data:`CONFIDENCE` (shown as tied), and whether average places can be compared at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from polignac_arena.ratings import stronger_probability
from polignac_arena.store import LeaderboardRow, Tournament

__all__ = ["CONFIDENCE", "Separation", "average_place_meaningful", "row_separations", "separations"]

CONFIDENCE: Final = 0.95
"""A bot is separated from the one ranked above it when that one is stronger with at least this probability."""

# Schedules where every entrant meets the same opponents as often: only there is one bot's average place
# comparable with another's.  A ladder matches by rating (strong bots meet strong ones), a league is a ladder,
# and the all-time board mixes tournaments with different tables and fields.
_BALANCED_FORMATS: Final = frozenset({"round-robin", "duplicate"})


@dataclass(frozen=True)
class Separation:
    """One leaderboard row's place relative to the row above it (in rank order)."""

    p_above_stronger: float | None
    """The probability that the bot one rank above is really stronger; None for the first rated row and unrated rows."""
    tied: bool
    """Not separated from the row above at :data:`CONFIDENCE`."""


def separations(ratings: Sequence[tuple[float, float] | None], confidence: float = CONFIDENCE) -> list[Separation]:
    """For ratings ``(mu, sigma)`` in rank order (None: unrated), each row's :class:`Separation`.

    >>> [s.tied for s in separations([(30.0, 1.0), (29.9, 1.0), (20.0, 1.0)])]
    [False, True, False]
    """
    if not 0.5 <= confidence < 1:
        raise ValueError(f"confidence must be in [0.5, 1), got {confidence!r}")
    out: list[Separation] = []
    for index, rating in enumerate(ratings):
        above = ratings[index - 1] if index > 0 else None
        if rating is None or above is None:
            out.append(Separation(None, False))
            continue
        p = stronger_probability(above, rating)
        out.append(Separation(p, p < confidence))
    return out


def average_place_meaningful(tournament: Tournament | None) -> bool:
    """Whether average places compare bots fairly: in a round robin or duplicate tournament, not all-time nor in a ladder or league."""
    if tournament is None:
        return False
    config: Mapping[str, object] = tournament.config
    if "league" in config:
        return False
    return config.get("format", "round-robin") in _BALANCED_FORMATS


def row_separations(rows: Sequence[LeaderboardRow]) -> list[Separation]:
    """For leaderboard rows in rank order, each one's :class:`Separation`.

    For a page of the board, pass it with the row above it (and drop that one after): then every
    row's separation is the one it has on the whole board.
    """
    return separations([None if r.mu is None or r.sigma is None else (r.mu, r.sigma) for r in rows])
