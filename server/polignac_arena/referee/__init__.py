"""The referee: a grpc.aio service that hosts matches, owns the clock and enforces the rules."""

from polignac_arena.referee.faults import Fault, FaultRuling, rule_on_fault
from polignac_arena.referee.host import MatchHost
from polignac_arena.referee.match_end import MatchResult
from polignac_arena.referee.seat_stream import SeatConnection
from polignac_arena.referee.server import RefereeServer
from polignac_arena.settings import TimeControl

__all__ = ["Fault", "FaultRuling", "MatchHost", "MatchResult", "RefereeServer", "SeatConnection", "TimeControl", "rule_on_fault"]
