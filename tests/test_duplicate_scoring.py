"""Duplicate deals scored as duplicates: the store rates a deal's rotations together, a pure function of the results."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from polignac_arena.ratings import Rating, RatingEnv, rate_duplicate, rate_result
from polignac_arena.schedule import Fixture, duplicate
from polignac_arena.statuses import MatchStatus
from polignac_arena.store import GroupRate, GroupResults, Store

ENV = RatingEnv()
BOTS = ["ann@1", "bob@1", "cy@1", "dee@1", "eve@1"]


def places_of(seed: int, seats: tuple[str, ...]) -> list[int]:
    """Made-up standings: ties now and then, the same for the same fixture."""
    rng = random.Random(f"{seed}/{seats}")
    return [1 + int(rng.random() * len(seats)) for _ in seats]


def rate(before: Mapping[str, tuple[float, float]], results: GroupResults) -> dict[str, Rating]:
    return rate_duplicate(ENV, before, results)


def expected_ratings(fixtures: list[Fixture], outcomes: dict[int, list[int] | None]) -> dict[str, Rating]:
    """The pure replay: each group rated once, in schedule order, from the ratings before it."""
    ratings: dict[str, Rating] = {}
    groups: dict[int, list[Fixture]] = {}
    for f in fixtures:
        groups.setdefault(f.group, []).append(f)
    for group in sorted(groups):
        finished = [(list(f.seats), places) for f in groups[group] if (places := outcomes[f.index]) is not None]
        if finished:
            ratings.update(rate_duplicate(ENV, ratings, finished))
    return ratings


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "arena.db") as s:
        yield s


def test_rotations_in_any_order_give_the_replay(store: Store) -> None:
    fixtures = duplicate(BOTS, 4, 1, seed=3)
    outcomes: dict[int, list[int] | None] = {f.index: places_of(f.seed, f.seats) for f in fixtures}
    outcomes[6] = None  # an aborted rotation: void, and its deal is compared over the other three
    tid = store.create_tournament("dup", {}, fixtures)
    order = list(range(len(fixtures)))
    random.Random(1).shuffle(order)
    for idx in order:
        places = outcomes[idx]
        store.record_result(
            tid,
            idx,
            match_id=f"m{idx}",
            status=MatchStatus.FINISHED if places is not None else MatchStatus.ABORTED,
            places=places,
            totals=[0] * 4,
            faults=[{}] * 4,
            hands=1,
            rate=GroupRate(rate),
            final=True,
        )
    assert store.ratings(tid) == {name: tuple(r) for name, r in expected_ratings(fixtures, outcomes).items()}
    assert store.check() == []


def test_a_deal_compares_the_players_who_held_the_same_cards() -> None:
    # ann sits in seat 0, then 1, then 2 (the rotations); each seat's holders are ranked by their places.
    results = [(["ann", "bob", "cy"], [2, 1, 3]), (["cy", "ann", "bob"], [1, 2, 3]), (["bob", "cy", "ann"], [3, 1, 2])]
    expected: dict[str, Rating] = {}
    for seat in range(3):
        expected.update(rate_result(ENV, expected, {seats[seat]: places[seat] for seats, places in results}))
    assert rate_duplicate(ENV, {}, results) == expected
    # Seat 0: ann 2, cy 1, bob 3; seat 1: bob 1, ann 2, cy 1; seat 2: cy 3, bob 3, ann 2.
    assert expected["cy"].mu > expected["ann"].mu > expected["bob"].mu


def test_one_rotation_alone_is_rated_as_a_match() -> None:
    seats, places = ["ann", "bob", "cy"], [2, 1, 3]
    assert rate_duplicate(ENV, {}, [(seats, places)]) == rate_result(ENV, {}, dict(zip(seats, places, strict=True)))


def test_a_duplicate_tournament_is_rated_by_deal(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from polignac_arena.cli import app

    (tmp_path / "dup.toml").write_text(
        'name = "dup"\nentrants = ["random", "cautious", "heuristic"]\nformat = "duplicate"\ntable_size = 3\nseed = 5\n'
        '[rules]\nvariant = "classic"\nlimit = 5\n[seats]\nkind = "inprocess"\n'
    )
    db = tmp_path / "dup.db"
    done = CliRunner().invoke(app, ["tournament", "run", str(tmp_path / "dup.toml"), "--db", str(db)], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    with Store(db, create=False) as store:
        tournament = store.get_tournament("dup")
        assert tournament is not None
        tid = tournament.id
        results = [(list(r.seats), list(r.places or ())) for r in store.list_results(tid)]
        assert len(results) == 3
        assert store.ratings(tid) == {name: tuple(r) for name, r in rate_duplicate(ENV, {}, results).items()}
        assert store.check() == []
