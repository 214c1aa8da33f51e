"""The shared action numbers and observation vector: one numbering, fixed sizes, nothing a seat may not know."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polignac import CARDS, Card, Contract, Match, Phase, PolignacError, preset
from polignac.envs.encoding import (
    ACTIONS,
    TOTALS_CLIP,
    action_mask,
    action_of,
    decision_of,
    encode,
    legal_actions,
    observation_bounds,
    observation_layout,
    observation_size,
    unflatten,
)
from polignac.rules import cards_each
from polignac.values import Trick
from tests.research.common import EVERY_TABLE, EVERY_TABLE_IDS


def test_every_card_and_contract_has_one_action_and_back() -> None:
    decisions: list[Card | Contract] = [*CARDS, Contract.PASS, Contract.CAPOT, Contract.GENERAL]
    actions = [action_of(d) for d in decisions]
    assert sorted(actions) == list(range(ACTIONS))
    assert [decision_of(a) for a in actions] == decisions
    assert decision_of(np.int64(52)) is Contract.PASS  # type: ignore[arg-type]  # numpy integers, as a policy's argmax gives
    assert decision_of(np.int32(0)) is CARDS[0]  # type: ignore[arg-type]  # numpy integers, as a policy's argmax gives


@pytest.mark.parametrize("bad", [-1, 55, 1000, 2.5, "JS", None, True + 54.5])
def test_a_bad_action_is_a_clear_error(bad: object) -> None:
    with pytest.raises(ValueError, match=r"an action is an integer in 0\.\.54"):
        decision_of(bad)  # type: ignore[arg-type]  # not an int, on purpose
    with pytest.raises(ValueError, match="not a card or a contract"):
        action_of("JS")  # type: ignore[arg-type]  # text, not a Card, on purpose


def test_the_layout_tiles_the_vector_in_order() -> None:
    for players in range(3, 7):
        layout = observation_layout(players)
        offset = 0
        for part, shape in layout.values():
            assert part.start == offset and part.stop - part.start == int(np.prod(shape))
            offset = part.stop
        assert offset == observation_size(players)
        low, high = observation_bounds(players)
        assert low.shape == high.shape == (offset,) and (low <= high).all()
    with pytest.raises(ValueError, match=r"players must be an integer in 3\.\.6"):
        observation_layout(7)


@pytest.mark.parametrize(("name", "players"), EVERY_TABLE, ids=EVERY_TABLE_IDS)
def test_a_whole_match_encodes_within_bounds_and_the_mask_is_the_legal_set(name: str, players: int) -> None:
    rules = preset(name, players=players)
    match = Match(rules, seed=players * 11)
    rng = random.Random(players)
    low, high = observation_bounds(players)
    while not match.is_over:
        seat = match.to_act
        assert seat is not None
        view = match.view(seat)
        vector = encode(view)
        assert vector.dtype == np.float32 and ((low <= vector) & (vector <= high)).all()
        parts = unflatten(vector, players)
        assert {CARDS[i] for i in np.flatnonzero(parts["hand"])} == set(view.hand)
        assert parts["phase"][0 if view.phase is Phase.AUCTION else 1] == 1
        mask = action_mask(view)
        assert list(np.flatnonzero(mask)) == legal_actions(view) == sorted(action_of(d) for d in match.legal_decisions())
        match.apply(rng.choice(match.legal_decisions()))


@settings(max_examples=25, deadline=None)
@given(table=st.sampled_from(EVERY_TABLE), seed=st.integers(0, 2**32 - 1))
def test_every_view_of_a_random_match_is_within_bounds(table: tuple[str, int], seed: int) -> None:
    name, players = table
    match = Match(preset(name, players=players), seed=seed)
    rng = random.Random(seed)
    low, high = observation_bounds(players)
    while not match.is_over:
        for seat in range(players):
            vector = encode(match.view(seat))
            assert ((low <= vector) & (vector <= high)).all(), (name, players, seed, seat)
        match.apply(rng.choice(match.legal_decisions()))


@pytest.mark.parametrize(("name", "players"), EVERY_TABLE, ids=EVERY_TABLE_IDS)
def test_a_seat_that_takes_every_trick_has_tricks_won_of_exactly_one(name: str, players: int) -> None:
    """A capot: one seat's tricks_won is the whole hand, which must not pass the declared high of 1."""
    view = Match(preset(name, players=players), seed=5).view(0)
    for seats in range(2, players + 1):  # the whole table, and every tie-break hand the pack shares among
        try:
            tricks = cards_each(view.rules, seats)
        except PolignacError:
            continue
        capot = dataclasses.replace(view, seats=view.seats[:seats], tricks=(Trick((), 0),) * tricks)
        won = unflatten(encode(capot), players)["tricks_won"]
        assert won[0] == 1.0 and won[1:].sum() == 0.0
        assert (encode(capot) <= observation_bounds(players)[1]).all()


def test_seats_are_relative_to_the_observer() -> None:
    match = Match(preset("no-contracts"), seed=4)
    leader = match.to_act
    assert leader == 0
    card = match.legal_cards()[0]
    match.apply(card)
    for seat in range(4):
        parts = unflatten(encode(match.view(seat)), 4)
        relative = (leader - seat) % 4
        assert parts["trick"][relative, card.index] == 1 and parts["played"][relative, card.index] == 1
        assert parts["leader"][relative] == 1
        assert parts["dealer"][(3 - seat) % 4] == 1


def test_the_observation_holds_nothing_of_the_other_hands() -> None:
    """Two deals that give seat 0 the same cards and differ elsewhere look the same to seat 0."""
    rules = preset("classic")
    hands = [c.index for c in Match(rules, seed=9).hand(0)]
    rest = [i for i in range(32) if i not in hands]
    deals = []
    for shuffle in (1, 2):
        random.Random(shuffle).shuffle(rest)
        deals.append({1: [[CARDS[i] for i in hands], *[[CARDS[i] for i in rest[k * 8 : k * 8 + 8]] for k in range(3)]]})
    vectors = [encode(Match(rules, seed=1, deals=deal).view(0)) for deal in deals]
    assert Match(rules, seed=1, deals=deals[0]).hand(1) != Match(rules, seed=1, deals=deals[1]).hand(1)
    assert np.array_equal(vectors[0], vectors[1])


def test_totals_are_in_limits_and_clipped() -> None:
    match = Match(preset("classic", limit=10), seed=3, start_totals=[5, -200, 0, 9])
    totals = unflatten(encode(match.view(0)), 4)["totals"]
    assert list(totals) == [0.5, -TOTALS_CLIP, 0.0, 0.9]  # seat 1 is relative seat 1 for seat 0
    turned = unflatten(encode(Match(preset("knaves"), seed=3).view(0)), 3)["turned"]
    assert turned.sum() == 1 and Card.from_index(int(np.flatnonzero(turned)[0])) == Match(preset("knaves"), seed=3).turned
