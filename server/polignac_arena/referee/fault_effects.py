"""What one fault of a seat does to a hosted match once ruled on: a forfeit, a fallback (with its
penalty) or a warning, the record lines that say so, and the FaultNotice the seat hears.

The ruling itself is the fault policy's (:mod:`polignac_arena.referee.faults`).
"""

from __future__ import annotations

from collections.abc import Callable

from polignac import FaultPolicy, Match, Ruleset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.values import Forfeit, Penalty
from polignac_arena.record_lines import ActionLine, FaultLine, RecordLine
from polignac_arena.referee.faults import Fault, FaultRuling
from polignac_arena.statuses import ActionStatus

__all__ = ["apply_ruling", "exit_fault", "fault_notice"]

_FAULT_TO_PB = {
    Fault.TIMEOUT: pb.FAULT_TIMEOUT,
    Fault.ILLEGAL: pb.FAULT_ILLEGAL,
    Fault.MALFORMED: pb.FAULT_MALFORMED,
    Fault.STALE: pb.FAULT_STALE,
    Fault.DISCONNECTED: pb.FAULT_DISCONNECTED,
    Fault.CRASHED: pb.FAULT_CRASHED,
}


def apply_ruling(
    match: Match,
    rules: Ruleset,
    seat: int,
    fault: Fault,
    ruling: FaultRuling,
    add: Callable[[RecordLine], None],
    *,
    detail: str,
    request_id: int,
    reply: str | None,
    ms: float | None,
) -> str:
    """Carry out ``ruling`` on ``match``, each record line passed to ``add`` as it is made; the fallback played ("" for none).

    ``request_id`` is the request the fault concerns (0 for none), ``reply`` what the seat
    answered and ``ms`` how long it took, if it answered.
    """
    hand = match.hand_number
    status = ActionStatus.of(fault)
    if ruling.forfeit:
        by_fault = fault in (Fault.DISCONNECTED, Fault.CRASHED) or rules.fault_policy is FaultPolicy.FORFEIT
        reason = fault.value if by_fault else "max_faults"
        match.forfeit(seat, reason)
        forfeit = Forfeit(seat, reason)
        add(ActionLine(seat=seat, hand=hand, action=forfeit, request_id=request_id, reply=reply, status=status, ms=_ms(ms), detail=detail))
        return ""
    if ruling.replace:
        decision = match.fallback()
        if ruling.points:
            match.add_penalty(seat, ruling.points, fault.value)
            add(ActionLine(seat=seat, hand=hand, action=Penalty(seat, ruling.points, fault.value), status=status))
        match.apply(decision)
        fallback = str(decision)
        add(ActionLine(seat=seat, hand=hand, action=fallback, request_id=request_id, reply=reply, status=status, ms=_ms(ms), detail=detail))
        return fallback
    add(FaultLine(seat=seat, hand=hand, fault=fault, request_id=request_id, reply=reply, detail=detail))
    return ""


def fault_notice(fault: Fault, ruling: FaultRuling, detail: str, request_id: int, fallback: str, faults: int) -> pb.FaultNotice:
    """What the seat hears of its fault; ``faults`` counts its faults so far, this one included."""
    return pb.FaultNotice(
        request_id=request_id,
        fault=_FAULT_TO_PB[fault],
        detail=detail[:500],
        fallback=fallback,
        points=ruling.points if ruling.replace else 0,
        faults=faults,
        forfeited=ruling.forfeit,
    )


def exit_fault(code: int | None) -> tuple[Fault, str]:
    """The fault of a seat whose bot's process ended with ``code`` (None: unknown) before the match did."""
    if code is None or code == 0:
        return Fault.DISCONNECTED, "the bot's process ended before the match did"
    if code < 0:
        return Fault.CRASHED, f"the bot's process was killed by signal {-code}"
    return Fault.CRASHED, f"the bot's process exited with code {code}"


def _ms(ms: float | None) -> float | None:
    return None if ms is None else round(ms, 3)
