"""``polignac league connect``: a bot folder plays its assigned matches through a local relay."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.bot.league import ChannelSecurity
from polignac_arena.cli import app
from polignac_arena.league.relay import connect_folder
from tests.league.lobby_helpers import referee_with_lobby
from tests.league.tcp_proxy import cuttable_proxy
from tests.league.test_remote_sdk import assigned_match, first_online
from tests.referee.helpers import run

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bots"


def test_a_stdio_bot_plays_through_the_relay_and_reattaches() -> None:
    async def scenario() -> None:
        async with referee_with_lobby() as (server, lobby), cuttable_proxy(server.address) as proxy:
            connected = asyncio.ensure_future(connect_folder(SAMPLES / "python_stdio", server.address, "alice-token", ChannelSecurity()))
            label = await first_online(lobby.bots)
            assert label.startswith("python-stdio@")
            requests = 0

            def cut_at_the_fourth_request(seat: int, message: pb.PlayResponse) -> None:
                nonlocal requests
                if seat == 0 and message.WhichOneof("payload") == "decision_request":
                    requests += 1
                    if requests == 4:
                        asyncio.get_running_loop().call_soon(proxy.cut)

            _, result = await assigned_match(server, lobby.bots, label, proxy.address, 21, cut_at_the_fourth_request)
            assert proxy.cuts == 1
            assert result.status == "finished"
            assert result.faults[0] == {}
            assert [line["type"] for line in result.record if line["type"] in ("away", "back")] == ["away", "back"]
            connected.cancel()
            await asyncio.gather(connected, return_exceptions=True)

    run(scenario())


def test_the_command_connects_a_bot_folder(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("alice-token\n")

    async def scenario() -> None:
        async with referee_with_lobby() as (server, lobby):
            env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "sdk"), str(ROOT / "server")]), "XDG_CONFIG_HOME": str(tmp_path)}
            for name in ("POLIGNAC_TOKEN", "POLIGNAC_LEAGUE_TOKEN"):
                env.pop(name, None)
            command = [sys.executable, "-m", "polignac_arena.cli", "league", "connect", str(SAMPLES / "random"), "--server", server.address]
            process = await asyncio.create_subprocess_exec(
                *command, "--token-file", str(token_file), env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )
            try:
                label = await first_online(lobby.bots)
                assert label == "random@1.1"
                _, result = await assigned_match(server, lobby.bots, label, "", 22)
                assert result.status == "finished" and result.faults[0] == {}
                assert result.names[0] == "random"
            finally:
                process.send_signal(signal.SIGINT)
                _, stderr = await process.communicate()
            assert process.returncode == 0, stderr.decode()
            text = stderr.decode()
            assert "online as random@1.1" in text and "offline" in text
            assert "alice-token" not in text

    run(scenario(), timeout=240)  # a subprocess that imports the arena, plays a match and stops: slow on a loaded machine


def test_the_command_needs_a_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POLIGNAC_LEAGUE_TOKEN", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    result = CliRunner().invoke(app, ["league", "connect", str(SAMPLES / "random"), "--server", "127.0.0.1:1"])
    assert result.exit_code == 2
    assert "no API token" in result.output and "--token-file" in result.output


def test_the_command_needs_a_bot_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLIGNAC_LEAGUE_TOKEN", "t")
    result = CliRunner().invoke(app, ["league", "connect", str(tmp_path), "--server", "127.0.0.1:1"])
    assert result.exit_code == 2 and "bot.toml" in result.output
