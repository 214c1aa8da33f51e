"""Tournament schedules (server/polignac_arena/schedule.py).

The guarantees checked (stated in the module's docstring):

* pairs: after every round, the numbers of meetings of any two pairs differ by at most one
  (exactly equal when a round is all k-subsets), for every n in 4..12, k in 3..6, 1 and 2
  rounds; after the first round for any n (property test);
* games: every entrant plays the same number of matches in every round;
* seats: each entrant's matches, in schedule order, cut into blocks of k, cover the k seats
  once per complete block and with distinct seats in the last block; so in every prefix of
  the schedule its counts per seat differ by at most one;
* duplicate: each deal group is one round-robin table played k times with one seed, every
  entrant of it in every seat exactly once.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polignac_arena.ratings import RatingEnv
from polignac_arena.schedule import (
    ALL_COMBINATIONS_LIMIT,
    Fixture,
    design_round_size,
    duplicate,
    ladder_next,
    match_seed,
    round_robin,
    round_size,
)

ENV = RatingEnv()
CASES = [(n, k) for n in range(4, 13) for k in range(3, 7) if n >= k]


def names(n: int) -> list[str]:
    return [f"bot-{i:02d}" for i in range(n)]


def pair_counts(fixtures: Sequence[Fixture], entrants: Sequence[str]) -> list[int]:
    counts = Counter(frozenset(pair) for f in fixtures for pair in itertools.combinations(f.seats, 2))
    return [counts[frozenset(pair)] for pair in itertools.combinations(entrants, 2)]


def check_structure(fixtures: list[Fixture], entrants: Sequence[str], k: int, seed: int) -> None:
    assert [f.index for f in fixtures] == list(range(len(fixtures)))
    for f in fixtures:
        assert len(f.seats) == k and len(set(f.seats)) == k and set(f.seats) <= set(entrants)
        assert 0 <= f.seed < 2**64


def check_games(fixtures: list[Fixture], entrants: Sequence[str], per_round: int) -> None:
    for end in range(per_round, len(fixtures) + 1, per_round):
        games = Counter(e for f in fixtures[end - per_round : end] for e in f.seats)
        assert {games[e] for e in entrants} == {per_round * len(fixtures[0].seats) // len(entrants)}


def check_seats(fixtures: list[Fixture], entrants: Sequence[str], k: int) -> None:
    """Blocks of k consecutive matches of an entrant cover distinct seats (all k when complete)."""
    seats_of: dict[str, list[int]] = {e: [] for e in entrants}
    for f in fixtures:
        for seat, e in enumerate(f.seats):
            seats_of[e].append(seat)
    for e, seats in seats_of.items():
        for start in range(0, len(seats), k):
            block = seats[start : start + k]
            assert len(set(block)) == len(block), (e, seats)
    # ...hence, in every prefix, seat counts within one.
    counts = {e: [0] * k for e in entrants}
    for f in fixtures:
        for seat, e in enumerate(f.seats):
            counts[e][seat] += 1
            assert max(counts[e]) - min(counts[e]) <= 1


# -- round robin -------------------------------------------------------------------------------


@pytest.mark.parametrize("rounds", [1, 2])
@pytest.mark.parametrize(("n", "k"), CASES)
def test_round_robin_balance(n: int, k: int, rounds: int) -> None:
    entrants = names(n)
    fixtures = round_robin(entrants, k, rounds, seed=2024)
    per_round = round_size(n, k)
    assert len(fixtures) == rounds * per_round
    check_structure(fixtures, entrants, k, 2024)
    check_games(fixtures, entrants, per_round)
    check_seats(fixtures, entrants, k)
    for r in range(1, rounds + 1):
        counts = pair_counts(fixtures[: r * per_round], entrants)
        assert max(counts) - min(counts) <= 1, (r, Counter(counts))
        assert min(counts) >= r, "every pair meets at least once a round"
        if math.comb(n, k) <= ALL_COMBINATIONS_LIMIT:
            assert set(counts) == {r * math.comb(n - 2, k - 2)}


@pytest.mark.parametrize(("n", "k"), [(n, k) for n, k in CASES if math.comb(n, k) <= ALL_COMBINATIONS_LIMIT])
def test_all_combinations_when_small(n: int, k: int) -> None:
    entrants = names(n)
    fixtures = round_robin(entrants, k, 2, seed=7)
    per_round = math.comb(n, k)
    assert round_size(n, k) == per_round
    all_tables = {frozenset(c) for c in itertools.combinations(entrants, k)}
    for r in range(2):
        block = [frozenset(f.seats) for f in fixtures[r * per_round : (r + 1) * per_round]]
        assert len(block) == len(set(block)) and set(block) == all_tables


def test_design_rounds_beyond_the_limit() -> None:
    # C(10, 4) = 210 > 200: a cyclic design, 10 tables (one base block) a round.
    assert math.comb(10, 4) > ALL_COMBINATIONS_LIMIT
    assert design_round_size(10, 4) == round_size(10, 4) == 10
    # 12 entrants at tables of 3: two base blocks cannot balance the distances, three can.
    assert design_round_size(12, 3) == 36
    for n, k in [(n, k) for n, k in CASES if math.comb(n, k) > ALL_COMBINATIONS_LIMIT]:
        assert design_round_size(n, k) % n == 0
        assert design_round_size(n, k) * math.comb(k, 2) >= math.comb(n, 2), "room for every pair"


def test_everyone_at_one_table() -> None:
    for k in range(3, 7):
        entrants = names(k)
        fixtures = round_robin(entrants, k, 3, seed=1)
        assert len(fixtures) == 3 and all(set(f.seats) == set(entrants) for f in fixtures)
        check_seats(fixtures, entrants, k)
        assert len({f.seats for f in fixtures}) == 3, "seats rotate"


def test_seats_rotate_exactly_over_k_rounds_at_one_table() -> None:
    entrants = names(5)
    fixtures = round_robin(entrants, 5, 5, seed=3)
    for e in entrants:
        assert sorted(f.seats.index(e) for f in fixtures) == [0, 1, 2, 3, 4]


def test_seeds_and_groups() -> None:
    fixtures = round_robin(names(7), 4, 2, seed=99)
    assert [f.seed for f in fixtures] == [match_seed(99, f.index) for f in fixtures]
    assert [f.group for f in fixtures] == [f.index for f in fixtures]
    assert len({f.seed for f in fixtures}) == len(fixtures)


def test_round_robin_deterministic_and_seeded() -> None:
    for n, k in [(6, 3), (11, 5)]:
        entrants = names(n)
        first = round_robin(entrants, k, 2, seed=5)
        assert first == round_robin(list(entrants), k, 2, seed=5)
        other = round_robin(entrants, k, 2, seed=6)
        assert [f.seats for f in first] != [f.seats for f in other]
        assert {f.seed for f in first}.isdisjoint(f.seed for f in other)


def test_match_seed() -> None:
    assert match_seed(1, 2) == match_seed(1, 2)
    seeds = {match_seed(s, g) for s in range(20) for g in range(50)}
    assert len(seeds) == 1000 and all(0 <= x < 2**64 for x in seeds)
    assert match_seed(-3, 0) != match_seed(3, 0)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(3, 16), k=st.integers(3, 6), rounds=st.integers(1, 3), seed=st.integers(-(2**70), 2**70))
def test_round_robin_properties(n: int, k: int, rounds: int, seed: int) -> None:
    if n < k:
        n = k
    entrants = names(n)
    fixtures = round_robin(entrants, k, rounds, seed)
    per_round = round_size(n, k)
    assert len(fixtures) == rounds * per_round
    check_structure(fixtures, entrants, k, seed)
    check_games(fixtures, entrants, per_round)
    check_seats(fixtures, entrants, k)
    first = pair_counts(fixtures[:per_round], entrants)
    assert max(first) - min(first) <= 1 and min(first) >= 1


# -- duplicate ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "k", "rounds"), [(4, 3, 1), (6, 4, 2), (7, 5, 1), (6, 6, 2), (10, 5, 1), (12, 3, 1)])
def test_duplicate_rotations(n: int, k: int, rounds: int) -> None:
    entrants = names(n)
    fixtures = duplicate(entrants, k, rounds, seed=42)
    base = round_robin(entrants, k, rounds, seed=42)
    assert len(fixtures) == k * len(base)
    check_structure(fixtures, entrants, k, 42)
    check_seats(fixtures, entrants, k)
    for g, table in enumerate(base):
        group = fixtures[g * k : (g + 1) * k]
        assert {f.group for f in group} == {g}
        assert {f.seed for f in group} == {match_seed(42, g)}
        assert group[0].seats == table.seats
        # Every entrant of the table holds every hand (seat of the deal) exactly once.
        for e in table.seats:
            assert sorted(f.seats.index(e) for f in group) == list(range(k))
        # Cyclic rotation: seat i of rotation r holds the player of seat i - r in rotation 0.
        for r, f in enumerate(group):
            assert f.seats == tuple(table.seats[(i - r) % k] for i in range(k))
    seeds = [fixtures[g * k].seed for g in range(len(base))]
    assert len(set(seeds)) == len(seeds), "distinct deals across groups"
    counts = pair_counts(fixtures, entrants)
    assert max(counts) - min(counts) <= k


def test_duplicate_deterministic() -> None:
    assert duplicate(names(5), 3, 1, seed=8) == duplicate(names(5), 3, 1, seed=8)
    assert duplicate(names(5), 3, 1, seed=8) != duplicate(names(5), 3, 1, seed=9)


# -- ladder ------------------------------------------------------------------------------------


def ladder(
    entrants: Sequence[str],
    k: int = 3,
    ratings: dict[str, tuple[float, float]] | None = None,
    games: dict[str, int] | None = None,
    last: frozenset[str] | None = None,
    seed: int = 0,
) -> tuple[str, ...]:
    return ladder_next(entrants, k, ratings or {}, games or {}, last, seed, ENV)


def test_ladder_anchor_is_the_entrant_with_fewest_games() -> None:
    entrants = list("abcdefg")
    games = dict.fromkeys(entrants, 5) | {"e": 2}
    for seed in range(5):
        assert "e" in ladder(entrants, games=games, seed=seed)


def test_ladder_anchor_ties_highest_sigma_then_name() -> None:
    entrants = list("abcdef")
    far = (60.0, 1.0)  # nobody wants to sit with these
    ratings = dict.fromkeys(entrants, far) | {"d": (60.0, 3.0)}
    games = dict.fromkeys(entrants, 4)
    assert "d" in ladder(entrants, ratings=ratings, games=games)
    # Equal sigma: the name decides ("a"), and then quality fills the table.
    ratings = {"a": (0.0, 1.0), "b": (0.5, 1.0), "c": (0.2, 1.0), "d": (50.0, 1.0), "e": (50.0, 1.0), "f": (50.0, 1.0)}
    assert set(ladder(entrants, ratings=ratings, games=games)) == {"a", "b", "c"}


NEIGHBOURS = {
    "anchor": (25.0, 2.0),
    "near1": (25.5, 2.0),
    "near2": (24.0, 2.0),
    "mid": (30.0, 2.0),
    "far1": (45.0, 2.0),
    "far2": (5.0, 2.0),
}


def test_ladder_fills_by_match_quality() -> None:
    entrants = ["anchor", "near1", "near2", "far1", "far2", "mid"]
    ratings = NEIGHBOURS
    games = dict.fromkeys(entrants, 3) | {"anchor": 0}
    assert set(ladder(entrants, 3, ratings, games)) == {"anchor", "near1", "near2"}
    assert set(ladder(entrants, 4, ratings, games)) == {"anchor", "near1", "near2", "mid"}


def test_ladder_avoids_repeating_the_last_table() -> None:
    entrants = ["anchor", "near1", "near2", "far1", "far2", "mid"]
    ratings = NEIGHBOURS
    games = dict.fromkeys(entrants, 3) | {"anchor": 0}
    first = ladder(entrants, 3, ratings, games)
    second = ladder(entrants, 3, ratings, games, last=frozenset(first))
    assert frozenset(second) != frozenset(first)
    assert "anchor" in second
    # A different last table does not change the choice.
    assert frozenset(ladder(entrants, 3, ratings, games, last=frozenset(["far1", "far2", "mid"]))) == frozenset(first)


def test_ladder_repeats_when_there_is_no_other_table() -> None:
    entrants = list("abcd")
    assert set(ladder(entrants, 4, last=frozenset(entrants))) == set(entrants)


def test_ladder_deterministic_and_seats_from_the_seed() -> None:
    entrants = [f"bot{i}" for i in range(9)]
    ratings = {e: (20.0 + i, 8.0 - 0.5 * i) for i, e in enumerate(entrants)}
    games = {e: i % 3 for i, e in enumerate(entrants)}
    picks = {ladder(entrants, 5, ratings, games, seed=s) for s in range(30)}
    assert len(picks) > 5, "the seed draws the seat order (and breaks near-ties)"
    for s in range(5):
        assert ladder(entrants, 5, ratings, games, seed=s) == ladder(list(entrants), 5, dict(ratings), dict(games), seed=s)


def test_ladder_defaults_for_unknown_entrants() -> None:
    table = ladder(list("abcde"), 3)
    assert len(table) == 3 and len(set(table)) == 3 and "a" in table


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(3, 8),
    k=st.integers(3, 6),
    data=st.data(),
)
def test_ladder_properties(n: int, k: int, data: st.DataObject) -> None:
    k = min(k, n)
    entrants = names(n)
    ratings = {e: (data.draw(st.floats(0, 50)), data.draw(st.floats(0.5, 9))) for e in entrants}
    games = {e: data.draw(st.integers(0, 5)) for e in entrants}
    last = frozenset(data.draw(st.permutations(entrants))[:k])
    table = ladder_next(entrants, k, ratings, games, last, 7, ENV)
    assert len(table) == k and len(set(table)) == k and set(table) <= set(entrants)
    anchor = min(entrants, key=lambda e: (games[e], -ratings[e][1], e))
    assert anchor in table
    if n > k:
        assert frozenset(table) != last
    assert table == ladder_next(entrants, k, ratings, games, last, 7, ENV)


# -- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entrants", "k", "rounds", "message"),
    [
        (names(5), 2, 1, "table size must be an integer from 3 to 6"),
        (names(8), 7, 1, "table size must be an integer from 3 to 6"),
        (names(5), True, 1, "table size must be an integer from 3 to 6"),
        (names(3), 4, 1, "a table of 4 needs at least 4 entrants, got 3"),
        (["a", "b", "a", "c", "b"], 3, 1, "entrants must be unique, listed more than once: a, b"),
        (names(5), 3, 0, "rounds must be an integer >= 1"),
        (names(5), 3, 1.5, "rounds must be an integer >= 1"),
        ("abcde", 3, 1, "entrants must be a sequence of names"),
        (["a", "b", ""], 3, 1, "non-empty string"),
        (["a", "b", 3], 3, 1, "non-empty string"),
    ],
)
def test_bad_input(entrants: Sequence[str], k: int, rounds: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        round_robin(entrants, k, rounds, seed=0)
    with pytest.raises(ValueError, match=message):
        duplicate(entrants, k, rounds, seed=0)
    if "rounds" not in message:
        with pytest.raises(ValueError, match=message):
            ladder_next(entrants, k, {}, {}, None, 0, ENV)


def test_bad_seed() -> None:
    with pytest.raises(ValueError, match="seed must be an integer"):
        round_robin(names(4), 3, 1, seed="7")  # type: ignore[arg-type]  # text for the seed, on purpose
