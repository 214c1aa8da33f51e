"""The SDK's asyncio core: connect to a referee, take a seat, answer its requests."""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass

import grpc
import grpc.aio

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac._proto.polignac.v1.referee_pb2_grpc import RefereeServiceStub
from polignac.bot.base import Bot, FaultInfo, MatchInfo
from polignac.cards import Card
from polignac.errors import PolignacError
from polignac.rules import Ruleset
from polignac.statuses import MatchStatus, UnknownStatusError
from polignac.values import Contract, Decision, parse_decision
from polignac.wire import PROTOCOL_VERSION, TrickCache, contract_to_pb, event_from_pb, ruleset_from_pb, view_from_pb

__all__ = ["BotConnectionError", "MatchOutcome", "run", "run_async"]

ADDRESS_ENV = "POLIGNAC_ADDRESS"
TOKEN_ENV = "POLIGNAC_TOKEN"
_FAULT_NAMES = {v: k.removeprefix("FAULT_").lower() for k, v in pb.Fault.items()}
# MatchEnded.status_code by number, named as the enum is (MATCH_STATUS_ + the member's name).
_STATUSES = {pb.MatchStatus.Value(f"MATCH_STATUS_{status.name}"): status for status in MatchStatus}
# Matches the referee's limits: a view is a few kilobytes at most.
CHANNEL_OPTIONS = [("grpc.max_receive_message_length", 1 << 20), ("grpc.max_send_message_length", 64 << 10)]


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


async def run_async(bot: Bot, address: str | None = None, token: str | None = None, *, connect_timeout: float = 10.0) -> MatchOutcome:
    """Play one match for ``bot`` (address and token default to the environment)."""
    address = address or os.environ.get(ADDRESS_ENV)
    token = token or os.environ.get(TOKEN_ENV)
    if not address or not token:
        missing = " and ".join(name for name, value in ((ADDRESS_ENV, address), (TOKEN_ENV, token)) if not value)
        raise BotConnectionError(
            f"{missing} not set: the referee sets them when it starts a bot (polignac match ...);"
            f" to connect by hand, set {ADDRESS_ENV}=unix:/path/or/host:port and {TOKEN_ENV}=<seat token>"
        )
    async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
        try:
            await asyncio.wait_for(channel.channel_ready(), connect_timeout)
        except TimeoutError:
            raise BotConnectionError(f"cannot reach the referee at {address!r} within {connect_timeout:g} s: is it running?") from None
        stub = RefereeServiceStub(channel)  # type: ignore[no-untyped-call]  # generated code is untyped
        call = stub.Play(metadata=(("authorization", f"Bearer {token}"),))
        try:
            return await _converse(bot, call)
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.UNAUTHENTICATED:
                raise BotConnectionError(f"the referee refused this seat's token: {exc.details()}") from None
            raise BotConnectionError(f"the referee ended the stream: {exc.code().name}: {exc.details()}") from None


async def _converse(bot: Bot, call: grpc.aio.StreamStreamCall) -> MatchOutcome:
    await call.write(pb.PlayRequest(hello=pb.Hello(protocol_version=PROTOCOL_VERSION, bot_name=bot.name, bot_version=bot.version)))
    rules: Ruleset | None = None
    seat: int | None = None
    outcome = MatchOutcome(None, (), (), None)
    tricks = TrickCache()
    listens = type(bot).on_event is not Bot.on_event  # converting a request's events costs 15-25 us: not for nothing
    while True:
        response = await call.read()
        if response is grpc.aio.EOF:
            return outcome
        if listens:
            for message in response.events:
                event = event_from_pb(message, -1 if seat is None else seat)
                if event is not None:
                    bot.on_event(event)
        kind = response.WhichOneof("payload")
        if kind == "decision_request" and rules is not None:
            request = response.decision_request
            decision = bot.decide(view_from_pb(rules, request, tricks))
            await call.write(_decision_message(request.request_id, decision))
        elif kind == "welcome":
            w = response.welcome
            rules = ruleset_from_pb(w.ruleset)
            seat = w.seat
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
            outcome = MatchOutcome(seat, tuple(e.places), tuple(e.totals), status)
            bot.on_match_end(outcome.places, outcome.totals, status)


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


def run(bot: Bot, address: str | None = None, token: str | None = None) -> MatchOutcome:
    """Connect with ``POLIGNAC_ADDRESS`` and ``POLIGNAC_TOKEN`` and play one match.

    Connection problems end the program with a one-line message on stderr and exit code 1.
    """
    try:
        return asyncio.run(run_async(bot, address, token))
    except BotConnectionError as exc:
        print(f"{bot.name}: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
