"""What one seat may know (docs/rules.md 9), built from the match state, never the state itself.

A :class:`PlayerView` holds the seat's own cards, the ruleset, the table, the card turned
for trumps (where one is), the auction, every card played this hand and by whom, who won
each trick, the totals and the extra points given so far.  It never holds another seat's
unplayed card, the seed or the pack.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from polignac.cards import Card, Suit, mask_of
from polignac.jsontypes import JsonObject
from polignac.rules import Ruleset, cards_each, deck_mask
from polignac.values import Contract, Decision, Phase, Trick

if TYPE_CHECKING:
    from polignac.engine import Match

__all__ = ["PlayerView", "player_view"]


@dataclass(frozen=True, slots=True)
class PlayerView:
    """Everything ``seat`` may know at this moment; enough for a stateless bot to decide."""

    rules: Ruleset
    seat: int
    hand_number: int
    dealer: int
    eldest: int
    seats: tuple[int, ...]
    """Seats playing this hand, in table order (fewer than all in a tie-break)."""
    tiebreak: bool
    phase: Phase
    to_act: int | None
    hand: tuple[Card, ...]
    auction: tuple[tuple[int, Contract], ...]
    contract: Contract
    declarer: int | None
    tricks: tuple[Trick, ...]
    current_trick: tuple[tuple[int, Card], ...]
    totals: tuple[int, ...]
    penalties: tuple[int, ...]
    """Extra points (revokes, timeouts) given this hand, by seat; scored when the hand ends."""
    forfeited: tuple[int, ...]
    legal: tuple[Decision, ...]
    """The decisions this seat may make now (empty when it is not its turn): cards or contracts, by phase.

    Typed code reads :attr:`legal_cards` or :attr:`legal_contracts`, each of one type.
    """
    turned: Card | None = None
    """The card turned face up for trumps this hand, or ``None`` (no trumps)."""

    @property
    def trump(self) -> Suit | None:
        """This hand's trump suit, or ``None``."""
        return None if self.turned is None else self.turned.suit

    @property
    def legal_cards(self) -> tuple[Card, ...]:
        """The cards this seat may play now (empty outside its turn to play, and in the auction)."""
        return tuple(d for d in self.legal if isinstance(d, Card))

    @property
    def legal_contracts(self) -> tuple[Contract, ...]:
        """The contracts this seat may declare now (empty outside its turn in the auction)."""
        return tuple(d for d in self.legal if isinstance(d, Contract))

    @property
    def players(self) -> int:
        """Seats at the table."""
        return self.rules.players

    @property
    def hand_mask(self) -> int:
        """The seat's own cards as a bitmask."""
        return mask_of(self.hand)

    @property
    def played_mask(self) -> int:
        """Every card played this hand, the current trick included."""
        mask = mask_of(c for t in self.tricks for _, c in t.plays)
        for _, card in self.current_trick:
            mask |= card.bit
        return mask

    @property
    def unseen_mask(self) -> int:
        """Cards in other seats' hands: the pack minus own cards, played cards and the turned card."""
        turned = 0 if self.turned is None else self.turned.bit
        return deck_mask(self.rules, len(self.seats)) & ~self.hand_mask & ~self.played_mask & ~turned

    def hand_size(self, seat: int) -> int:
        """How many unplayed cards ``seat`` holds now."""
        if seat not in self.seats:
            return 0
        return cards_each(self.rules, len(self.seats)) - len(self.tricks) - sum(1 for s, _ in self.current_trick if s == seat)

    def known_voids(self) -> dict[int, set[Suit]]:
        """Suits each seat is known to lack: it did not follow when that suit was led."""
        voids: dict[int, set[Suit]] = {s: set() for s in self.seats}
        for plays in [t.plays for t in self.tricks] + [self.current_trick]:
            if not plays:
                continue
            led = plays[0][1].suit
            for seat, card in plays[1:]:
                if card.suit is not led:
                    voids[seat].add(led)
        return voids

    def points_taken(self, seat: int) -> int:
        """Points of the cards ``seat`` has taken in tricks this hand (no contract or trick bonuses)."""
        points = self.rules.card_points
        return sum(points[c.index] for t in self.tricks if t.winner == seat for _, c in t.plays)

    def to_dict(self) -> JsonObject:
        """A JSON-ready form (cards and decisions as text)."""
        return {
            "rules": self.rules.to_dict(),
            "seat": self.seat,
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "eldest": self.eldest,
            "seats": list(self.seats),
            "tiebreak": self.tiebreak,
            "phase": self.phase.value,
            "to_act": self.to_act,
            "hand": [str(c) for c in self.hand],
            "auction": [[s, c.value] for s, c in self.auction],
            "contract": self.contract.value,
            "declarer": self.declarer,
            "tricks": [{"plays": [[s, str(c)] for s, c in t.plays], "winner": t.winner} for t in self.tricks],
            "current_trick": [[s, str(c)] for s, c in self.current_trick],
            "totals": list(self.totals),
            "penalties": list(self.penalties),
            "forfeited": list(self.forfeited),
            "legal": [str(d) for d in self.legal],
            "turned": None if self.turned is None else str(self.turned),
        }


def player_view(match: Match, seat: int) -> PlayerView:
    """Build ``seat``'s view of ``match``."""
    legal = tuple(match.legal_decisions()) if match.to_act == seat else ()
    return PlayerView(
        rules=match.rules,
        seat=seat,
        hand_number=match.hand_number,
        dealer=match.dealer,
        eldest=match.eldest,
        seats=match.seats,
        tiebreak=match.is_tiebreak,
        phase=match.phase,
        to_act=match.to_act,
        hand=tuple(match.hand(seat)),
        auction=match.auction,
        contract=match.contract,
        declarer=match.declarer,
        tricks=match.tricks,
        current_trick=match.current_trick,
        totals=match.totals,
        penalties=match.penalties,
        forfeited=match.forfeited,
        legal=legal,
        turned=match.turned,
    )
