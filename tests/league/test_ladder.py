"""The league ladder's table picker: legal tables, the anchor, the rate factor, match quality, determinism."""

from __future__ import annotations

import collections
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polignac_arena.league.entrants import Entrant
from polignac_arena.league.table_pick import LadderError, pick_table
from polignac_arena.ratings import Rating, RatingEnv, new_version, rate_match
from polignac_arena.submission import Submission

ENV = RatingEnv()
FOLDER = Submission(path=Path("/nonexistent"), name="x", version="1", language="python", command=("python", "bot.py"))


def uploaded(label: str) -> Entrant:
    return Entrant(label, label.split("@")[0], FOLDER)


def remote(label: str) -> Entrant:
    return Entrant(label, label.split("@")[0])


def pick(
    entrants: Sequence[Entrant],
    k: int = 3,
    *,
    ratings: Mapping[str, tuple[float, float]] | None = None,
    games: Mapping[str, int] | None = None,
    recent: Mapping[str, float] | None = None,
    busy: Mapping[str, int] | None = None,
    seed: int = 0,
) -> tuple[str, ...] | None:
    return pick_table(entrants, k, ratings or {}, games or {}, recent or {}, busy or {}, seed, ENV)


# -- single picks ---------------------------------------------------------------------------


def test_no_table_with_fewer_free_bots_than_seats() -> None:
    entrants = [uploaded("a@1"), uploaded("a@2"), uploaded("b@1"), remote("c@1")]
    assert pick(entrants, 3, busy={"c@1": 1}) is None  # two versions of a are one bot; c plays elsewhere
    table = pick(entrants, 3)
    assert table is not None and {"b@1", "c@1"} < set(table) and len({label[0] for label in table}) == 3


def test_a_remote_bot_plays_one_match_at_a_time_an_uploaded_version_two() -> None:
    entrants = [remote("r@1"), uploaded("u@1"), uploaded("v@1"), uploaded("w@1")]
    table = pick(entrants, 3, busy={"r@1": 1, "u@1": 1})
    assert table is not None and sorted(table) == ["u@1", "v@1", "w@1"]
    assert pick(entrants, 3, busy={"r@1": 1, "u@1": 2}) is None


def test_the_anchor_is_the_entrant_most_behind_its_share() -> None:
    entrants = [uploaded(f"{name}@1") for name in "abcdef"]
    ratings = {e.label: (25.0, 2.0) for e in entrants} | {"f@1": (60.0, 2.0)}  # f: nobody's good match
    table = pick(entrants, 3, ratings=ratings, recent={"a@1": 9, "b@1": 9, "c@1": 9, "d@1": 9, "e@1": 9, "f@1": 8})
    assert table is not None and "f@1" in table


def test_a_new_version_is_behind_its_share_sooner() -> None:
    entrants = [uploaded(f"{name}@1") for name in "abcde"] + [uploaded("f@2")]
    ratings = {e.label: (25.0, 2.0) for e in entrants} | {"f@2": new_version(ENV, (60.0, 2.0))}
    recent = dict.fromkeys((e.label for e in entrants), 10.0) | {"f@2": 12.0}
    table = pick(entrants, 3, ratings=ratings, recent=recent)  # 12 / 1.5 < 10: the new version anchors
    assert table is not None and "f@2" in table


def test_a_version_with_few_games_anchors_first() -> None:
    entrants = [uploaded(f"{name}@1") for name in "abcdef"]
    ratings = {e.label: (25.0, 2.0) for e in entrants} | {"f@1": (60.0, 2.0)}
    games = dict.fromkeys((e.label for e in entrants), 50) | {"f@1": 3}
    recent = dict.fromkeys((e.label for e in entrants), 5.0) | {"f@1": 9.0}
    table = pick_table(entrants, 3, ratings, games, recent, {}, 0, ENV, new_version_matches=4)
    assert table is not None and "f@1" in table
    table = pick_table(entrants, 3, ratings, games, recent, {}, 0, ENV, new_version_matches=3)
    assert table is not None and "f@1" not in table


def test_the_rest_of_the_table_goes_by_match_quality() -> None:
    entrants = [uploaded(f"{name}@1") for name in "abcde"]
    ratings = {"a@1": (25.0, 1.0), "b@1": (25.5, 1.0), "c@1": (24.5, 1.0), "d@1": (45.0, 1.0), "e@1": (5.0, 1.0)}
    table = pick(entrants, 3, ratings=ratings, games={"a@1": 0}, recent=dict.fromkeys(ratings, 5.0) | {"a@1": 4.0})
    assert table is not None and sorted(table) == ["a@1", "b@1", "c@1"]


def test_the_rate_factor_seats_those_behind_before_better_matches() -> None:
    entrants = [uploaded(f"{name}@1") for name in "abcde"]
    ratings = {"a@1": (25.0, 1.0), "b@1": (25.5, 1.0), "c@1": (24.5, 1.0), "d@1": (40.0, 1.0), "e@1": (5.0, 1.0)}
    recent = {"a@1": 10.0, "b@1": 20.0, "c@1": 14.0, "d@1": 12.0, "e@1": 12.0}
    table = pick(entrants, 3, ratings=ratings, recent=recent)  # b would pass twice a's rate: c, then d or e
    assert table is not None and "b@1" not in table and {"a@1", "c@1"} < set(table)


def test_seat_order_comes_from_the_seed() -> None:
    entrants = [uploaded(f"{name}@1") for name in "abcdef"]
    tables = {pick(entrants, 4, seed=seed) for seed in range(30)}
    assert len(tables) > 1 and all(pick(entrants, 4, seed=seed) == pick(entrants, 4, seed=seed) for seed in range(5))
    assert len({frozenset(t or ()) for t in tables}) < len(tables), "the same members, seated in another order"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rate_factor": 0.5}, "rate_factor must be a number >= 1, got 0.5"),
        ({"new_version_boost": 1.5}, r"new_version_boost must be from 0 to rate_factor - 1 \(1\), got 1.5"),
        ({"new_version_boost": -0.1}, "new_version_boost must be from 0"),
        ({"max_concurrent": 0}, "max_concurrent must be an integer >= 1, got 0"),
        ({"new_version_matches": -1}, "new_version_matches must be an integer >= 0, got -1"),
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, float], message: str) -> None:
    entrants = [uploaded(f"{name}@1") for name in "abc"]
    with pytest.raises(LadderError, match=message):
        pick_table(entrants, 3, {}, {}, {}, {}, 0, ENV, **kwargs)  # type: ignore[arg-type]  # keyword options of mixed types, given as one dict


def test_bad_entrants_and_table_sizes_are_refused() -> None:
    with pytest.raises(LadderError, match="listed more than once: 'a@1'"):
        pick([uploaded("a@1"), remote("a@1"), uploaded("b@1")])
    with pytest.raises(LadderError, match="table size must be an integer from 3 to 6, got 2"):
        pick([uploaded("a@1"), uploaded("b@1")], 2)
    with pytest.raises(ValueError, match="needs a label and a bot name"):
        Entrant("", "a")


# -- properties -----------------------------------------------------------------------------


@st.composite
def situations(draw: st.DrawFn) -> tuple[list[Entrant], int, dict[str, tuple[float, float]], dict[str, float], dict[str, int]]:
    bots = draw(st.integers(2, 8))
    entrants = []
    for b in range(bots):
        for v in range(draw(st.integers(1, 2))):
            label = f"bot{b}@{v}"
            entrants.append(remote(label) if draw(st.booleans()) else uploaded(label))
    ratings = {e.label: (draw(st.floats(0, 50)), draw(st.floats(0.5, 8.4))) for e in entrants if draw(st.booleans())}
    recent = {e.label: float(draw(st.integers(0, 40))) for e in entrants if draw(st.booleans())}
    busy = {e.label: draw(st.integers(1, 2)) for e in entrants if draw(st.integers(0, 3)) == 0}
    return entrants, draw(st.integers(3, 5)), ratings, recent, busy


@settings(max_examples=80, deadline=None)
@given(situations(), st.randoms(use_true_random=False))
def test_every_pick_is_legal_and_deterministic(
    situation: tuple[list[Entrant], int, dict[str, tuple[float, float]], dict[str, float], dict[str, int]], rng: random.Random
) -> None:
    entrants, k, ratings, recent, busy = situation
    table = pick_table(entrants, k, ratings, {}, recent, busy, 5, ENV)
    free = [e for e in entrants if busy.get(e.label, 0) < (1 if e.remote else 2)]
    if len({e.bot for e in free}) < k:
        assert table is None
        return
    assert table is not None and len(table) == k
    bot_of = {e.label: e.bot for e in free}
    assert set(table) <= set(bot_of), "only free entrants are seated"
    assert len({bot_of[label] for label in table}) == k, "one bot sits once"
    shuffled = entrants[:]
    rng.shuffle(shuffled)
    assert pick_table(shuffled, k, dict(ratings), {}, dict(recent), dict(busy), 5, ENV) == table


# -- a ladder running for a few thousand matches with made-up results ----------------------


@dataclass
class Run:
    """What a simulated league did: every table, and each bot's share of the window at every pick."""

    tables: list[tuple[str, ...]] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    """max / min matches in the window among entrants active for the whole window, after each pick."""
    early: collections.Counter[str] = field(default_factory=collections.Counter)
    """Matches in the 100 picks after the new version arrives."""


PICKS = 2000
WINDOW = 200
NEW_AT = 1000


def simulate(seed: int, picks: int = PICKS) -> Run:
    """Six bots (two remote) at tables of three, two matches at a time; bot 1 uploads a new version midway."""
    rng = random.Random(seed)
    skill = {f"bot{i}@1": rng.gauss(25, 12) for i in range(6)}
    entrants = [remote(label) if i in (0, 3) else uploaded(label) for i, label in enumerate(skill)]
    ratings: dict[str, Rating] = {}
    games: collections.Counter[str] = collections.Counter()
    busy: collections.Counter[str] = collections.Counter()
    window: collections.deque[tuple[str, ...]] = collections.deque(maxlen=WINDOW)
    running: collections.deque[tuple[str, ...]] = collections.deque()
    joined = dict.fromkeys(skill, 0)
    run = Run()
    for number in range(picks):
        if number == NEW_AT:
            old = entrants[1]
            skill["bot1@2"] = skill[old.label] + 10
            entrants = [e for e in entrants if e is not old] + [uploaded("bot1@2")]
            ratings["bot1@2"] = new_version(ENV, ratings[old.label])
            joined["bot1@2"] = number
        if len(running) == 2:  # the older match ends: made-up places from the hidden skills
            ended = running.popleft()
            busy.subtract(ended)
            order = sorted(ended, key=lambda label: -(skill[label] + rng.gauss(0, 5)))
            places = [order.index(label) + 1 for label in ended]
            ratings.update(zip(ended, rate_match(ENV, [ratings.get(label, ENV.initial) for label in ended], places), strict=True))
        recent = collections.Counter(label for table in window for label in table)
        table = pick_table(entrants, 3, ratings, games, recent, busy, number, ENV)
        assert table is not None
        run.tables.append(table)
        running.append(table)
        window.append(table)
        busy.update(table)
        games.update(table)
        if NEW_AT <= number < NEW_AT + 100:
            run.early.update(table)
        settled = [e.label for e in entrants if number - joined[e.label] >= WINDOW]
        if number >= WINDOW and len(settled) > 1:
            counts = collections.Counter(label for table in window for label in table)
            run.ratios.append(max(counts[label] for label in settled) / min(counts[label] for label in settled))
    return run


@pytest.fixture(scope="module")
def league() -> Run:
    return simulate(seed=3)


@pytest.mark.slow  # the simulation: a few seconds
def test_no_bot_sits_twice_and_remote_bots_play_one_match_at_a_time(league: Run) -> None:
    for number, table in enumerate(league.tables):
        assert len({label.split("@")[0] for label in table}) == 3
        if number:
            previous = league.tables[number - 1]  # still running beside this one
            assert not ({"bot0@1", "bot3@1"} & set(table) & set(previous))


@pytest.mark.slow  # the simulation: a few seconds
def test_every_match_rate_stays_within_the_factor(league: Run) -> None:
    # No pick widens the spread past 2; old matches leaving the window may, by a match or two.
    assert league.ratios and max(league.ratios) <= 2.1
    assert sum(ratio > 2.0 for ratio in league.ratios) <= len(league.ratios) // 50


@pytest.mark.slow  # the simulation: a few seconds
def test_a_new_version_gets_more_early_matches(league: Run) -> None:
    new = league.early["bot1@2"]
    assert all(new > count for label, count in league.early.items() if label != "bot1@2"), league.early


@pytest.mark.slow  # the simulation: a few seconds
def test_the_simulation_is_deterministic(league: Run) -> None:
    assert simulate(seed=3, picks=300).tables == league.tables[:300]
