"""Hand-worked tests of the family of the seeds (docs/rules.md 11): Knaves, Bassadewitz, Eichel-Obern, Gras-Obern.

Every test deals its hands itself (``Match(..., deals=...)``), plays them card by card and
checks the exact outcome worked out by hand in the comments: who wins each trick, the
card points, the scores, the totals and the places.  Seats are numbered from 0; unless a
test says otherwise the last seat deals hand 1, so seat 0 is eldest hand and leads.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from polignac import (
    Card,
    Contract,
    HandResult,
    IllegalDecision,
    Match,
    Phase,
    PolignacError,
    Ruleset,
    RulesetError,
    ScoreException,
    Suit,
    fallback,
    parse_cards,
    preset,
    redact,
)
from polignac.events import CardPlayed, Forfeited, HandDealt, HandEnded, MatchEnded, TiebreakStarted, TrickWon

# -- helpers ------------------------------------------------------------------------------------


def pass_auction(match: Match) -> None:
    while match.phase is Phase.AUCTION:
        match.apply(Contract.PASS)


def winners_of(match: Match, tricks: list[str]) -> list[int]:
    """Play each trick's cards in play order (the leader's first) and return the winners, read from the events.

    The engine refuses a card out of turn or not held, so a script that breaks the rules fails here.
    """
    pass_auction(match)
    winners = []
    for trick in tricks:
        start = match.event_count
        for text in trick.split():
            match.apply(Card.parse(text))
        won = [e for e in match.events_since(start) if isinstance(e, TrickWon)]
        assert len(won) == 1, f"{trick!r} is not one whole trick"
        winners.append(won[0].winner)
    return winners


def finish_hand(match: Match) -> HandResult:
    """Play the current hand to its end, each seat playing its first legal card (natural order)."""
    pass_auction(match)
    done = len(match.hand_results)
    while len(match.hand_results) == done:
        match.apply(match.legal_cards()[0])
    return match.hand_results[-1]


def hands(*texts: str) -> list[list[Card]]:
    return [parse_cards(text) for text in texts]


# -- Knaves: a turned trump -------------------------------------------------------------------

# The 52nd card, 2S, is turned: spades are trumps.  Seat 0 has no spade, seat 1 the low trumps
# 3S-8S and no heart or diamond, seat 2 the high trumps 9S-AS and no heart.
TRUMP_DEAL = hands(
    "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH AD KD QD JD",
    "3S 4S 5S 6S 7S 8S 3C 4C 5C 6C 7C 8C 9C TC JC QC KC",
    "9S TS JS QS KS AS 2C AC TD 9D 8D 7D 6D 5D 4D 3D 2D",
)


def test_knaves_deal_turns_the_last_card_for_trumps() -> None:
    match = Match(preset("knaves"), 1, deals={1: TRUMP_DEAL})
    assert match.turned == Card.parse("2S") and match.trump is Suit.SPADES
    assert [len(match.hand(s)) for s in range(3)] == [17, 17, 17]
    assert match.phase is Phase.PLAY and match.to_act == 0, "no auction in Knaves; eldest hand leads"


def test_knaves_trump_tricks() -> None:
    match = Match(preset("knaves"), 1, deals={1: TRUMP_DEAL})
    winners = winners_of(
        match,
        [
            "AH 3S 9S",  # seat 0 leads the ace of hearts; 1 and 2 have no heart and trump: the higher trump (9S) wins
            "TS 2H 4S",  # seat 2 leads a trump; 0 discards a heart, 1 must follow with a trump: the led 10 wins
            "2D AD 5S",  # seat 2 leads a low diamond, 0 follows with the ace, 1 (no diamond) trumps with 5S: a trump wins
            "6S JS 3H",  # seat 1 leads a trump; 2 follows with a higher one and wins
            "3D KD KC",  # no trump played: the highest diamond wins, the higher club discarded by 1 does not
        ],
    )
    assert winners == [2, 2, 1, 2, 0]
    assert match.tricks_won(0) == 1 and match.tricks_won(1) == 1 and match.tricks_won(2) == 3
    # Play the hand out: 17 tricks, four Jacks taken (none turned): the scores add up to 17 - 10.
    result = finish_hand(match)
    assert sum(result.tricks) == 17
    assert sum(result.scores) == 7
    assert list(result.scores) == [t - c for t, c in zip(result.tricks, result.card_points, strict=True)]
    assert sum(result.card_points) == 10 and result.trick_points == result.tricks


def test_knaves_fallback_is_the_lowest_plain_card_before_trumps() -> None:
    match = Match(preset("knaves"), 1, deals={1: TRUMP_DEAL})
    assert match.fallback() == Card.parse("2H"), "seat 0 holds no trump: its lowest card, lowest suit first"
    match.apply(Card.parse("AH"))
    # Seat 1 has no heart: 3S and 3C are its lowest; the trump 3S comes first in suit order, but trumps come last.
    assert match.fallback() == Card.parse("3C")
    assert fallback(match.rules, match.legal_decisions()) == Card.parse("3S"), "without the trump suit it would be 3S"
    assert match.view(1).trump is Suit.SPADES
    assert fallback(match.rules, match.view(1).legal, trump=match.view(1).trump) == Card.parse("3C")
    match.apply(Card.parse("3S"))
    # Seat 2: 2D and 2C are its lowest plain cards (diamonds before clubs), its trumps start at 9S.
    assert match.fallback() == Card.parse("2D")


# Seat "strong" holds every heart but the turned JH, and AS AD AC KS KD: led by it, every trick is
# its own (nobody else holds a trump).  The other two hold the rest; JS JD JC fall to the strong seat.
STRONG = "2H 3H 4H 5H 6H 7H 8H 9H TH QH KH AH AS AD AC KS KD"
OTHER_A = "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS 2C 3C 4C 5C 6C 7C"
OTHER_B = "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD 8C 9C TC JC QC KC"
# 17 tricks, less JS (1), JD (3) and JC (2): the JH (4) is turned and scores for nobody.
STRONG_SCORE = 17 - 1 - 3 - 2


def strong_deal(strong: int) -> list[list[Card]]:
    """Hands in seat order: ``strong`` (who must be eldest, to lead every trick) gets STRONG, then A, then B."""
    by_seat = {strong: STRONG, (strong + 1) % 3: OTHER_A, (strong + 2) % 3: OTHER_B}
    return hands(*(by_seat[s] for s in range(3)))


def test_knaves_a_turned_jack_scores_for_nobody() -> None:
    match = Match(preset("knaves"), 1, deals={1: strong_deal(0)})
    jh = Card.parse("JH")
    # Every seat sees the turned card; no seat holds it.
    dealt = match.events[0]
    assert isinstance(dealt, HandDealt) and dealt.turned == jh and dealt.to_dict()["turned"] == "JH"
    assert all(jh not in hand for hand in dealt.hands)
    for seat in range(3):
        view = match.view(seat)
        assert view.turned == jh and view.trump is Suit.HEARTS and view.to_dict()["turned"] == "JH"
        assert jh not in view.hand and not view.unseen_mask & jh.bit
        seen = redact(dealt, seat)
        assert isinstance(seen, HandDealt) and seen.turned == jh
    result = finish_hand(match)
    assert result.tricks == (17, 0, 0)
    assert result.card_points == (6, 0, 0)
    assert result.scores == (STRONG_SCORE, 0, 0) == (11, 0, 0)
    assert result.totals == (11, 0, 0)
    played = {e.card for e in match.events if isinstance(e, CardPlayed)}
    assert jh not in played and len(played) == 51


def test_knaves_fault_points_are_deducted_from_the_offender() -> None:
    match = Match(preset("knaves"), 1, deals={1: strong_deal(0)})
    match.add_penalty(1, 5, "revoke")
    match.apply(match.legal_cards()[0])
    match.add_penalty(0, 5, "revoke")
    match.add_penalty(2, 0, "timeout")
    result = finish_hand(match)
    assert result.fault_points == (5, 5, 0)
    assert result.scores == (STRONG_SCORE - 5, -5, 0) == (6, -5, 0)
    assert match.totals == (6, -5, 0)


def test_knaves_ends_after_the_hand_in_which_a_total_reaches_the_limit() -> None:
    # 9 + 11 = 20 reaches the limit exactly; higher is better.
    match = Match(preset("knaves"), 1, start_totals=[9, 19, 0], deals={1: strong_deal(0)})
    finish_hand(match)
    assert match.is_over
    assert match.totals == (20, 19, 0)
    assert match.places == (1, 2, 3)
    assert not any(isinstance(e, TiebreakStarted) for e in match.events)


def test_knaves_goes_on_below_the_limit_and_low_totals_do_not_end_it() -> None:
    match = Match(preset("knaves"), 1, start_totals=[8, 0, -30], deals={1: strong_deal(0)})
    finish_hand(match)
    assert match.totals == (19, 0, -30)
    assert not match.is_over and match.hand_number == 2 and match.dealer == 0 and match.eldest == 1


def test_knaves_higher_is_better_in_the_places() -> None:
    match = Match(preset("knaves"), 1, start_totals=[0, 15, 12], deals={1: strong_deal(0)})
    finish_hand(match)
    assert match.totals == (11, 15, 12) and not match.is_over
    match = Match(preset("knaves"), 1, start_totals=[0, 25, 12], deals={1: strong_deal(0)})
    finish_hand(match)
    assert match.is_over and match.totals == (11, 25, 12) and match.places == (3, 1, 2)


# Seat 0 deals hand 1, so the eldest hands are 1, 2, 0 in hands 1, 2, 3.
PLAY_ON_DEALS = {1: strong_deal(1), 2: strong_deal(2), 3: strong_deal(0)}


def test_knaves_play_on_until_one_is_alone_on_top() -> None:
    match = Match(preset("knaves"), 1, start_totals=[20, 9, 0], first_dealer=0, deals=PLAY_ON_DEALS)
    finish_hand(match)  # seat 1: 9 + 11 = 20, level with seat 0 on top
    assert match.totals == (20, 20, 0) and not match.is_over
    assert match.events[-2] == TiebreakStarted((0, 1), 1)
    assert match.is_tiebreak and match.seats == (0, 1, 2) and match.dealer == 1, "a whole hand among all, the deal rotating"
    second = finish_hand(match)  # seat 2 takes every trick: seats 0 and 1 stay level
    assert second.tiebreak and second.scores == (0, 0, 11) and second.totals == (20, 20, 11), "play-on scores count"
    assert match.events[-2] == TiebreakStarted((0, 1), 2)
    third = finish_hand(match)  # seat 0 takes every trick
    assert third.tiebreak and third.totals == (31, 20, 11)
    assert match.is_over and match.places == (1, 2, 3) and match.totals == (31, 20, 11)
    ended = [e for e in match.events if isinstance(e, HandEnded)]
    assert [e.tiebreak for e in ended] == [False, True, True]


def test_knaves_play_on_tie_is_shared_after_the_last_allowed_hand() -> None:
    match = Match(preset("knaves", tiebreak_hands=1), 1, start_totals=[20, 9, 0], first_dealer=0, deals=PLAY_ON_DEALS)
    finish_hand(match)
    finish_hand(match)
    assert match.is_over
    assert match.totals == (20, 20, 11)
    assert match.places == (1, 1, 3)
    assert sum(isinstance(e, TiebreakStarted) for e in match.events) == 1


def test_knaves_forfeit_in_a_play_on_hand_ends_the_match_with_the_tie_standing() -> None:
    match = Match(preset("knaves"), 1, start_totals=[20, 9, 0], first_dealer=0, deals=PLAY_ON_DEALS)
    finish_hand(match)
    assert match.is_tiebreak
    for _ in range(4):
        match.apply(match.legal_cards()[0])
    match.forfeit(2, "crashed")
    assert match.is_over
    assert match.events[-2] == Forfeited(2, "crashed", True)
    assert match.totals == (20, 20, 0), "the abandoned hand scores nothing"
    assert match.places == (1, 1, 3)


def test_knaves_forfeit_in_the_regular_match_leaves_a_tie_among_the_others() -> None:
    match = Match(preset("knaves"), 1, start_totals=[5, 5, 0], deals={1: strong_deal(0)})
    match.apply(match.legal_cards()[0])
    match.forfeit(2, "disconnected")
    assert match.is_over and match.places == (1, 1, 3) and match.totals == (5, 5, 0)
    assert not any(isinstance(e, TiebreakStarted) for e in match.events), "no play-on with a forfeited seat"
    # The forfeiter is last even with the best total ("reaches the limit" means "is ranked last").
    match = Match(preset("knaves"), 1, start_totals=[0, 5, 19])
    match.forfeit(2, "crashed")
    assert match.places == (2, 1, 3)


# -- Bassadewitz: card points, a score by place ------------------------------------------------


def bassadewitz(players: int = 4, **changes: Any) -> Match:
    """A Bassadewitz match whose hand 1 is ``changes["deal"]``."""
    deal = changes.pop("deal")
    return Match(preset("bassadewitz", players=players), 1, deals={1: deal}, **changes)


# Four players, two cards of each suit each: everyone always follows.  Card points A 11, 10 10, K 4, Q 3, J 2.
NEARER_ELDEST_DEAL = hands(
    "AS 7S 7H 8H 9D 8D 7C 8C",
    "TS 8S AH TH 7D JD 9C JC",
    "KS 9S 9H JH AD TD QC KC",
    "QS JS KH QH KD QD AC TC",
)
NEARER_ELDEST_PLAY = [
    "AS 8S 9S JS",  # 0 wins 11 + 2 = 13
    "7H AH 9H QH",  # 1 wins 11 + 3 = 14
    "TH JH KH 8H",  # 1 wins (10 over K) 10 + 2 + 4 = 16
    "7D AD QD 8D",  # 2 wins 11 + 3 = 14
    "TD KD 9D JD",  # 2 wins 10 + 4 + 2 = 16
    "QC AC 7C 9C",  # 3 wins 3 + 11 = 14
    "TC 8C JC KC",  # 3 wins 10 + 2 + 4 = 16
    "QS 7S TS KS",  # 1 wins 3 + 10 + 4 = 17
]


def test_bassadewitz_four_players_equal_points_go_to_the_one_nearer_eldest() -> None:
    match = bassadewitz(deal=NEARER_ELDEST_DEAL)
    assert match.phase is Phase.PLAY, "no auction in Bassadewitz"
    assert winners_of(match, NEARER_ELDEST_PLAY) == [0, 1, 1, 2, 2, 3, 3, 1]
    result = match.hand_results[0]
    assert result.card_points == (13, 47, 30, 30) and sum(result.card_points) == 120
    assert result.tricks == (1, 3, 2, 2)
    # Fewest first: seat 0 (13), then seats 2 and 3 (30 each; seat 2 is nearer eldest), then seat 1 (47): 0 1 2 5.
    assert result.exception is ScoreException.NONE
    assert result.scores == (0, 5, 1, 2)


# Seat 3 takes no trick and seat 0 takes one without points: both have 0 card points.
NO_TRICK_DEAL = hands(
    "9S JS 7D JD KD QH 9C QC",
    "8S AS TS 8D 7C KH JC TC",
    "7S QS KS AD TD AH TH AC",
    "7H 8H 9H 9D QD JH 8C KC",
)
NO_TRICK_PLAY = [
    "9S 8S 7S 7H",  # 0 wins nothing; 3 has no spade
    "JS AS QS 8H",  # 1: 2 + 11 + 3 = 16
    "TS KS 9H 7D",  # 1: 10 + 4 = 14; 0 has no spade left
    "8D AD 9D JD",  # 2: 11 + 2 = 13
    "TD QD KD 7C",  # 2: 10 + 3 + 4 = 17; 1 has no diamond left
    "AH JH QH KH",  # 2: 11 + 2 + 3 + 4 = 20
    "TH 8C 9C JC",  # 2: 10 + 2 = 12; nobody else has a heart
    "AC KC QC TC",  # 2: 11 + 4 + 3 + 10 = 28
]


def test_bassadewitz_a_player_without_a_trick_comes_first_on_equal_points() -> None:
    match = bassadewitz(deal=NO_TRICK_DEAL)
    assert winners_of(match, NO_TRICK_PLAY) == [0, 1, 1, 2, 2, 2, 2, 2]
    result = match.hand_results[0]
    assert result.card_points == (0, 30, 90, 0) and result.tricks == (1, 2, 5, 0)
    # Seats 0 and 3 both have 0 points; seat 3 took no trick, so it comes first although seat 0 is eldest.
    assert result.scores == (1, 2, 5, 0)


THREE_PLAYER_DEAL = hands(  # the black sevens are out: 30 cards, 10 each
    "AS AH 8S 9D 8C 7H QH TD 7D QC",
    "TS TH 9S KD TC 8H JH QD 8D JC",
    "KS KH QS AD AC JS 9H JD 9C KC",
)
THREE_PLAYER_PLAY = [
    "AS TS KS",  # 0: 25
    "AH TH KH",  # 0: 25
    "8S 9S QS",  # 2: 3
    "AD 9D KD",  # 2: 15
    "AC 8C TC",  # 2: 21
    "JS 7H 8H",  # 2: 2; 0 and 1 have no spade left
    "9H QH JH",  # 0: 5
    "TD QD JD",  # 0: 15
    "7D 8D 9C",  # 1: nothing; 2 has no diamond left
    "JC KC QC",  # 2: 9
]


def test_bassadewitz_three_players_score_0_1_5() -> None:
    match = bassadewitz(3, deal=THREE_PLAYER_DEAL)
    assert winners_of(match, THREE_PLAYER_PLAY) == [0, 0, 2, 2, 2, 2, 0, 0, 1, 2]
    result = match.hand_results[0]
    assert result.card_points == (70, 0, 50) and result.tricks == (4, 1, 5)
    assert result.scores == (5, 0, 1)


FIVE_PLAYER_DEAL = hands(  # the black sevens are out: 30 cards, 6 each
    "AS 9S 7D QH AC AD",
    "TS 8S 8D KH TC TD",
    "KS 7H JD AH JC KD",
    "QS 8H 9D TH QC 8C",
    "JS 9H QD JH KC 9C",
)
FIVE_PLAYER_PLAY = [
    "AS TS KS QS JS",  # 0: 30
    "9S 8S 7H 8H 9H",  # 0: nothing; 2, 3 and 4 have no spade left
    "7D 8D JD 9D QD",  # 4: 2 + 3 = 5
    "JH QH KH AH TH",  # 2: 30
    "JC QC KC AC TC",  # 0: 30
    "AD TD KD 8C 9C",  # 0: 25; 3 and 4 have no diamond left
]


def test_bassadewitz_five_players_score_0_1_2_3_5() -> None:
    match = bassadewitz(5, deal=FIVE_PLAYER_DEAL)
    assert winners_of(match, FIVE_PLAYER_PLAY) == [0, 0, 4, 2, 0, 0]
    result = match.hand_results[0]
    assert result.card_points == (85, 0, 30, 0, 5) and result.tricks == (4, 0, 1, 0, 1)
    # Seats 1 and 3 took nothing (1 is nearer eldest), then 4 (5), 2 (30), 0 (85).
    assert result.scores == (5, 0, 3, 1, 2)


EVERY_TRICK_DEAL = hands(
    "AS TS AH TH AD TD AC TC",
    "KS QS JS 9S KH QH JH 9H",
    "8S 7S 8H 7H KD QD JD 9D",
    "8D 7D KC QC JC 9C 8C 7C",
)


def test_bassadewitz_every_trick_scores_0_and_5_each_over_the_100_points() -> None:
    match = bassadewitz(deal=EVERY_TRICK_DEAL)
    result = finish_hand(match)  # seat 0 holds the ace and the ten of every suit: every trick is its own
    assert result.tricks == (8, 0, 0, 0)
    assert result.card_points == (120, 0, 0, 0), "120 card points: 100 or more, but every trick decides"
    assert result.exception is ScoreException.EVERY_TRICK
    assert result.scores == (0, 5, 5, 5)


BIG_TAKE_DEAL = hands(
    "AS TS AH TH AD TD AC 7S",
    "KS QS KH QH KD QD KC 8S",
    "JS 9S JH 9H JD 9D JC QC",
    "8H 7H 8D 7D TC 9C 8C 7C",
)
BIG_TAKE_PLAY = [
    "AS KS JS 8H",  # 0: 17
    "TS QS 9S 7H",  # 0: 13
    "AH KH JH 8D",  # 0: 17
    "TH QH 9H 7D",  # 0: 13
    "AD KD JD TC",  # 0: 27
    "TD QD 9D 9C",  # 0: 13
    "AC KC JC 8C",  # 0: 17
    "7S 8S QC 7C",  # 1: 3
]


def test_bassadewitz_100_card_points_without_every_trick_score_8_and_0() -> None:
    match = bassadewitz(deal=BIG_TAKE_DEAL)
    assert winners_of(match, BIG_TAKE_PLAY) == [0, 0, 0, 0, 0, 0, 0, 1]
    result = match.hand_results[0]
    assert result.card_points == (117, 3, 0, 0) and result.tricks == (7, 1, 0, 0)
    assert result.exception is ScoreException.BIG_TAKE
    assert result.scores == (8, 0, 0, 0)


# The 2-player tie-break hand: 30 cards, 15 each.  Seat 2 (eldest) holds hearts 7-10..K and every diamond;
# seat 0 the ace of hearts and spades and clubs A-8.
TIEBREAK_HANDS = {
    0: "AH AS TS KS QS JS 9S 8S AC TC KC QC JC 9C 8C",
    2: "TH KH QH JH 9H 8H 7H AD TD KD QD JD 9D 8D 7D",
}


def test_bassadewitz_two_player_tiebreak_scores_0_and_5() -> None:
    # After hand 1 (scores 0 5 1 2): totals 10 20 10 11.  Seat 1 reached 20; seats 0 and 2 tie for first (lowest).
    match = Match(
        preset("bassadewitz"),
        1,
        start_totals=[10, 15, 9, 9],
        deals={1: NEARER_ELDEST_DEAL, 2: hands(TIEBREAK_HANDS[0], TIEBREAK_HANDS[2])},
    )
    winners_of(match, NEARER_ELDEST_PLAY)
    assert match.totals == (10, 20, 10, 11)
    assert match.events[-2] == TiebreakStarted((0, 2), 1)
    # Seat 3 dealt hand 1; the next dealer in the rotation, seat 0, is tied: it deals, seat 2 leads.
    assert match.seats == (0, 2) and match.dealer == 0 and match.eldest == 2 and len(match.hand(0)) == 15
    assert winners_of(match, ["AD 8S", "TD 8C", "7H AH"]) == [2, 2, 0]
    result = finish_hand(match)  # seat 0 leads spades and clubs, seat 2 has neither: seat 0 takes the rest
    # Seat 0: AH (11) + its spades and clubs A 10 K Q J 9 (60) + seat 2's discards 10 K Q J of hearts and K Q J of diamonds (28).
    assert result.card_points == (99, 0, 21, 0) and result.tricks == (13, 0, 2, 0)
    assert result.exception is ScoreException.NONE, "99 card points is short of 100"
    assert result.tiebreak and result.scores == (5, 0, 0, 0), "fewer card points 0, the other 5"
    assert match.is_over and match.totals == (10, 20, 10, 11), "a tie-break hand does not enter the totals"
    assert match.places == (2, 4, 1, 3)


def test_bassadewitz_fault_points_add_to_the_place_score() -> None:
    match = bassadewitz(deal=NEARER_ELDEST_DEAL)
    match.add_penalty(3, 5, "revoke")
    winners_of(match, NEARER_ELDEST_PLAY)
    assert match.hand_results[0].scores == (0, 5, 1, 7)


# -- Eichel-Obern and Gras-Obern: German-suited Slobberhannes ---------------------------------

OBERN_DEAL = hands(  # two of each suit each: everyone always follows; trick order A K Q J 10 9 8 7
    "AS 7H 7C 9D JS JH TD 8C",
    "7S AH KC 8D TS 9H JD JC",
    "8S QH QC AD KS 8H KD TC",
    "9S KH 9C 7D QS TH QD AC",
)
OBERN_PLAY = [
    "AS 7S 8S 9S",  # 0 takes the first trick
    "7H AH QH KH",  # 1
    "KC QC 9C 7C",  # 1 takes QC, the Eichel-Ober
    "8D AD 7D 9D",  # 2
    "KS QS JS TS",  # 2 takes QS, the Gras-Ober
    "8H TH JH 9H",  # 0
    "TD JD KD QD",  # 2
    "TC AC 8C JC",  # 3 takes the last trick
]


@pytest.mark.parametrize(
    ("name", "scores"),
    [("slobberhannes", (1, 1, 0, 1)), ("eichel-obern", (1, 1, 0, 1)), ("gras-obern", (1, 0, 1, 1))],
)
def test_obern_score_their_ober_and_the_first_and_last_trick(name: str, scores: tuple[int, ...]) -> None:
    match = Match(preset(name), 1, deals={1: OBERN_DEAL})
    assert match.phase is Phase.AUCTION and match.view(0).legal_contracts == (Contract.PASS, Contract.CAPOT)
    assert winners_of(match, OBERN_PLAY) == [0, 1, 1, 2, 2, 0, 2, 3]
    result = match.hand_results[0]
    assert result.first_last_points == (1, 0, 0, 1)
    assert result.scores == scores
    assert sum(result.scores) == 3


# -- what the family refuses ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["knaves", "bassadewitz"])
def test_contracts_are_refused_as_illegal(name: str) -> None:
    match = Match(preset(name), 3)
    assert match.phase is Phase.PLAY and match.view(0).legal_contracts == ()
    for contract in Contract:
        assert not match.is_legal(contract)
        with pytest.raises(IllegalDecision, match="must play a card"):
            match.apply(contract)
    assert match.event_count == 1, "nothing but the deal happened"


def test_ranks_2_to_6_are_bad_card_text_in_the_32_card_games() -> None:
    match = Match(preset("classic"), 3)
    for text in ("6S", "2C", "5h"):
        with pytest.raises(IllegalDecision, match="not a card of the 32-card pack"):
            match.apply_text(text)
    pass_auction(match)
    for text in ("6S", "2C"):
        with pytest.raises(IllegalDecision, match=f"'{text}' is not a card of the 32-card pack"):
            match.apply(Card.parse(text))
    assert not match.is_legal(Card.parse("6S"))
    deal = [list(h) for h in NEARER_ELDEST_DEAL]
    deal[0][1] = Card.parse("6S")
    with pytest.raises(PolignacError, match="32-card pack"):
        Match(preset("classic"), 1, deals={1: deal})
    with pytest.raises(RulesetError, match="'6S' is not in the 32-card pack"):
        preset("classic", penalty_cards={"6S": 1})
    with pytest.raises(RulesetError, match="'trick_order'"):
        preset("classic", trick_order="KQJAT986")
    # In Knaves they are cards like any other.
    knaves = Match(preset("knaves"), 1, deals={1: TRUMP_DEAL})
    knaves.apply_text("2H")


@pytest.mark.parametrize(
    ("table", "setting"),
    [
        ({"variant": "knaves", "players": 6}, "'players'"),  # 51 cards do not share among 6
        ({"variant": "classic", "pack": 52, "trick_order": "ace-high", "players": 6}, "'players'"),  # 52 do not either
        ({"variant": "classic", "pack": 52, "trick_order": "ace-high", "trumps": "turned"}, "'trumps'"),  # 4 share all 52
        ({"variant": "knaves", "players": 4}, "'trumps'"),
        ({"variant": "knaves", "faces": "german"}, "'faces'"),
        ({"variant": "eichel-obern", "pack": 52, "trick_order": "ace-high", "tiebreak": "play-on"}, "'faces'"),
        ({"variant": "bassadewitz", "players": 6}, "'place_scores'"),
        ({"variant": "bassadewitz", "place_scores": [0, 1, 5]}, "'place_scores'"),
        ({"variant": "knaves", "tiebreak": "tied"}, "'tiebreak'"),  # 2 tied players cannot share 51 cards
        ({"variant": "bassadewitz", "capot": True}, "'capot'"),
    ],
)
def test_rulesets_that_make_no_game_are_refused_naming_the_setting(table: dict[str, Any], setting: str) -> None:
    with pytest.raises(RulesetError) as info:
        Ruleset.from_dict(table)
    assert setting in str(info.value)


def test_a_tied_tiebreak_without_hands_needs_no_deal() -> None:
    rules = preset("knaves", tiebreak="tied", tiebreak_hands=0)
    match = Match(rules, 2, start_totals=[19, 19, 19])
    rnd = random.Random(2)
    while not match.is_over:
        match.apply(rnd.choice(match.legal_decisions()))
    assert isinstance(match.events[-1], MatchEnded) and not any(isinstance(e, TiebreakStarted) for e in match.events)
