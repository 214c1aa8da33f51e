"""The built-in bots in every game: they beat random play everywhere, and play hand-built positions sensibly.

Positions are dealt by hand (``Match(deals=...)``): the seats before the bot under test play the
cards the test names, then the bot decides.  Every match is seeded, so every number is the same
on every run.
"""

from __future__ import annotations

import pytest

import polignac
from polignac import Card, Contract, Match, Phase, Ruleset, Suit, cards_in, preset
from polignac.bot import Bot, play_local
from polignac.bots import CautiousBot, HeuristicBot, RandomBot
from polignac.rules import cards_each, deck_mask

# -- dealing a position -----------------------------------------------------------------------


def deal(rules: Ruleset, given: list[str], void: list[str], turned: str | None = None) -> list[list[Card]]:
    """Hands for every seat: ``given[seat]``'s cards, filled up from the rest of the pack in order.

    ``void[seat]`` names suits (letters) the filling gives that seat none of; ``turned`` is
    kept out of every hand (the card turned for trumps).
    """
    each = cards_each(rules, rules.players)
    hands = [[Card.parse(text) for text in cards.split()] for cards in given]
    taken = {c for hand in hands for c in hand} | ({Card.parse(turned)} if turned else set())
    rest = [c for c in cards_in(deck_mask(rules, rules.players)) if c not in taken]
    # The seats with the most suits to avoid are filled first, so that the others take what is left.
    for seat in sorted(range(rules.players), key=lambda s: -len(void[s])):
        for card in list(rest):
            if len(hands[seat]) == each:
                break
            if card.suit.letter not in void[seat]:
                hands[seat].append(card)
                rest.remove(card)
    assert all(len(hand) == each for hand in hands), "the position cannot be dealt"
    if turned:
        assert rest == [], rest
    return hands


def position(rules: Ruleset, hands: list[list[Card]], plays: list[str]) -> Match:
    """Hand 1 with seat 0 leading, after an auction of passes and ``plays`` (cards, in turn from seat 0)."""
    match = Match(rules, 1, deals={1: hands}, first_dealer=rules.players - 1)
    while match.phase is Phase.AUCTION:
        match.apply(Contract.PASS)
    for text in plays:
        match.apply(Card.parse(text))
    return match


def decide(bot: Bot, match: Match) -> Card:
    seat = match.to_act
    assert seat is not None
    card = bot.decide(match.view(seat))
    assert isinstance(card, Card) and match.is_legal(card)
    return card


KNAVES = preset("knaves")


def knaves_last_void_in_spades(second: str, seat_1_void: str = "") -> Match:
    """Knaves, clubs trumps (2C turned): seat 0 leads AS, seat 1 plays ``second``; seat 2, void in spades, plays last.

    Seat 2 holds the trumps 3C 9C AC, the Jack of hearts, and hearts and diamonds from 2 up.
    """
    hands = deal(
        KNAVES,
        ["AS", second, "3C 9C AC JH"],
        ["", seat_1_void, "SC"],
        turned="2C",
    )
    return position(KNAVES, hands, ["AS", second])


# -- Knaves: a turned trump, points for tricks, the Jacks against ------------------------------


def test_knaves_heuristic_trumps_a_clean_trick_with_its_lowest_trump() -> None:
    match = knaves_last_void_in_spades("2S")
    assert match.trump is Suit.CLUBS
    assert decide(HeuristicBot(), match) == Card.parse("3C")


def test_knaves_heuristic_drops_the_jack_of_hearts_on_a_trick_it_leaves_to_an_opponent() -> None:
    """A trick holding JD costs its taker 3 for 1: the bot does not trump it, and gives the winner its JH too."""
    match = knaves_last_void_in_spades("JD", seat_1_void="S")
    assert decide(HeuristicBot(), match) == Card.parse("JH")


def test_knaves_heuristic_does_not_take_a_jack_it_can_duck() -> None:
    hands = deal(KNAVES, ["JD", "QD 4D", ""], ["", "", ""], turned="2C")
    match = position(KNAVES, hands, ["JD"])
    assert decide(HeuristicBot(), match).rank < Card.parse("JD").rank


def test_knaves_heuristic_takes_a_clean_trick_with_its_master_card() -> None:
    """Second to play with the Ace of the suit led: the Ace wins whatever comes, and no Jack can fall on it."""
    hands = deal(KNAVES, ["5H", "AH 3H JS JD JC JH", "KH QH 9H"], ["", "H", ""], turned="2C")
    match = position(KNAVES, hands, ["5H"])
    assert decide(HeuristicBot(), match) == Card.parse("AH")


def test_knaves_cautious_trumps_a_clean_trick_when_it_plays_last() -> None:
    assert decide(CautiousBot(), knaves_last_void_in_spades("2S")) == Card.parse("3C")


def test_knaves_cautious_does_not_mistake_a_trump_for_a_discard() -> None:
    """Void in the suit led, no Jack in hand: its Ace of trumps would take the Jack of diamonds; a plain card loses."""
    hands = deal(KNAVES, ["AS JH", "JD AH AD", "3C 9C AC"], ["", "S", "SC"], turned="2C")
    match = position(KNAVES, hands, ["AS", "JD"])
    card = decide(CautiousBot(), match)
    assert card.suit is not Suit.CLUBS, card


# -- the penalty games and Bassadewitz ---------------------------------------------------------


def test_bassadewitz_heuristic_ducks_rather_than_take_with_its_ace() -> None:
    rules = preset("bassadewitz")
    hands = deal(rules, ["KH", "AH 7H", "", ""], ["", "", "", ""])
    match = position(rules, hands, ["KH"])
    for bot in (HeuristicBot(), CautiousBot()):
        card = decide(bot, match)
        assert card.suit is Suit.HEARTS and rules.strength[card.index] < rules.strength[Card.parse("KH").index], card


def test_bassadewitz_heuristic_gives_its_ace_to_a_trick_an_opponent_takes() -> None:
    """Card points count against the taker: void in the suit led, the bot sheds its 11 points on someone else."""
    rules = preset("bassadewitz")
    hands = deal(rules, ["KH", "AS 7D", "", ""], ["", "H", "", ""])
    match = position(rules, hands, ["KH"])
    assert decide(HeuristicBot(), match) == Card.parse("AS")


@pytest.mark.parametrize("name", ["slobberhannes", "eichel-obern", "gras-obern"])
def test_heuristic_ducks_the_first_trick_that_scores_a_point(name: str) -> None:
    rules = preset(name)
    hands = deal(rules, ["9H", "AH 8H", "", ""], ["", "", "", ""])
    match = position(rules, hands, ["9H"])
    card = decide(HeuristicBot(), match)
    assert card.suit is Suit.HEARTS and rules.strength[card.index] < rules.strength[Card.parse("9H").index], card


# -- strength: the heuristic beats random play in every game ------------------------------------

MATCHES = 30


def table_for(name: str) -> Ruleset:
    base = polignac.PRESETS[name]
    return preset(name, players=4 if 4 in base.table_sizes() else base.table_sizes()[0])


@pytest.mark.parametrize("name", list(polignac.PRESETS))
def test_heuristic_beats_random_in_every_game(name: str) -> None:
    rules = table_for(name)
    opponents = ["random"] * (rules.players - 1)
    baseline = play_local(RandomBot(99), opponents=opponents, rules=rules, matches=MATCHES, seed=2000)
    heuristic = play_local(HeuristicBot(), opponents=opponents, rules=rules, matches=MATCHES, seed=2000)
    assert heuristic.faults == [] and baseline.faults == []
    assert heuristic.average_place <= baseline.average_place - 0.5, (heuristic.average_place, baseline.average_place)


def test_knaves_heuristic_beats_cautious() -> None:
    """Taking the tricks worth having pays where each trick scores: the heuristic finishes ahead of two cautious bots."""
    result = play_local(HeuristicBot(), opponents=["cautious", "cautious"], rules=KNAVES, matches=60, seed=1000)
    assert result.average_place < 2.0, result.average_place
