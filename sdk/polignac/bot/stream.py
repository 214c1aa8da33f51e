"""One Play stream: say Hello, read what the referee sends, answer its requests."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import grpc
import grpc.aio
from google.protobuf.message import Message

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.bot.base import Bot, FaultInfo, MatchInfo
from polignac.cards import Card
from polignac.errors import PolignacError
from polignac.rules import Ruleset
from polignac.statuses import MatchStatus, UnknownStatusError
from polignac.values import Contract, Decision, parse_decision
from polignac.wire import PROTOCOL_VERSION, TrickCache, contract_to_pb, event_from_pb, ruleset_from_pb, view_from_pb

__all__ = ["CHANNEL_OPTIONS", "BotConnectionError", "Conversation", "MatchOutcome", "converse", "raise_if_cancelled", "write"]

_FAULT_NAMES = {v: k.removeprefix("FAULT_").lower() for k, v in pb.Fault.items()}
# MatchEnded.status_code by number, named as the enum is (MATCH_STATUS_ + the member's name).
_STATUSES = {pb.MatchStatus.Value(f"MATCH_STATUS_{status.name}"): status for status in MatchStatus}
_STATUS_WAIT_S = 5.0
"""How long a failed write waits for the call's status."""
# Matches the referee's limits: a view is a few kilobytes at most.
CHANNEL_OPTIONS = [("grpc.max_receive_message_length", 1 << 20), ("grpc.max_send_message_length", 64 << 10)]


def raise_if_cancelled() -> None:
    """Raise ``CancelledError`` if this task is being cancelled.

    A cancellation that reaches a gRPC call while its channel closes can come out as an ``AioRpcError``
    (CANCELLED) instead; a loop that retries on those errors calls this first, so that Ctrl-C or a
    stopping league ends it rather than starting another try.
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


class BotConnectionError(RuntimeError):
    """The bot could not reach the referee, was refused, lost its stream, or was sent what it cannot read."""


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """How the match ended for this bot."""

    seat: int | None
    places: tuple[int, ...]
    totals: tuple[int, ...]
    status: MatchStatus | None
    """How the referee says the match ended; None when the stream ended without MatchEnded."""


def _decision_message(request_id: int, decision: Decision | str) -> pb.PlayRequest:
    """The Decision message for what the bot returned (text is accepted too, and sent as is if it is not valid)."""
    message = pb.Decision(request_id=request_id)
    if isinstance(decision, str):
        try:
            decision = parse_decision(decision)
        except PolignacError:
            message.card = str(decision)[:16]  # let the referee judge it (MALFORMED)
            return pb.PlayRequest(decision=message)
    if isinstance(decision, Contract):
        message.contract = contract_to_pb(decision)
    elif isinstance(decision, Card):
        message.card = str(decision)
    else:
        message.card = repr(decision)[:16]
    return pb.PlayRequest(decision=message)


async def write(call: grpc.aio.StreamStreamCall, message: Message) -> None:
    """Write ``message`` on ``call``; when the call has ended already, raise the status it ended with.

    gRPC fails a write to a call the server has just ended with its own INTERNAL error: the
    call's status (UNAUTHENTICATED, ...) is what tells the caller what happened.
    """
    try:
        await call.write(message)
    except grpc.aio.AioRpcError:
        try:
            async with asyncio.timeout(_STATUS_WAIT_S):
                code, details = await call.code(), await call.details()
        except TimeoutError:
            raise BotConnectionError("a write to the stream failed, and the stream has not ended") from None
        raise grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details) from None


class Conversation:
    """What a bot has learnt of its match: kept across the streams of a seat that reattaches."""

    def __init__(self) -> None:
        self.rules: Ruleset | None = None
        self.seat: int | None = None
        self.outcome = MatchOutcome(None, (), (), None)
        self.tricks = TrickCache()
        self.welcomes = 0
        """Welcomes read: one per stream that took the seat."""

    @property
    def welcomed(self) -> bool:
        """A Welcome has been read: the match has started for this bot."""
        return self.rules is not None


async def converse(bot: Bot, call: grpc.aio.StreamStreamCall, state: Conversation | None = None) -> MatchOutcome:
    """Say Hello and play on ``call`` until it ends; with a ``state`` kept from a broken stream, go on where it broke.

    A repeated Welcome (a reattached seat's) is not passed on to the bot: its match goes on.
    """
    await write(call, pb.PlayRequest(hello=pb.Hello(protocol_version=PROTOCOL_VERSION, bot_name=bot.name, bot_version=bot.version)))
    s = state or Conversation()
    listens = type(bot).on_event is not Bot.on_event  # converting a request's events costs 15-25 us: not for nothing
    while True:
        response = await call.read()
        if response is grpc.aio.EOF:
            return s.outcome
        if listens:
            for message in response.events:
                event = event_from_pb(message, -1 if s.seat is None else s.seat)
                if event is not None:
                    bot.on_event(event)
        kind = response.WhichOneof("payload")
        if kind == "decision_request" and s.rules is not None:
            request = response.decision_request
            decision = bot.decide(view_from_pb(s.rules, request, s.tricks))
            message = _decision_message(request.request_id, decision)
            if debug := bot.take_debug():
                message.decision.debug = debug
            await write(call, message)
        elif kind == "welcome":
            s.welcomes += 1
            if s.welcomed:
                continue
            w = response.welcome
            s.rules = rules = ruleset_from_pb(w.ruleset)
            s.seat = w.seat
            tc = w.time_control
            bot.on_match_start(MatchInfo(w.match_id, w.seat, rules, tuple(w.seat_names), tc.move_ms, tc.bank_ms, tc.startup_ms))
        elif kind == "fault_notice":
            f = response.fault_notice
            bot.on_fault(
                FaultInfo(f.request_id, _FAULT_NAMES.get(f.fault, "unspecified"), f.detail, f.fallback, f.points, f.faults, f.forfeited)
            )
        elif kind == "match_ended":
            e = response.match_ended
            status = _match_status(e)
            s.outcome = MatchOutcome(s.seat, tuple(e.places), tuple(e.totals), status)
            bot.on_match_end(s.outcome.places, s.outcome.totals, status)


def _match_status(ended: pb.MatchEnded) -> MatchStatus:
    """``status_code`` when it is set (a referee of protocol 1.1 on), else the ``status`` text (1.0)."""
    known = _STATUSES.get(ended.status_code)
    if known is not None:
        return known
    try:
        return MatchStatus.parse(ended.status)
    except UnknownStatusError:
        raise BotConnectionError(
            f"the referee ended the match with a status this SDK does not know: {ended.status[:40]!r}"
            f" (status_code {ended.status_code}); a later version of polignac may know it"
        ) from None
