"""TrueSkill ratings: one match's update, win probabilities, and replaying a whole tournament.

Pure functions, no I/O and no clock: the store and the runner call them.  The arithmetic is
the ``trueskill`` package's, with its default pure-Python backend (no NumPy, SciPy or
mpmath), so the same results give the same ratings on every machine.

A rating is a :class:`Rating` ``(mu, sigma)``; any ``(mu, sigma)`` pair is accepted where a
rating is read.  A match's standings are its places: 1 is best, equal places are draws
between those players, and a forfeiter has already been put last by the referee.  Ratings
are a deterministic function of the results in schedule order (:func:`replay_ratings`), so
a resumed or parallel run gives the same table as an uninterrupted serial one.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import trueskill

__all__ = [
    "LEAGUE_TAU",
    "MAX_TIE_ARRANGEMENTS",
    "TRUESKILL_DEFAULTS",
    "Rating",
    "RatingEnv",
    "conservative",
    "match_quality",
    "new_version",
    "rate_duplicate",
    "rate_match",
    "rate_result",
    "replay_ratings",
    "stronger_probability",
    "win_probability",
]


#: Above this many orders of tied players (4!: four players tied), a match is rated in the order given, each
#: order costing a TrueSkill update (rate_result gives the players sorted by name, a fixed canonical order).
MAX_TIE_ARRANGEMENTS = 24


class Rating(NamedTuple):
    """A TrueSkill rating: the mean ``mu`` and standard deviation ``sigma`` of the skill belief."""

    mu: float
    sigma: float


@dataclass(frozen=True)
class RatingEnv:
    """The TrueSkill environment: the prior of a new bot, the performance noise and the draw rate.

    ``mu`` and ``sigma`` are a new bot's prior; ``beta`` is the spread of one match's
    performance around the skill; ``tau`` is added (in quadrature) to every sigma before each
    update, so ratings can keep moving; ``draw_probability`` sets the draw margin between two
    neighbouring places.  The defaults are a tournament's: TrueSkill's prior (25, 25/3), beta
    and the draw rate fitted to Polignac (25/3, 3 %), and no drift (tau 0: a bot's code does
    not change during a tournament); a league adds :data:`LEAGUE_TAU`.  docs/ratings.md has
    the measurements behind them; :data:`TRUESKILL_DEFAULTS` are TrueSkill's own.
    """

    mu: float = 25.0
    sigma: float = 25.0 / 3
    beta: float = 25.0 / 3
    tau: float = 0.0
    draw_probability: float = 0.03

    def __post_init__(self) -> None:
        for name in ("mu", "sigma", "beta", "tau", "draw_probability"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"rating environment: {name} must be a finite number, got {value!r}")
        if self.sigma <= 0:
            raise ValueError(f"rating environment: sigma must be > 0, got {self.sigma!r}")
        if self.beta <= 0:
            raise ValueError(f"rating environment: beta must be > 0, got {self.beta!r}")
        if self.tau < 0:
            raise ValueError(f"rating environment: tau must be >= 0, got {self.tau!r}")
        if not 0 <= self.draw_probability < 1:
            raise ValueError(f"rating environment: draw_probability must be in [0, 1), got {self.draw_probability!r}")

    @property
    def initial(self) -> Rating:
        """The rating of a bot that has played no match: ``(mu, sigma)``."""
        return Rating(float(self.mu), float(self.sigma))

    def trueskill_env(self) -> trueskill.TrueSkill:
        """The ``trueskill.TrueSkill`` environment with these parameters (pure-Python backend)."""
        return _trueskill_env(self)


TRUESKILL_DEFAULTS = RatingEnv(beta=25.0 / 6, tau=25.0 / 300, draw_probability=0.10)
"""TrueSkill's own defaults (the arena's before they were fitted to the game): beta 25/6, tau 25/300, draw 10 %."""

LEAGUE_TAU = 25.0 / 3000
"""A league's drift: a tenth of TrueSkill's default, so the ratings follow a field that changes over months
without keeping sigma so wide that close bots swap places (docs/ratings.md)."""


@functools.lru_cache(maxsize=64)
def _trueskill_env(env: RatingEnv) -> trueskill.TrueSkill:
    # backend=None is the package's own pure-Python cdf/pdf/ppf: the same floats everywhere.
    return trueskill.TrueSkill(
        mu=float(env.mu),
        sigma=float(env.sigma),
        beta=float(env.beta),
        tau=float(env.tau),
        draw_probability=float(env.draw_probability),
        backend=None,
    )


def _checked(rating: tuple[float, float], what: str) -> Rating:
    if len(rating) != 2:
        raise ValueError(f"{what}: a rating is (mu, sigma), got {rating!r}")
    mu, sigma = rating
    if not (math.isfinite(mu) and math.isfinite(sigma)) or sigma <= 0:
        raise ValueError(f"{what}: a rating needs a finite mu and a finite sigma > 0, got {rating!r}")
    return Rating(float(mu), float(sigma))


def rate_match(env: RatingEnv, ratings: Sequence[tuple[float, float]], places: Sequence[int]) -> list[Rating]:
    """The ratings after one match, in the order given.

    ``ratings[i]`` is player i's rating before the match and ``places[i]`` its place (1 is
    best; equal places are draws; only the order of the places matters, so ``[1, 1, 3]`` and
    ``[1, 1, 2]`` are the same standings).  A forfeiter is simply last in ``places``.

    Ties: TrueSkill chains the players in finishing order and compares neighbours, so of two
    tied players the one chained first is compared with the player above the tie and the
    other with the player below, and their updates differ slightly with that arbitrary order
    (by about 0.007 mu for two tied players of four).  So that no seat or name is favoured,
    a match with ties is rated once per order of each group of tied players (every
    permutation: 1 without ties, which is plain TrueSkill; 6 for three tied; 24 for four),
    and each player gets the Gaussian matching the mean and variance of its results, summed
    exactly (``math.fsum``).  So the ratings do not depend on the order the players are
    given in, to the last bit, and tied players with equal priors get exactly equal ratings.
    Beyond :data:`MAX_TIE_ARRANGEMENTS` orders (five or more tied, rare at a card table) the
    players are rated in the order given, and :func:`rate_result` (which the runner, the
    league and :func:`replay_ratings` use) gives them sorted by (place, name).

    >>> [tuple(round(x, 3) for x in r) for r in rate_match(TRUESKILL_DEFAULTS, [(25, 25 / 3), (25, 25 / 3)], [1, 2])]
    [(29.396, 7.171), (20.604, 7.171)]
    """
    if len(ratings) != len(places):
        raise ValueError(f"rate_match: {len(ratings)} ratings but {len(places)} places")
    if len(ratings) < 2:
        raise ValueError(f"rate_match: a match has at least 2 players, got {len(ratings)}")
    for place in places:
        if isinstance(place, bool) or not isinstance(place, int) or place < 1:
            raise ValueError(f"rate_match: places are integers >= 1 (1 is best), got {list(places)!r}")
    priors = [_checked(r, "rate_match") for r in ratings]
    ts = env.trueskill_env()
    by_place: dict[int, list[int]] = {}
    for i, place in enumerate(places):
        by_place.setdefault(place, []).append(i)
    ladder = [by_place[place] for place in sorted(by_place)]
    arrangements = math.prod(math.factorial(len(group)) for group in ladder)
    if arrangements > MAX_TIE_ARRANGEMENTS:  # rate the given order only
        ladder = [[i] for group in ladder for i in group]
    outcomes: list[list[Rating]] = [[] for _ in priors]
    for orders in itertools.product(*(itertools.permutations(group) for group in ladder)):
        order = [i for group in orders for i in group]
        groups = [(ts.create_rating(mu=priors[i].mu, sigma=priors[i].sigma),) for i in order]
        rated = ts.rate(groups, ranks=[places[i] for i in order])
        for i, group in zip(order, rated, strict=True):
            outcomes[i].append(Rating(float(group[0].mu), float(group[0].sigma)))
    return [_moment_match(results) for results in outcomes]


def rate_result(env: RatingEnv, current: Mapping[str, tuple[float, float]], places: Mapping[str, int]) -> dict[str, Rating]:
    """The ratings after one match, by name: ``places`` maps each player to its place, ``current``
    holds the ratings before it (a player missing there has the environment's prior).

    The players are given to :func:`rate_match` sorted by (place, name), so the result does
    not depend on the order of either mapping: the runner, the league and
    :func:`replay_ratings` all rate through here and agree to the last bit.
    """
    names = sorted(places, key=lambda name: (places[name], name))
    before = [current.get(name, env.initial) for name in names]
    return dict(zip(names, rate_match(env, before, [places[name] for name in names]), strict=True))


def rate_duplicate(
    env: RatingEnv, before: Mapping[str, tuple[float, float]], results: Sequence[tuple[Sequence[str], Sequence[int]]]
) -> dict[str, Rating]:
    """The ratings after a duplicate deal's seat rotations, compared with each other so the deal's luck cancels.

    ``before`` holds the ratings before the deal's first rotation (a player missing there has
    the prior); ``results`` are its finished rotations, each ``(seats, places)``, in schedule
    order.  Seat j holds the same cards in every rotation, so the players who held seat j's
    hand are compared with each other: for each seat, in seat order, one TrueSkill update
    over those players ranked by their places (equal places tie), as duplicate bridge
    compares the players who held the same cards.  With a single rotation there is nothing to
    compare a hand with, and that match is rated as any other (:func:`rate_result`).
    """
    ratings: dict[str, Rating] = {name: _checked(r, "rate_duplicate") for name, r in before.items()}
    if len(results) == 1:
        seats, places = results[0]
        ratings.update(rate_result(env, ratings, dict(zip(seats, places, strict=True))))
    else:
        for seat in range(max(len(seats) for seats, _ in results)):
            held = {seats[seat]: places[seat] for seats, places in results if seat < len(seats)}
            if len(held) >= 2:
                ratings.update(rate_result(env, ratings, held))
    players = {name for seats, _ in results for name in seats}
    return {name: ratings.get(name, env.initial) for name in sorted(players)}


def _moment_match(results: list[Rating]) -> Rating:
    """The Gaussian with the mean and variance of an equal mixture of ``results``."""
    if len(results) == 1:
        return results[0]
    mu = math.fsum(r.mu for r in results) / len(results)
    variance = math.fsum(r.sigma**2 + (r.mu - mu) ** 2 for r in results) / len(results)
    return Rating(mu, math.sqrt(variance))


def match_quality(env: RatingEnv, ratings: Sequence[tuple[float, float]]) -> float:
    """TrueSkill's match quality of a free-for-all among these ratings (the draw probability, in (0, 1])."""
    if len(ratings) < 2:
        raise ValueError(f"match_quality: a match has at least 2 players, got {len(ratings)}")
    ts = env.trueskill_env()
    groups = [(ts.create_rating(mu=r.mu, sigma=r.sigma),) for r in (_checked(x, "match_quality") for x in ratings)]
    return float(ts.quality(groups))


def conservative(mu: float, sigma: float) -> float:
    """The conservative rating ``mu - 3 sigma`` that orders the leaderboard.

    >>> conservative(25.0, 25 / 3)
    0.0
    """
    return mu - 3 * sigma


def win_probability(env: RatingEnv, a: tuple[float, float], b: tuple[float, float]) -> float:
    """The TrueSkill probability that ``a`` finishes above ``b``: Phi((mu_a - mu_b) / sqrt(2 beta^2 + sigma_a^2 + sigma_b^2)).

    It compares performances only (no draw margin), so ``p(a, b) + p(b, a) == 1``.

    >>> win_probability(RatingEnv(), (25, 8), (25, 8))
    0.5
    """
    mu_a, sigma_a = _checked(a, "win_probability")
    mu_b, sigma_b = _checked(b, "win_probability")
    c = math.sqrt(2 * env.beta**2 + sigma_a**2 + sigma_b**2)
    return 0.5 * math.erfc(-(mu_a - mu_b) / (c * math.sqrt(2)))


def stronger_probability(a: tuple[float, float], b: tuple[float, float]) -> float:
    """The probability that ``a``'s skill is really above ``b``'s: Phi((mu_a - mu_b) / sqrt(sigma_a^2 + sigma_b^2)).

    Unlike :func:`win_probability` it leaves out one match's performance noise (beta): it says
    how sure the ratings are of the order, not who wins the next match.

    >>> stronger_probability((25, 1), (25, 1))
    0.5
    """
    mu_a, sigma_a = _checked(a, "stronger_probability")
    mu_b, sigma_b = _checked(b, "stronger_probability")
    return 0.5 * math.erfc(-(mu_a - mu_b) / (math.sqrt(sigma_a**2 + sigma_b**2) * math.sqrt(2)))


def new_version(env: RatingEnv, previous: tuple[float, float]) -> Rating:
    """The starting rating of a new version of a bot: the previous version's mu, the prior sigma."""
    mu, _ = _checked(previous, "new_version")
    return Rating(mu, float(env.sigma))


def replay_ratings(
    env: RatingEnv,
    entrants: Iterable[str],
    results: Iterable[Mapping[str, int]],
    initial: Mapping[str, tuple[float, float]] | None = None,
) -> dict[str, Rating]:
    """Every entrant's rating after applying ``results`` one by one, in the order given (schedule order).

    Each result maps the entrants who played that match to their places (see :func:`rate_match`).
    An entrant starts from ``initial[name]`` when given (e.g. :func:`new_version` of its
    previous version), else from the environment's prior.  Each match is rated by
    :func:`rate_result`, as the runner and the league rate it, so the outcome does not depend
    on the order of a result's keys: the ratings are a pure function of the ordered results.
    """
    initial = initial or {}
    ratings: dict[str, Rating] = {}
    for name in entrants:
        if name in ratings:
            raise ValueError(f"replay_ratings: entrant {name!r} is listed twice")
        ratings[name] = _checked(initial[name], "replay_ratings") if name in initial else env.initial
    unknown_initial = sorted(set(initial) - set(ratings))
    if unknown_initial:
        raise ValueError(f"replay_ratings: initial ratings for unknown entrants {unknown_initial!r}")
    for number, result in enumerate(results):
        unknown = sorted(set(result) - set(ratings))
        if unknown:
            raise ValueError(f"replay_ratings: result {number} names unknown entrants {unknown!r}")
        ratings.update(rate_result(env, ratings, result))
    return ratings
