"""Trick tactics the built-in bots share: who is winning the trick, what taking it is worth.

Everything is read from the ruleset and the view, so one strategy plays the penalty games
(take as few penalty cards as possible), Bassadewitz (card points count against the taker,
the hand scores by place) and Knaves (each trick scores for its taker, a turned suit is
trumps, the Jacks count against).
"""

from __future__ import annotations

from polignac.cards import SUIT_MASKS, Card, Suit, cards_in
from polignac.rules import HandScore, cards_each
from polignac.view import PlayerView

__all__ = ["Tactics", "beats"]


def beats(strength: tuple[int, ...], trump: Suit | None, card: Card, best: Card) -> bool:
    """True when ``card`` takes a trick whose winning card so far is ``best``.

    ``best`` is of the suit led or a trump: a card of its suit must be stronger; a trump
    beats any card that is not one; any other card (a discard) never wins.
    """
    if card.suit is best.suit:
        return strength[card.index] > strength[best.index]
    return card.suit is trump


class Tactics:
    """The seat to play's picture of the current trick, and the worth of tricks in its game."""

    __slots__ = ("best", "hand_mask", "led", "points", "strength", "to_come", "trick_mask", "trump", "unseen", "view", "voids")

    def __init__(self, view: PlayerView) -> None:
        self.view = view
        rules = view.rules
        self.strength = rules.strength
        self.points = rules.card_points
        self.trump = view.trump
        self.unseen = view.unseen_mask
        self.hand_mask = view.hand_mask
        trick = view.current_trick
        self.led: Suit | None = trick[0][1].suit if trick else None
        best: Card | None = None
        mask = 0
        for _, card in trick:
            mask |= card.bit
            if best is None or beats(self.strength, self.trump, card, best):
                best = card
        self.best = best
        self.trick_mask = mask
        seats = view.seats
        me = seats.index(view.seat)
        self.to_come = tuple(seats[(me + i) % len(seats)] for i in range(1, len(seats) - len(trick)))
        """The seats that play to this trick after this one, in turn."""
        self.voids = view.known_voids()

    # -- the game's values ------------------------------------------------------------------

    @property
    def last(self) -> bool:
        """True when this seat plays the trick's last card."""
        return not self.to_come

    @property
    def tricks_wanted(self) -> bool:
        """True when a trick without points is worth taking (Knaves: points for each trick)."""
        return self.plain_worth() > 0

    def plain_worth(self) -> int:
        """What taking a trick without point cards is worth, first and last tricks aside."""
        rules = self.view.rules
        if rules.hand_score is HandScore.PLACE:
            return -rules.trick_points  # any points order the seats, fewest first
        return -rules.against * rules.trick_points

    def worth(self, mask: int) -> int:
        """What taking this trick holding the cards of ``mask`` is worth to its taker: higher is better.

        Points against (penalty cards, card points, the first and last trick) cost one each;
        points per trick gain or cost as the game's direction says.
        """
        rules = self.view.rules
        cost = 0
        while mask:
            low = mask & -mask
            cost += self.points[low.bit_length() - 1]
            mask ^= low
        number = len(self.view.tricks)
        if number == 0:
            cost += rules.first_trick_points
        if number == cards_each(rules, len(self.view.seats)) - 1:
            cost += rules.last_trick_points
        return self.plain_worth() - cost

    def worth_with(self, card: Card) -> int:
        """The worth of the trick as it stands with ``card`` added, to whoever takes it."""
        return self.worth(self.trick_mask | card.bit)

    # -- who takes the trick ---------------------------------------------------------------

    def wins_now(self, card: Card) -> bool:
        """True when ``card`` would be the winning card of the trick as it stands."""
        return self.best is None or beats(self.strength, self.trump, card, self.best)

    def threats(self, card: Card) -> int:
        """How many unseen cards could still take the trick from ``card`` if it were winning it.

        A stronger card of its suit threatens when the seats to come must or may play that
        suit; a trump threatens a plain card when a seat to come may be void in the suit led
        (known void, or the suit is nearly gone).
        """
        if not self.to_come:
            return 0
        strength = self.strength
        led = self.led if self.led is not None else card.suit
        unseen = self.unseen
        higher = sum(1 for c in cards_in(unseen & SUIT_MASKS[card.suit]) if strength[c.index] > strength[card.index])
        may_be_void = self._may_be_void(led)
        count = higher if card.suit is led or may_be_void else 0
        trump = self.trump
        if trump is not None and card.suit is not trump and may_be_void:
            count += (unseen & SUIT_MASKS[trump]).bit_count()
        return count

    def exposure(self, card: Card) -> int:
        """The points the seats to come could still add to the trick if ``card`` were winning it.

        Each seat to come may drop its worst point card: one of the suit led, or any one
        when it may be void there.  Pessimistic: the worst unseen cards, one per seat.
        """
        if not self.to_come:
            return 0
        led = self.led if self.led is not None else card.suit
        playable = self.unseen & self.view.rules.penalty_mask
        if not self._may_be_void(led):
            playable &= SUIT_MASKS[led]
        worst = sorted((self.points[c.index] for c in cards_in(playable)), reverse=True)
        return sum(worst[: len(self.to_come)])

    def _may_be_void(self, suit: Suit) -> bool:
        """True when a seat to come may have no card of ``suit``."""
        if any(suit in self.voids.get(seat, set()) for seat in self.to_come):
            return True
        return (self.unseen & SUIT_MASKS[suit]).bit_count() < 2 * len(self.to_come)

    # -- the hand --------------------------------------------------------------------------

    def length(self, suit: Suit) -> int:
        """How many cards of ``suit`` this seat holds."""
        return (self.hand_mask & SUIT_MASKS[suit]).bit_count()

    def is_trump(self, card: Card) -> bool:
        """True when ``card`` is of this hand's trump suit."""
        return card.suit is self.trump
