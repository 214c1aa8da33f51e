"""The standalone fallback: the decision played for a faulty one, from a ruleset and the legal decisions alone."""

from __future__ import annotations

import random

import pytest

from polignac import PRESETS, Card, Contract, IllegalDecision, Match, Phase, Suit, fallback, parse_cards, preset

SUIT_ORDER = "SHDC"


def lowest_by_hand(rules_name: str, legal: list[Card], trump: Suit | None) -> Card:
    """docs/rules.md 8 and 11 written out again: plain suits before trumps, then lowest in trick order, ties to S H D C."""
    order = preset(rules_name).trick_order  # highest first
    return min(legal, key=lambda c: (c.suit == trump, -order.index(c.rank), SUIT_ORDER.index(str(c)[-1])))


@pytest.mark.parametrize(("rules_name", "players"), [(name, n) for name, rules in PRESETS.items() for n in rules.table_sizes()])
def test_fallback_of_the_legal_decisions_is_the_engines_at_every_decision(rules_name: str, players: int) -> None:
    match = Match(preset(rules_name, players=players, limit=10), 17)
    rnd = random.Random(players)
    trumps_mattered = 0
    while not match.is_over:
        legal = match.legal_decisions()
        chosen = fallback(match.rules, legal, trump=match.trump)
        assert chosen == match.fallback()
        assert match.to_act is not None  # not over
        view = match.view(match.to_act)
        assert view.trump == match.trump
        assert fallback(view.rules, view.legal, trump=view.trump) == chosen
        if match.phase is Phase.AUCTION:
            assert chosen is Contract.PASS
        else:
            cards = [c for c in legal if isinstance(c, Card)]
            assert chosen == lowest_by_hand(rules_name, cards, match.trump)
            trumps_mattered += fallback(match.rules, legal) != chosen
        match.apply(rnd.choice(legal))
    if match.rules.trumps.value == "turned":
        assert trumps_mattered, "some fallback had a lower trump than its plain card"


def test_trumps_come_last() -> None:
    """docs/rules.md 11 (Knaves): the lowest legal card with plain suits below trumps, then lowest rank, then S H D C."""
    knaves = preset("knaves")
    legal = parse_cards("2S 3S 3C KD")
    assert fallback(knaves, legal) == Card.parse("2S")
    assert fallback(knaves, legal, trump=Suit.SPADES) == Card.parse("3C")
    assert fallback(knaves, legal, trump=Suit.CLUBS) == Card.parse("2S")
    assert fallback(knaves, parse_cards("4H 3S 3D"), trump=Suit.SPADES) == Card.parse("3D")
    assert fallback(knaves, parse_cards("AS 2S"), trump=Suit.SPADES) == Card.parse("2S"), "only trumps: the lowest trump"


def test_equal_ranks_go_to_the_first_suit_in_s_h_d_c() -> None:
    sevens = [Card.parse(text) for text in ("7C", "7D", "7H")]
    assert fallback(preset("classic"), sevens) == Card.parse("7H")
    assert fallback(preset("ace-high"), [Card.parse("AS"), Card.parse("KS")]) == Card.parse("KS")
    assert fallback(preset("classic"), [Card.parse("AS"), Card.parse("KS")]) == Card.parse("AS")


def test_nothing_legal_is_refused() -> None:
    with pytest.raises(IllegalDecision, match="no decision is pending"):
        fallback(preset("classic"), [])
