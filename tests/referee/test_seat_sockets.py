"""A socket per seat: what one seat does there costs the others nothing (docs/protocol.md, "Connecting")."""

from __future__ import annotations

import asyncio
import os
import resource
import select
import socket
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from polignac import preset
from polignac.bot import run_async
from polignac.bots import builtin_bot
from polignac_arena.referee import MatchHost, RefereeServer, TimeControl
from polignac_arena.referee.listener import MAX_SEAT_CONNECTIONS
from polignac_arena.runner import resolve_bot, run_local_match
from tests.referee.helpers import RawSeat, run

ROOT = Path(__file__).resolve().parents[2]
CLOCK = TimeControl(move_ms=1000, bank_ms=1000, startup_ms=8000)


@asynccontextmanager
async def seated_referee(players: int = 4, clock: TimeControl = CLOCK) -> AsyncIterator[tuple[RefereeServer, MatchHost, list[Path]]]:
    """A referee with no main address and a match whose seats each have a socket of their own."""
    with tempfile.TemporaryDirectory(prefix="polignac-test-") as tmp:
        sockets = []
        for seat in range(players):
            (Path(tmp) / f"seat{seat}").mkdir()
            sockets.append(Path(tmp) / f"seat{seat}" / "referee.sock")
        server = RefereeServer(None)
        await server.start()
        try:
            host = await server.create_seated_match(preset("classic", players=players, limit=4), 5, clock, sockets=sockets)
            yield server, host, sockets
        finally:
            await server.stop(grace=0.5)


def polite(host: MatchHost, sockets: list[Path], seats: range | list[int]) -> list[asyncio.Future[object]]:
    return [asyncio.ensure_future(run_async(builtin_bot("random", s), f"unix:{sockets[s]}", host.tokens[s])) for s in seats]


def test_each_seat_plays_through_its_own_socket_which_goes_once_it_has_said_hello() -> None:
    async def scenario() -> None:
        async with seated_referee() as (server, host, sockets):
            assert server.address == "" and all(path.exists() for path in sockets)
            served = sockets[0].stat().st_ino
            raw = RawSeat(f"unix:{sockets[0]}", host.tokens[0])
            bots = polite(host, sockets, range(1, 4))
            result = asyncio.ensure_future(server.run_match(host))
            await raw.open()
            await raw.hello()
            await raw.next_payload("welcome")
            # The server's socket is out of reach: a tarpit holds its path, with room for one connection, never accepted.
            assert sockets[0].stat().st_ino != served, "the socket stays once its seat has joined"
            with socket.socket(socket.AF_UNIX) as first, socket.socket(socket.AF_UNIX) as second:
                first.setblocking(False)
                second.setblocking(False)
                first.connect(str(sockets[0]))
                with pytest.raises(BlockingIOError):  # a blocking connect() would wait here, costing nothing
                    second.connect(str(sockets[0]))
            await raw.play_politely()
            final = await result
            assert final.status == "finished" and final.faults == [{}, {}, {}, {}]
            await asyncio.gather(*bots)
            assert not any(path.exists() for path in sockets)

    run(scenario())


def test_a_seat_socket_refuses_the_token_of_another_seat() -> None:
    async def scenario() -> None:
        async with seated_referee() as (server, host, sockets):
            result = asyncio.ensure_future(server.run_match(host))
            intruder = RawSeat(f"unix:{sockets[0]}", host.tokens[1])  # a real token, of another seat
            await intruder.open()
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await intruder.hello()
                await intruder.read()
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert host.conns[0] is None and host.conns[1] is None
            bots = polite(host, sockets, range(4))
            assert (await result).faults == [{}, {}, {}, {}]
            await asyncio.gather(*bots)
            await intruder.close()

    run(scenario())


def test_a_seat_socket_serves_neither_health_nor_reflection() -> None:
    async def scenario() -> None:
        async with seated_referee() as (server, host, sockets):
            result = asyncio.ensure_future(server.run_match(host))
            async with grpc.aio.insecure_channel(f"unix:{sockets[0]}") as channel:
                watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""))
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await watch.read()
                assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED
                listing = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo()
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await listing.write(reflection_pb2.ServerReflectionRequest(list_services=""))
                    await listing.read()
                assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED
            bots = polite(host, sockets, range(4))
            assert (await result).faults == [{}, {}, {}, {}]
            await asyncio.gather(*bots)

    run(scenario())


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def _closed_by_peer(sock: socket.socket) -> bool:
    readable, _, _ = select.select([sock], [], [], 0)
    return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""


def test_connections_beyond_the_cap_are_closed_at_once_and_the_other_seats_play() -> None:
    async def scenario() -> None:
        async with seated_referee(clock=TimeControl(move_ms=1000, bank_ms=1000, startup_ms=3000)) as (server, host, sockets):
            result = asyncio.ensure_future(server.run_match(host))
            before = _open_descriptors()
            flood = []
            for _ in range(300):
                sock = socket.socket(socket.AF_UNIX)
                sock.setblocking(False)
                try:
                    sock.connect(str(sockets[0]))
                except BlockingIOError:  # the listen queue is full for now: the referee drains it
                    sock.close()
                    await asyncio.sleep(0.01)
                    continue
                flood.append(sock)
            async with asyncio.timeout(20):
                while sum(map(_closed_by_peer, flood)) < len(flood) - MAX_SEAT_CONNECTIONS:
                    await asyncio.sleep(0.02)
            held_by_referee = _open_descriptors() - before - len(flood)
            assert len(flood) > 200 and held_by_referee <= MAX_SEAT_CONNECTIONS + 4, (len(flood), held_by_referee)
            bots = polite(host, sockets, range(1, 4))  # the flood of seat 0 is no concern of theirs
            final = await result
            assert final.faults[1:] == [{}, {}, {}] and final.faults[0] == {"timeout": 1}  # seat 0 never said Hello
            await asyncio.gather(*bots)
            for sock in flood:
                sock.close()

    run(scenario())


def test_run_local_match_raises_the_soft_open_files_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard <= 256:
        pytest.skip(f"the hard limit {hard} leaves nothing to raise")
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    try:
        bots = [resolve_bot("random")] * 3
        result, _ = run(run_local_match(bots, preset("classic", players=3, limit=2), 1, CLOCK, seat_kind="inprocess", trusted=True))
        assert result.status == "finished"
        assert resource.getrlimit(resource.RLIMIT_NOFILE) == (hard, hard)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_the_polignac_command_raises_the_soft_open_files_limit() -> None:
    program = (
        "import resource, sys\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, hard), hard))\n"
        "from polignac_arena.cli import main\n"
        "sys.argv = ['polignac', '--help']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(resource.getrlimit(resource.RLIMIT_NOFILE) == (hard, hard) or hard == resource.RLIM_INFINITY)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip().splitlines()[-1] == "True", done.stdout + done.stderr


RACE = """
import asyncio, sys, tempfile
from pathlib import Path
from polignac import preset
from polignac_arena.referee import RefereeServer, TimeControl

async def once(steps):
    with tempfile.TemporaryDirectory() as tmp:
        sockets = []
        for seat in range(4):
            (Path(tmp) / str(seat)).mkdir()
            sockets.append(Path(tmp) / str(seat) / "referee.sock")
        server = RefereeServer(None)
        await server.start()
        clock = TimeControl(1000, 1000, 5000)
        creating = asyncio.ensure_future(server.create_seated_match(preset("classic"), 1, clock, sockets=sockets))
        for _ in range(steps):
            await asyncio.sleep(0)
        await server.stop(0.5)
        try:
            await creating
        except RuntimeError:
            pass  # the referee was shutting down before every socket listened
        assert not any(path.exists() for path in sockets), sockets

async def main():
    for attempt in range(120):
        await once(attempt % 12)

asyncio.run(main())
"""


def test_a_shutdown_while_the_seat_sockets_open_stops_them_cleanly() -> None:
    # In a process of its own: stopping a gRPC server while it starts crashes the interpreter.
    done = subprocess.run([sys.executable, "-c", RACE], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
