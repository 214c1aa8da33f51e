"""Checks of what :class:`polignac.engine.Match` is given: the first dealer and hand, start totals and fixed deals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from polignac.cards import Card, mask_of, parse_cards
from polignac.deal import MAX_HAND
from polignac.errors import PolignacError
from polignac.rules import Ruleset, cards_each, deck_mask

__all__ = ["check_deals", "check_first_dealer", "check_first_hand", "check_totals"]


def check_first_dealer(dealer: int | None, players: int) -> int:
    if dealer is None:
        return players - 1
    if type(dealer) is not int or not 0 <= dealer < players:
        raise PolignacError(f"first_dealer must be a seat from 0 to {players - 1}, got {dealer!r}")
    return dealer


def check_first_hand(number: int) -> int:
    if type(number) is not int or not 1 <= number <= MAX_HAND:
        raise PolignacError(f"first_hand must be a hand number from 1 to {MAX_HAND}, got {number!r}")
    return number


def check_totals(totals: Sequence[int] | None, players: int) -> tuple[int, ...]:
    if totals is None:
        return (0,) * players
    if not isinstance(totals, Sequence) or len(totals) != players or any(type(t) is not int or abs(t) > 10**6 for t in totals):
        raise PolignacError(f"start totals must be {players} integers, got {totals!r}")
    return tuple(totals)


def check_deals(deals: Mapping[int, Sequence[Sequence[Card | str]]] | None, rules: Ruleset) -> dict[int, tuple[int, ...]]:
    """Turn given hands into masks, each deal a whole pack for its number of hands.

    Whether a hand is played by that many seats (a tie-break may seat fewer) is only known
    when it is dealt: :meth:`Match._start_hand` uses a deal only when it fits.  Where the
    ruleset turns a card for trumps, the one card of the pack in no hand is the turned card.
    """
    if deals is None:
        return {}
    if not isinstance(deals, Mapping):
        raise PolignacError(f"deals must map hand numbers to lists of hands, got {deals!r}")
    out: dict[int, tuple[int, ...]] = {}
    for number, hands in deals.items():
        if type(number) is not int or number < 1 or isinstance(hands, str) or not isinstance(hands, Sequence):
            raise PolignacError(f"deals[{number!r}] must be a list of hands for a hand number from 1")
        masks = tuple(mask_of(parse_cards(h) if isinstance(h, str) else h) for h in hands)
        if not 2 <= len(masks) <= rules.players:
            raise PolignacError(f"deals[{number}] must hold 2 to {rules.players} hands, got {len(masks)}")
        if number == 1 and len(masks) != rules.players:
            raise PolignacError(f"deals[1] must hold {rules.players} hands: every seat plays hand 1, got {len(masks)}")
        deck = deck_mask(rules, len(masks))
        try:
            each = cards_each(rules, len(masks))
        except PolignacError:
            raise PolignacError(f"deals[{number}]: the {rules.pack}-card pack does not share among {len(masks)} players") from None
        union = 0
        for mask in masks:
            if mask & union or mask & ~deck or mask.bit_count() != each:
                break
            union |= mask
        else:
            if (deck & ~union).bit_count() == deck.bit_count() - each * len(masks):
                out[number] = masks
                continue
        left = deck.bit_count() - each * len(masks)
        turned = f", and {left} card left to turn for trumps" if left else ""
        raise PolignacError(
            f"deals[{number}] must share out the {deck.bit_count()}-card pack for {len(masks)} players,"
            f" {each} cards each, every card once{turned}"
        )
    return out
