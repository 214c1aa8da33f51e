"""The matchmaking's focus on pairs whose order the ratings are unsure of (polignac_arena.matchmaking):
an unsure pair is preferred at equal meetings, and it yields once it has met far more than the average."""

from __future__ import annotations

import random

import pytest

from polignac_arena import matchmaking
from polignac_arena.matchmaking import Meetings, fill_table, unsure
from polignac_arena.ratings import RatingEnv, stronger_probability

ENV = RatingEnv()


def test_unsure_is_one_for_a_coin_flip_and_near_zero_for_a_sure_order() -> None:
    assert unsure((25.0, 1.0), (25.0, 1.0)) == 1.0
    assert unsure((30.0, 0.5), (25.0, 0.5)) == pytest.approx(unsure((25.0, 0.5), (30.0, 0.5)), abs=1e-9)
    assert unsure((30.0, 0.5), (25.0, 0.5)) < 1e-6


def test_unsure_is_twice_the_smaller_of_the_two_orders_probabilities() -> None:
    rng = random.Random(5)
    for _ in range(200):
        a, b = (rng.uniform(0, 50), rng.uniform(0.1, 9)), (rng.uniform(0, 50), rng.uniform(0.1, 9))
        p = stronger_probability(a, b)
        assert unsure(a, b) == pytest.approx(2 * min(p, 1 - p), abs=1e-12)


def test_an_unsure_pair_is_preferred_at_equal_meetings(monkeypatch: pytest.MonkeyPatch) -> None:
    ratings = {"a": (25.0, 0.3), "unsure": (26.0, 6.0), "sure": (26.0, 0.3)}

    def pick() -> list[str]:
        return fill_table("a", 2, lambda chosen: ["sure", "unsure"], ratings, ENV, Meetings(), 3, random.Random(1))

    assert pick() == ["a", "unsure"]
    monkeypatch.setattr(matchmaking, "FOCUS", 0.0)
    assert pick() == ["a", "sure"], "quality alone prefers the better measured pair"


@pytest.mark.parametrize(("met", "expected"), [(10, "twin"), (40, "other")])
def test_an_unsure_pair_yields_once_it_met_far_more_than_the_average(met: int, expected: str) -> None:
    ratings = {"a": (25.0, 1.0), "twin": (25.0, 1.0), "other": (30.0, 1.0)}
    meetings = Meetings([("a", "twin")] * met)
    table = fill_table("a", 2, lambda chosen: ["other", "twin"], ratings, ENV, meetings, 12, random.Random(1))
    assert table == ["a", expected]
