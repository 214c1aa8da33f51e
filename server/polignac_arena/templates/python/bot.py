"""{{name}}: a Polignac bot, started by `polignac bot new`.

It uses the Python SDK (``import polignac``), which speaks gRPC to the referee for you:
``declare`` and ``play`` get the full view of the table and return a decision.
"""

from __future__ import annotations

from polignac import Card, Contract, Direction, PlayerView
from polignac.bot import Bot, run


class StarterBot(Bot):
    """Passes in the auction; takes a trick only when it is worth taking, else ducks under it.

    Everything comes from the ruleset and the view (no game is known by its name): the
    trick order, the trump suit of the turned card, the points of the cards (counted
    against the taker), the points for a trick and which way the scores count.
    """

    name = "{{name}}"
    version = "0.1"

    def declare(self, view: PlayerView) -> Contract:
        return Contract.PASS

    def play(self, view: PlayerView) -> Card:
        rules = view.rules
        strength = rules.strength  # by card index: higher takes the trick within a suit
        points = rules.card_points  # by card index: counted against whoever takes the card
        trump = view.trump  # this hand's trump suit, or None
        # Points for a trick are added to the score as they are: good when higher is better.
        gain = rules.trick_points if rules.direction is Direction.HIGHER else -rules.trick_points

        def power(card: Card) -> int:
            return strength[card.index] + (100 if card.suit is trump else 0)

        weakest_first = sorted(view.legal_cards, key=power)
        trick = [card for _, card in view.current_trick]
        if not trick:
            return weakest_first[-1] if gain > 0 else weakest_first[0]
        led = trick[0].suit

        def standing(card: Card) -> int:  # the highest trump takes the trick, else the highest of the suit led
            return (200 if card.suit is trump else 100 if card.suit is led else 0) + strength[card.index]

        best = max(map(standing, trick))
        worth = gain - sum(points[c.index] for c in trick)
        if worth > 0:
            takers = [c for c in weakest_first if standing(c) > best and worth - points[c.index] > 0]
            return takers[0] if takers else weakest_first[0]
        ducks = [c for c in weakest_first if standing(c) < best]
        return ducks[-1] if ducks else weakest_first[0]


if __name__ == "__main__":
    run(StarterBot())
