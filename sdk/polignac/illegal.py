"""Why a decision is illegal now: the message of :class:`polignac.errors.IllegalDecision`, read from a match's public state."""

from __future__ import annotations

from typing import TYPE_CHECKING

from polignac.cards import Card
from polignac.rules import deck_mask, enabled_contracts
from polignac.values import Contract, Phase

if TYPE_CHECKING:
    from polignac.engine import Match

__all__ = ["why_illegal"]


def why_illegal(match: Match, decision: object) -> str:
    """Say, quoting ``decision``, why :meth:`Match.apply` refuses it in ``match``'s present state."""
    seat = match.to_act
    rules = match.rules
    if match.phase is Phase.OVER or seat is None:
        return f"the match is over: {decision!r} cannot be played"
    if isinstance(decision, Card) and rules.pack == 32 and not decision.rank.in_piquet:
        # Ranks 2-6 are bad card text in the 32-card games (docs/rules.md 11), whatever the phase.
        return f"{str(decision)!r} is not a card of the 32-card pack (ranks 7 to A)"
    if match.phase is Phase.PLAY:
        if isinstance(decision, Contract):
            return f"the auction is over: seat {seat} must play a card, not {decision.value!r}"
        if not isinstance(decision, Card):
            return f"seat {seat} must play a card, got {decision!r}"
        if not deck_mask(rules, len(match.seats)) & decision.bit:
            return f"{str(decision)!r} is not a card of this hand's {rules.pack}-card pack"
        if not match.hand_mask(seat) & decision.bit:
            return f"seat {seat} does not hold {str(decision)!r}"
        led = match.current_trick[0][1]
        return f"seat {seat} must follow {led.suit.name.lower()} ({str(led)!r} led), not play {str(decision)!r}"
    if isinstance(decision, Contract):
        options = [c.value for c in enabled_contracts(rules)]
        return f"{decision.value!r} is not enabled by the ruleset; choose one of {options}"
    if isinstance(decision, Card):
        return f"seat {seat} must pass or declare before any card is played, got {str(decision)!r}"
    return f"seat {seat} must pass or declare, got {decision!r}"
