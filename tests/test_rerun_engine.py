"""A match taken up at hand k of a seeded match: the same deals, dealers and totals (polignac.rerun)."""

from __future__ import annotations

import pytest

from polignac import Match, PolignacError, Ruleset, preset
from polignac.events import HandDealt, HandEnded
from polignac.rerun import HandStart, RerunError, hand_start


def _first_legal(match: Match) -> Match:
    """Play ``match`` to its end, every seat taking its first legal decision (a deterministic policy)."""
    while match.to_act is not None:
        match.apply(match.legal_decisions()[0])
    return match


def _hands_from(match: Match, k: int) -> list[tuple[object, ...]]:
    """The deals and results of hands k, k+1, ... of ``match``, as comparable tuples."""
    return [tuple(e) for e in match.events if isinstance(e, HandDealt | HandEnded) and e.hand_number >= k]


@pytest.mark.parametrize(("name", "players"), [("classic", 4), ("classic", 5), ("knaves", 3), ("bassadewitz", 4), ("slobberhannes", 6)])
def test_a_rerun_from_every_hand_reproduces_the_original_hands(name: str, players: int) -> None:
    rules = preset(name, players=players)
    original = _first_legal(Match(rules, seed=424242))
    regular = [e.hand_number for e in original.events if isinstance(e, HandDealt) and not e.tiebreak]
    assert len(regular) >= 2
    for k in regular:
        start = hand_start(original, k)
        rerun = _first_legal(start.match(rules, original.seed))
        assert _hands_from(rerun, k) == _hands_from(original, k), f"hand {k}"
        assert rerun.places == original.places
        assert rerun.totals == original.totals


def test_the_start_holds_the_dealer_and_the_totals_before_the_hand() -> None:
    rules = Ruleset()
    original = _first_legal(Match(rules, seed=7))
    ended = [e for e in original.events if isinstance(e, HandEnded)]
    start = hand_start(original, 3)
    assert start == HandStart(3, (rules.players - 1 + 2) % rules.players, tuple(ended[1].totals))
    assert hand_start(original, 1) == HandStart(1, rules.players - 1, (0,) * rules.players)


def test_a_rerun_of_a_rerun_and_its_record_replay() -> None:
    rules = Ruleset()
    original = _first_legal(Match(rules, seed=99))
    rerun = _first_legal(hand_start(original, 2).match(rules, 99))
    again = _first_legal(hand_start(rerun, 3).match(rules, 99))
    assert _hands_from(again, 3) == _hands_from(original, 3)
    record = rerun.record()
    assert record["first_hand"] == 2
    assert Match.from_record(record).events == rerun.events
    assert "first_hand" not in original.record()


def test_start_totals_of_the_original_are_kept_at_its_first_hand() -> None:
    rules = Ruleset()
    original = _first_legal(Match(rules, seed=5, start_totals=(3, 0, 1, 2)))
    assert hand_start(original, 1).totals == (3, 0, 1, 2)


def test_given_deals_are_refused() -> None:
    rules = Ruleset()
    seeded = Match(rules, seed=1)
    hands = [[str(c) for c in seeded.hand(s)] for s in range(rules.players)]
    given = _first_legal(Match(rules, seed=1, deals={1: hands}))
    with pytest.raises(RerunError, match="given, not derived from its seed"):
        hand_start(given, 2)


@pytest.mark.parametrize("hand", [0, -1, 10_000, "2", 2.0, True])
def test_a_hand_out_of_range_is_refused(hand: object) -> None:
    original = _first_legal(Match(Ruleset(), seed=3))
    with pytest.raises(RerunError, match="hand"):
        hand_start(original, hand)  # type: ignore[arg-type]  # bad input on purpose


def test_a_hand_before_a_reruns_first_hand_is_refused() -> None:
    rules = Ruleset()
    rerun = _first_legal(hand_start(_first_legal(Match(rules, seed=3)), 3).match(rules, 3))
    with pytest.raises(RerunError, match="from 3, got 2"):
        hand_start(rerun, 2)


def test_a_tiebreak_hand_is_refused() -> None:
    rules = Ruleset()
    for seed in range(300):
        original = _first_legal(Match(rules, seed=seed))
        tiebreaks = [e.hand_number for e in original.events if isinstance(e, HandDealt) and e.tiebreak]
        if tiebreaks:
            break
    else:
        pytest.fail("no seed in 0..299 ends in a tie-break")
    with pytest.raises(RerunError, match="tie-break hand"):
        hand_start(original, tiebreaks[0])


@pytest.mark.parametrize("first_hand", [0, -3, "2", 2**21, None])
def test_match_refuses_a_bad_first_hand(first_hand: object) -> None:
    with pytest.raises(PolignacError, match="first_hand"):
        Match(Ruleset(), seed=1, first_hand=first_hand)  # type: ignore[arg-type]  # bad input on purpose
