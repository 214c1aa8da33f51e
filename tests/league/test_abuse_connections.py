"""Issue 24, point 1: slow connections, no login needed, against the HTTPS server and the gRPC endpoint.

Each attack at a small scale against a real ``polignac league serve`` over TLS: connections whose
TLS handshake or request headers never end are closed on time (and headers that keep growing are
refused), as are an idle kept-alive connection and an upload whose body stops coming; an address cannot hold more than
its share, a flood from many addresses cannot keep a quick client out, the gRPC endpoint bounds
its calls per address and its idle and handshaking connections, and memory held by a flood of
connections goes back once they close.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import grpc.aio
import pytest

from polignac._proto.polignac.v1 import referee_pb2 as pb
from tests.league.abuse import TlsLeague, ended, held, slow_clients, tls_league, wait_until
from tests.league.league_process import add_author
from tests.referee.helpers import run

HTTP = (
    "max_connections = 40\nmax_connections_per_address = 8\nhandshake_timeout_s = 1\nheader_timeout_s = 1\nkeepalive_s = 1\n"
    "body_timeout_s = 1\nmax_header_kb = 4"
)
GRPC = "max_calls_per_address = 2\nidle_timeout_s = 1\nhandshake_timeout_s = 1"


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsLeague]:
    with tls_league(
        tmp_path_factory.mktemp("connections"),
        "parallel = 1",
        http=f'address = "127.0.0.1:0"\n{HTTP}',
        grpc=f'address = "127.0.0.1:0"\n{GRPC}',
    ) as served:
        yield served


def test_headers_that_never_end_are_cut_off_and_an_address_holds_its_share_only(league: TlsLeague) -> None:
    host, port = league.host_port

    async def attack() -> None:
        opened, refused = await slow_clients(host, port, 12, league.ca, lambda n: "127.0.0.2")
        async with held(opened):
            assert len(opened) == 8 and refused == 4, (len(opened), refused)  # max_connections_per_address
            with league.fresh("127.0.0.1") as client:  # another address is served meanwhile
                assert (await asyncio.to_thread(client.get, "/api/leaderboard")).status_code == 200
            began = time.monotonic()
            assert all(await asyncio.gather(*(ended(stream, 30) for stream in opened)))  # header_timeout_s
            assert time.monotonic() - began < 30
        again, refused = await slow_clients(host, port, 1, league.ca, lambda n: "127.0.0.2")
        async with held(again):
            assert len(again) == 1 and refused == 0  # the address's share is free again

    run(attack(), timeout=90)


def test_a_tls_handshake_that_never_ends_is_closed(league: TlsLeague) -> None:
    host, port = league.host_port
    with socket.create_connection((host, port), source_address=("127.0.0.3", 0)) as raw:
        raw.settimeout(30)
        began = time.monotonic()
        assert raw.recv(1024) == b""  # handshake_timeout_s, without a byte sent
        assert time.monotonic() - began < 30


def test_a_flood_from_many_addresses_stays_under_the_cap_and_a_quick_client_gets_in(league: TlsLeague) -> None:
    host, port = league.host_port

    async def attack() -> None:
        opened, _ = await slow_clients(host, port, 60, league.ca, lambda n: f"127.0.4.{n % 30 + 1}")
        async with held(opened):
            # Past max_connections in all, the longest-waiting connections were dropped to make room.
            closed = sum(await asyncio.gather(*(ended(stream, 0.5) for stream in opened[:20])))
            assert closed >= 20 - 1, closed
            with league.fresh("127.0.0.1") as client:
                assert (await asyncio.to_thread(client.get, "/api/leaderboard")).status_code == 200

    run(attack(), timeout=90)


async def exchange(league: TlsLeague, local: str, data: bytes, *, then_s: float = 0.0) -> tuple[bytes, float]:
    """Send ``data`` on a new TLS connection from ``local`` and read until the server closes it (30 s at most):
    what came back, and the seconds from the end of the sending to the close.  ``then_s``: wait that long before
    reading (a client that stalls)."""
    host, port = league.host_port
    reader, writer = await asyncio.open_connection(host, port, ssl=league.ca, server_hostname=host, local_addr=(local, 0))
    try:
        writer.write(data)
        await writer.drain()
        began = time.monotonic()
        await asyncio.sleep(then_s)
        answer = await asyncio.wait_for(reader.read(), 30)  # to the end: the server must close it
        return answer, time.monotonic() - began
    finally:
        writer.close()


def test_an_idle_kept_alive_connection_is_closed(league: TlsLeague) -> None:
    request = b"GET /api/leaderboard HTTP/1.1\r\nHost: league\r\n\r\n"
    answer, idle_s = run(exchange(league, "127.0.0.7", request), timeout=60)
    assert answer.startswith(b"HTTP/1.1 200") and b"connection: close" not in answer.lower(), answer[:200]
    assert idle_s < 30  # keepalive_s (and header_timeout_s) after the response: not held open for good


def test_an_upload_whose_body_stops_coming_is_a_408(league: TlsLeague) -> None:
    token = add_author(league.path, "stalling")
    head = (
        "POST /api/league/bots/stalled/versions HTTP/1.1\r\nHost: league\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/gzip\r\nContent-Length: 100000\r\n\r\n"
    )
    answer, took_s = run(exchange(league, "127.0.0.8", head.encode() + b"\x1f\x8b" + bytes(998)), timeout=60)
    assert answer.startswith(b"HTTP/1.1 408") and b"the upload stopped coming" in answer, answer[:300]  # body_timeout_s
    assert took_s < 30
    assert not (league_data(league) / "incoming").is_dir() or not any((league_data(league) / "incoming").iterdir())


def test_request_headers_that_grow_past_the_cap_are_a_400(league: TlsLeague) -> None:
    request = b"GET /api/leaderboard HTTP/1.1\r\nHost: league\r\nX-Padding: " + b"a" * 8000  # and no end in sight
    answer, _ = run(exchange(league, "127.0.0.9", request), timeout=60)
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]  # max_header_kb = 4: not buffered, nor waited for, past it
    with league.fresh("127.0.0.9") as client:  # the server goes on serving, that address too
        assert client.get("/api/leaderboard").status_code == 200


def league_data(league: TlsLeague) -> Path:
    from polignac_arena.league.config import load_league_config

    return load_league_config(league.path).data


def test_memory_held_by_a_flood_of_connections_goes_back_once_they_close(tmp_path: Path) -> None:
    with tls_league(tmp_path, "parallel = 1") as league:  # the default limits
        host, port = league.host_port
        for _ in range(5):
            assert league.client().get("/api/leaderboard").status_code == 200
        idle = league.rss_mb()

        async def flood() -> float:
            # 300 connections from 100 addresses: within the per-address cap, past the cap in all (past which
            # the longest waiting connection of the address that holds the most makes room, or the new one goes).
            opened, refused = await slow_clients(host, port, 300, league.ca, lambda n: f"127.0.5.{n % 100 + 1}")
            async with held(opened):
                assert len(opened) + refused == 300 and len(opened) >= 128
                await asyncio.to_thread(wait_until, "the flood's memory", lambda: league.rss_mb() > idle + 20)
                return league.rss_mb()

        peak = run(flood(), timeout=120)
        # Back near idle once they are closed (before, the server kept every connection's buffers for good).
        wait_until(f"memory back near {idle:.0f} MB (peak {peak:.0f} MB)", lambda: league.rss_mb() < idle + (peak - idle) / 4)


# -- the gRPC endpoint ---------------------------------------------------------------------------------------


def lobby_call(channel: grpc.aio.Channel) -> grpc.aio.StreamStreamCall:
    """A Lobby stream that sends nothing yet (a slow client's)."""
    lobby = channel.stream_stream(
        "/polignac.v1.LobbyService/Lobby",
        request_serializer=lambda m: m.SerializeToString(),
        response_deserializer=pb.LobbyEvent.FromString,
    )
    return lobby(metadata=(("authorization", "Bearer plg_00000000_" + "A" * 43),))


def test_streams_from_one_address_are_capped(league: TlsLeague) -> None:
    async def scenario() -> None:
        credentials = grpc.ssl_channel_credentials(root_certificates=league.ca_pem)
        options = [("grpc.ssl_target_name_override", "127.0.0.1")]
        async with grpc.aio.secure_channel(league.process.grpc, credentials, options=options) as channel:
            calls = [lobby_call(channel) for _ in range(3)]
            # The third stream from this address is ended at once; the two within the cap wait for their Join.
            done, pending = await asyncio.wait(
                [asyncio.ensure_future(call.code()) for call in calls], timeout=30, return_when=asyncio.FIRST_COMPLETED
            )
            assert [task.result() for task in done] == [grpc.StatusCode.RESOURCE_EXHAUSTED] and len(pending) == 2
            assert "streams at once from this address" in (await next(c for c in calls if c.done()).details() or "")
            for call in calls:
                call.cancel()
            for task in pending:
                task.cancel()

    run(scenario(), timeout=60)


def test_an_idle_grpc_connection_is_closed(league: TlsLeague) -> None:
    async def scenario() -> None:
        credentials = grpc.ssl_channel_credentials(root_certificates=league.ca_pem)
        async with grpc.aio.secure_channel(league.process.grpc, credentials) as channel:
            await asyncio.wait_for(channel.channel_ready(), 30)
            began = time.monotonic()
            await asyncio.wait_for(channel.wait_for_state_change(grpc.ChannelConnectivity.READY), 30)  # idle_timeout_s: GOAWAY
            assert channel.get_state() is not grpc.ChannelConnectivity.READY and time.monotonic() - began < 30

    run(scenario(), timeout=60)


def test_a_grpc_handshake_that_never_ends_is_closed(league: TlsLeague) -> None:
    host, port = league.grpc_host_port
    with socket.create_connection((host, port), source_address=("127.0.0.6", 0)) as raw:
        raw.settimeout(30)
        began = time.monotonic()
        assert raw.recv(1024) == b""  # handshake_timeout_s, without a byte sent
        assert time.monotonic() - began < 30


def test_grpc_connections_past_the_cap_in_all_are_closed_at_once(tmp_path: Path) -> None:
    grpc_limits = 'address = "127.0.0.1:0"\nmax_connections = 3\nhandshake_timeout_s = 60'
    with tls_league(tmp_path, "parallel = 1", grpc=grpc_limits) as league:
        host, port = league.grpc_host_port
        holding = [socket.create_connection((host, port), source_address=(f"127.0.0.{10 + n}", 0)) for n in range(3)]
        try:
            with socket.create_connection((host, port), source_address=("127.0.0.13", 0)) as extra:
                extra.settimeout(30)  # far less than the handshake timeout: only the cap closes it in time
                with contextlib.suppress(ConnectionResetError):  # the league's front resets it; gRPC alone closes it
                    assert extra.recv(1024) == b""
            for held_open in holding:  # the three within the cap are still waiting for their handshake
                held_open.setblocking(False)
                with pytest.raises(BlockingIOError):
                    held_open.recv(1)
        finally:
            for sock in holding:
                sock.close()
