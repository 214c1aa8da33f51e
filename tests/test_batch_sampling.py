"""``polignac.batch.sample_hands_many``: many determinizations of a view at once, each as ``sample_hands`` deals one.

Every row must respect the view (hand sizes, known voids, exactly the unseen cards), deals
without known voids must be uniform, and rows where the greedy deal gets stuck must still
come out right (dealt by ``sample_hands``).  Seeded, so a failure replays.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

import polignac.batch
from polignac import Card, Match, preset
from polignac.batch import sample_hands_many
from polignac.errors import BatchError
from polignac.playout import Playout, sample_hands
from polignac.view import PlayerView
from tests.test_playout import check_sample, random_views


def check_rows(match: Match, view: PlayerView, rows: np.ndarray) -> None:
    assert rows.shape[1] == view.players and rows.dtype == np.uint64
    for row in rows.tolist():
        check_sample(match, view, row)
        assert [row[s].bit_count() for s in view.seats] == [view.hand_size(s) for s in view.seats]


def test_rows_respect_the_view() -> None:
    """Views of random positions of every ruleset (tie-breaks and forfeits included), from both kinds of rng."""
    for i, (match, view) in enumerate(random_views(300, "batch-sampling")):
        rng: random.Random | np.random.Generator = random.Random(i) if i % 2 else np.random.default_rng(i)
        check_rows(match, view, sample_hands_many(view, rng, 12))


def test_stuck_rows_fall_back_to_sample_hands(monkeypatch: pytest.MonkeyPatch) -> None:
    """A view whose voids often corner the greedy deal: those rows come from ``sample_hands`` and are still right."""
    views = random_views(95, "stuck")
    for _ in range(94):
        next(views)
    match, view = next(views)
    assert sum(bool(v) for v in view.known_voids().values()) >= 3, "the position this test relies on moved"
    calls = Counter[str]()
    real = sample_hands  # the function polignac.batch calls, patched there below

    def counted(v: PlayerView, rng: random.Random) -> list[int]:
        calls["sample_hands"] += 1
        return real(v, rng)

    monkeypatch.setattr(polignac.batch, "sample_hands", counted)
    rows = sample_hands_many(view, random.Random(94), 200)
    assert 0 < calls["sample_hands"] < 200, calls
    check_rows(match, view, rows)


def test_without_voids_deals_are_uniform() -> None:
    """A fresh hand's view: each unseen card goes to each other seat a third of the time, and rows differ."""
    match = Match(preset("classic"), 6)
    view = match.view(0)
    rows = sample_hands_many(view, np.random.default_rng(1), 3000)
    check_rows(match, view, rows[:50])
    for card in (Card.parse("JS"), Card.parse("7C"), Card.parse("AH")):
        if card.bit & view.hand_mask:
            continue
        holders = Counter(int(np.nonzero(rows[i] & np.uint64(card.bit))[0][0]) for i in range(len(rows)))
        assert set(holders) == {1, 2, 3} and all(880 <= c <= 1120 for c in holders.values()), (card, holders)
    assert len({tuple(r) for r in rows.tolist()}) == len(rows)


def test_same_seed_same_rows_and_bad_arguments() -> None:
    view = Match(preset("knaves"), 2).view(1)
    first = sample_hands_many(view, random.Random(5), 30)
    assert (first == sample_hands_many(view, random.Random(5), 30)).all()
    Playout.from_view(view, random.Random(5)).run_batch(first)
    with pytest.raises(BatchError, match=r"random\.Random or a numpy"):
        sample_hands_many(view, 5, 3)  # type: ignore[arg-type]  # an int for the rng, on purpose
