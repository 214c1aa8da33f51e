"""Matchmaking shared by the tournament ladder and the league: who fills a table around its anchor.

A table grows from its anchor (chosen by the caller: the entrant most behind its share of
matches) one seat at a time.  Each candidate the caller allows gets a score, and the best
score takes the seat.  The score is a mean over the members already seated of three pair
terms, plus a jitter:

* **quality**, TrueSkill's two-player match quality of the pair (in (0, 1]: near 1 for
  close ratings, the informative matches), a preference;
* **focus**, :data:`FOCUS` times how unsure the ratings are of the pair's order
  (:func:`unsure`, from :func:`polignac_arena.ratings.stronger_probability`: 1 for a coin
  flip, 0 for a sure order).  Unlike quality, which stays high for any two bots close in
  mu, it fades as the pair's sigmas shrink below their gap, so play goes where the
  leaderboard can still be wrong: in practice neighbours in the order that the ratings
  have not yet told apart;
* **exploration**, minus how far the pair's meetings are above the member's average
  meetings with the whole field, relative to that average: a pair that never met gains,
  and a pair that met much more than the average loses more than quality and focus can win
  back (the penalty grows without bound, focus is at most :data:`FOCUS`).  So every pair
  keeps meeting, unsure pairs more often than the others, and the same table does
  not come back and back;
* a small **jitter** drawn from a generator seeded by the caller, so that ties and near-ties
  do not settle into a cycle; the same arguments give the same table.

The pair terms are closed-form (no matrices), so a pick costs O(entrants x seats).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from polignac_arena.ratings import RatingEnv

__all__ = ["EXPLORATION", "FOCUS", "JITTER", "Meetings", "fill_table", "pair_quality", "unsure"]

#: The weight of a pair's excess meetings (relative to the member's average) against quality.
EXPLORATION = 1.0
#: The spread of the random term that breaks near-ties.
JITTER = 0.15
#: The weight of how unsure the ratings are of a pair's order, against quality and exploration.
FOCUS = 6.0


class Meetings:
    """How many tables each entrant has sat at and how often each pair has met, kept up to date table by table."""

    def __init__(self, tables: Iterable[Collection[str]] = ()) -> None:
        self.games: Counter[str] = Counter()
        self._pairs: Counter[tuple[str, str]] = Counter()
        self._met: Counter[str] = Counter()  # an entrant's meetings with anyone, summed
        for table in tables:
            self.record(table)

    def record(self, table: Collection[str]) -> None:
        """Count one more table."""
        self.games.update(table)
        members = sorted(table)
        for i, a in enumerate(members):
            self._met[a] += len(members) - 1
            for b in members[i + 1 :]:
                self._pairs[a, b] += 1

    def met(self, a: str, b: str) -> int:
        """How often ``a`` and ``b`` have sat at one table."""
        return self._pairs[(a, b) if a < b else (b, a)]

    def average(self, name: str, field: int) -> float:
        """``name``'s average meetings with each of the ``field - 1`` others."""
        return self._met[name] / max(1, field - 1)


def _exploration(met: int, average: float) -> float:
    """The score a pair gets for meeting ``met`` times when the member's average is ``average``."""
    return -EXPLORATION * (met - average) / (1.0 + average)


def unsure(a: tuple[float, float], b: tuple[float, float]) -> float:
    """How unsure the ratings ``a`` and ``b`` leave their order: 1 for a coin flip, 0 for a sure order.

    That is ``2 * min(p, 1 - p)`` for ``p = stronger_probability(a, b)``, in one closed form
    (this runs for every candidate pair of every pick).
    """
    return math.erfc(abs(a[0] - b[0]) / math.sqrt(2 * (a[1] ** 2 + b[1] ** 2)))


def pair_quality(env: RatingEnv, a: tuple[float, float], b: tuple[float, float]) -> float:
    """TrueSkill's match quality of a two-player match between ratings ``a`` and ``b`` (the draw probability, in (0, 1])."""
    spread = 2 * env.beta**2 + a[1] ** 2 + b[1] ** 2
    return math.sqrt(2 * env.beta**2 / spread) * math.exp(-((a[0] - b[0]) ** 2) / (2 * spread))


def fill_table(
    anchor: str,
    table_size: int,
    candidates: Callable[[Sequence[str]], Iterable[str]],
    ratings: Mapping[str, tuple[float, float]],
    env: RatingEnv,
    meetings: Meetings,
    field: int,
    rng: random.Random,
) -> list[str]:
    """A table grown from ``anchor``: each next member is the best-scoring one of ``candidates(table so far)``
    (see the module notes); ``field`` is how many entrants the averages are taken over.

    Candidates are scored in name order, so the result does not depend on the order they come in.
    Those missing from ``ratings`` have the prior.  Candidates must never run out.
    """
    prior = (float(env.mu), float(env.sigma))
    table = [anchor]
    while len(table) < table_size:
        members = [(m, ratings.get(m, prior), meetings.average(m, field)) for m in table]
        best: tuple[float, str] | None = None
        for candidate in sorted(candidates(table)):
            rating = ratings.get(candidate, prior)
            score = 0.0
            for member, member_rating, average in members:
                score += (
                    pair_quality(env, member_rating, rating)
                    + FOCUS * unsure(member_rating, rating)
                    + _exploration(meetings.met(member, candidate), average)
                )
            score = score / len(members) + JITTER * rng.random()
            if best is None or score > best[0]:
                best = (score, candidate)
        assert best is not None, "no candidate left for the table"
        table.append(best[1])
    return table
