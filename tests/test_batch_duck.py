"""The ``duck`` policy of ``Playout.run_batch`` against a plain-Python reading of its rules, deal for deal.

The reference below plays one deal card by card on a scalar ``Playout`` with the rules of
``polignac.batch_duck`` written out the slow way; every row of a batch must score what it
scores for the same floats, from random positions of several presets (a trump game, the
52-card pack, an order where the Ten beats the King).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from polignac import Ruleset, preset
from polignac.batch import sample_hands_many
from polignac.batch_duck import NOISE
from polignac.cards import CARDS, SUIT_MASKS, cards_in
from polignac.errors import BatchError
from polignac.playout import Playout
from tests.test_batch_playout import plays_left, positions
from tests.test_playout import rules_id

RULES = [
    preset("classic"),  # the Ten between the Jack and the Queen
    preset("classic", players=3),
    preset("knaves"),  # 52 cards, a turned trump
    preset("knaves", players=4, trumps="none"),
    preset("bassadewitz"),
    preset("ace-high", players=5),
]


def in_order(mask: int) -> list[int]:
    """The cards of ``mask`` in the order ``Playout.run`` numbers them: suits S H D C, ranks up."""
    return [c.index for c in sorted(cards_in(mask), key=lambda c: (c.suit, c.rank))]


def reference_card(p: Playout, u: float) -> int:
    """The card the duck policy plays from ``p`` for the float ``u`` (docs in ``polignac.batch_duck``)."""
    strength, points = p.rules.strength, p.rules.card_points
    h = p.hands[p.to_act]
    legal = in_order(p.legal_mask())
    if u < NOISE:
        return legal[min(int(u / NOISE * len(legal)), len(legal) - 1)]
    if p.trick_len == 0:
        cards = in_order(h)
        v = (u - NOISE) / (1 - NOISE)
        suit = CARDS[cards[min(int(v * len(cards)), len(cards) - 1)]].suit
        return min((c for c in cards if CARDS[c].suit == suit), key=lambda c: strength[c])
    follow = h & SUIT_MASKS[p.led]
    if follow:
        suited = [c.index for c in cards_in(follow)]
        losers = [c for c in suited if p.best_strength < 64 and strength[c] < p.best_strength]
        if losers:
            return max(losers, key=lambda c: (points[c], strength[c]))
        return min(suited, key=lambda c: (points[c], strength[c]))
    trumps = SUIT_MASKS[p.trump] if p.trump >= 0 else 0
    rest = h & ~trumps or h
    return max((c.index for c in cards_in(rest)), key=lambda c: (points[c], strength[c], -CARDS[c].suit))


def reference(playout: Playout, row: np.ndarray, floats: np.ndarray) -> list[int]:
    p = playout.copy()
    p.hands = [int(h) for h in row]
    for u in floats.tolist():
        p.play(reference_card(p, u))
    assert p.is_over
    return p.scores()


@pytest.mark.parametrize("rules", RULES, ids=rules_id)
def test_duck_equals_reference(rules: Ruleset) -> None:
    """Determinizations of the view of the seat to act, as a searching bot runs them."""
    rnd = random.Random(f"duck-{rules_id(rules)}")
    for i, position in enumerate(positions(rules, rnd, 8)):
        seat = position.to_act if position.to_act is not None else position.eldest
        view = position.view(seat)
        hands = sample_hands_many(view, rnd, 6)
        playout = Playout.from_view(view, rnd)
        floats = np.random.default_rng(i).random((len(hands), plays_left(playout)))
        # Small floats often, so that the noise branch and its edge are played too.
        floats[:, ::5] *= 0.12
        scores = playout.run_batch(hands, uniforms=floats, policy="duck")
        for b in range(len(hands)):
            expected = reference(playout, hands[b], floats[b])
            assert scores[b].tolist() == expected, f"position {i} deal {b}: batch {scores[b].tolist()} != reference {expected}"


def test_duck_rng_and_unknown_policy() -> None:
    """The same generator plays the same hands; an unknown policy is refused by name."""
    view = next(positions(preset("classic"), random.Random(1), 1)).view(0)
    playout = Playout.from_view(view, random.Random(2))
    hands = sample_hands_many(view, random.Random(3), 50)
    a = playout.run_batch(hands, rng=np.random.default_rng(5), policy="duck")
    b = playout.run_batch(hands, rng=np.random.default_rng(5), policy="duck")
    assert (a == b).all()
    with pytest.raises(BatchError, match="policy must be one of random, duck, got 'greedy'"):
        playout.run_batch(hands, policy="greedy")
