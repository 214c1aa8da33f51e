"""The referee: a grpc.aio service that hosts matches, owns the clock and enforces the rules."""

from polignac_arena.referee.faults import Fault, FaultRuling, rule_on_fault
from polignac_arena.referee.host import MatchHost, MatchResult, SeatConnection, TimeControl
from polignac_arena.referee.server import RefereeServer

__all__ = ["Fault", "FaultRuling", "MatchHost", "MatchResult", "RefereeServer", "SeatConnection", "TimeControl", "rule_on_fault"]
