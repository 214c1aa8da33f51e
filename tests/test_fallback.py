"""The standalone fallback: the decision played for a faulty one, from a ruleset and the legal decisions alone."""

from __future__ import annotations

import random

import pytest

from polignac import PRESETS, Card, Contract, IllegalDecision, Match, Phase, fallback, preset

SUIT_ORDER = "SHDC"


def lowest_by_hand(rules_name: str, legal: list[Card]) -> Card:
    """docs/rules.md 8 written out again: lowest in trick order, ties to the first suit in S H D C."""
    order = preset(rules_name).trick_order  # highest first
    return min(legal, key=lambda c: (-order.index(c.rank), SUIT_ORDER.index(str(c)[-1])))


@pytest.mark.parametrize("rules_name", list(PRESETS))
@pytest.mark.parametrize("players", [3, 4, 6])
def test_fallback_of_the_legal_decisions_is_the_engines_at_every_decision(rules_name: str, players: int) -> None:
    if players not in PRESETS[rules_name].table_sizes():
        players = PRESETS[rules_name].players
    match = Match(preset(rules_name, players=players, limit=10), 17)
    rnd = random.Random(players)
    while not match.is_over:
        legal = match.legal_decisions()
        chosen = fallback(match.rules, legal)
        assert chosen == match.fallback()
        view = match.view(match.to_act)  # type: ignore[arg-type]  # not over
        assert fallback(view.rules, view.legal) == chosen
        if match.phase is Phase.AUCTION:
            assert chosen is Contract.PASS
        else:
            assert chosen == lowest_by_hand(rules_name, [c for c in legal if isinstance(c, Card)])
        match.apply(rnd.choice(legal))


def test_equal_ranks_go_to_the_first_suit_in_s_h_d_c() -> None:
    sevens = [Card.parse(text) for text in ("7C", "7D", "7H")]
    assert fallback(preset("classic"), sevens) == Card.parse("7H")
    assert fallback(preset("ace-high"), [Card.parse("AS"), Card.parse("KS")]) == Card.parse("KS")
    assert fallback(preset("classic"), [Card.parse("AS"), Card.parse("KS")]) == Card.parse("AS")


def test_nothing_legal_is_refused() -> None:
    with pytest.raises(IllegalDecision, match="no decision is pending"):
        fallback(preset("classic"), [])
