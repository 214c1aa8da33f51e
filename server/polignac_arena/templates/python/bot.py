"""{{name}}: a Polignac bot, started by `polignac bot new`.

It uses the Python SDK (``import polignac``), which speaks gRPC to the referee for you:
``declare`` and ``play`` get the full view of the table and return a decision.
"""

from __future__ import annotations

from polignac import Card, Contract, Direction, PlayerView
from polignac.bot import Bot, run


class StarterBot(Bot):
    """Passes in the auction; ducks tricks, or takes them where each trick scores for its taker."""

    name = "{{name}}"
    version = "0.1"

    def declare(self, view: PlayerView) -> Contract:
        return Contract.PASS

    def play(self, view: PlayerView) -> Card:
        legal = view.legal_cards
        strength = view.rules.strength  # by card index: higher takes the trick within a suit
        trump = view.trump  # the suit of the card turned for trumps this hand, or None

        def beats(card: Card, best: Card) -> bool:
            if card.suit is best.suit:
                return strength[card.index] > strength[best.index]
            return card.suit is trump  # a trump beats any other suit; any other discard never wins

        def low_first(card: Card) -> tuple[bool, int]:
            return card.suit is trump, strength[card.index]

        trick = [card for _, card in view.current_trick]
        if not trick:
            return min(legal, key=low_first)
        best = trick[0]
        for card in trick[1:]:
            if beats(card, best):
                best = card
        winners = [c for c in legal if beats(c, best)]
        losers = [c for c in legal if not beats(c, best)]
        if view.rules.direction is Direction.HIGHER and winners:
            return min(winners, key=low_first)  # Knaves: a trick scores for its taker; take it cheaply
        if losers:
            return max(losers, key=lambda c: strength[c.index])  # the highest card that does not take the trick
        return min(legal, key=low_first)


if __name__ == "__main__":
    run(StarterBot())
