"""Ties among three or more: rated over every order of the tied players, so the input order never matters."""

from __future__ import annotations

import itertools
import random

import pytest

from polignac_arena.ratings import TRUESKILL_DEFAULTS, RatingEnv, rate_match, rate_result, replay_ratings

ENVS = [RatingEnv(), TRUESKILL_DEFAULTS]
PLAYERS = {
    "a": (27.0, 4.0),
    "b": (25.0, 5.0),
    "c": (23.0, 6.0),
    "d": (20.0, 2.0),
    "e": (31.0, 3.5),
    "f": (22.5, 7.5),
}
STANDINGS = [
    {"a": 1, "b": 2, "c": 2, "d": 2},  # three tied below a winner
    {"a": 1, "b": 1, "c": 1, "d": 1},  # all four tied
    {"a": 1, "b": 1, "c": 1, "d": 4, "e": 4, "f": 6},  # two groups of ties at six
    {"a": 1, "b": 1, "c": 3, "d": 3, "e": 3, "f": 3},  # 2! x 4! = 48 orders: beyond the cap
]


@pytest.mark.parametrize("env", ENVS, ids=["shipped", "trueskill"])
@pytest.mark.parametrize("standings", STANDINGS[:3], ids=["3-tied", "4-tied", "two-groups"])
def test_shuffled_input_gives_identical_floats(env: RatingEnv, standings: dict[str, int]) -> None:
    names = list(standings)
    reference = dict(zip(names, rate_match(env, [PLAYERS[n] for n in names], [standings[n] for n in names]), strict=True))
    rng = random.Random(14)
    for order in (rng.sample(names, len(names)) for _ in range(6)):
        rated = rate_match(env, [PLAYERS[n] for n in order], [standings[n] for n in order])
        assert dict(zip(order, rated, strict=True)) == reference, order  # exactly equal, not approximately


def test_beyond_the_cap_the_canonical_order_is_by_name() -> None:
    standings = STANDINGS[3]
    current = {n: PLAYERS[n] for n in standings}
    by_name = sorted(standings, key=lambda n: (standings[n], n))
    expected = dict(zip(by_name, rate_match(RatingEnv(), [current[n] for n in by_name], [standings[n] for n in by_name]), strict=True))
    rng = random.Random(7)
    for order in (rng.sample(list(standings), len(standings)) for _ in range(3)):
        assert rate_result(RatingEnv(), current, {n: standings[n] for n in order}) == expected


def test_rate_result_and_replay_do_not_depend_on_key_order() -> None:
    standings = STANDINGS[0]
    current = {n: PLAYERS[n] for n in standings}
    expected = rate_result(RatingEnv(), current, standings)
    for order in itertools.permutations(standings):
        assert rate_result(RatingEnv(), {n: current[n] for n in reversed(order)}, {n: standings[n] for n in order}) == expected
    results = [STANDINGS[0], {"d": 1, "c": 1, "b": 1, "a": 4}]
    reordered = [dict(reversed(list(r.items()))) for r in results]
    assert replay_ratings(RatingEnv(), "abcd", results) == replay_ratings(RatingEnv(), "dcba", reordered)


def test_three_tied_with_equal_priors_are_equal_and_symmetric() -> None:
    prior = RatingEnv().initial
    rated = rate_match(RatingEnv(), [prior] * 4, [1, 2, 2, 2])
    assert rated[1] == rated[2] == rated[3]
    assert rated[0].mu > 25 > rated[1].mu
