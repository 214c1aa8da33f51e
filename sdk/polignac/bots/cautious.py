"""The cautious bot: never takes a trick that costs it when it can duck, sheds its point cards.

It reads the ruleset through :class:`~polignac.bots.tactics.Tactics`: trumps decide who is
winning, and in a game where tricks score for their taker (Knaves) it takes a trick when it
plays last to it and the trick is worth having, with its cheapest winning card.
"""

from __future__ import annotations

from polignac.bot.base import Bot
from polignac.bots.tactics import Tactics
from polignac.cards import Card
from polignac.values import Contract
from polignac.view import PlayerView


class CautiousBot(Bot):
    """Ducks under the winning card when it can, and discards its worst point card when it loses anyway."""

    name = "cautious"
    version = "1.1"

    def declare(self, view: PlayerView) -> Contract:
        return Contract.PASS

    def play(self, view: PlayerView) -> Card:
        legal = list(view.legal_cards)
        t = Tactics(view)
        strength = t.strength
        points = t.points
        if t.best is None:
            # Lead the lowest card: neither a point card nor a trump while anything else is left.
            return min(legal, key=lambda c: (points[c.index] > 0, t.is_trump(c), strength[c.index], c.suit))
        # Where tricks are worth having, keep high cards: shed and spend low ones.
        keep_high = -1 if t.tricks_wanted else 1
        if t.last:
            paying = [c for c in legal if t.wins_now(c) and t.worth_with(c) > 0]
            if paying:
                return min(paying, key=lambda c: (-t.worth_with(c), t.is_trump(c), strength[c.index]))
        losers = [c for c in legal if not t.wins_now(c)]
        if losers:
            # The loser worst to keep: a point card first, then (in the penalty games) the highest.
            return max(losers, key=lambda c: (points[c.index], not t.is_trump(c), keep_high * strength[c.index]))
        # Every card takes the trick as it stands.
        if t.last:
            return max(legal, key=lambda c: (t.worth_with(c), keep_high * strength[c.index]))
        return min(legal, key=lambda c: (points[c.index], strength[c.index]))  # the lowest: a later card may overtake it
