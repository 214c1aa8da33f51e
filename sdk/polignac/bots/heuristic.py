"""The heuristic bot: the strategy tips of the old sources.

- Void a suit early: lead and discard from short suits, so that later a penalty card can
  be thrown away when that suit is led.
- Dump the Polignac (JS) and the other penalty cards under a higher card: when the trick
  is already won by someone else, play the penalty card.
- Track the penalty cards: lead safely in suits whose penalty cards are already gone, and
  avoid winning tricks while penalty cards are still out.
- Declare capot only with a hand that cannot lose a trick.
"""

from __future__ import annotations

from polignac.bot.base import Bot
from polignac.bots.cautious import follow_suit
from polignac.cards import SUIT_MASKS, Card, Suit, cards_in
from polignac.values import Contract
from polignac.view import PlayerView


class HeuristicBot(Bot):
    """Plays by the tips above; deterministic."""

    name = "heuristic"
    version = "1.0"

    def declare(self, view: PlayerView) -> Contract:
        if self._unbeatable(view):
            return Contract.GENERAL if Contract.GENERAL in view.legal_contracts else Contract.CAPOT
        return Contract.PASS

    def play(self, view: PlayerView) -> Card:
        legal = list(view.legal_cards)
        if view.contract is not Contract.PASS and view.declarer == view.seat:
            return self._play_to_win(view, legal)
        trick = view.current_trick
        if not trick:
            return self._lead(view, legal)
        if legal[0].suit is trick[0][1].suit:
            return follow_suit(view, legal)
        strength = view.rules.strength
        points = view.rules.card_points
        # Void in the suit led: dump the worst penalty card, else the top of the shortest suit.
        penalties = [c for c in legal if points[c.index]]
        if penalties:
            return max(penalties, key=lambda c: (points[c.index], strength[c.index]))
        mine = view.hand_mask
        return max(legal, key=lambda c: (-(mine & SUIT_MASKS[c.suit]).bit_count(), strength[c.index]))

    def _lead(self, view: PlayerView, legal: list[Card]) -> Card:
        strength = view.rules.strength
        points = view.rules.card_points
        unseen = view.unseen_mask
        mine = view.hand_mask
        penalties_out = view.rules.penalty_mask & unseen
        candidates = []
        for suit in Suit:
            held = [c for c in legal if c.suit is suit]
            if not held:
                continue
            low = min(held, key=lambda c: strength[c.index])
            higher_out = sum(1 for c in cards_in(unseen & SUIT_MASKS[suit]) if strength[c.index] > strength[low.index])
            sure_win = higher_out == 0
            danger = sure_win and bool(penalties_out)
            length = (mine & SUIT_MASKS[suit]).bit_count()
            candidates.append(((points[low.index] > 0, danger, sure_win, length, strength[low.index]), low))
        return min(candidates, key=lambda kc: kc[0])[1]

    def _play_to_win(self, view: PlayerView, legal: list[Card]) -> Card:
        strength = view.rules.strength
        return max(legal, key=lambda c: strength[c.index])

    def _unbeatable(self, view: PlayerView) -> bool:
        """Every card is the top of a sequence from the suit's best card, and no lead can catch us void."""
        strength = view.rules.strength
        mine = view.hand_mask
        deck_suits = 0
        for suit in Suit:
            suit_mask = SUIT_MASKS[suit]
            held = sorted((strength[c.index] for c in cards_in(mine & suit_mask)), reverse=True)
            if held and held != list(range(7, 7 - len(held), -1)):
                return False
            deck_suits += bool(suit_mask & (mine | view.unseen_mask))
        suits_held = sum(1 for s in Suit if mine & SUIT_MASKS[s])
        return view.eldest == view.seat or suits_held == deck_suits
