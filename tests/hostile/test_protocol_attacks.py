"""An outsider's attacks on the referee's protocol, gRPC and stdio (docs/protocol.md, docs/stdio-protocol.md).

Each attack must end in the outcome the docs promise: a fault of the documented kind or a
documented status code, the match going on for the other seats, and MatchEnded for every
seat whose stream still stands.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from polignac import preset
from polignac.bot import run_async
from polignac.bots import builtin_bot
from polignac_arena.referee import TimeControl
from polignac_arena.seats.stdio_bridge import parse_answer
from tests.referee.helpers import referee, run
from tests.test_stdio import play, stdio_bot

ROOT = Path(__file__).resolve().parents[2]

# A stdio bot that answers its first card request with a card holding a lone surrogate
# (valid JSON, text no UTF-8 encoder takes), then plays the first legal option.
SURROGATE = r"""
    import json, sys

    tried = False
    for line in sys.stdin:
        m = json.loads(line)
        if m["type"] == "match_ended":
            print("ended", m["places"], file=sys.stderr, flush=True)
        if m["type"] != "decision_request":
            continue
        if m["kind"] == "card" and not tried:
            tried = True
            sys.stdout.write('{"request_id": %d, "card": "7\\ud800"}\n' % m["request_id"])
            sys.stdout.flush()
            continue
        answer = {"request_id": m["request_id"]}
        answer.update({"card": m["legal_cards"][0]} if m["kind"] == "card" else {"contract": "pass"})
        print(json.dumps(answer), flush=True)
"""


def test_a_lone_surrogate_in_a_stdio_card_is_malformed_not_a_disconnect(tmp_path: Path) -> None:
    bot = stdio_bot(tmp_path / "surrogate", "surrogate", SURROGATE)
    result, stderrs = play([bot, "heuristic", "cautious", "random"], rules=preset("classic", limit=3))
    assert result.faults[0] == {"malformed": 1}, (result.faults, stderrs[0])
    assert result.faults[1:] == [{}, {}, {}]
    assert result.status == "finished" and "ended" in stderrs[0]


def test_parse_answer_refuses_text_that_is_not_unicode() -> None:
    for line in (rb'{"request_id": 5, "card": "\udc80"}', rb'{"request_id": 5, "contract": "\ud800"}'):
        decision, tag, reason = parse_answer(line)
        assert decision is None and tag and reason, (line, tag, reason)


def test_a_client_written_from_the_docs_alone_plays_a_whole_match() -> None:
    async def scenario() -> None:
        async with referee() as server:
            host = server.create_match(preset("classic", limit=3), 5, TimeControl(2000, 5000, 10_000))
            others = [asyncio.ensure_future(run_async(builtin_bot("heuristic"), server.address, host.tokens[s])) for s in (1, 2, 3)]
            env = dict(os.environ, POLIGNAC_ADDRESS=server.address, POLIGNAC_TOKEN=host.tokens[0])
            client = await asyncio.create_subprocess_exec(
                sys.executable, str(ROOT / "tests/hostile/bots/doc_client.py"), env=env, stderr=asyncio.subprocess.PIPE
            )
            result = await server.run_match(host)
            _, stderr = await client.communicate()
            await asyncio.gather(*others)
            lines = stderr.decode().splitlines()
            assert client.returncode == 0, lines
            assert lines[0] == "payload welcome events 0" and lines[-1].startswith("payload match_ended")
            assert result.status == "finished" and result.faults == [{}, {}, {}, {}]

    run(scenario())
