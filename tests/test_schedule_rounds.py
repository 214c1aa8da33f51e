"""Round robins of many rounds (polignac_arena.schedule): the search stays bounded and the balance holds.

The design search changes only the last rounds and, once every pair has met equally often,
repeats its rounds under new labellings: the meetings stay within one after every round.
"""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from polignac_arena.schedule import round_robin, round_size


def spreads(n: int, k: int, rounds: int, seed: int) -> list[int]:
    """Most minus least pair meetings after each round."""
    names = [f"bot{i:02d}" for i in range(n)]
    fixtures = round_robin(names, k, rounds, seed)
    per_round = round_size(n, k)
    assert len(fixtures) == rounds * per_round
    met: Counter[tuple[str, ...]] = Counter()
    found = []
    for r in range(rounds):
        for fixture in fixtures[r * per_round : (r + 1) * per_round]:
            met.update(itertools.combinations(sorted(fixture.seats), 2))
        counts = [met[pair] for pair in itertools.combinations(names, 2)]
        found.append(max(counts) - min(counts))
    return found


@pytest.mark.parametrize(("n", "k", "rounds"), [(13, 4, 8), (17, 3, 6), (20, 4, 6), (30, 5, 4)])
def test_many_rounds_stay_balanced(n: int, k: int, rounds: int) -> None:
    assert max(spreads(n, k, rounds, seed=3)) <= 1


def test_a_perfect_round_repeats_relabelled() -> None:
    # 13 entrants at tables of 4: one base block meets every pair exactly once, so the design
    # repeats it, each round under a new labelling.
    assert spreads(13, 4, 5, seed=1) == [0] * 5
    names = [f"bot{i:02d}" for i in range(13)]
    fixtures = round_robin(names, 4, 2, 1)
    first, second = ({frozenset(f.seats) for f in fixtures[r * 13 : (r + 1) * 13]} for r in range(2))
    assert first != second
