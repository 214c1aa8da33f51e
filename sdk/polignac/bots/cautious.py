"""The cautious bot: never takes a trick it can avoid, sheds penalty cards when void."""

from __future__ import annotations

from polignac.bot.base import Bot
from polignac.cards import Card
from polignac.values import Contract
from polignac.view import PlayerView


def follow_suit(view: PlayerView, legal: list[Card]) -> Card:
    """The card to play when following the suit led (``legal`` holds only that suit), ducking if possible."""
    strength = view.rules.strength
    points = view.rules.card_points
    trick = view.current_trick
    led = trick[0][1].suit
    best = max(strength[c.index] for _, c in trick if c.suit is led)
    losers = [c for c in legal if strength[c.index] < best]
    if losers:
        # The highest card that still loses: a penalty card first.
        return max(losers, key=lambda c: (points[c.index], strength[c.index]))
    if len(trick) == len(view.seats) - 1:
        return max(legal, key=lambda c: (-points[c.index], strength[c.index]))  # winning anyway: spend a high card
    return min(legal, key=lambda c: (points[c.index], strength[c.index]))  # lowest: hope someone overtakes


class CautiousBot(Bot):
    """Ducks under the winning card when it can, and discards its worst penalty card when void."""

    name = "cautious"
    version = "1.0"

    def declare(self, view: PlayerView) -> Contract:
        return Contract.PASS

    def play(self, view: PlayerView) -> Card:
        legal = list(view.legal_cards)
        strength = view.rules.strength
        points = view.rules.card_points
        trick = view.current_trick
        if not trick:
            # Lead the lowest card, a penalty card only if nothing else is left.
            return min(legal, key=lambda c: (points[c.index] > 0, strength[c.index], c.suit))
        if legal[0].suit is trick[0][1].suit:
            return follow_suit(view, legal)
        penalties = [c for c in legal if points[c.index]]
        if penalties:
            return max(penalties, key=lambda c: points[c.index])
        return max(legal, key=lambda c: strength[c.index])
