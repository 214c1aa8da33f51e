"""Helpers for lobby tests: a lobby on a real loopback server, a fake directory, a raw client."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import grpc.aio

from polignac import preset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac_arena.league.lobby import AssignmentSpec, ClaimRefused, LobbyService
from polignac_arena.referee import RefereeServer, TimeControl
from polignac_arena.referee.options import server_options


@dataclass
class FakeDirectory:
    """Authors by token; a bot belongs to the first author who claims it."""

    tokens: dict[str, str] = field(default_factory=lambda: {"alice-token": "alice", "bob-token": "bob"})
    owners: dict[str, str] = field(default_factory=lambda: {"bobs-bot": "bob"})
    disabled: set[str] = field(default_factory=set)
    peers: list[str] = field(default_factory=list)

    def author_of(self, token: str, peer: str) -> str | None:
        self.peers.append(peer)
        return self.tokens.get(token)

    def claim(self, author: str, bot_name: str, bot_version: str) -> str:
        owner = self.owners.setdefault(bot_name, author)
        if owner != author:
            raise ClaimRefused(f"bot {bot_name!r} belongs to another author", grpc.StatusCode.PERMISSION_DENIED)
        if bot_name in self.disabled:
            raise ClaimRefused(f"bot {bot_name!r} is disabled")
        return f"{bot_name}@{bot_version}"


@contextlib.asynccontextmanager
async def lobby_server(directory: FakeDirectory | None = None, **kwargs: Any) -> AsyncIterator[tuple[LobbyService, str]]:
    """A LobbyService on 127.0.0.1:0 with the referee's server options; yields it and its address."""
    service = LobbyService(directory or FakeDirectory(), **kwargs)
    server = grpc.aio.server(options=server_options(64))
    service.add_to(server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield service, f"127.0.0.1:{port}"
    finally:
        await server.stop(0.5)


@dataclass
class LobbyClient:
    """A Lobby stream driven message by message."""

    address: str
    token: str | None = "alice-token"
    channel: grpc.aio.Channel | None = None
    call: Any = None

    async def open(self) -> None:
        self.channel = grpc.aio.insecure_channel(self.address)
        lobby = self.channel.stream_stream(
            "/polignac.v1.LobbyService/Lobby",
            request_serializer=lambda m: m if isinstance(m, bytes) else m.SerializeToString(),
            response_deserializer=pb.LobbyEvent.FromString,
        )
        metadata = (("authorization", f"Bearer {self.token}"),) if self.token is not None else ()
        self.call = lobby(metadata=metadata)

    async def join(self, name: str = "mybot", version: str = "1", protocol: str = "1.1") -> None:
        await self.call.write(pb.LobbyRequest(join=pb.Join(protocol_version=protocol, bot_name=name, bot_version=version)))

    async def reply(self, match_id: str, accept: bool, reason: str = "") -> None:
        await self.call.write(pb.LobbyRequest(reply=pb.AssignmentReply(match_id=match_id, accept=accept, reason=reason)))

    async def read(self) -> pb.LobbyEvent | None:
        message = await self.call.read()
        return None if message is grpc.aio.EOF else message

    async def close(self) -> None:
        if self.channel is not None:
            await self.channel.close()


def spec(match_id: str = "m1", reply_ms: int = 5000) -> AssignmentSpec:
    """An assignment for seat 1 of a classic match."""
    return AssignmentSpec(match_id, 1, "seat-token", "", preset("classic"), TimeControl(), reply_ms)


@contextlib.asynccontextmanager
async def referee_with_lobby() -> AsyncIterator[tuple[RefereeServer, LobbyService]]:
    """A referee whose main address serves the lobby too, as a league's gRPC endpoint does."""
    server = RefereeServer("127.0.0.1:0")
    lobby = LobbyService(FakeDirectory())
    assert server._server is not None
    lobby.add_to(server._server)  # before start: gRPC takes services only then
    await server.start()
    try:
        yield server, lobby
    finally:
        await server.stop(grace=0.5)
