"""The heuristic bot: the strategy tips of the old sources, for whatever its ruleset counts.

In the games where taking is bad (penalty cards, card points, the first and last trick,
a score by place):

- Void a suit early: lead and discard from short suits, so that later a penalty card can
  be thrown away when that suit is led.
- Dump the Polignac (JS) and the other point cards under a higher card: when the trick
  is already won by someone else, play the point card.
- Track the point cards: lead safely in suits whose point cards are already gone, and
  avoid winning tricks while point cards are still out.
- Declare capot only with a hand that cannot lose a trick.

In the games where a trick scores for its taker (Knaves):

- Take a trick worth having with the cheapest card sure to hold it: a master card of the
  suit, or the lowest trump that wins when void; second hand without a sure winner plays low.
- Never take a trick whose Jacks cost more than it brings; drop Jacks on tricks an opponent
  wins, and otherwise shed low cards of short suits to be able to trump them later.
- Lead master cards while the others still follow and no Jack can fall on them, else its
  lowest card.
"""

from __future__ import annotations

from polignac.bot.base import Bot
from polignac.bots.tactics import Tactics
from polignac.cards import SUIT_MASKS, Card, Suit, cards_in
from polignac.values import Contract
from polignac.view import PlayerView


class HeuristicBot(Bot):
    """Plays by the tips above; deterministic."""

    name = "heuristic"
    version = "1.1"

    def declare(self, view: PlayerView) -> Contract:
        if self._unbeatable(view):
            return Contract.GENERAL if Contract.GENERAL in view.legal_contracts else Contract.CAPOT
        return Contract.PASS

    def play(self, view: PlayerView) -> Card:
        legal = list(view.legal_cards)
        if len(legal) == 1:
            return legal[0]
        t = Tactics(view)
        if view.contract is not Contract.PASS and view.declarer == view.seat:
            return self._play_to_win(t, legal)
        if t.tricks_wanted:
            return self._lead_to_take(t, legal) if t.best is None else self._follow_to_take(t, legal)
        return self._lead(t, legal) if t.best is None else self._follow(t, legal)

    # -- games where taking is bad ---------------------------------------------------------

    def _lead(self, t: Tactics, legal: list[Card]) -> Card:
        strength = t.strength
        points = t.points
        penalties_out = t.view.rules.penalty_mask & t.unseen
        candidates = []
        for suit in Suit:
            held = [c for c in legal if c.suit is suit]
            if not held:
                continue
            low = min(held, key=lambda c: strength[c.index])
            sure_win = t.threats(low) == 0
            danger = sure_win and bool(penalties_out)
            key = (points[low.index] > 0, suit is t.trump, danger, sure_win, t.length(suit), strength[low.index])
            candidates.append((key, low))
        return min(candidates, key=lambda kc: kc[0])[1]

    def _follow(self, t: Tactics, legal: list[Card]) -> Card:
        strength = t.strength
        points = t.points
        losers = [c for c in legal if not t.wins_now(c)]
        if losers:
            if legal[0].suit is t.led:
                # The highest card that still loses: a point card first.
                return max(losers, key=lambda c: (points[c.index], strength[c.index]))
            # Void in the suit led: dump the worst point card, else the top of the shortest suit.
            penalties = [c for c in losers if points[c.index]]
            if penalties:
                return max(penalties, key=lambda c: (points[c.index], strength[c.index]))
            return max(losers, key=lambda c: (not t.is_trump(c), -t.length(c.suit), strength[c.index]))
        # Every card takes the trick as it stands.
        if t.last:
            return max(legal, key=lambda c: (t.worth_with(c), strength[c.index]))  # winning anyway: spend a high card
        return min(legal, key=lambda c: (points[c.index], strength[c.index]))  # lowest: hope someone overtakes

    # -- games where tricks score for the taker ----------------------------------------------

    def _lead_to_take(self, t: Tactics, legal: list[Card]) -> Card:
        strength = t.strength
        points = t.points
        sure = [c for c in legal if t.threats(c) == 0 and t.worth_with(c) - t.exposure(c) > 0]
        if sure:
            # Cash plain masters while the others still follow, the trumps after them.
            return min(sure, key=lambda c: (t.is_trump(c), strength[c.index]))
        # Nothing sure: the lowest card where the fewest Jacks can fall (a leader is often left
        # with its own trick), on equal rank from a short plain suit that trumps can take later.
        holds_trumps = t.trump is not None and t.length(t.trump) > 0
        return min(
            legal,
            key=lambda c: (points[c.index] > 0, t.is_trump(c), t.exposure(c), strength[c.index], t.length(c.suit) if holds_trumps else 0),
        )

    def _follow_to_take(self, t: Tactics, legal: list[Card]) -> Card:
        strength = t.strength
        points = t.points

        def cheapest(cards: list[Card]) -> Card:
            return min(cards, key=lambda c: (-t.worth_with(c), t.is_trump(c), strength[c.index]))

        worth_taking = [c for c in legal if t.wins_now(c) and t.worth_with(c) > 0]
        if worth_taking:
            if t.last:
                return cheapest(worth_taking)
            safe = [c for c in worth_taking if t.worth_with(c) - t.exposure(c) > 0]
            sure = [c for c in safe if t.threats(c) == 0]
            if sure:
                return cheapest(sure)
            if safe and legal[0].suit is not t.led:
                return cheapest(safe)  # a ruff: the seats to come follow suit if they can
        losers = [c for c in legal if not t.wins_now(c)]
        if losers:
            # Someone else takes it: give them a point card (a Jack), else shed the lowest card, of a short plain suit.
            jacks = [c for c in losers if points[c.index]]
            if jacks:
                return max(jacks, key=lambda c: (points[c.index], strength[c.index]))
            return min(losers, key=lambda c: (t.is_trump(c), strength[c.index], t.length(c.suit)))
        # Every card takes the trick as it stands, and it is not worth having.
        if t.last:
            return max(legal, key=lambda c: (t.worth_with(c), -strength[c.index]))
        return min(legal, key=lambda c: (points[c.index], strength[c.index]))  # a later card may overtake it

    # -- contracts ---------------------------------------------------------------------------

    def _play_to_win(self, t: Tactics, legal: list[Card]) -> Card:
        strength = t.strength
        winners = [c for c in legal if t.wins_now(c)]
        if winners:
            return max(winners, key=lambda c: strength[c.index])
        return min(legal, key=lambda c: strength[c.index])

    def _unbeatable(self, view: PlayerView) -> bool:
        """Every card is the top of a sequence from the suit's best card, and no lead can catch us void."""
        strength = view.rules.strength
        top = len(view.rules.trick_order) - 1
        mine = view.hand_mask
        unseen = view.unseen_mask
        if view.trump is not None and unseen & SUIT_MASKS[view.trump]:
            return False  # an opponent's trump could take a master card
        deck_suits = 0
        for suit in Suit:
            suit_mask = SUIT_MASKS[suit]
            held = sorted((strength[c.index] for c in cards_in(mine & suit_mask)), reverse=True)
            if held and held != list(range(top, top - len(held), -1)):
                return False
            deck_suits += bool(suit_mask & (mine | unseen))
        suits_held = sum(1 for s in Suit if mine & SUIT_MASKS[s])
        return view.eldest == view.seat or suits_held == deck_suits
