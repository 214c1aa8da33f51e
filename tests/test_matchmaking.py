"""Matchmaking that keeps measuring everyone (polignac_arena.matchmaking), as the tournament ladder
(schedule.ladder_next) and the league (league.table_pick.pick_table) use it: over a long ladder with
random results every pair meets, match counts stay within a small spread, no table comes back most
of the time, and the order found is the true one."""

from __future__ import annotations

import collections
import itertools
import random
from pathlib import Path

import pytest

from polignac_arena.league.entrants import Entrant
from polignac_arena.league.table_pick import pick_table
from polignac_arena.matchmaking import Meetings, fill_table, pair_quality
from polignac_arena.ratings import RatingEnv, match_quality, rate_match
from polignac_arena.schedule import ladder_next
from polignac_arena.submission import Submission

ENV = RatingEnv()
FOLDER = Submission(path=Path("/nonexistent"), name="x", version="1", language="python", command=("python", "bot.py"))


def test_pair_quality_is_trueskills_two_player_quality() -> None:
    for a, b in [((25.0, 8.3), (25.0, 8.3)), ((30.0, 2.0), (22.0, 1.0)), ((0.0, 5.0), (40.0, 0.5))]:
        assert pair_quality(ENV, a, b) == pytest.approx(match_quality(ENV, [a, b]), rel=1e-9)


def test_meetings_count_games_and_pairs() -> None:
    meetings = Meetings([("a", "b", "c"), ("c", "b", "d")])
    assert meetings.games == {"a": 1, "b": 2, "c": 2, "d": 1}
    assert (meetings.met("b", "c"), meetings.met("c", "b"), meetings.met("a", "d")) == (2, 2, 0)
    assert meetings.average("b", 4) == 4 / 3


def test_pairs_that_met_less_are_preferred_over_better_quality() -> None:
    ratings = {"a": (25.0, 0.5), "near": (27.0, 0.5), "far": (32.0, 0.5)}  # sure orders: no focus
    meetings = Meetings([("a", "near")] * 6)
    table = fill_table("a", 2, lambda chosen: ["near", "far"], ratings, ENV, meetings, 3, random.Random(1))
    assert table == ["a", "far"]
    assert fill_table("a", 2, lambda chosen: ["near", "far"], ratings, ENV, Meetings(), 3, random.Random(1)) == ["a", "near"]


# -- a long ladder with made-up results -----------------------------------------------------------

GAP = 0.5  # neighbours' skill gap in units of one match's performance noise: the better wins about 64 %


def simulate(bots: int, matches: int, seed: int, *, league: bool = False) -> tuple[list[frozenset[str]], Meetings, list[str]]:
    """A ladder of ``bots`` of known order (bot00 best) at tables of 4; the tables, the meetings and the final leaderboard."""
    rng = random.Random(seed)
    names = [f"bot{i:02d}" for i in range(bots)]
    skill = {name: -i * GAP for i, name in enumerate(names)}
    entrants = names[:]
    rng.shuffle(entrants)
    ratings: dict[str, tuple[float, float]] = {}
    meetings = Meetings()
    tables: list[frozenset[str]] = []
    for index in range(matches):
        if league:
            recent = collections.Counter(name for table in tables[-200:] for name in table)
            picked = pick_table(
                [Entrant(name, name, FOLDER) for name in entrants], 4, ratings, meetings.games, recent, {}, index, ENV, meetings=meetings
            )
            assert picked is not None
            table = picked
        else:
            last = tables[-1] if tables else None
            table = ladder_next(entrants, 4, ratings, meetings.games, last, seed * 10_000 + index, ENV, meetings=meetings)
        tables.append(frozenset(table))
        meetings.record(table)
        performance = {name: skill[name] + rng.gauss(0, 1) for name in table}
        order = sorted(table, key=lambda name: -performance[name])
        places = [order.index(name) + 1 for name in table]
        ratings.update(zip(table, rate_match(ENV, [ratings.get(name, ENV.initial) for name in table], places), strict=True))
    board = sorted(names, key=lambda name: -(ratings[name][0] - 3 * ratings[name][1]))
    return tables, meetings, board


@pytest.fixture(scope="module", params=["ladder_next", "pick_table"])
def long_run(request: pytest.FixtureRequest) -> tuple[list[frozenset[str]], Meetings, list[str]]:
    return simulate(8, 400, seed=3, league=request.param == "pick_table")


def test_every_pair_meets(long_run: tuple[list[frozenset[str]], Meetings, list[str]]) -> None:
    tables, meetings, _ = long_run
    names = sorted(meetings.games)
    counts = [meetings.met(a, b) for a, b in itertools.combinations(names, 2)]
    assert min(counts) > 0.4 * sum(counts) / len(counts), counts
    second_half = Meetings(tables[len(tables) // 2 :])
    assert all(second_half.met(a, b) for a, b in itertools.combinations(names, 2)), "pairs keep meeting"


def test_match_counts_stay_within_a_small_spread(long_run: tuple[list[frozenset[str]], Meetings, list[str]]) -> None:
    _, meetings, _ = long_run
    most, least = max(meetings.games.values()), min(meetings.games.values())
    assert most - least <= 2 or most <= 1.2 * least, meetings.games  # the ladder: 2; the league weighs by sigma


def test_no_table_comes_back_most_of_the_time(long_run: tuple[list[frozenset[str]], Meetings, list[str]]) -> None:
    tables, _, _ = long_run
    late = tables[len(tables) // 2 :]
    most = collections.Counter(late).most_common(1)[0][1]
    assert most <= 0.15 * len(late), collections.Counter(late).most_common(3)
    assert sum(a == b for a, b in itertools.pairwise(tables)) <= len(tables) // 50


def test_the_ladder_finds_the_true_order(long_run: tuple[list[frozenset[str]], Meetings, list[str]]) -> None:
    *_, board = long_run
    assert board == sorted(board)


@pytest.mark.slow  # three ladders of 12 bots: several seconds
def test_twelve_bots_end_in_the_right_order() -> None:
    for seed in range(3):
        *_, board = simulate(12, 500, seed)
        assert board == sorted(board), (seed, board)
