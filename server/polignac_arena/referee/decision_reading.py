"""A seat's Decision read for the phase it answers: the card or contract it names, or why it is malformed.

Whether that card or contract is legal now is the host's to judge, with the match.
"""

from __future__ import annotations

from dataclasses import dataclass

from polignac import Card, Contract, Phase, Ruleset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.errors import CardParseError
from polignac.wire import card_from_wire, contract_from_pb

__all__ = ["Malformed", "Reading", "read_decision"]


@dataclass(frozen=True)
class Reading:
    """The decision a message names, and the reply as the record shows it."""

    decision: Card | Contract
    reply: str


@dataclass(frozen=True)
class Malformed:
    """A message that names no decision of the phase: why, and the reply as the record shows it."""

    detail: str
    reply: str


def read_decision(decision: pb.Decision, phase: Phase, rules: Ruleset) -> Reading | Malformed:
    """A contract in the auction, a card (as text such as 'JS') in play."""
    choice = decision.WhichOneof("choice")
    if phase is Phase.AUCTION:
        contract = contract_from_pb(decision.contract) if choice == "contract" else None
        if contract is None:
            reply = decision.card if choice == "card" else str(decision.contract)
            return Malformed(f"the auction needs a contract (pass, capot, general), got {reply[:20]!r}", reply)
        return Reading(contract, contract.value)
    if choice != "card":
        return Malformed("a card is needed (as text such as 'JS'), got a contract", "contract")
    try:
        card = card_from_wire(decision.card, rules)
    except CardParseError as exc:
        return Malformed(str(exc), decision.card[:20])
    return Reading(card, decision.card[:20])
