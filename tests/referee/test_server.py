"""The referee server: health, reflection, limits, port collisions, graceful shutdown."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from polignac import preset
from polignac_arena.referee import MatchHost, RefereeServer, TimeControl
from polignac_arena.referee.server import SERVICE_NAME, server_options
from tests.referee.helpers import RawSeat, referee, run

ROOT = Path(__file__).resolve().parents[2]


def test_health_says_serving_then_not_serving_on_stop() -> None:
    async def scenario() -> None:
        server = RefereeServer("127.0.0.1:0", operator_address="127.0.0.1:0")
        await server.start()
        assert server.operator_address and server.operator_address != server.address
        async with grpc.aio.insecure_channel(server.operator_address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            for name in ("", SERVICE_NAME):
                reply = await stub.Check(health_pb2.HealthCheckRequest(service=name))
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
            host = server.create_match(preset("classic"), 1, TimeControl(1000, 1000, 5000))
            running = asyncio.ensure_future(server.run_match(host))
            watch = stub.Watch(health_pb2.HealthCheckRequest(service=SERVICE_NAME))
            assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
            stopping = asyncio.ensure_future(server.stop(grace=1))
            assert (await watch.read()).status == health_pb2.HealthCheckResponse.NOT_SERVING
            result = await running
            assert result.status == "aborted" and result.places is None
            await stopping

    run(scenario())


def test_reflection_on_the_operator_address_lists_the_services() -> None:
    async def scenario() -> list[str]:
        server = RefereeServer("127.0.0.1:0", operator_address="127.0.0.1:0")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(server.operator_address) as channel:
                stub = reflection_pb2_grpc.ServerReflectionStub(channel)
                call = stub.ServerReflectionInfo()
                await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
                reply = await call.read()
                await call.done_writing()
                return [s.name for s in reply.list_services_response.service]
        finally:
            await server.stop(grace=0.5)

    names = run(scenario())
    assert "polignac.v1.RefereeService" in names and "grpc.health.v1.Health" in names


@pytest.mark.parametrize("transport", ["tcp", "unix"])
def test_the_address_seats_connect_to_serves_neither_health_nor_reflection(transport: str) -> None:
    async def scenario() -> None:
        async with referee(transport) as server, grpc.aio.insecure_channel(server.address) as channel:
            watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""))
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await watch.read()
            assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED
            call = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo()
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
                await call.read()
            assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED

    run(scenario())


def test_a_port_in_use_fails_loudly() -> None:
    async def scenario() -> None:
        async with referee() as first:
            second = RefereeServer(first.address)
            with pytest.raises(OSError, match="cannot listen on"):
                await second.start()

    run(scenario())


def test_options_limit_messages_and_streams_and_do_not_share_ports() -> None:
    options = dict(server_options(100))
    assert options["grpc.so_reuseport"] == 0
    assert options["grpc.max_receive_message_length"] <= 64 * 1024
    assert options["grpc.max_concurrent_streams"] == 100
    assert options["grpc.keepalive_time_ms"] > 0


def test_tokens_are_refused_once_the_match_is_over() -> None:
    async def scenario() -> None:
        from polignac.bot import run_async
        from polignac.bots import builtin_bot

        async with referee() as server:
            host = server.create_match(preset("classic", players=3), 3, TimeControl(1000, 1000, 5000))
            bots = [asyncio.ensure_future(run_async(builtin_bot("random", s), server.address, host.tokens[s])) for s in range(3)]
            assert (await server.run_match(host)).status == "finished"
            await asyncio.gather(*bots)
            # A late stream hears that its match is over, not that its token is unknown.
            late = RawSeat(server.address, host.tokens[0])
            await late.open()
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await late.hello()  # the referee may refuse before this is even written
                await late.read()
            assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert caught.value.details() == f"match {host.match_id!r} is over (finished)"
            await late.close()
            # A token the referee never gave is unknown.
            stranger = RawSeat(server.address, "x" + host.tokens[0][1:])
            await stranger.open()
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stranger.read()
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED and "unknown seat token" in (caught.value.details() or "")
            await stranger.close()

    run(scenario())


SLOW_BOT = """
import time
from polignac.bot import Bot, run

class Slow(Bot):
    name = "slow"

    def play(self, view):
        time.sleep(0.05)
        return view.legal[0]

run(Slow())
"""


def _seated(pid: int) -> bool:
    """Every seat of the match folder made by ``pid`` has said Hello: a tarpit holds each seat's socket path.

    A tarpit is bound under a name of its own before it takes the path, and the kernel lists
    unix sockets by the name they were bound to.
    """
    for folder in Path(tempfile.gettempdir()).glob("polignac-*"):
        try:
            if (folder / ".owner").read_text().split(" ")[0] != str(pid):
                continue
        except OSError:
            continue
        listed = Path("/proc/net/unix").read_text()
        return sum(f"{folder}/seat{seat}-socket/.referee.sock.tarpit" in listed for seat in range(4)) == 4
    return False


def test_sigterm_aborts_the_running_match_and_records_it_as_aborted(tmp_path: Path) -> None:
    bot = tmp_path / "slow.py"
    bot.write_text(SLOW_BOT)
    record = tmp_path / "match.jsonl"
    command = [sys.executable, "-m", "polignac_arena.cli", "match", "--seed", "3", "--replay", str(record), "-q", "--trusted"]
    command += ["--bot", str(bot)] * 4
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not _seated(process.pid):  # the match is under way once every seat has joined
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the bots did not join"
            time.sleep(0.02)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 1, (out, err)
    assert "did not finish: aborted" in err
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "result"
    assert lines[-1]["status"] == "aborted" and lines[-1]["places"] is None
    assert [seat["name"] for seat in lines[0]["seats"]] == ["slow"] * 4  # every bot had joined
    assert not list(tmp_path.glob(".tmp-*")), "no half-written record is left behind"
    # The bots were stopped with the referee.
    time.sleep(0.5)
    leftover = subprocess.run(["pgrep", "-f", str(bot)], capture_output=True, text=True, check=False)
    assert leftover.stdout.strip() == ""


def test_the_tokens_of_ended_matches_are_remembered_up_to_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    from polignac_arena.referee import service as service_module
    from polignac_arena.referee.journal import token_digest
    from polignac_arena.referee.service import RefereeService

    monkeypatch.setattr(service_module, "MAX_ENDED_TOKENS", 5)
    service = RefereeService()
    hosts = [MatchHost(preset("classic", players=3), seed) for seed in range(3)]
    for host in hosts:
        service.register(host)
        service.unregister(host)
    remembered = service._ended
    assert len(remembered) == 5, "no more than the bound, however many matches end"
    newest = [token_digest(token) for token in hosts[-1].tokens]
    assert all(digest in remembered for digest in newest), "the oldest are forgotten first"
    assert token_digest(hosts[0].tokens[0]) not in remembered
