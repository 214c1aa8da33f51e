"""{{name}}: a Polignac bot in Python, made by `polignac bot new`.

It uses the Python SDK (``import polignac``), which speaks gRPC to the referee for you:
``declare`` and ``play`` get the full view of the table and return a decision.

The strategy, the same in every starter kit, reads the game from the ruleset alone: pass in
the auction; lead the weakest card; take a trick only when it is worth taking (where tricks
score for their taker, as in Knaves: then lead the strongest), with the weakest card that
takes it; otherwise duck under the winning card, shedding the most dangerous card that does
not take the trick (the most points, then the highest).  Trumps (the suit of the view's
turned card) beat every other suit.
"""

from __future__ import annotations

from polignac import Card, Contract, Direction, PlayerView
from polignac.bot import Bot, run


class StarterBot(Bot):
    """Passes in the auction; ducks tricks, or takes those worth taking with the weakest card that does."""

    name = "{{name}}"
    version = "0.1"

    def declare(self, view: PlayerView) -> Contract:
        return Contract.PASS

    def play(self, view: PlayerView) -> Card:
        rules = view.rules
        strength, points = rules.strength, rules.card_points  # by card index: trick order, points against the taker
        trump = view.trump  # the suit of the card turned for trumps this hand, or None
        # What taking a trick is worth before the points of its cards: trick points count against you where lower is better.
        gain = rules.trick_points if rules.direction is Direction.HIGHER else -rules.trick_points
        legal = view.legal_cards
        self.debug(f"legal cards: {len(legal)}")  # your notes on this decision: beside the step in replays, for you alone

        def power(card: Card) -> int:  # trumps above the plain suits, then trick order
            return strength[card.index] + (100 if card.suit is trump else 0)

        weakest, strongest = min(legal, key=power), max(legal, key=power)  # the first of equals
        trick = [card for _, card in view.current_trick]
        if not trick:
            return strongest if gain > 0 else weakest

        def standing(card: Card) -> int:  # the highest trump takes the trick, else the highest card of the suit led
            if card.suit is trump:
                return 200 + strength[card.index]
            return 100 + strength[card.index] if card.suit is trick[0].suit else 0

        best = max(standing(card) for card in trick)
        worth = gain - sum(points[card.index] for card in trick)
        if worth > 0:  # worth taking: the weakest card that takes it and keeps it worth taking
            takers = [c for c in legal if standing(c) > best and worth - points[c.index] > 0]
            return min(takers, key=power) if takers else weakest
        ducks = [c for c in legal if standing(c) < best]  # shed the most points, then the highest card
        return max(ducks, key=lambda c: (points[c.index], strength[c.index])) if ducks else weakest


if __name__ == "__main__":
    run(StarterBot())
