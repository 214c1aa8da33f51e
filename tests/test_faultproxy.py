"""The fault-injecting proxy the network tests and benchmarks/league_chaos.py use: it does what it says, and nothing else."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import pytest

from tests.faultproxy import FaultProxy, fault_proxy
from tests.referee.helpers import run


class Echo:
    """A loopback TCP server that echoes, and can close every connection it holds."""

    def __init__(self) -> None:
        self.writers: list[asyncio.StreamWriter] = []
        self.server: asyncio.Server | None = None
        self.ended = asyncio.Event()  # set when a connection's client side ended (EOF or reset)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except ConnectionError:
            pass
        self.ended.set()

    def close_all(self) -> None:
        for writer in self.writers:
            writer.close()


@contextlib.asynccontextmanager
async def echo_and_proxy() -> AsyncIterator[tuple[Echo, FaultProxy]]:
    echo = Echo()
    echo.server = await asyncio.start_server(echo.serve, "127.0.0.1", 0)
    port = echo.server.sockets[0].getsockname()[1]
    try:
        async with fault_proxy(f"127.0.0.1:{port}") as proxy:
            yield echo, proxy
    finally:
        echo.close_all()
        echo.server.close()


async def connect(proxy: FaultProxy) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, port = proxy.address.rsplit(":", 1)
    return await asyncio.open_connection(host, int(port))


def test_only_loopback_targets_are_carried() -> None:
    for target in ("10.0.0.1:80", "league.example.org:443", "127.0.0.1:http"):
        with pytest.raises(ValueError, match="loopback"):
            FaultProxy(target)
    FaultProxy("[::1]:5")
    FaultProxy("localhost:5")


def test_a_freeze_carries_nothing_either_way_and_the_thaw_delivers_it_in_order() -> None:
    async def scenario() -> None:
        async with echo_and_proxy() as (_, proxy):
            reader, writer = await connect(proxy)
            writer.write(b"before ")
            await writer.drain()
            assert await reader.readexactly(7) == b"before "
            link = await proxy.next_link(0)
            link.freeze()
            writer.write(b"during ")
            writer.write(b"the freeze")
            await writer.drain()
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(reader.readexactly(1), 0.3)  # nothing comes back: nothing went through
            assert link.carried["client"] == 7
            link.thaw()
            assert await reader.readexactly(17) == b"during the freeze"
            writer.close()

    run(scenario())


def test_a_close_during_a_freeze_is_noted_and_passed_on_at_the_thaw() -> None:
    async def scenario() -> None:
        async with echo_and_proxy() as (echo, proxy):
            reader, writer = await connect(proxy)
            link = await proxy.next_link(0)
            writer.write(b"x")
            assert await reader.readexactly(1) == b"x"
            proxy.freeze()
            echo.close_all()  # the server gives up on the connection during the freeze
            while "server" not in link.closed_at:
                await asyncio.sleep(0.01)  # the proxy offers no event for it; bounded by the test's cap
            detection = link.detection_s("server")
            assert detection is not None and detection >= 0
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(reader.read(1), 0.3)  # the client hears nothing of it yet
            proxy.thaw()
            assert await reader.read(1) == b""  # now the close arrives
            writer.close()

    run(scenario())


def test_new_connections_on_a_frozen_path_are_frozen_too() -> None:
    async def scenario() -> None:
        async with echo_and_proxy() as (_, proxy):
            proxy.freeze()
            reader, writer = await connect(proxy)
            writer.write(b"hello")
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(reader.readexactly(1), 0.3)
            proxy.thaw()
            assert await reader.readexactly(5) == b"hello"
            writer.close()

    run(scenario())


def test_a_reset_resets_both_ends() -> None:
    async def scenario() -> None:
        async with echo_and_proxy() as (echo, proxy):
            reader, writer = await connect(proxy)
            writer.write(b"x")
            assert await reader.readexactly(1) == b"x"
            assert proxy.reset() == 1
            with pytest.raises(ConnectionResetError):
                await reader.read(1)
            await asyncio.wait_for(echo.ended.wait(), 10)
            await asyncio.wait_for(proxy.links[0].done.wait(), 10)
            writer.close()

    run(scenario())


def test_a_reset_of_one_end_leaves_the_other_holding_a_dead_connection() -> None:
    async def scenario() -> None:
        async with echo_and_proxy() as (echo, proxy):
            reader, writer = await connect(proxy)
            writer.write(b"x")
            assert await reader.readexactly(1) == b"x"
            link = proxy.links[0]
            link.reset("client")
            with pytest.raises(ConnectionResetError):
                await reader.read(1)
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(echo.ended.wait(), 0.3)  # the server's end knows nothing
            assert not link.done.is_set()
            echo.close_all()  # until it gives up on its own
            await asyncio.wait_for(link.done.wait(), 10)
            assert link.detection_s("server") is not None
            writer.close()

    run(scenario())


def test_latency_and_jitter_delay_each_way_and_keep_the_order() -> None:
    async def scenario() -> None:
        async with echo_and_proxy() as (_, proxy):
            proxy.set_latency(0.2, 0.05)
            reader, writer = await connect(proxy)
            started = time.monotonic()
            for number in range(20):
                writer.write(f"{number:02d}".encode())
                await writer.drain()
            echoed = await reader.readexactly(40)
            assert echoed == b"".join(f"{n:02d}".encode() for n in range(20))
            assert time.monotonic() - started >= 2 * 0.15, "each way waited at least latency - jitter"
            with pytest.raises(ValueError):
                proxy.set_latency(-1)
            writer.close()

    run(scenario())


def test_a_bandwidth_cap_slows_a_transfer() -> None:
    async def scenario() -> None:
        async with echo_and_proxy() as (_, proxy):
            proxy.set_bandwidth(32 * 1024)
            reader, writer = await connect(proxy)
            started = time.monotonic()
            writer.write(b"x" * 64 * 1024)
            await writer.drain()
            await reader.readexactly(64 * 1024)
            assert time.monotonic() - started >= 1.0, "64 KiB at 32 KiB/s takes about 2 s (a margin for chunking)"
            with pytest.raises(ValueError):
                proxy.set_bandwidth(0)
            writer.close()

    run(scenario())


def test_faults_on_one_connection_leave_the_others_alone() -> None:
    async def scenario() -> None:
        async with echo_and_proxy() as (_, proxy):
            slow_reader, slow_writer = await connect(proxy)
            slow = await proxy.next_link(0)
            fast_reader, fast_writer = await connect(proxy)
            await proxy.next_link(1)
            slow.set_latency(0.5)
            slow.set_bandwidth(1024)
            slow.freeze()
            slow_writer.write(b"x" * 2048)
            fast_writer.write(b"fast")
            assert await asyncio.wait_for(fast_reader.readexactly(4), 10) == b"fast", "the other link carries on at once"
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(slow_reader.readexactly(1), 0.3)  # the frozen one carries nothing
            started = time.monotonic()
            slow.thaw()
            assert await slow_reader.readexactly(2048) == b"x" * 2048
            assert time.monotonic() - started >= 1.0, "2 KiB each way at 1 KiB/s, after 0.5 s each way"
            assert proxy.links[1].latency_s == 0 and proxy.links[1].bytes_per_s is None
            with pytest.raises(ValueError):
                slow.set_bandwidth(-1)
            with pytest.raises(ValueError):
                slow.set_latency(0, -1)
            slow_writer.close()
            fast_writer.close()

    run(scenario())
