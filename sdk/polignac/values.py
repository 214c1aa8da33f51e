"""The game's small value types: contracts, decisions, phases and completed tricks.

A leaf module (it imports only :mod:`polignac.cards`), so that the engine, the events, the
player's view, the playout and the wire all take them from one place without an import
cycle.  They are re-exported by :mod:`polignac` and by the modules that used to hold them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final, NamedTuple

from polignac.cards import Card

__all__ = ["Contract", "Decision", "Phase", "Trick", "parse_decision"]


class Contract(StrEnum):
    """An auction decision: pass, or undertake to win every trick (capot, general)."""

    PASS = "pass"
    CAPOT = "capot"
    GENERAL = "general"


Decision = Card | Contract
"""What a player decides: a card to play, or an auction decision."""


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


_CONTRACT_BY_TEXT: Final = {c.value: c for c in Contract}


def parse_decision(text: str) -> Decision:
    """``"pass"``, ``"capot"``, ``"general"`` or a card such as ``"JS"``."""
    if isinstance(text, str) and text.strip().lower() in _CONTRACT_BY_TEXT:
        return _CONTRACT_BY_TEXT[text.strip().lower()]
    return Card.parse(text)
