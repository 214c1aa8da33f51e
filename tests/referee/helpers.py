"""Helpers for referee tests: a real server on a real socket, polite bots, and a scriptable raw seat."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

import grpc
import grpc.aio

from polignac import Ruleset, preset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.bot import MatchOutcome, run_async
from polignac.bots import builtin_bot
from polignac_arena.referee import MatchHost, MatchResult, RefereeServer, TimeControl
from tests.aio import run_sync

T = TypeVar("T")

FAST = TimeControl(move_ms=1000, bank_ms=500, startup_ms=5000)
"""A clock short enough for tests that wait for timeouts."""


def run(coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
    """Run one test coroutine with a hard cap, so a hang fails instead of blocking the suite."""
    return run_sync(coro, timeout)


@contextlib.asynccontextmanager
async def referee(transport: str = "tcp") -> AsyncIterator[RefereeServer]:
    """A started referee on a loopback TCP port 0 or a unix socket in a temp dir."""
    with tempfile.TemporaryDirectory(prefix="polignac-test-") as tmp:
        server = RefereeServer("127.0.0.1:0" if transport == "tcp" else f"unix:{tmp}/referee.sock")
        await server.start()
        try:
            yield server
        finally:
            await server.stop(grace=0.5)


async def polite_match(
    server: RefereeServer, rules: Ruleset | None = None, seed: int = 1, names: list[str] | None = None, **kwargs: Any
) -> tuple[MatchResult, list[MatchOutcome]]:
    """A whole match among built-in bots connected over the server's socket."""
    rules = rules or preset("classic")
    names = names or ["heuristic", "cautious", "random", "heuristic", "cautious", "random"][: rules.players]
    host = server.create_match(rules, seed, kwargs.pop("time_control", TimeControl(2000, 5000, 5000)), **kwargs)
    bots = [asyncio.ensure_future(run_async(builtin_bot(n, seed + i), server.address, host.tokens[i])) for i, n in enumerate(names)]
    result = await server.run_match(host)
    outcomes = await asyncio.gather(*bots)
    return result, list(outcomes)


@dataclass
class RawSeat:
    """A seat driven message by message by a test: it can do anything a hostile bot can."""

    address: str
    token: str | None
    channel: grpc.aio.Channel | None = None
    call: Any = None
    received: list[pb.PlayResponse] = field(default_factory=list)

    async def open(self, metadata: tuple[tuple[str, str], ...] | None = None) -> None:
        self.channel = grpc.aio.insecure_channel(self.address, options=[("grpc.max_send_message_length", 1 << 22)])
        if metadata is None:
            metadata = (("authorization", f"Bearer {self.token}"),) if self.token is not None else ()
        # Messages or raw bytes: a hostile bot may send bytes that are no message at all.
        play = self.channel.stream_stream(
            "/polignac.v1.RefereeService/Play",
            request_serializer=lambda m: m if isinstance(m, bytes) else m.SerializeToString(),
            response_deserializer=pb.PlayResponse.FromString,
        )
        self.call = play(metadata=metadata)

    async def hello(self, version: str = "1", name: str = "raw") -> None:
        await self.send(pb.PlayRequest(hello=pb.Hello(protocol_version=version, bot_name=name, bot_version="0")))

    async def send(self, message: pb.PlayRequest | bytes) -> None:
        await self.call.write(message)

    async def decide(self, request_id: int, card: str | None = None, contract: pb.Contract | None = None) -> None:
        decision = pb.Decision(request_id=request_id)
        if card is not None:
            decision.card = card
        if contract is not None:
            decision.contract = contract
        await self.send(pb.PlayRequest(decision=decision))

    async def read(self, timeout: float = 10) -> pb.PlayResponse | None:
        """The next message, or None at the end of the stream."""
        async with asyncio.timeout(timeout):
            message: pb.PlayResponse = await self.call.read()  # or grpc.aio.EOF
        if message is grpc.aio.EOF:
            return None
        self.received.append(message)
        return message

    async def next_payload(self, kind: str, timeout: float = 10) -> pb.PlayResponse | None:
        """Read until a message with payload ``kind`` (or the end of the stream)."""
        while True:
            message = await self.read(timeout)
            if message is None or message.WhichOneof("payload") == kind:
                return message

    async def expect(self, kind: str, timeout: float = 10) -> pb.PlayResponse:
        """Read until a message with payload ``kind``; the stream must not end first."""
        message = await self.next_payload(kind, timeout)
        assert message is not None, f"the stream ended before a {kind}"
        return message

    async def play_politely(self, timeout: float = 10) -> pb.PlayResponse | None:
        """Answer every request with its first legal option until the match ends; returns MatchEnded's message."""
        while True:
            message = await self.read(timeout)
            if message is None:
                return None
            kind = message.WhichOneof("payload")
            if kind == "match_ended":
                return message
            if kind == "decision_request":
                await self.answer_first(message.decision_request)

    async def answer_first(self, request: pb.DecisionRequest) -> None:
        if request.kind == pb.DECISION_KIND_CARD:
            await self.decide(request.request_id, card=request.legal_cards[0])
        else:
            await self.decide(request.request_id, contract=request.legal_contracts[0])

    def faults(self) -> list[pb.FaultNotice]:
        return [m.fault_notice for m in self.received if m.WhichOneof("payload") == "fault_notice"]

    async def close(self) -> None:
        if self.channel is not None:
            await self.channel.close()


async def match_with_raw_seat(
    server: RefereeServer, rules: Ruleset | None = None, seed: int = 3, time_control: TimeControl = FAST, raw_seat: int = 0
) -> tuple[MatchHost, RawSeat, asyncio.Task[MatchResult], list[asyncio.Task[MatchOutcome]]]:
    """A match with polite built-in bots everywhere but ``raw_seat``, which the test drives."""
    rules = rules or preset("classic")
    host = server.create_match(rules, seed, time_control)
    polite = [
        asyncio.ensure_future(run_async(builtin_bot("heuristic"), server.address, host.tokens[s]))
        for s in range(rules.players)
        if s != raw_seat
    ]
    raw = RawSeat(server.address, host.tokens[raw_seat])
    result = asyncio.ensure_future(server.run_match(host))
    return host, raw, result, polite
