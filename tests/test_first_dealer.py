"""``Match(first_dealer=...)``: start a match at any dealer, recorded and replayed, refused when it names no seat."""

from __future__ import annotations

import random

import pytest

from polignac import Match, PolignacError, RecordError, preset
from polignac.events import HandDealt


def play_out(match: Match, seed: int) -> Match:
    rnd = random.Random(seed)
    while not match.is_over:
        match.apply(rnd.choice(match.legal_decisions()))
    return match


@pytest.mark.parametrize("players", [3, 4, 5])
def test_the_first_dealer_deals_hand_1_and_the_deal_passes_to_the_left(players: int) -> None:
    for first in range(players):
        match = play_out(Match(preset("no-contracts", players=players, limit=10), 9, first_dealer=first), first)
        dealt = [e for e in match.events if isinstance(e, HandDealt) and not e.tiebreak]
        assert [e.dealer for e in dealt] == [(first + k) % players for k in range(len(dealt))]
        replayed = Match.from_record(match.record())
        assert replayed.events == match.events and replayed.record() == match.record()


def test_hand_1_is_dealt_from_the_eldest_hand_of_its_dealer() -> None:
    rules = preset("classic")
    match = Match(rules, 4, first_dealer=1)
    assert (match.dealer, match.eldest, match.to_act) == (1, 2, 2)


def test_the_default_dealer_keeps_records_as_they_were() -> None:
    rules = preset("classic")
    default = play_out(Match(rules, 3), 3)
    explicit = play_out(Match(rules, 3, first_dealer=rules.players - 1), 3)
    assert "first_dealer" not in default.record()
    assert explicit.record() == default.record()
    assert "first_dealer" in play_out(Match(rules, 3, first_dealer=0), 3).record()


@pytest.mark.parametrize("bad", [-1, 4, "0", 1.0, True])
def test_a_first_dealer_that_is_no_seat_is_refused(bad: object) -> None:
    with pytest.raises(PolignacError, match="first_dealer must be a seat from 0 to 3"):
        Match(preset("classic"), 1, first_dealer=bad)  # type: ignore[arg-type]  # not a seat, on purpose
    record = Match(preset("classic"), 1).record() | {"first_dealer": bad}
    with pytest.raises(RecordError, match="first_dealer"):
        Match.from_record(record)
