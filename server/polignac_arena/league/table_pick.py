"""Which entrants sit at the league's next table: :func:`pick_table`, pure and deterministic.

The same entrants, ratings, counts and seed give the same table; the ladder's loop
(:mod:`polignac_arena.league.ladder`) calls it whenever a table may start.
"""

from __future__ import annotations

import collections
import math
import random
from collections.abc import Iterable, Mapping, Sequence

from polignac_arena.league.entrants import Entrant
from polignac_arena.matchmaking import Meetings, fill_table
from polignac_arena.ratings import RatingEnv
from polignac_arena.schedule import MAX_TABLE_SIZE, MIN_TABLE_SIZE, seat_order

__all__ = ["LadderError", "pick_table"]


class LadderError(ValueError):
    """Arguments no ladder can pick a table from."""


def pick_table(
    entrants: Sequence[Entrant],
    table_size: int,
    ratings: Mapping[str, tuple[float, float]],
    games_played: Mapping[str, int],
    recent: Mapping[str, float],
    busy: Mapping[str, int],
    rng_seed: int,
    env: RatingEnv,
    *,
    new_version_boost: float = 0.5,
    new_version_matches: int = 0,
    rate_factor: float = 2.0,
    max_concurrent: int = 2,
    meetings: Meetings | None = None,
) -> tuple[str, ...] | None:
    """The labels of the next table, in seat order, or None when no legal table exists.

    ``entrants`` are the active ones now (uploaded versions, remote bots online); ``ratings``,
    ``games_played`` and ``recent`` (matches in a recent window) are by label, missing ones
    having the prior, 0 and 0; ``busy`` counts the matches each label is playing now;
    ``meetings`` how often each pair has met (None: as if no pair had).  The rules, in order:

    * **Legal tables only.**  An entrant is free while it plays fewer matches than it may at once
      (a remote bot one, it plays from one connection; an uploaded version ``max_concurrent``,
      each match starting its own sandbox); two versions of one bot are one bot and never share
      a table.  With fewer free bots than seats there is no table (None).
    * **The anchor** is a free version with fewer than ``new_version_matches`` games, if any
      (its first matches come before others'); else the free entrant most behind its fair share
      of the recent matches: ``recent / weight``, where a version's weight is
      ``1 + new_version_boost * u`` and ``u``, its uncertainty, is ``(sigma / prior sigma)^2`` (1
      for a version that has not played, near 0 for a well measured one).  So a new version, its
      sigma reset, gets more early matches.
    * **The rate factor.**  The other seats go to entrants whose recent matches, this one
      included, stay within ``rate_factor`` times those of the entrant most behind (busy or not;
      one at least, so that a newcomer with none does not hold everyone back); when too few do,
      to those least ahead.  So no pick widens the spread of recent matches past the factor
      (old matches leaving the window can, by a match or two, until the next picks).
    * **Quality, focus and exploration.**  Among those, the table grows as the tournament
      ladder's does (:func:`polignac_arena.matchmaking.fill_table`): TrueSkill match quality is
      a preference, pairs whose order the ratings are unsure of are preferred more, pairs that
      met less than their average are preferred and pairs that met more penalised, with a
      jitter drawn from ``rng_seed``; it is seated in an order drawn from
      ``rng_seed`` too (:func:`polignac_arena.schedule.seat_order`).
    """
    _validate(entrants, table_size, new_version_boost, rate_factor, max_concurrent)
    if isinstance(new_version_matches, bool) or not isinstance(new_version_matches, int) or new_version_matches < 0:
        raise LadderError(f"new_version_matches must be an integer >= 0, got {new_version_matches!r}")
    prior = (float(env.mu), float(env.sigma))

    def sigma(label: str) -> float:
        return float(ratings.get(label, prior)[1])

    def weight(label: str) -> float:
        return 1.0 + new_version_boost * min(1.0, (sigma(label) / env.sigma) ** 2)

    def rate(label: str) -> float:
        return float(recent.get(label, 0.0))

    free = [e for e in entrants if busy.get(e.label, 0) < (1 if e.remote else max_concurrent)]
    if len({e.bot for e in free}) < table_size:
        return None
    bot_of = {e.label: e.bot for e in free}

    def behind(e: Entrant) -> tuple[bool, float, int, float, str]:
        games = games_played.get(e.label, 0)
        return (games >= new_version_matches, rate(e.label) / weight(e.label), games, -sigma(e.label), e.label)

    anchor = min(free, key=behind)
    ceiling = rate_factor * max(1.0, min(rate(e.label) for e in entrants))

    def candidates(table: Sequence[str]) -> Iterable[str]:
        taken = {bot_of[label] for label in table}
        legal = [label for label in bot_of if bot_of[label] not in taken]
        within = [label for label in legal if rate(label) + 1.0 <= ceiling]
        if within:
            return within
        least = min(rate(label) for label in legal)
        return [label for label in legal if rate(label) == least]

    rng = random.Random(f"polignac-arena/league-pick/{rng_seed}")
    meetings = meetings if meetings is not None else Meetings()
    table = fill_table(anchor.label, table_size, candidates, ratings, env, meetings, len(entrants), rng)
    return seat_order(table, rng_seed)


def _validate(entrants: Sequence[Entrant], table_size: int, boost: float, factor: float, max_concurrent: int) -> None:
    twice = sorted(label for label, count in collections.Counter(e.label for e in entrants).items() if count > 1)
    if twice:
        raise LadderError(f"entrants must be unique, listed more than once: {', '.join(map(repr, twice))}")
    if isinstance(table_size, bool) or not isinstance(table_size, int) or not MIN_TABLE_SIZE <= table_size <= MAX_TABLE_SIZE:
        raise LadderError(f"table size must be an integer from {MIN_TABLE_SIZE} to {MAX_TABLE_SIZE}, got {table_size!r}")
    if not math.isfinite(factor) or factor < 1:
        raise LadderError(f"rate_factor must be a number >= 1, got {factor!r}")
    if not math.isfinite(boost) or not 0 <= boost <= factor - 1:
        raise LadderError(f"new_version_boost must be from 0 to rate_factor - 1 ({factor - 1:g}), got {boost!r}")
    if isinstance(max_concurrent, bool) or not isinstance(max_concurrent, int) or max_concurrent < 1:
        raise LadderError(f"max_concurrent must be an integer >= 1, got {max_concurrent!r}")
