"""Typed fault statuses and the fault policy of docs/rules.md section 8, in one place.

The referee (``polignac_arena.referee``) and the SDK's local harness (:mod:`polignac.bot.local`)
both rule with :func:`rule_on_fault`, so a bot's local result is the referee's.

Settled here where docs/rules.md is silent:

- A reply whose ``request_id`` is not the pending request's (STALE), and any message
  that is not a Decision after the Hello, is ignored and counted as a fault; nothing is
  replaced, so no points are scored for it.
- A TIMEOUT, ILLEGAL or MALFORMED answer to the pending request is replaced by the
  fallback decision and scores ``timeout_points`` or ``revoke_points``.
- DISCONNECTED and CRASHED always forfeit, whatever the policy; so does a TIMEOUT of a
  seat that never joined (no Hello within the start-up allowance): it cannot play at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from polignac.cards import Card, Suit
from polignac.errors import IllegalDecision
from polignac.rules import FaultPolicy, Ruleset
from polignac.values import Contract, Decision

__all__ = ["Fault", "FaultRuling", "fallback", "rule_on_fault"]


class Fault(StrEnum):
    """What went wrong with a seat."""

    TIMEOUT = "timeout"
    ILLEGAL = "illegal"
    MALFORMED = "malformed"
    STALE = "stale"
    DISCONNECTED = "disconnected"
    CRASHED = "crashed"


@dataclass(frozen=True, slots=True)
class FaultRuling:
    """What the referee does about one fault."""

    forfeit: bool
    """The seat forfeits now."""
    replace: bool
    """The pending decision is replaced by the fallback."""
    points: int
    """Extra points the seat scores at the end of the hand (when not forfeiting)."""
    reason: str = ""
    """Why the seat forfeits (the engine's forfeit reason): the fault itself, or ``max_faults``."""


def rule_on_fault(rules: Ruleset, fault: Fault, faults_so_far: int, answers_request: bool, joined: bool = True) -> FaultRuling:
    """The ruling for ``fault``, the seat's ``faults_so_far``-th (this one included).

    ``answers_request`` is true when the fault stands in for the pending decision
    (a timeout, or a wrong answer to the current request); ``joined`` is false for a seat
    that never said Hello.
    """
    if fault in (Fault.DISCONNECTED, Fault.CRASHED) or not joined:
        return FaultRuling(forfeit=True, replace=False, points=0, reason=fault.value)
    if rules.fault_policy is FaultPolicy.FORFEIT:
        return FaultRuling(forfeit=True, replace=False, points=0, reason=fault.value)
    if faults_so_far >= rules.max_faults:
        return FaultRuling(forfeit=True, replace=False, points=0, reason="max_faults")
    if not answers_request:
        return FaultRuling(forfeit=False, replace=False, points=0)
    points = rules.timeout_points if fault is Fault.TIMEOUT else rules.revoke_points
    return FaultRuling(forfeit=False, replace=True, points=points)


def fallback(rules: Ruleset, legal: Iterable[Decision], trump: Suit | None = None) -> Decision:
    """The decision the referee plays for a faulty one, from the ``legal`` decisions (docs/rules.md 8).

    In the auction (``legal`` holds contracts): pass.  In play: the lowest legal card in
    ``rules``' trick order, plain suits before the ``trump`` suit (this hand's, if any); on
    equal rank, the first in suit order S H D C.

    >>> from polignac import Card, preset
    >>> str(fallback(preset("classic"), [Card.parse("AS"), Card.parse("7H"), Card.parse("7D")]))
    '7H'
    """
    choices = list(legal)
    if not choices:
        raise IllegalDecision("no legal decision to fall back on: no decision is pending")
    if any(isinstance(choice, Contract) for choice in choices):
        return Contract.PASS
    strength = rules.strength
    cards = [choice for choice in choices if isinstance(choice, Card)]
    return min(cards, key=lambda card: (card.suit is trump, strength[card.index], card.suit))
