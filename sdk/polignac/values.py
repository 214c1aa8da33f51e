"""The game's small value types: contracts, decisions, the action log's entries, phases and completed tricks.

A leaf module (it imports only :mod:`polignac.cards` and :mod:`polignac.errors`), so that
the engine, the events, the player's view, the playout and the wire all take them from one
place without an import cycle.  They are re-exported by :mod:`polignac` and by the modules
that used to hold them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Final, NamedTuple

from polignac.cards import Card
from polignac.errors import RecordError

if TYPE_CHECKING:
    from polignac.jsontypes import JsonObject

__all__ = [
    "Action",
    "ActionRecord",
    "Contract",
    "Decision",
    "Forfeit",
    "HandResult",
    "Penalty",
    "Phase",
    "ScoreException",
    "Trick",
    "action_from_record",
    "action_to_record",
    "parse_decision",
]


class Contract(StrEnum):
    """An auction decision: pass, or undertake to win every trick (capot, general)."""

    PASS = "pass"
    CAPOT = "capot"
    GENERAL = "general"


Decision = Card | Contract
"""What a player decides: a card to play, or an auction decision."""


@dataclass(frozen=True, slots=True)
class Penalty:
    """Extra points the referee gave ``seat`` (a revoke, a timeout), scored when the hand ends."""

    seat: int
    points: int
    reason: str

    def to_record(self) -> dict[str, int | str]:
        """The record form, ``{"penalty": seat, "points": points, "reason": reason}``."""
        return {"penalty": self.seat, "points": self.points, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Forfeit:
    """``seat`` forfeited (docs/rules.md 8), for ``reason``."""

    seat: int
    reason: str

    def to_record(self) -> dict[str, int | str]:
        """The record form, ``{"forfeit": seat, "reason": reason}``."""
        return {"forfeit": self.seat, "reason": self.reason}


Action = Decision | Penalty | Forfeit
"""One entry of a match's action log: a player's decision, or one of the referee's calls."""

ActionRecord = str | dict[str, int | str]
"""An action as a record holds it: a decision's text, or a penalty's or forfeit's object."""


def action_to_record(action: Action) -> ActionRecord:
    """The record form of ``action`` (what :func:`action_from_record` reads back)."""
    if isinstance(action, Penalty | Forfeit):
        return action.to_record()
    return str(action)


def action_from_record(entry: object) -> Action:
    """One entry of a record's ``actions``: a decision text, a ``{"penalty": ...}`` or a ``{"forfeit": ...}`` object.

    Only the shape is checked here (a missing key raises :class:`KeyError`); the engine checks
    the values when it applies the action, as it checks a penalty or forfeit it is given.
    """
    if isinstance(entry, str):
        return parse_decision(entry)
    if isinstance(entry, Mapping) and "penalty" in entry:
        return Penalty(entry["penalty"], entry["points"], entry["reason"])
    if isinstance(entry, Mapping) and "forfeit" in entry:
        return Forfeit(entry["forfeit"], entry["reason"])
    raise RecordError("an action is a decision text, a {'penalty': ...} or a {'forfeit': ...} object")


class Phase(StrEnum):
    """Where the match is."""

    AUCTION = "auction"
    PLAY = "play"
    OVER = "over"


class Trick(NamedTuple):
    """A completed trick: ``(seat, card)`` pairs in play order, and the seat that won it."""

    plays: tuple[tuple[int, Card], ...]
    winner: int

    @property
    def leader(self) -> int:
        """The seat that led to this trick."""
        return self.plays[0][0]

    @property
    def cards(self) -> tuple[Card, ...]:
        """The cards in play order."""
        return tuple(card for _, card in self.plays)

    @property
    def mask(self) -> int:
        """The cards of the trick as a bitmask."""
        m = 0
        for _, card in self.plays:
            m |= card.bit
        return m


class ScoreException(StrEnum):
    """A place-scored hand that did not score by place (docs/rules.md 11, Bassadewitz)."""

    NONE = ""
    EVERY_TRICK = "every_trick"
    BIG_TAKE = "big_take"


@dataclass(frozen=True, slots=True)
class HandResult:
    """What one hand scored, and the parts it was made of.  Tuples are indexed by seat.

    A seat that did not play the hand (a tie-break among fewer) has zeros everywhere.
    With ``hand_score = "points"`` a seat's score is ``trick_points`` plus, counted against
    it (added when lower is better, subtracted when higher is), ``card_points``,
    ``first_last_points``, the contract's points and ``fault_points``.  With ``"place"``
    the score comes from the seat's place by those points (or from ``exception``), plus the
    fault points against it.
    """

    hand_number: int
    tiebreak: bool
    seats: tuple[int, ...]
    """Seats that played the hand, in table order."""
    tricks: tuple[int, ...]
    """Tricks taken."""
    card_points: tuple[int, ...]
    """Points of the cards taken (penalty cards, or card points)."""
    trick_points: tuple[int, ...]
    """Points for tricks taken (the ruleset's ``trick_points`` per trick)."""
    first_last_points: tuple[int, ...]
    """Points for taking the first and the last trick."""
    contract: Contract
    declarer: int | None
    contract_made: bool | None
    """Whether the declarer took every trick; ``None`` without a contract."""
    fault_points: tuple[int, ...]
    """Extra points the referee gave (revokes, timeouts); always against the seat."""
    exception: ScoreException
    """Which exception decided a place-scored hand, if any."""
    scores: tuple[int, ...]
    """The hand's score."""
    totals: tuple[int, ...]
    """Totals after the hand (a tie-break hand among the tied leaves them alone)."""

    def to_dict(self) -> JsonObject:
        """A JSON-ready form."""
        return {
            "hand_number": self.hand_number,
            "tiebreak": self.tiebreak,
            "seats": list(self.seats),
            "tricks": list(self.tricks),
            "card_points": list(self.card_points),
            "trick_points": list(self.trick_points),
            "first_last_points": list(self.first_last_points),
            "contract": self.contract.value,
            "declarer": self.declarer,
            "contract_made": self.contract_made,
            "fault_points": list(self.fault_points),
            "exception": self.exception.value,
            "scores": list(self.scores),
            "totals": list(self.totals),
        }


_CONTRACT_BY_TEXT: Final = {c.value: c for c in Contract}


def parse_decision(text: str) -> Decision:
    """``"pass"``, ``"capot"``, ``"general"`` or a card such as ``"JS"``."""
    if isinstance(text, str) and text.strip().lower() in _CONTRACT_BY_TEXT:
        return _CONTRACT_BY_TEXT[text.strip().lower()]
    return Card.parse(text)
