"""Issue 24, point 1 on the gRPC endpoint: one address cannot hold the connections every remote bot needs.

The league's front (:mod:`polignac_arena.league.grpc_front`) listens on the public gRPC port,
resets a connection past ``[grpc] max_connections_per_address`` from its address, and relays
the others to gRPC on a loopback port of its own.  Against a real ``polignac league serve``:
a flood from one address is capped while bots from other addresses join and play.  In this
process, on real sockets: the stream cap and the bad-token throttle still count the client
behind the front, not the front; bytes are relayed whole with flow control; and many
connections opened and closed, either side first, leave no table entry and no descriptor.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import socket
import struct
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import grpc
import grpc.aio
import pytest

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac_arena.league.config import load_league_config
from polignac_arena.league.grpc_front import BUFFER_HIGH, GrpcFront
from polignac_arena.league.serve import GrpcEndpoint, League
from polignac_arena.tournament.config import ConfigError
from tests.faultproxy import fault_proxy
from tests.league.league_process import write_league
from tests.league.remote_harness import remote_league
from tests.referee.helpers import run

WAIT_S = 30.0
UNKNOWN = "plg_0badc0de_" + "A" * 43


def connect_from(local: str, port: int) -> socket.socket:
    """A TCP connection to the front on 127.0.0.1:``port`` from the loopback address ``local``."""
    return socket.create_connection(("127.0.0.1", port), timeout=WAIT_S, source_address=(local, 0))


def refused(local: str, port: int) -> bool:
    """Whether a connection from ``local`` is closed before the server sends a byte: reset at once (even before
    ``connect`` returns), or ended.  An admitted one gets a byte first (gRPC's HTTP/2 settings in a plaintext league),
    or nothing within :data:`WAIT_S` (a server that waits for its client)."""
    try:
        sock = connect_from(local, port)
    except ConnectionResetError:
        return True
    with sock:
        try:
            return sock.recv(65536) == b""
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server has closed ``sock`` (an end of file or a reset), reading whatever it sent first."""
    sock.settimeout(WAIT_S)
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    except TimeoutError:
        return False
    return True


def still_open(sock: socket.socket) -> bool:
    """Whether ``sock`` is still open from the server's side now (what it sent is read and dropped)."""
    sock.setblocking(False)
    try:
        while sock.recv(65536):
            pass
        return False
    except BlockingIOError:
        return True
    except ConnectionResetError:
        return False
    finally:
        sock.setblocking(True)


async def until(what: str, probe: Callable[[], bool], timeout_s: float = WAIT_S) -> None:
    """Wait for ``probe`` (a state of the front, a count) to hold, looking once each turn of the loop's clock."""
    async with asyncio.timeout(timeout_s):
        while not probe():
            await asyncio.sleep(0.02)
    assert probe(), what


# -- against a real league -------------------------------------------------------------------------------------------


def test_connections_past_the_cap_from_one_address_are_reset_while_bots_from_others_join_and_play(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with remote_league(tmp_path, grpc="max_connections_per_address = 4\nidle_timeout_s = 600") as league:
            port = int(league.server.grpc.rpartition(":")[2])
            # Four gRPC connections from 127.0.0.3 (gRPC clients: they answer the league's keepalive pings) ...
            flood = await league.proxy(local="127.0.0.3")
            held = [grpc.aio.insecure_channel(flood.address, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(4)]
            try:
                for channel in held:
                    await asyncio.wait_for(channel.channel_ready(), WAIT_S)
                # ... and the next ones from that address are reset at once, before the league sends a byte.
                for _ in range(2):
                    assert await asyncio.to_thread(refused, "127.0.0.3", port)
                # Bots from other addresses come online and play a whole match meanwhile.
                bots = [await league.sdk(f"bot{n}", local=f"127.0.0.{21 + n}") for n in range(3)]
                assignment = await bots[0].event("assignment")
                result = await league.final(assignment["match_id"], timeout_s=120)
                assert result.status == "finished", result
                assert [channel.get_state() for channel in held] == [grpc.ChannelConnectivity.READY] * 4  # held all along
                assert await asyncio.to_thread(refused, "127.0.0.3", port)
                await held.pop().close()  # one of the four leaves: its place is the address's again
                async with asyncio.timeout(WAIT_S):
                    while await asyncio.to_thread(refused, "127.0.0.3", port):
                        await asyncio.sleep(0.05)
            finally:
                for channel in held:
                    await channel.close()

    run(scenario(), timeout=240)


# -- the league's gRPC endpoint in this process ---------------------------------------------------------------------


@contextlib.asynccontextmanager
async def endpoint(tmp_path: Path, grpc_lines: str = "", limits: str = "") -> AsyncIterator[tuple[League, GrpcEndpoint, str]]:
    """The league's gRPC endpoint (front, referee, lobby) over a league's store, started; stopped on the way out."""
    config = load_league_config(write_league(tmp_path, grpc=f'address = "127.0.0.1:0"\n{grpc_lines}', limits=limits))
    league = League(config)
    served = GrpcEndpoint(config, league)
    try:
        address = await served.start()
        yield league, served, address
    finally:
        await served.stop(grace=0)
        league.store.close()


def lobby_call(channel: grpc.aio.Channel, token: str | None = None) -> grpc.aio.StreamStreamCall:
    """A Lobby stream that sends nothing yet; without a token, no bad token is counted when it ends."""
    lobby = channel.stream_stream(
        "/polignac.v1.LobbyService/Lobby",
        request_serializer=lambda m: m.SerializeToString(),
        response_deserializer=pb.LobbyEvent.FromString,
    )
    return lobby(metadata=(("authorization", f"Bearer {token}"),) if token else ())


async def join_with(channel: grpc.aio.Channel, token: str) -> grpc.StatusCode:
    call = lobby_call(channel, token)
    await call.write(pb.LobbyRequest(join=pb.Join(protocol_version="1.1", bot_name="guess", bot_version="1")))
    with contextlib.suppress(grpc.aio.AioRpcError):
        await call.read()
    code: grpc.StatusCode = await call.code()
    return code


def test_the_stream_cap_and_the_bad_token_throttle_count_the_client_behind_the_front(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with (
            endpoint(tmp_path, "max_calls_per_address = 2") as (league, served, address),
            fault_proxy(address, local="127.0.0.7") as proxy,
            grpc.aio.insecure_channel(address) as direct,
            grpc.aio.insecure_channel(proxy.address) as other,
        ):
            assert served.front is not None and served.referee.address != address  # gRPC listens behind the front
            held = [lobby_call(channel) for channel in (direct, direct, other, other)]
            await until("two streams from each address", lambda: served.calls.open == Counter({"127.0.0.1": 2, "127.0.0.7": 2}))
            for channel in (direct, other):  # a third from either address is refused: each has its own two
                third = lobby_call(channel)
                assert await third.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            for call in held:
                call.cancel()
            await until("the streams closed", lambda: not served.calls.open)

            for _ in range(2):
                assert await join_with(other, UNKNOWN) == grpc.StatusCode.UNAUTHENTICATED
            assert (league.throttle.failures(("127.0.0.7", "")), league.throttle.failures(("127.0.0.1", ""))) == (2, 0)
            assert await join_with(direct, UNKNOWN) == grpc.StatusCode.UNAUTHENTICATED
            assert (league.throttle.failures(("127.0.0.7", "")), league.throttle.failures(("127.0.0.1", ""))) == (2, 1)

    run(scenario(), timeout=120)


def test_no_front_when_the_cap_is_zero_and_a_negative_cap_is_refused(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with endpoint(tmp_path / "off", "max_connections_per_address = 0") as (_, served, address):
            assert served.front is None and served.referee.address == address

    run(scenario(), timeout=60)
    with pytest.raises(ConfigError, match=r"'grpc.max_connections_per_address': must be an integer in 0..100000, got -1"):
        load_league_config(write_league(tmp_path / "bad", grpc='address = "127.0.0.1:0"\nmax_connections_per_address = -1'))


# -- the front on its own, before a plain TCP server -----------------------------------------------------------------


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@contextlib.asynccontextmanager
async def front_before(handler: Handler, *, max_per_address: int = 8, exempt: tuple[str, ...] = ()) -> AsyncIterator[tuple[GrpcFront, int]]:
    """A front on a port of its own before a TCP server that serves each connection with ``handler``."""
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    front = GrpcFront(max_connections=64, max_per_address=max_per_address, exempt=exempt)
    port = await front.start("127.0.0.1", 0, server.sockets[0].getsockname()[1])
    try:
        yield front, port
    finally:
        await front.close()
        server.close()
        await server.wait_closed()


def test_bytes_are_relayed_whole_with_flow_control_and_a_close_passes_through() -> None:
    payload = os.urandom(1 << 20) * 24  # 24 MB: far more than the sockets' buffers and the front's together
    served = asyncio.Event()

    async def flood(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(payload)
        await writer.drain()
        writer.close()  # the server closes once all is written: the client sees it after the last byte
        served.set()

    async def scenario() -> None:
        async with front_before(flood) as (front, port):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            await until("the connection admitted", lambda: len(front._links) == 1)
            (link,) = front._links
            # The client reads nothing: the front stops reading the server once its buffer to the client is full.
            await until(
                "the server's side paused", lambda: link.upstream.transport is not None and not link.upstream.transport.is_reading()
            )
            assert link.client.transport is not None and link.client.transport.get_write_buffer_size() <= BUFFER_HIGH + (256 << 10)
            assert not served.is_set()
            digest, received = hashlib.sha256(), 0
            while chunk := await reader.read(1 << 20):
                digest.update(chunk)
                received += len(chunk)
            assert (received, digest.digest()) == (len(payload), hashlib.sha256(payload).digest())
            writer.close()
            await until("the link released", lambda: front.open == 0 and front.table_size == 0)

    run(scenario(), timeout=120)


def test_trusted_proxies_are_not_held_to_the_cap_per_address() -> None:
    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()
        writer.close()

    async def scenario() -> None:
        async with front_before(hold, max_per_address=1, exempt=("127.0.0.9/32",)) as (front, port):
            proxied = [await asyncio.to_thread(connect_from, "127.0.0.9", port) for _ in range(3)]
            other = [await asyncio.to_thread(connect_from, "127.0.0.8", port)]
            try:
                await until("four admitted", lambda: front.open == 4)
                assert await asyncio.to_thread(refused, "127.0.0.8", port)
                assert all(still_open(sock) for sock in [*proxied, *other])
                assert front.per_address == Counter({"127.0.0.9": 3, "127.0.0.8": 1}) and front.refused == 1
            finally:
                for sock in proxied + other:
                    sock.close()

    run(scenario(), timeout=60)


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_connections_opened_and_closed_leave_no_table_entry_nor_descriptor_and_the_front_stops_with_the_league(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with endpoint(tmp_path, "max_connections_per_address = 4\nhandshake_timeout_s = 1") as (_, served, address):
            front = served.front
            assert front is not None
            port = int(address.rpartition(":")[2])

            async def grpc_call() -> None:
                async with grpc.aio.insecure_channel(address) as channel:
                    assert await join_with(channel, UNKNOWN) == grpc.StatusCode.UNAUTHENTICATED

            def raw(kind: str, local: str) -> None:
                sock = connect_from(local, port)
                if kind == "reset":
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                elif kind == "garbage":  # gRPC closes a connection that does not speak HTTP/2; the front follows
                    sock.sendall(b"GET / HTTP/1.1\r\n\r\n" * 64)
                    assert closed_by_server(sock)
                elif kind == "half":  # the client closes its half; gRPC then closes the whole
                    sock.shutdown(socket.SHUT_WR)
                    assert closed_by_server(sock)
                sock.close()

            def flood(local: str) -> int:
                """Four connections from ``local``, admitted (gRPC greets each), then two more: how many were refused."""
                socks = [connect_from(local, port) for _ in range(4)]
                assert all(sock.recv(65536) for sock in socks)
                count = sum(refused(local, port) for _ in range(2))
                for sock in socks:
                    sock.close()
                return count

            await grpc_call()  # gRPC's own descriptors (its poller, its channel's) are made once, before the count
            await until("the warm-up's link released", lambda: front.open == 0)
            before, refused_before = open_descriptors(), front.refused
            for round_number in range(8):
                await asyncio.gather(*(grpc_call() for _ in range(2)))
                for number, kind in enumerate(("close", "reset", "garbage", "half")):  # each kind from addresses of its own
                    await asyncio.gather(*(asyncio.to_thread(raw, kind, f"127.0.{1 + number}.{n}") for n in range(6)))
                assert await asyncio.to_thread(flood, f"127.0.9.{round_number}") == 2
            await until("every link released", lambda: front.open == 0 and front.table_size == 0 and not front.per_address)
            assert front.refused - refused_before == 16
            await until(f"the descriptors back to {before}", lambda: open_descriptors() <= before)
            # The front stops with the endpoint: its connections are closed and its port refuses new ones.
            last = await asyncio.to_thread(connect_from, "127.0.0.5", port)
            with last:
                assert await asyncio.to_thread(last.recv, 65536)  # admitted: gRPC's settings came through
                await served.stop(grace=0)
                assert await asyncio.to_thread(closed_by_server, last) and front.open == 0 and front.table_size == 0
            with pytest.raises(ConnectionRefusedError):
                connect_from("127.0.0.5", port)

    run(scenario(), timeout=180)
