"""What a client written from the docs alone sees at the edges of the protocol (docs/protocol.md).

The start-up allowance, the Welcome first, undecodable messages, half-close, forfeited
seats, late and stale answers, strict card text, request ids JSON can hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest

from polignac import preset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.bot import run_async
from polignac.bots import builtin_bot
from polignac_arena.referee import MatchHost, TimeControl, texts
from polignac_arena.referee.listener import MAX_SEAT_CONNECTIONS
from polignac_arena.referee.options import (
    KEEPALIVE_TIME_MS,
    KEEPALIVE_TIMEOUT_MS,
    MAX_PING_STRIKES,
    MAX_RECEIVE_BYTES,
    MIN_PING_INTERVAL_MS,
    SEAT_KEEPALIVE_TIME_MS,
    SEAT_KEEPALIVE_TIMEOUT_MS,
)
from polignac_arena.referee.seat_stream import SeatConnection
from polignac_arena.referee.service import MAX_ENDED_TOKENS
from polignac_arena.replay import replay_lines
from tests.referee.helpers import RawSeat, match_with_raw_seat, polite_match, referee, run
from tests.referee.test_faults import first_card_request, still_serving

ROOT = Path(__file__).resolve().parents[2]
JSON_SAFE = (1 << 53) - 1


async def until(condition: Callable[[], bool], timeout: float = 10) -> None:
    """Wait for ``condition()`` to hold, checking at every turn of the event loop (no fixed sleep)."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.005)


# -- 14: the start-up allowance -------------------------------------------------------------------


def test_the_startup_allowance_covers_the_first_request_only_even_when_it_times_out() -> None:
    async def scenario() -> None:
        async with referee() as server:
            clock = TimeControl(move_ms=300, bank_ms=200, startup_ms=1500)
            _host, raw, result, polite = await match_with_raw_seat(server, time_control=clock)
            await raw.open()
            await raw.hello()
            first = (await raw.expect("decision_request")).decision_request  # seat 0 speaks first
            assert first.move_ms == 1500
            notice = (await raw.expect("fault_notice")).fault_notice  # no answer: a timeout
            assert notice.fault == pb.FAULT_TIMEOUT and notice.request_id == first.request_id
            second = (await raw.expect("decision_request")).decision_request
            assert second.move_ms == clock.move_ms and second.bank_ms == 0  # not the start-up allowance again
            await raw.answer_first(second)
            await raw.play_politely()
            assert (await result).faults[0] == {"timeout": 1}
            await asyncio.gather(*polite)

    run(scenario())


# -- 15: the Welcome first, no event lost -------------------------------------------------------


def test_a_second_hello_before_the_welcome_is_judged_after_it_and_no_event_is_lost() -> None:
    async def scenario() -> None:
        async with referee() as server:
            rules = preset("classic")
            host = server.create_match(rules, 3, TimeControl(1000, 500, 5000))
            result = asyncio.ensure_future(server.run_match(host))
            raw = RawSeat(server.address, host.tokens[0])
            await raw.open()
            await raw.hello()
            await raw.hello(name="again")  # before the Welcome: the other seats have not joined
            await until(lambda: host.conns[0] is not None)
            polite = [asyncio.ensure_future(run_async(builtin_bot("heuristic"), server.address, host.tokens[s])) for s in (1, 2, 3)]
            first = await raw.read()
            assert first is not None and first.WhichOneof("payload") == "welcome" and not first.events
            ended = await raw.play_politely()
            assert ended is not None and ended.match_ended.status == "finished"
            [notice] = raw.faults()
            assert notice.fault == pb.FAULT_MALFORMED and notice.request_id == 0 and "hello" in notice.detail
            events = [e for m in raw.received for e in m.events]
            deals = [e.hand_started.hand_number for e in events if e.WhichOneof("event") == "hand_started"]
            ends = [e.hand_ended.hand_number for e in events if e.WhichOneof("event") == "hand_ended"]
            assert deals == ends == list(range(1, len(deals) + 1))  # every hand's deal, once each
            assert (await result).faults[0] == {"malformed": 1}
            await asyncio.gather(*polite)

    run(scenario())


# -- 16: undecodable messages, half-close, forfeited seats --------------------------------------


def _bad_utf8_card(request_id: int) -> bytes:
    """A PlayRequest whose decision's card is not UTF-8 (protobuf refuses it when decoding)."""
    decision: bytes = pb.Decision(request_id=request_id).SerializeToString() + b"\x12\x02\xff\xfe"  # card = b"\xff\xfe"
    return b"\x12" + bytes([len(decision)]) + decision


@pytest.mark.parametrize("junk", ["bytes", "utf8"])
def test_an_undecodable_message_mid_match_is_malformed_and_the_match_goes_on(junk: str, caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server)
            request = await first_card_request(raw)
            await raw.send(b"\xff\xff\xff\xff" if junk == "bytes" else _bad_utf8_card(request.request_id))
            notice = (await raw.expect("fault_notice")).fault_notice
            assert notice.fault == pb.FAULT_MALFORMED and notice.request_id == 0 and not notice.forfeited
            assert "not a PlayRequest" in notice.detail and notice.fallback == ""
            await raw.answer_first(request)  # the request still waits for its answer
            ended = await raw.play_politely()
            assert ended is not None and ended.match_ended.status == "finished"
            final = await result
            assert final.faults[0] == {"malformed": 1}
            assert replay_lines(final.record).divergence is None
            await asyncio.gather(*polite)

    with caplog.at_level(logging.INFO):
        run(scenario())
    lines = [r for r in caplog.records if "not a PlayRequest" in r.getMessage()]
    assert len(lines) == 1 and lines[0].levelno == logging.INFO and lines[0].exc_info is None


def test_junk_as_the_first_message_is_invalid_argument_and_the_seat_stays_free(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        async with referee() as server:
            host, raw, result, polite = await match_with_raw_seat(server)
            await raw.open()
            await raw.send(b"\x00\x01\x02 not a message")
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await raw.read()
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "not a PlayRequest" in caught.value.details()
            retry = RawSeat(server.address, host.tokens[0])
            await retry.open()
            await retry.hello()
            await retry.play_politely()
            assert (await result).faults[0] == {}
            await asyncio.gather(*polite)

    with caplog.at_level(logging.INFO):
        run(scenario())
    lines = [r for r in caplog.records if "not a PlayRequest" in r.getMessage()]
    assert len(lines) == 1 and lines[0].exc_info is None
    # grpc.aio's poller may still call back into an earlier test's closed event loop: that is no record of this match.
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR and "PollerCompletionQueue" not in r.getMessage()]
    assert not errors, "no traceback in the referee's log"


def test_a_stream_closed_before_its_hello_is_invalid_argument() -> None:
    async def scenario() -> None:
        async with referee() as server:
            host, raw, result, polite = await match_with_raw_seat(server)
            await raw.open()
            await raw.call.done_writing()
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await raw.read()
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "before a Hello" in caught.value.details()
            retry = RawSeat(server.address, host.tokens[0])
            await retry.open()
            await retry.hello()
            await retry.play_politely()
            await result
            await asyncio.gather(*polite)

    run(scenario())


def test_a_half_close_is_a_disconnect_with_a_notice_and_then_match_ended() -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server)
            request = await first_card_request(raw)
            await raw.answer_first(request)
            await raw.call.done_writing()  # the bot says no more, but still listens
            notice = (await raw.expect("fault_notice")).fault_notice
            assert notice.fault == pb.FAULT_DISCONNECTED and notice.forfeited and "closed its side" in notice.detail
            ended = await raw.next_payload("match_ended", timeout=60)
            assert ended is not None and ended.match_ended.status == "finished" and ended.match_ended.places[0] == 4
            assert await raw.read() is None
            assert await raw.call.code() == grpc.StatusCode.OK
            final = await result
            assert final.faults[0] == {"disconnected": 1}
            await asyncio.gather(*polite)

    run(scenario())


def test_a_forfeited_seat_is_no_longer_read_and_still_hears_match_ended(monkeypatch: pytest.MonkeyPatch) -> None:
    async def scenario() -> None:
        async with referee() as server:
            host, raw, result, polite = await match_with_raw_seat(server)
            read_by_referee = 0
            post = host.post_message

            def counting(seat: int, conn: SeatConnection, message: pb.PlayRequest) -> None:
                nonlocal read_by_referee
                if seat == 0:
                    read_by_referee += 1
                post(seat, conn, message)

            monkeypatch.setattr(host, "post_message", counting)
            await raw.open()
            await raw.hello()
            await raw.next_payload("welcome")
            stale = pb.PlayRequest(decision=pb.Decision(request_id=1, card="7S"))

            async def flood() -> int:
                sent = 0
                with contextlib.suppress(grpc.RpcError, asyncio.InvalidStateError):
                    while sent < 200_000:
                        await raw.send(stale)
                        sent += 1
                return sent

            flooding = asyncio.ensure_future(flood())
            notice = await raw.expect("fault_notice")
            while not notice.fault_notice.forfeited:
                notice = await raw.expect("fault_notice")
            assert notice.fault_notice.faults == 3 and notice.fault_notice.fault == pb.FAULT_STALE
            read_at_forfeit = read_by_referee
            ended = await raw.next_payload("match_ended", timeout=60)
            assert ended is not None and ended.match_ended.status == "finished" and ended.match_ended.places[0] == 4
            assert not ended.events  # a forfeited seat is told the end, not the rest of the match
            final = await result
            assert final.faults[0] == {"stale": 3}
            assert read_by_referee <= read_at_forfeit + 1, (read_at_forfeit, read_by_referee)
            assert not flooding.done(), "the flooder's writes are held back once its seat forfeits"
            flooding.cancel()
            await asyncio.gather(*polite)
            await still_serving(server)

    run(scenario())


# -- 17, 18: late and stale answers ------------------------------------------------------------------


def test_a_stale_answer_while_a_request_is_pending_carries_that_requests_id() -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server)
            request = await first_card_request(raw)
            await raw.decide(request.request_id - 1, card=request.legal_cards[0])
            notice = (await raw.expect("fault_notice")).fault_notice
            assert notice.fault == pb.FAULT_STALE and notice.request_id == request.request_id
            assert notice.fallback == "" and notice.points == 0  # nothing was played: the request still waits
            await raw.answer_first(request)
            await raw.play_politely()
            assert (await result).faults[0] == {"stale": 1}
            await asyncio.gather(*polite)

    run(scenario())


def test_a_second_copy_of_a_late_answer_is_stale() -> None:
    async def scenario() -> None:
        async with referee() as server:
            clock = TimeControl(move_ms=300, bank_ms=0, startup_ms=5000)
            _host, raw, result, polite = await match_with_raw_seat(server, time_control=clock)
            request = await first_card_request(raw)
            await raw.next_payload("fault_notice")  # the timeout
            await raw.answer_first(request)  # late: dropped
            await raw.answer_first(request)  # and again: now it is stale
            while (message := await raw.read()) is not None and message.WhichOneof("payload") != "fault_notice":
                if message.WhichOneof("payload") == "decision_request":
                    await raw.answer_first(message.decision_request)
            assert message is not None and message.fault_notice.fault == pb.FAULT_STALE
            await raw.play_politely()
            assert (await result).faults[0] == {"timeout": 1, "stale": 1}
            await asyncio.gather(*polite)

    run(scenario())


# -- 19: card text on the wire is exactly as documented ------------------------------------------------

SUIT_SYMBOLS = dict(zip("SHDC", "♠♥♦♣", strict=True))


@pytest.mark.parametrize("form", ["lower", "padded", "symbol", "ten", "trailing-space"])
def test_the_wire_takes_card_text_only_as_documented(form: str) -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server)
            request = await first_card_request(raw)
            card = request.legal_cards[0]
            text = {
                "lower": card.lower(),
                "padded": f" {card}\t",
                "symbol": card[0] + SUIT_SYMBOLS[card[1]],
                "ten": card.replace("T", "10") if card[0] == "T" else "10" + card[1],
                "trailing-space": card + " ",
            }[form]
            await raw.decide(request.request_id, card=text)
            notice = (await raw.expect("fault_notice")).fault_notice
            assert notice.fault == pb.FAULT_MALFORMED and notice.request_id == request.request_id
            assert repr(text) in notice.detail and "uppercase" in notice.detail
            await raw.play_politely()
            assert (await result).faults[0] == {"malformed": 1}
            await asyncio.gather(*polite)

    run(scenario())


# -- 20: request ids, and the docs -----------------------------------------------------------------------


def test_request_ids_stay_where_json_numbers_are_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    async def scenario() -> list[int]:
        async with referee() as server:
            ids: list[int] = []
            original = server.create_match

            def near_the_edge(*args: Any, **kwargs: Any) -> MatchHost:
                host = original(*args, **kwargs)
                host._request_id = JSON_SAFE - 5  # as if the match had already asked that many
                host.on_message_sent = lambda seat, m: ids.append(m.decision_request.request_id) if m.HasField("decision_request") else None
                return host

            monkeypatch.setattr(server, "create_match", near_the_edge)
            result, _ = await polite_match(server, preset("classic", players=3, limit=3))
            assert result.status == "finished"
            return ids

    ids = run(scenario())
    assert len(ids) > 10 and all(0 < i <= JSON_SAFE for i in ids)
    assert len(set(ids)) == len(ids)


def test_protocol_doc_tells_every_limit_and_status_a_client_can_observe() -> None:
    doc = " ".join((ROOT / "docs" / "protocol.md").read_text(encoding="utf-8").split())  # line breaks do not matter
    for words in (
        "POLIGNAC_BOT_SEED",
        "2^53",
        "UNAUTHENTICATED",
        "DEADLINE_EXCEEDED",
        "INVALID_ARGUMENT",
        "FAILED_PRECONDITION",
        "ALREADY_EXISTS",
        "UNIMPLEMENTED",
        "ABORTED",
        "UNAVAILABLE",
        "half-close",
        "too_many_pings",
        f"`grpc.keepalive_time_ms` {KEEPALIVE_TIME_MS}",
        f"every {KEEPALIVE_TIME_MS // 1000} s",
        f"within {KEEPALIVE_TIMEOUT_MS // 1000} s",
        f"`grpc.keepalive_timeout_ms` and `grpc.http2.ping_timeout_ms` {KEEPALIVE_TIMEOUT_MS}",
        f"within {(KEEPALIVE_TIME_MS + KEEPALIVE_TIMEOUT_MS) // 1000} s",
        f"every {SEAT_KEEPALIVE_TIME_MS // 1000} s, answered within {SEAT_KEEPALIVE_TIMEOUT_MS // 1000} s",
        f"every {MIN_PING_INTERVAL_MS // 1000} s",
        f"`grpc.http2.min_ping_interval_without_data_ms` {MIN_PING_INTERVAL_MS}",
        f"{MAX_PING_STRIKES} pings",
        f"{MAX_RECEIVE_BYTES // 1024} KiB",
        f"{MAX_SEAT_CONNECTIONS} connections",
        f"the last {MAX_ENDED_TOKENS:,} seats",
    ):
        assert words in doc, words
    # Every text a stream ends with, as the page writes it: N a seat, ID a match id, G seconds.
    for text in (
        texts.UNKNOWN_TOKEN,
        texts.MATCH_OVER.format(match_id="ID", status="finished"),
        texts.FORFEITED.format(seat="N", match_id="ID", why="FAULT: DETAIL", now="the match goes on without it"),
        texts.CALLED_OFF.format(match_id="ID", reason="REASON"),
        texts.REPLACED.format(seat="N"),
        texts.AWAY.format(seat="N", why="closed its side of the stream (a half-close)", grace="G"),
        texts.HALF_CLOSED,
        texts.STREAM_BROKE,
        texts.NOT_READ.format(seconds="5"),
        texts.NOT_BACK.format(grace="G"),
        texts.NO_STREAM,
        texts.RESTARTING.format(match_id="ID", seat="N"),
        f"{MAX_RECEIVE_BYTES}",
    ):
        assert text in doc, text
