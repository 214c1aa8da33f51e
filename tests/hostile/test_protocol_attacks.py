"""An outsider's attacks on the referee's protocol, gRPC and stdio (docs/protocol.md, docs/stdio-protocol.md).

Each attack must end in the outcome the docs promise: a fault of the documented kind or a
documented status code, the match going on for the other seats, and MatchEnded for every
seat whose stream still stands.
"""

from __future__ import annotations

import asyncio
import os
import struct
import sys
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest

from polignac import preset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.bot import run_async
from polignac.bots import builtin_bot
from polignac_arena.referee import RefereeServer, TimeControl
from polignac_arena.seats.stdio_bridge import parse_answer
from tests.referee.helpers import RawSeat, match_with_raw_seat, polite_match, referee, run
from tests.referee.test_faults import first_card_request
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


def protocol_doc() -> str:
    return (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")


async def contract_request(raw: RawSeat) -> pb.DecisionRequest:
    """Say Hello and read up to the first request (an auction one in the classic game)."""
    await raw.open()
    await raw.hello()
    message = await raw.next_payload("decision_request")
    assert message is not None
    return message.decision_request


def test_an_unknown_contract_value_is_malformed_and_unknown_fields_are_ignored() -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server)
            request = await contract_request(raw)
            await raw.decide(request.request_id, contract=99)  # type: ignore[arg-type]  # no such contract, on purpose
            notice = (await raw.expect("fault_notice")).fault_notice
            assert notice.fault == pb.FAULT_MALFORMED and notice.request_id == request.request_id and notice.fallback == "pass"
            request = (await raw.expect("decision_request")).decision_request
            answer = pb.PlayRequest(decision=pb.Decision(request_id=request.request_id, card=request.legal_cards[0]))
            await raw.send(answer.SerializeToString() + b"\xf8\x06\x01")  # field 111 = 1: unknown to the referee
            ended = await raw.play_politely(timeout=30)
            assert ended is not None and ended.match_ended.status == "finished"
            final = await result
            assert final.faults == [{"malformed": 1}, {}, {}, {}]
            await asyncio.gather(*polite)
        doc = protocol_doc()
        assert "does not know (a later version's) are ignored" in doc and "`contract` of 99" in doc

    run(scenario())


def test_an_oversize_message_ends_the_stream_with_the_documented_status() -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server)
            request = await first_card_request(raw)
            await raw.send(pb.PlayRequest(decision=pb.Decision(request_id=request.request_id, card="x" * 20_000)))
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                while await raw.read() is not None:
                    pass
            assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            final = await result
            assert final.status == "finished" and final.faults == [{"disconnected": 1}, {}, {}, {}]
            assert final.places is not None and final.places[0] == 4
            await asyncio.gather(*polite)
        assert "ends the stream with `RESOURCE_EXHAUSTED`" in protocol_doc()

    run(scenario())


class NarrowWindowSeat(RawSeat):
    """A seat whose client grants the referee a one-byte HTTP/2 window: it reads nothing ahead."""

    async def open(self, metadata: tuple[tuple[str, str], ...] | None = None) -> None:
        self.channel = grpc.aio.insecure_channel(self.address, options=[("grpc.http2.lookahead_bytes", 1), ("grpc.http2.bdp_probe", 0)])
        play = self.channel.stream_stream(
            "/polignac.v1.RefereeService/Play",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=pb.PlayResponse.FromString,
        )
        self.call = play(metadata=(("authorization", f"Bearer {self.token}"),))


def test_a_bot_that_never_reads_is_dropped_and_the_match_goes_on() -> None:
    async def scenario() -> None:
        server = RefereeServer("127.0.0.1:0", write_timeout_s=1.0)
        await server.start()
        try:
            host, _raw, result, polite = await match_with_raw_seat(server, rules=preset("classic", limit=3))
            raw = NarrowWindowSeat(server.address, host.tokens[0])
            await raw.open()
            await raw.hello()  # and never reads
            final = await result
            assert final.status == "finished" and final.faults == [{"disconnected": 1}, {}, {}, {}]
            await asyncio.gather(*polite)
            await raw.close()
        finally:
            await server.stop(grace=0.5)
        assert "you stop reading" in protocol_doc()

    run(scenario())


def _frame(kind: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, 0]) + struct.pack(">I", 0) + payload


def test_a_ping_flood_gets_goaway_too_many_pings_and_the_referee_serves_on() -> None:
    async def scenario() -> None:
        async with referee() as server:
            hostname, port = server.address.rsplit(":", 1)
            reader, writer = await asyncio.open_connection(hostname, int(port))
            pings = b"".join(_frame(6, struct.pack(">Q", n)) for n in range(10))
            writer.write(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + _frame(4) + pings)  # preface, SETTINGS, PINGs
            await writer.drain()
            received = await reader.read()  # until the referee closes the connection
            writer.close()
            assert b"too_many_pings" in received
            result, _ = await polite_match(server, rules=preset("classic", limit=3))
            assert result.status == "finished"

    run(scenario())


def test_the_seat_is_not_free_again_after_every_refusal() -> None:
    doc = protocol_doc()
    assert "After `ALREADY_EXISTS` the seat\nis taken" in doc and "After any of these but `ALREADY_EXISTS`" not in doc


@pytest.mark.parametrize(
    "encode",
    [
        lambda text: text.encode("utf-16-le"),
        lambda text: text.encode("utf-32"),
        lambda text: b"\xef\xbb\xbf" + text.encode(),  # a UTF-8 byte-order mark
    ],
    ids=["utf-16", "utf-32", "bom"],
)
def test_a_stdio_answer_that_is_not_plain_utf8_json_is_malformed(encode: Any) -> None:
    decision, tag, reason = parse_answer(encode('{"request_id": 5, "card": "7D"}'))
    assert decision is None and tag in ("<not UTF-8>", "<not JSON>"), (tag, reason)


# A stdio bot that writes its first answer in UTF-16, then plays the first legal option in UTF-8.
UTF16 = """
    import json, sys

    first = True
    for line in sys.stdin:
        m = json.loads(line)
        if m["type"] != "decision_request":
            continue
        answer = {"request_id": m["request_id"]}
        answer.update({"card": m["legal_cards"][0]} if m["kind"] == "card" else {"contract": "pass"})
        sys.stdout.buffer.write(json.dumps(answer).encode("utf-16-le" if first else "utf-8") + b"\\n")
        sys.stdout.flush()
        first = False
"""


def test_a_utf16_line_from_a_stdio_bot_is_malformed_as_documented(tmp_path: Path) -> None:
    bot = stdio_bot(tmp_path / "utf16", "utf16", UTF16)
    result, stderrs = play([bot, "heuristic", "cautious", "random"], rules=preset("classic", limit=3))
    assert result.faults[0] == {"malformed": 1}, (result.faults, stderrs[0])
    assert result.status == "finished" and result.faults[1:] == [{}, {}, {}]
    assert "not UTF-8 (UTF-16" in (ROOT / "docs" / "stdio-protocol.md").read_text(encoding="utf-8")


def test_huge_call_metadata_is_resource_exhausted_and_the_seat_stays_free() -> None:
    async def scenario() -> None:
        async with referee() as server:
            host, _raw, result, polite = await match_with_raw_seat(server, rules=preset("classic", limit=3))
            huge = RawSeat(server.address, host.tokens[0])
            await huge.open(metadata=(("authorization", f"Bearer {host.tokens[0]}"), ("x-padding", "x" * 20_000)))
            await huge.hello()
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await huge.read()
            assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            await huge.close()
            retry = RawSeat(server.address, host.tokens[0])
            await retry.open()
            await retry.hello()
            ended = await retry.play_politely(timeout=30)
            assert ended is not None and ended.match_ended.status == "finished"
            assert (await result).faults == [{}, {}, {}, {}]
            await asyncio.gather(*polite)
        assert "call metadata over gRPC's limits" in protocol_doc()

    run(scenario())


def test_an_answer_that_came_after_its_deadline_is_a_timeout_even_when_the_referee_was_busy(monkeypatch: pytest.MonkeyPatch) -> None:
    async def scenario() -> None:
        async with referee() as server:
            clock = TimeControl(move_ms=300, bank_ms=0, startup_ms=5000)
            host, raw, result, polite = await match_with_raw_seat(server, time_control=clock)
            gate, answer_posted = asyncio.Event(), asyncio.Event()
            handle, post = host._handle_item, host.post_message

            async def held(item: Any) -> None:
                # Stands for slow work of the referee (a write stuck for seconds on another seat).
                if item[0] == 0 and item[1] == "message" and item[2][0].WhichOneof("message") is None:
                    await gate.wait()
                await handle(item)

            def noting(seat: int, conn: Any, message: pb.PlayRequest) -> None:
                post(seat, conn, message)
                if seat == 0 and message.WhichOneof("message") == "decision":
                    answer_posted.set()

            monkeypatch.setattr(host, "_handle_item", held)
            monkeypatch.setattr(host, "post_message", noting)
            await raw.answer_first(await first_card_request(raw))  # the first request has the start-up allowance
            request = (await raw.expect("decision_request")).decision_request
            past_deadline = asyncio.Event()  # the deadline is time itself: a timer says it has passed
            asyncio.get_running_loop().call_later(2 * clock.move_ms / 1000, past_deadline.set)
            await raw.send(pb.PlayRequest())  # the referee is held on this while the clock runs
            await past_deadline.wait()
            await raw.answer_first(request)
            await answer_posted.wait()
            gate.set()
            notice = await raw.expect("fault_notice")
            while notice.fault_notice.fault == pb.FAULT_MALFORMED:
                notice = await raw.expect("fault_notice")
            assert notice.fault_notice.fault == pb.FAULT_TIMEOUT and notice.fault_notice.request_id == request.request_id
            ended = await raw.play_politely(timeout=30)
            assert ended is not None
            final = await result
            assert final.faults[0] == {"malformed": 1, "timeout": 1}
            await asyncio.gather(*polite)

    run(scenario())


@pytest.mark.parametrize(("name", "version"), [("tab\tname", "1"), ("ok", "1\n"), ("ok", "v" * 65), ("", "1")])
def test_a_hello_with_a_bad_name_or_version_is_invalid_argument_as_documented(name: str, version: str) -> None:
    async def scenario() -> None:
        async with referee() as server:
            host, _raw, result, polite = await match_with_raw_seat(server, rules=preset("classic", limit=3))
            bad = RawSeat(server.address, host.tokens[0])
            await bad.open()
            await bad.send(pb.PlayRequest(hello=pb.Hello(protocol_version="1", bot_name=name, bot_version=version)))
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await bad.read()
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            retry = RawSeat(server.address, host.tokens[0])
            await retry.open()
            await retry.hello()
            assert await retry.play_politely(timeout=30) is not None
            await result
            await asyncio.gather(*polite)
        assert "a `bot_version` that is not 0 to 64 printable characters" in protocol_doc()

    run(scenario())
