"""The fault policy, from the SDK (:mod:`polignac.faults`): the referee and the local harness share it."""

from polignac.faults import Fault, FaultRuling, rule_on_fault

__all__ = ["Fault", "FaultRuling", "rule_on_fault"]
