"""{{name}}: a Polignac bot, started by `polignac bot new`.

It uses the Python SDK (``import polignac``), which speaks gRPC to the referee for you:
``declare`` and ``play`` get the full view of the table and return a decision.
"""

from __future__ import annotations

from polignac import Card, Contract, PlayerView
from polignac.bot import Bot, run


class StarterBot(Bot):
    """Passes in the auction; plays the highest card that does not take the trick, else the lowest."""

    name = "{{name}}"
    version = "0.1"

    def declare(self, view: PlayerView) -> Contract:
        return Contract.PASS

    def play(self, view: PlayerView) -> Card:
        legal = view.legal_cards
        strength = view.rules.strength  # by card index: higher takes the trick
        trick = view.current_trick
        if trick:
            led = trick[0][1].suit
            best = max(strength[c.index] for _, c in trick if c.suit is led)
            ducks = [c for c in legal if c.suit is not led or strength[c.index] < best]
            if ducks:
                return max(ducks, key=lambda c: strength[c.index])
        return min(legal, key=lambda c: strength[c.index])


if __name__ == "__main__":
    run(StarterBot())
