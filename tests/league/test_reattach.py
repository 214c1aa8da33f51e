"""A seat allowed to reattach survives a broken stream within its grace, and only then."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import cast

import grpc
import grpc.aio
import pytest

from polignac import preset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac_arena.record_lines import JsonLine
from polignac_arena.referee import MatchHost, TimeControl
from tests.referee.helpers import RawSeat, match_with_raw_seat, referee, run

GENEROUS = TimeControl(move_ms=5000, bank_ms=5000, startup_ms=5000)


async def _until_request(raw: RawSeat) -> pb.DecisionRequest:
    """Answer politely until a request arrives that the test keeps pending."""
    while True:
        message = await raw.read()
        assert message is not None, "the stream ended before a request"
        if message.WhichOneof("payload") == "decision_request":
            return message.decision_request


async def _cut(raw: RawSeat) -> None:
    """Break the stream as a lost connection does (no half-close: the call is cancelled)."""
    raw.call.cancel()
    await raw.close()


async def _wait_for(condition: Callable[[], bool]) -> None:
    """Poll the host's state (it offers no event for it); bounded by the test's own cap."""
    while not condition():
        await asyncio.sleep(0.01)


def _lines(host: MatchHost, kind: str) -> list[JsonLine]:
    assert host.result is not None
    return [line for line in host.result.record if line["type"] == kind]


def test_reattach_within_grace_keeps_the_seat() -> None:
    async def scenario() -> None:
        async with referee() as server:
            host, raw, result, polite = await match_with_raw_seat(server, time_control=GENEROUS)
            host.allow_reattach(0, 10.0)
            await raw.open()
            await raw.hello()
            first = await _until_request(raw)
            await _cut(raw)
            await _wait_for(lambda: 0 in host.away)
            again = RawSeat(server.address, host.tokens[0])
            await again.open()
            await again.hello()
            welcome = await again.read()
            assert welcome is not None and welcome.WhichOneof("payload") == "welcome" and welcome.welcome.seat == 0
            pending = await again.read()
            assert pending is not None and pending.WhichOneof("payload") == "decision_request"
            assert pending.decision_request.request_id == first.request_id
            assert not pending.events, "events of the time away are not replayed"
            assert pending.decision_request.move_ms <= GENEROUS.move_ms
            await again.answer_first(pending.decision_request)
            ended = await again.play_politely()
            assert ended is not None and ended.match_ended.status == "finished"
            final = await result
            await asyncio.gather(*polite)
            await again.close()
            assert final.status == "finished"
            assert final.faults[0] == {}
            assert not host.match.forfeited
            assert [line["seat"] for line in _lines(host, "away")] == [0]
            assert [line["seat"] for line in _lines(host, "back")] == [0]

    run(scenario())


def test_past_the_grace_the_seat_forfeits_disconnected() -> None:
    async def scenario() -> None:
        async with referee() as server:
            host, raw, result, polite = await match_with_raw_seat(server, time_control=GENEROUS)
            host.allow_reattach(0, 0.3)
            await raw.open()
            await raw.hello()
            await _until_request(raw)
            await _cut(raw)
            final = await result
            await asyncio.gather(*polite)
            assert final.status == "finished"
            assert final.faults[0] == {"disconnected": 1}
            assert 0 in host.match.forfeited
            forfeit = [line for line in final.record if line.get("seat") == 0 and line.get("status") == "disconnected"]
            assert forfeit and "did not come back within 0.3 s" in cast(str, forfeit[0]["detail"])
            late = RawSeat(server.address, host.tokens[0])
            await late.open()
            with pytest.raises(grpc.aio.AioRpcError) as refused:  # the refusal may end the call before the Hello is written
                await late.hello()
                await late.read()
            assert refused.value.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.FAILED_PRECONDITION)
            await late.close()

    run(scenario())


def test_the_clock_runs_while_away() -> None:
    async def scenario() -> None:
        clock = TimeControl(move_ms=300, bank_ms=0, startup_ms=5000)
        async with referee() as server:
            host, raw, result, polite = await match_with_raw_seat(server, time_control=clock)
            host.allow_reattach(0, 10.0)
            await raw.open()
            await raw.hello()
            await raw.answer_first(await _until_request(raw))  # the first request allows startup_ms
            first = await _until_request(raw)
            await _cut(raw)
            # Nobody answers the pending request: it times out at its deadline, away or not.
            await _wait_for(lambda: host.fault_counts[0].get("timeout", 0) >= 1)
            again = RawSeat(server.address, host.tokens[0])
            await again.open()
            await again.hello()
            welcome = await again.read()
            assert welcome is not None and welcome.WhichOneof("payload") == "welcome"
            ended = await again.play_politely()
            assert ended is not None
            final = await result
            await asyncio.gather(*polite)
            await again.close()
            timeouts = [line for line in final.record if line.get("seat") == 0 and line.get("status") == "timeout"]
            assert timeouts[0]["request_id"] == first.request_id
            assert timeouts[0]["action"], "the fallback was played in its place"
            assert final.faults[0].get("disconnected", 0) == 0

    run(scenario())


def test_a_second_stream_with_the_token_replaces_the_one_the_referee_holds() -> None:
    async def scenario() -> None:
        async with referee() as server:
            host, raw, result, polite = await match_with_raw_seat(server, time_control=GENEROUS)
            host.allow_reattach(0, 10.0)
            await raw.open()
            await raw.hello()
            first = await _until_request(raw)
            # The old stream's connection died without a word, as far as the referee knows: a new one takes the seat.
            again = RawSeat(server.address, host.tokens[0])
            await again.open()
            await again.hello()
            welcome = await again.read()
            assert welcome is not None and welcome.WhichOneof("payload") == "welcome"
            pending = await again.read()
            assert pending is not None and pending.decision_request.request_id == first.request_id
            with pytest.raises(grpc.aio.AioRpcError) as replaced:
                await raw.read()
            assert replaced.value.code() == grpc.StatusCode.ABORTED
            assert replaced.value.details() == "a new Play stream with the token of seat 0 replaced this one"
            await again.answer_first(pending.decision_request)
            ended = await again.play_politely()
            assert ended is not None and ended.match_ended.status == "finished"
            final = await result
            await asyncio.gather(*polite)
            await again.close()
            await raw.close()
            assert final.faults[0] == {}
            away = _lines(host, "away")
            assert [line["seat"] for line in away] == [0] and "replaced" in str(away[0]["detail"])
            assert [line["seat"] for line in _lines(host, "back")] == [0]

    run(scenario())


def test_a_second_stream_of_a_seat_that_may_not_reattach_is_refused() -> None:
    async def scenario() -> None:
        async with referee() as server:
            host, raw, result, polite = await match_with_raw_seat(server, time_control=GENEROUS)
            await raw.open()
            await raw.hello()
            await _until_request(raw)
            second = RawSeat(server.address, host.tokens[0])
            await second.open()
            await second.hello()
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await second.read()
            assert refused.value.code() == grpc.StatusCode.ALREADY_EXISTS
            await second.close()
            host.abort("test over")
            await result
            await asyncio.gather(*polite)
            await raw.close()

    run(scenario())


def test_a_half_close_makes_a_remote_seat_away_with_a_status_that_says_so() -> None:
    async def scenario() -> None:
        async with referee() as server:
            host, raw, result, polite = await match_with_raw_seat(server, time_control=GENEROUS)
            host.allow_reattach(0, 10.0)
            await raw.open()
            await raw.hello()
            first = await _until_request(raw)
            await raw.call.done_writing()
            with pytest.raises(grpc.aio.AioRpcError) as away:
                while await raw.read() is not None:
                    pass
            assert away.value.code() == grpc.StatusCode.UNAVAILABLE
            assert away.value.details() == (
                "seat 0 closed its side of the stream (a half-close) before the match ended: it is away, and forfeits"
                " unless a new Play stream with its seat token says Hello within 10 s"
            )
            again = RawSeat(server.address, host.tokens[0])
            await again.open()
            await again.hello()
            pending = await again.next_payload("decision_request")
            assert pending is not None and pending.decision_request.request_id == first.request_id
            await again.answer_first(pending.decision_request)
            ended = await again.play_politely()
            assert ended is not None and ended.match_ended.status == "finished"
            final = await result
            await asyncio.gather(*polite)
            await again.close()
            assert final.faults[0] == {}
            assert "half-close" in str(_lines(host, "away")[0]["detail"])

    run(scenario())


def test_after_a_forfeit_a_late_stream_hears_why_not_that_its_token_is_unknown() -> None:
    async def scenario() -> None:
        async with referee() as server:
            host, raw, result, polite = await match_with_raw_seat(server, time_control=GENEROUS)
            host.allow_reattach(0, 0.3)
            await raw.open()
            await raw.hello()
            await _until_request(raw)
            await _cut(raw)
            await _wait_for(lambda: 0 in host.match.forfeited)
            during = RawSeat(server.address, host.tokens[0])
            await during.open()
            await during.hello()
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await during.read()
            assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert refused.value.details() == (
                f"seat 0 of match {host.match_id!r} has forfeited (disconnected: the stream ended and the bot did not come back"
                " within 0.3 s); the match goes on without it"
            )
            await during.close()
            await result
            await asyncio.gather(*polite)
            after = RawSeat(server.address, host.tokens[0])
            await after.open()
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await after.read()
            assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert refused.value.details() is not None and refused.value.details().endswith("; the match is over")
            await after.close()

    run(scenario())


def test_grace_is_checked() -> None:
    host = MatchHost(preset("classic"), 1)
    with pytest.raises(ValueError, match=r"seat must be 0\.\.3"):
        host.allow_reattach(4, 1.0)
    with pytest.raises(ValueError, match="reattach grace"):
        host.allow_reattach(0, 0)
    with pytest.raises(ValueError, match="reattach grace"):
        MatchHost(preset("classic"), 1, reattach_grace_s={0: float("nan")})
