"""Events: what happened in a match, in order, enough to rebuild a replay.

Events are immutable named tuples with a ``to_dict`` for JSON.  :class:`HandDealt`
holds every hand and so is for replays and referees only; :func:`redact` turns an event
into what one seat may see (its own cards only).
"""

from __future__ import annotations

from typing import NamedTuple

from polignac.cards import Card
from polignac.jsontypes import JsonObject, JsonValue
from polignac.values import Contract, HandResult

__all__ = [
    "CardPlayed",
    "Contract",
    "Declared",
    "Event",
    "Forfeited",
    "HandDealt",
    "HandEnded",
    "MatchEnded",
    "PenaltyAdded",
    "TiebreakStarted",
    "TrickWon",
    "redact",
]


def _cards(cards: tuple[Card, ...]) -> list[JsonValue]:
    return [str(c) for c in cards]


class HandDealt(NamedTuple):
    """A hand was dealt.  ``hands[i]`` is the cards of ``seats[i]`` (empty when redacted).

    ``turned`` is the card turned face up for trumps (every seat sees it), if the ruleset turns one.
    """

    hand_number: int
    dealer: int
    seats: tuple[int, ...]
    hands: tuple[tuple[Card, ...], ...]
    tiebreak: bool
    turned: Card | None = None

    def to_dict(self) -> JsonObject:
        out: JsonObject = {
            "event": "hand_dealt",
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "seats": list(self.seats),
            "hands": [_cards(h) for h in self.hands],
            "tiebreak": self.tiebreak,
        }
        if self.turned is not None:
            out["turned"] = str(self.turned)
        return out


class Declared(NamedTuple):
    """A seat passed or declared a contract in the auction."""

    seat: int
    contract: Contract

    def to_dict(self) -> JsonObject:
        return {"event": "declared", "seat": self.seat, "contract": self.contract.value}


class CardPlayed(NamedTuple):
    """A seat played a card to the current trick."""

    seat: int
    card: Card

    def to_dict(self) -> JsonObject:
        return {"event": "card_played", "seat": self.seat, "card": str(self.card)}


class TrickWon(NamedTuple):
    """A trick was completed; ``cards[i]`` was played by ``seats[i]``, in play order from ``leader``."""

    trick_number: int
    leader: int
    winner: int
    cards: tuple[Card, ...]
    seats: tuple[int, ...]

    def to_dict(self) -> JsonObject:
        return {
            "event": "trick_won",
            "trick_number": self.trick_number,
            "leader": self.leader,
            "winner": self.winner,
            "cards": _cards(self.cards),
            "seats": list(self.seats),
        }


class PenaltyAdded(NamedTuple):
    """The referee added extra points (a revoke or timeout) to be scored at the end of the hand."""

    seat: int
    points: int
    reason: str

    def to_dict(self) -> JsonObject:
        return {"event": "penalty_added", "seat": self.seat, "points": self.points, "reason": self.reason}


class HandEnded(NamedTuple):
    """A hand was scored.  ``scores``/``totals`` are indexed by seat; a tie-break hand among the tied leaves totals alone.

    ``result`` holds the parts of the scores (:class:`polignac.HandResult`); it is ``None``
    only where a sender did not give them (a protocol 1.0 referee).
    """

    hand_number: int
    contract: Contract
    declarer: int | None
    contract_made: bool | None
    scores: tuple[int, ...]
    totals: tuple[int, ...]
    tiebreak: bool
    result: HandResult | None = None

    def to_dict(self) -> JsonObject:
        out: JsonObject = {
            "event": "hand_ended",
            "hand_number": self.hand_number,
            "contract": self.contract.value,
            "declarer": self.declarer,
            "contract_made": self.contract_made,
            "scores": list(self.scores),
            "totals": list(self.totals),
            "tiebreak": self.tiebreak,
        }
        if self.result is not None:
            parts = self.result.to_dict()
            out["result"] = {k: parts[k] for k in _RESULT_PARTS}
        return out


# The parts of a result that HandEnded does not already carry.
_RESULT_PARTS = ("seats", "tricks", "card_points", "trick_points", "first_last_points", "fault_points", "exception")


class Forfeited(NamedTuple):
    """A seat forfeited (docs/rules.md 8); an unfinished hand it was in is abandoned."""

    seat: int
    reason: str
    hand_abandoned: bool

    def to_dict(self) -> JsonObject:
        return {"event": "forfeited", "seat": self.seat, "reason": self.reason, "hand_abandoned": self.hand_abandoned}


class TiebreakStarted(NamedTuple):
    """Players tied for first play tie-break hands; ``round`` counts from 1."""

    seats: tuple[int, ...]
    round: int

    def to_dict(self) -> JsonObject:
        return {"event": "tiebreak_started", "seats": list(self.seats), "round": self.round}


class MatchEnded(NamedTuple):
    """The match is over.  ``places[seat]`` is 1 for first; equal places are ties."""

    places: tuple[int, ...]
    totals: tuple[int, ...]

    def to_dict(self) -> JsonObject:
        return {"event": "match_ended", "places": list(self.places), "totals": list(self.totals)}


Event = HandDealt | Declared | CardPlayed | TrickWon | PenaltyAdded | HandEnded | Forfeited | TiebreakStarted | MatchEnded


def redact(event: Event, seat: int) -> Event:
    """The event as ``seat`` may see it: a deal shows only that seat's own cards."""
    if isinstance(event, HandDealt):
        hands = tuple(h if s == seat else () for s, h in zip(event.seats, event.hands, strict=True))
        return event._replace(hands=hands)
    return event
