"""The engine's exceptions: narrow ``ValueError`` subclasses whose messages quote the bad value."""

from __future__ import annotations

__all__ = [
    "BatchError",
    "CardParseError",
    "IllegalDecision",
    "PolignacError",
    "RecordError",
    "RulesetError",
]


class PolignacError(ValueError):
    """Base class of every error the engine raises for bad input."""


class CardParseError(PolignacError):
    """Text (or an index) that is not a card."""


class RulesetError(PolignacError):
    """A ruleset setting that is unknown, of the wrong type or out of range."""


class IllegalDecision(PolignacError):
    """A decision the rules do not allow now; the match state is left unchanged."""


class BatchError(PolignacError):
    """Hands or random floats given to a batched playout that do not fit its position."""


class RecordError(PolignacError):
    """A match record that is malformed or does not replay through the engine."""
