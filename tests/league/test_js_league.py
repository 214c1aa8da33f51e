"""The JavaScript sample in league mode: it joins the lobby and plays the match it is assigned, reattaching once."""

from __future__ import annotations

import asyncio
import os

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac_arena.conformance.proxy import cuttable_proxy
from polignac_arena.submission import Submission
from tests.league.lobby_helpers import referee_with_lobby
from tests.league.test_remote_sdk import assigned_match, first_online
from tests.referee.helpers import run


def test_the_javascript_sample_plays_an_assigned_match(js_bot: Submission) -> None:
    async def scenario() -> None:
        async with referee_with_lobby() as (server, lobby), cuttable_proxy(server.address) as proxy:
            env = {**os.environ, "POLIGNAC_LEAGUE": server.address, "POLIGNAC_LEAGUE_TOKEN": "alice-token"}
            env.pop("POLIGNAC_ADDRESS", None)
            process = await asyncio.create_subprocess_exec(
                "node", "bot.js", cwd=js_bot.path, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
            )
            try:
                label = await first_online(lobby.bots)
                assert label == f"{js_bot.name}@{js_bot.version}"
                requests = 0

                def cut_at_the_fourth_request(seat: int, message: pb.PlayResponse) -> None:
                    nonlocal requests
                    if seat == 0 and message.WhichOneof("payload") == "decision_request":
                        requests += 1
                        if requests == 4:
                            asyncio.get_running_loop().call_soon(proxy.cut)

                _, result = await assigned_match(server, lobby.bots, label, proxy.address, 31, cut_at_the_fourth_request)
                assert proxy.cuts == 1
                assert result.status == "finished"
                assert result.names[0] == js_bot.name
                assert result.faults[0] == {}
                assert [line["type"] for line in result.record if line["type"] in ("away", "back")] == ["away", "back"]
            finally:
                process.terminate()
                _, stderr = await process.communicate()
            assert f"online as {label}" in stderr.decode()

    run(scenario())
