"""Rating parameters fitted to a game: the draw rate and beta that a store's results support.

Pure functions of results (no store, no I/O): ``polignac ratings fit`` reads the store and
calls them, per ruleset and table size.

- **Draw rate**: the share of neighbouring places that are tied.  A match of k players has
  k - 1 neighbouring pairs in its standings (first and second, second and third, ...);
  TrueSkill's ``draw_probability`` is the chance that two equally skilled neighbours tie,
  and the measured share is what the game produces between the bots that played.
- **Beta**: the spread of one match's performance around the skill.  For each candidate
  on a grid, the results are replayed in schedule order (tau 0, the measured draw rate)
  and each match's standings are scored *before* that match is rated: the log-probability
  of the observed outcome of each pair of neighbours (win or tie, TrueSkill's own pairwise
  probabilities), summed.  The beta with the highest score predicts unseen matches best.
  (The probability of a whole standings of 3 or more players has no closed form; the
  neighbouring pairs are the comparisons TrueSkill itself makes.)

docs/ratings.md explains the figures and how to use them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist

from polignac_arena.ratings import RatingEnv, rate_result

__all__ = ["BETA_GRID", "MIN_RESULTS", "FitError", "FitResult", "draw_rate", "fit", "predictive_log_likelihood"]

#: Candidate betas (TrueSkill's default 25/6 and 25/3 among them), in the units of mu = 25, sigma = 25/3.
BETA_GRID: tuple[float, ...] = (2.0, 2.5, 3.0, 3.5, 25 / 6, 5.0, 6.0, 7.0, 25 / 3, 10.0, 12.0, 15.0, 20.0, 25.0, 30.0, 40.0)
#: Fewer finished results than this in a group say too little to fit anything.
MIN_RESULTS = 30
_NORMAL = NormalDist()
_FLOOR = 1e-12  # a probability below this (an outcome the model calls impossible) costs log(1e-12), not -inf


class FitError(ValueError):
    """Results that cannot be fitted (too few of them, or none finished)."""


Tournament = Sequence[Mapping[str, int]]
"""One tournament's finished results in schedule order: each maps the players of a match to their places."""


@dataclass(frozen=True)
class FitResult:
    """What :func:`fit` found for one group of results."""

    matches: int
    draw_rate: float
    beta: float
    """The beta on :data:`BETA_GRID` with the highest predictive log-likelihood."""
    log_likelihood: dict[float, float]
    """The mean log-likelihood per match of every beta on the grid."""


def draw_rate(tournaments: Iterable[Tournament]) -> tuple[float, int]:
    """The share of tied neighbouring places over every match, and the number of matches."""
    ties = pairs = matches = 0
    for results in tournaments:
        for places in results:
            ordered = sorted(places.values())
            ties += sum(1 for a, b in itertools.pairwise(ordered) if a == b)
            pairs += len(ordered) - 1
            matches += 1
    if pairs == 0:
        raise FitError("no finished match to measure")
    return ties / pairs, matches


def _pair_probability(env: RatingEnv, upper: tuple[float, float], lower: tuple[float, float], tied: bool) -> float:
    """TrueSkill's probability that ``upper`` finishes above ``lower`` (or ties with it), with the draw margin."""
    c = math.sqrt(2 * env.beta**2 + upper[1] ** 2 + lower[1] ** 2)
    margin = _NORMAL.inv_cdf((env.draw_probability + 1) / 2) * math.sqrt(2) * env.beta if env.draw_probability > 0 else 0.0
    d = upper[0] - lower[0]
    if tied:
        return _NORMAL.cdf((margin - d) / c) - _NORMAL.cdf((-margin - d) / c)
    return _NORMAL.cdf((d - margin) / c)


def predictive_log_likelihood(env: RatingEnv, tournaments: Iterable[Tournament]) -> tuple[float, int]:
    """The summed log-probability of each match's neighbouring outcomes before it is rated, and the matches scored.

    Each tournament is replayed from the environment's prior.
    """
    total = 0.0
    matches = 0
    for results in tournaments:
        ratings: dict[str, tuple[float, float]] = {}
        for places in results:
            names = sorted(places, key=lambda name: (places[name], name))
            before = [ratings.get(name, env.initial) for name in names]
            for i in range(len(names) - 1):
                p = _pair_probability(env, before[i], before[i + 1], places[names[i]] == places[names[i + 1]])
                total += math.log(max(p, _FLOOR))
            matches += 1
            ratings.update(rate_result(env, ratings, places))
    return total, matches


def fit(tournaments: Sequence[Tournament], base: RatingEnv | None = None, grid: Sequence[float] = BETA_GRID) -> FitResult:
    """The draw rate and the best beta on ``grid`` for these results (``base`` gives mu and sigma; tau is 0)."""
    rate, matches = draw_rate(tournaments)
    if matches < MIN_RESULTS:
        raise FitError(f"only {matches} finished matches: at least {MIN_RESULTS} are needed to fit anything")
    env = replace(base or RatingEnv(), tau=0.0, draw_probability=min(max(rate, 1e-4), 0.5))
    scores: dict[float, float] = {}
    for beta in grid:
        total, scored = predictive_log_likelihood(replace(env, beta=beta), tournaments)
        scores[beta] = total / scored
    best = max(grid, key=lambda beta: (scores[beta], -beta))
    return FitResult(matches=matches, draw_rate=rate, beta=best, log_likelihood=scores)
