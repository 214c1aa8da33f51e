"""Mixed seating: seats on private unix sockets beside remote seats on the referee's TLS address."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterator
from pathlib import Path

import grpc
import grpc.aio
import pytest
import trustme

from polignac import preset
from polignac._proto.polignac.v1.referee_pb2_grpc import RefereeServiceStub
from polignac.bot import MatchOutcome, run_async
from polignac.bot.client import CHANNEL_OPTIONS, _converse
from polignac.bots import builtin_bot
from polignac_arena.referee import RefereeServer, SeatConnection, TimeControl
from polignac_arena.referee.server import PlaintextRefused
from tests.referee.helpers import RawSeat, run

CLOCK = TimeControl(move_ms=2000, bank_ms=2000, startup_ms=8000)


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def tls(ca: trustme.CA) -> grpc.ServerCredentials:
    leaf = ca.issue_cert("127.0.0.1", "localhost")
    chain = b"".join(blob.bytes() for blob in leaf.cert_chain_pems)
    return grpc.ssl_server_credentials([(leaf.private_key_pem.bytes(), chain)])


@pytest.fixture
def socket_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="polignac-test-") as tmp:
        yield Path(tmp)


def seat_sockets(root: Path, seats: int) -> list[Path]:
    paths = []
    for seat in range(seats):
        (root / f"seat{seat}").mkdir()
        paths.append(root / f"seat{seat}" / "referee.sock")
    return paths


async def play_over_tls(name: str, seed: int, address: str, token: str, ca: trustme.CA) -> MatchOutcome:
    """A built-in bot on a TLS channel that trusts the test CA."""
    credentials = grpc.ssl_channel_credentials(ca.cert_pem.bytes())
    async with grpc.aio.secure_channel(address, credentials, options=CHANNEL_OPTIONS) as channel:
        call = RefereeServiceStub(channel).Play(metadata=(("authorization", f"Bearer {token}"),))
        return await _converse(builtin_bot(name, seed), call)


def test_unix_seats_and_tls_seats_play_one_match(ca: trustme.CA, tls: grpc.ServerCredentials, socket_dir: Path) -> None:
    async def scenario() -> None:
        server = RefereeServer("127.0.0.1:0", credentials=tls)
        await server.start()
        try:
            paths = seat_sockets(socket_dir, 2)
            host = await server.create_seated_match(
                preset("classic", players=4, limit=4), 3, CLOCK, sockets=[paths[0], None, paths[1], None]
            )
            local = [run_async(builtin_bot("random", seat), f"unix:{paths[i]}", host.tokens[seat]) for i, seat in enumerate((0, 2))]
            remote = [play_over_tls("cautious", seat, server.address, host.tokens[seat], ca) for seat in (1, 3)]
            bots = asyncio.gather(*local, *remote)
            result = await server.run_match(host)
            outcomes = await bots
            assert result.status == "finished" and result.faults == [{}, {}, {}, {}]
            assert result.names == ("random", "cautious", "random", "cautious")
            assert sorted(o.seat for o in outcomes if o.seat is not None) == [0, 1, 2, 3]
        finally:
            await server.stop(grace=0.5)

    run(scenario())


def test_a_socket_seat_token_is_refused_on_the_main_address(ca: trustme.CA, tls: grpc.ServerCredentials, socket_dir: Path) -> None:
    async def scenario() -> None:
        server = RefereeServer("127.0.0.1:0", credentials=tls)
        await server.start()
        try:
            paths = seat_sockets(socket_dir, 2)
            host = await server.create_seated_match(preset("classic", players=3, limit=4), 3, CLOCK, sockets=[paths[0], None, paths[1]])
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await play_over_tls("random", 0, server.address, host.tokens[0], ca)
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
            # Nor does a remote seat's token open another seat's socket.
            raw = RawSeat(f"unix:{paths[0]}", host.tokens[1])
            await raw.open()
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await raw.read()
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
            await server.discard_match(host, "a remote bot declined")
            assert not any(path.exists() for path in paths)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await play_over_tls("random", 1, server.address, host.tokens[1], ca)
            assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert refused.value.details() == f"match {host.match_id!r} was called off before it began: a remote bot declined"
        finally:
            await server.stop(grace=0.5)

    run(scenario())


def test_a_plaintext_client_cannot_talk_to_the_tls_address(tls: grpc.ServerCredentials) -> None:
    async def scenario() -> None:
        server = RefereeServer("127.0.0.1:0", credentials=tls)
        await server.start()
        try:
            host = server.create_match(preset("classic", players=3, limit=4), 3, CLOCK)
            raw = RawSeat(server.address, host.tokens[0])
            await raw.open()
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await raw.hello()
                await raw.read()
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        finally:
            await server.stop(grace=0.5)

    run(scenario())


@pytest.mark.parametrize("address", ["0.0.0.0:0", "[::]:0", "192.0.2.7:50051", "arena.example:443", ":50051"])
def test_plaintext_is_refused_off_loopback(address: str) -> None:
    with pytest.raises(PlaintextRefused, match="not a loopback address"):
        RefereeServer(address)
    with pytest.raises(PlaintextRefused, match="operator address"):
        RefereeServer("127.0.0.1:0", operator_address=address)


def test_tls_may_listen_anywhere(tls: grpc.ServerCredentials) -> None:
    async def scenario() -> None:
        RefereeServer("0.0.0.0:0", credentials=tls, operator_address="[::]:0")  # built, not bound

    run(scenario())


@pytest.mark.parametrize("address", ["127.0.0.1:0", "127.8.9.10:0", "[::1]:0", "localhost:0", "unix:/tmp/x.sock"])
def test_plaintext_is_served_on_loopback(address: str) -> None:
    async def scenario() -> None:
        RefereeServer(address)  # built, not bound

    run(scenario())


def test_a_socketless_seat_needs_a_main_address(socket_dir: Path) -> None:
    async def scenario() -> None:
        server = RefereeServer(None)
        await server.start()
        try:
            with pytest.raises(ValueError, match=r"seats \[1, 2\] have no socket"):
                await server.create_seated_match(preset("classic", players=3), 1, CLOCK, sockets=[*seat_sockets(socket_dir, 1), None, None])
        finally:
            await server.stop(grace=0.5)

    run(scenario())


def test_another_service_is_served_on_the_main_address() -> None:
    def echo(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        return request

    def add(server: grpc.aio.Server) -> None:
        handler = grpc.unary_unary_rpc_method_handler(echo)
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("test.Echo", {"Echo": handler}),))

    async def scenario() -> None:
        server = RefereeServer("127.0.0.1:0")
        server.add_service(add, name="test.Echo")
        await server.start()
        try:
            with pytest.raises(RuntimeError, match="before the referee starts"):
                server.add_service(add)
            async with grpc.aio.insecure_channel(server.address) as channel:
                assert await channel.unary_unary("/test.Echo/Echo")(b"ping") == b"ping"
        finally:
            await server.stop(grace=0.5)

    run(scenario())
    with pytest.raises(RuntimeError, match="no main address"):
        RefereeServer(None).add_service(add)


def test_a_discarded_match_ends_the_stream_of_a_seat_that_joined() -> None:
    async def scenario() -> None:
        server = RefereeServer("127.0.0.1:0")
        await server.start()
        try:
            host = await server.create_seated_match(preset("classic", players=3, limit=4), 3, CLOCK, sockets=[None, None, None])
            raw = RawSeat(server.address, host.tokens[0])
            await raw.open()
            await raw.hello()
            await server.discard_match(host, "seat 2 declined")
            # Joined or not yet, the seat is welcomed to nothing: its stream ends with the reason.
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await raw.read()
            assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert refused.value.details() == f"match {host.match_id!r} was called off before it began: seat 2 declined"
            assert raw.received == [], "no Welcome, no match_ended: the match never began"
            assert server.running_matches == []
            # A stream whose token passed just before the discard, saying Hello just after: refused.
            late = SeatConnection(None, "late", "1", 1.0)  # no context: attach never touches it
            assert host.attach(1, late) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                f"match {host.match_id!r} was called off before it began: seat 2 declined",
            )
        finally:
            await server.stop(grace=0.5)

    run(scenario())
