"""``Match(deals=...)``: given hands never lock a match.

Hand numbers count tie-break hands too, and whether hand N is a tie-break (and for how many
players) depends on the play.  A given deal is used when hand N is played by as many seats as
it has hands, else hand N is dealt from the seed; hand 1, always played by every seat, must get
a deal for every seat or the match is refused at once.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from polignac import Card, Match, PolignacError, preset
from polignac.cards import cards_in
from polignac.deal import deal_hands, shuffled_pack
from polignac.events import HandDealt
from polignac.rules import Ruleset, Tiebreak, cards_each, deck_mask, packet_sizes
from tests.test_properties import Table, play, tables


def a_deal(rules: Ruleset, hands: int, order: random.Random) -> list[list[Card]]:
    """Every card of the pack for ``hands`` players once, the card to turn for trumps (if any) left over."""
    cards = list(cards_in(deck_mask(rules, hands)))
    order.shuffle(cards)
    each = cards_each(rules, hands)
    return [cards[i * each : (i + 1) * each] for i in range(hands)]


def hand_sizes(rules: Ruleset) -> list[int]:
    """How many seats may play a hand: all of them, or (tie-break hands among the tied) any 2 and up."""
    if rules.tiebreak is Tiebreak.PLAY_ON:
        return [rules.players]
    return list(range(2, rules.players + 1))


@st.composite
def deals_for(draw: st.DrawFn, rules: Ruleset) -> dict[int, list[list[Card]]]:
    """Deals for some of hands 1..8: every seat for hand 1; any table size (2 is a tie-break's) later."""
    numbers = draw(st.sets(st.integers(1, 8), max_size=5))
    order = random.Random(draw(st.integers(0, 2**32)))
    sizes = st.sampled_from(hand_sizes(rules))
    return {n: a_deal(rules, rules.players if n == 1 else draw(sizes), order) for n in sorted(numbers)}


def seeded_hands(match_rules: Ruleset, seed: int, dealt: HandDealt) -> tuple[frozenset[Card], ...]:
    """The hands the seeded shuffle deals for ``dealt``'s hand (docs/rules.md 3 and 11: dealt from eldest)."""
    seats = list(dealt.seats)
    deck = deck_mask(match_rules, len(seats))
    eldest = seats[(seats.index(dealt.dealer) + 1) % len(seats)]
    order = seats[seats.index(eldest) :] + seats[: seats.index(eldest)]
    each = cards_each(match_rules, len(seats))
    pack = shuffled_pack(seed, dealt.hand_number, deck)
    masks = deal_hands(pack[: each * len(seats)], order, packet_sizes(each, match_rules.pack))
    if match_rules.pack == 52:
        assert packet_sizes(each, 52) == (1,) * each, "the 52-card pack is dealt one card at a time"
    # The card left at the bottom of the pack is the one turned for trumps.
    assert dealt.turned == (Card.from_index(pack[-1]) if len(pack) > each * len(seats) else None)
    return tuple(frozenset(cards_in(masks[s])) for s in seats)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), tables(start_totals=True, referee=True), st.integers(0, 2**32))
def test_any_accepted_deals_let_a_match_with_random_play_finish(data: Any, table: Table, play_seed: int) -> None:
    deals = data.draw(deals_for(table.rules))
    match = Match(table.rules, table.seed, start_totals=table.start_totals, deals=deals)
    play(match, random.Random(play_seed), calls=table.calls, max_steps=20_000)
    assert match.is_over, f"stuck in hand {match.hand_number} ({match.phase.value})"
    for dealt in (e for e in match.events if isinstance(e, HandDealt)):
        hands = tuple(frozenset(h) for h in dealt.hands)
        given_deal = deals.get(dealt.hand_number)
        if given_deal is not None and len(given_deal) == len(dealt.seats):
            event("a given deal used" + (" in a tie-break" if dealt.tiebreak else ""))
            assert hands == tuple(frozenset(h) for h in given_deal), f"hand {dealt.hand_number} ignored the deal that fits it"
            left = set(cards_in(deck_mask(table.rules, len(dealt.seats)))) - {c for h in given_deal for c in h}
            assert dealt.turned == (left.pop() if table.rules.trumps.value == "turned" else None), "the card no hand holds is turned"
        else:
            if given_deal is not None:
                event("a given deal that does not fit" + (" a tie-break" if dealt.tiebreak else " a regular hand"))
            assert hands == seeded_hands(table.rules, table.seed, dealt), f"hand {dealt.hand_number} is not the seeded deal"
    assert Match.from_record(match.record()).events == match.events


def test_a_deal_that_lands_on_a_tiebreak_hand_does_not_lock_the_match() -> None:
    """The case of the issue: no-contracts, 3 players, limit 2, seed 5, a 3-hand deal for hand 2, a tie-break."""
    rules = preset("no-contracts", players=3, limit=2)
    deal = a_deal(rules, 3, random.Random(0))
    match = Match(rules, 5, deals={2: deal})
    rnd = random.Random(0)
    while not match.is_over:
        match.apply(rnd.choice(match.legal_decisions()))
    dealt = [e for e in match.events if isinstance(e, HandDealt)]
    assert dealt[1].hand_number == 2 and dealt[1].tiebreak and len(dealt[1].seats) == 2
    assert tuple(frozenset(h) for h in dealt[1].hands) == seeded_hands(rules, 5, dealt[1])


def test_hand_1_needs_a_deal_for_every_seat() -> None:
    rules = preset("classic")
    with pytest.raises(PolignacError, match="deals\\[1\\] must hold 4 hands"):
        Match(rules, 1, deals={1: a_deal(rules, 2, random.Random(1))})


def test_a_knaves_deal_leaves_one_card_to_turn() -> None:
    rules = preset("knaves")
    deal = a_deal(rules, 3, random.Random(2))
    assert [len(h) for h in deal] == [17, 17, 17]
    match = Match(rules, 1, deals={1: deal})
    (left,) = set(cards_in(deck_mask(rules, 3))) - {c for h in deal for c in h}
    assert match.turned == left
    whole = [*deal[:2], [*deal[2], left]]
    with pytest.raises(PolignacError, match="17 cards each, every card once, and 1 card left to turn for trumps"):
        Match(rules, 1, deals={1: whole})
    with pytest.raises(PolignacError, match="does not share among 2 players"):
        Match(rules, 1, deals={1: deal, 2: a_deal(preset("classic"), 2, random.Random(3))})
