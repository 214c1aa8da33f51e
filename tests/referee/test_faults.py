"""Bad behaviour at a seat: each gets its documented outcome, and the referee keeps serving."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import textwrap
from pathlib import Path

import grpc
import grpc.aio
import pytest

from polignac import preset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac_arena.referee import MatchResult, RefereeServer, TimeControl, texts
from polignac_arena.replay import replay_lines
from polignac_arena.runner import resolve_bot, run_local_match
from tests.referee.helpers import FAST, RawSeat, match_with_raw_seat, polite_match, referee, run


async def still_serving(server: RefereeServer) -> None:
    """The referee plays a whole new match after the trouble."""
    result, _ = await polite_match(server, preset("classic", players=3), seed=99)
    assert result.status == "finished"


async def first_card_request(raw: RawSeat) -> pb.DecisionRequest:
    """Say Hello, pass in the auction, and return the first request for a card."""
    await raw.open()
    await raw.hello()
    while True:
        message = await raw.next_payload("decision_request")
        assert message is not None, "the stream ended before a card was asked for"
        request = message.decision_request
        if request.kind == pb.DECISION_KIND_CARD:
            return request
        await raw.decide(request.request_id, contract=pb.CONTRACT_PASS)


def seat_faults(result: MatchResult, seat: int = 0) -> dict[str, int]:
    return result.faults[seat]


def test_illegal_card_is_replaced_by_the_fallback_and_scores_revoke_points() -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server)
            request = await first_card_request(raw)
            # Find a request where following suit is forced, then play an off-suit card.
            while set(request.legal_cards) == set(request.view.hand):
                await raw.answer_first(request)
                message = await raw.next_payload("decision_request")
                assert message is not None
                request = message.decision_request
            offsuit = next(c for c in request.view.hand if c not in request.legal_cards)
            await raw.decide(request.request_id, card=offsuit)
            notice = (await raw.expect("fault_notice")).fault_notice
            assert notice.fault == pb.FAULT_ILLEGAL and notice.request_id == request.request_id
            assert notice.fallback in request.legal_cards and notice.points == 5 and notice.faults == 1
            assert offsuit in notice.detail and not notice.forfeited
            ended = await raw.play_politely()
            assert ended is not None and ended.match_ended.status == "finished"
            final = await result
            assert seat_faults(final) == {"illegal": 1}
            penalties = [line for line in final.record if line["type"] == "action" and isinstance(line["action"], dict)]
            assert penalties == [
                {
                    "type": "action",
                    "seat": 0,
                    "hand": penalties[0]["hand"],
                    "action": {"penalty": 0, "points": 5, "reason": "illegal"},
                    "status": "illegal",
                }
            ]
            assert replay_lines(final.record).divergence is None
            await asyncio.gather(*polite)
            await raw.close()
            await still_serving(server)

    run(scenario())


def test_card_not_in_hand_is_illegal() -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server)
            request = await first_card_request(raw)
            missing = next(c for c in ("7H", "8H", "9H", "TH", "JH", "QH", "KH", "AH", "7D", "8D") if c not in request.view.hand)
            await raw.decide(request.request_id, card=missing)
            notice = (await raw.expect("fault_notice")).fault_notice
            assert notice.fault == pb.FAULT_ILLEGAL and notice.fallback in request.legal_cards
            await raw.play_politely()
            assert seat_faults(await result) == {"illegal": 1}
            await asyncio.gather(*polite)

    run(scenario())


@pytest.mark.parametrize("bad", ["ZZ", "", "JSJS", "J", "11H", "\x00\xff"])
def test_malformed_card_text_is_replaced_by_the_fallback(bad: str) -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server)
            request = await first_card_request(raw)
            await raw.decide(request.request_id, card=bad)
            notice = (await raw.expect("fault_notice")).fault_notice
            assert notice.fault == pb.FAULT_MALFORMED and notice.fallback in request.legal_cards and notice.points == 5
            await raw.play_politely()
            assert seat_faults(await result) == {"malformed": 1}
            await asyncio.gather(*polite)

    run(scenario())


def test_wrong_kind_of_decision_is_malformed() -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server)
            await raw.open()
            await raw.hello()
            auction = (await raw.expect("decision_request")).decision_request
            assert auction.kind == pb.DECISION_KIND_CONTRACT
            await raw.decide(auction.request_id, card="JS")  # a card in the auction
            notice = (await raw.expect("fault_notice")).fault_notice
            assert notice.fault == pb.FAULT_MALFORMED and notice.fallback == "pass"
            card_request = (await raw.expect("decision_request")).decision_request
            while card_request.kind != pb.DECISION_KIND_CARD:
                await raw.decide(card_request.request_id, contract=pb.CONTRACT_PASS)
                card_request = (await raw.expect("decision_request")).decision_request
            await raw.decide(card_request.request_id, contract=pb.CONTRACT_CAPOT)  # a contract in play
            notice = (await raw.expect("fault_notice")).fault_notice
            assert notice.fault == pb.FAULT_MALFORMED and notice.fallback in card_request.legal_cards
            await raw.play_politely()
            assert seat_faults(await result) == {"malformed": 2}
            await asyncio.gather(*polite)

    run(scenario())


def test_a_contract_the_ruleset_does_not_enable_is_illegal() -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server)
            await raw.open()
            await raw.hello()
            auction = (await raw.expect("decision_request")).decision_request
            await raw.decide(auction.request_id, contract=pb.CONTRACT_GENERAL)  # classic: general is off
            notice = (await raw.expect("fault_notice")).fault_notice
            assert notice.fault == pb.FAULT_ILLEGAL and notice.fallback == "pass"
            await raw.play_politely()
            assert seat_faults(await result) == {"illegal": 1}
            await asyncio.gather(*polite)

    run(scenario())


def test_stale_request_id_is_counted_and_the_real_answer_still_counts() -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server)
            request = await first_card_request(raw)
            await raw.decide(request.request_id + 1000, card=request.legal_cards[0])
            notice = (await raw.expect("fault_notice")).fault_notice
            assert notice.fault == pb.FAULT_STALE and notice.points == 0 and notice.fallback == "" and notice.faults == 1
            await raw.decide(request.request_id, card=request.legal_cards[-1])
            following = await raw.read()
            assert following is not None
            played = [e.card_played for e in following.events if e.WhichOneof("event") == "card_played" and e.card_played.seat == 0]
            assert played and played[0].card == request.legal_cards[-1]  # the real answer was played, not a fallback
            if following.WhichOneof("payload") == "decision_request":
                await raw.answer_first(following.decision_request)
            await raw.play_politely()
            assert seat_faults(await result) == {"stale": 1}
            await asyncio.gather(*polite)

    run(scenario())


def test_no_reply_is_a_timeout_then_the_late_reply_is_dropped_and_the_bank_is_spent() -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server)
            request = await first_card_request(raw)  # answered the auction within the start-up allowance
            loop = asyncio.get_running_loop()
            start = loop.time()
            notice = (await raw.expect("fault_notice")).fault_notice
            waited = loop.time() - start
            assert notice.fault == pb.FAULT_TIMEOUT and notice.request_id == request.request_id
            assert notice.fallback in request.legal_cards and notice.points == 0  # timeout_points
            assert 1.4 <= waited < 5, waited  # move 1000 ms + bank 500 ms (the first decision was the auction)
            await raw.decide(request.request_id, card=request.legal_cards[0])  # after the bank is spent: dropped quietly
            next_request = (await raw.expect("decision_request")).decision_request
            assert next_request.bank_ms == 0 and next_request.move_ms == FAST.move_ms
            await raw.answer_first(next_request)
            await raw.play_politely()
            assert seat_faults(await result) == {"timeout": 1}  # one late answer, one fault
            assert [n.fault for n in raw.faults()] == [pb.FAULT_TIMEOUT]
            await asyncio.gather(*polite)
            await still_serving(server)

    run(scenario())


def test_disconnect_mid_hand_forfeits_and_the_others_finish() -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server)
            request = await first_card_request(raw)
            await raw.answer_first(request)
            await raw.close()
            final = await result
            assert final.status == "finished"
            assert seat_faults(final) == {"disconnected": 1}
            assert final.places is not None and final.places[0] == 4
            assert replay_lines(final.record).divergence is None
            outcomes = await asyncio.gather(*polite)
            assert all(o.status == "finished" for o in outcomes)
            await still_serving(server)

    run(scenario())


def test_oversized_message_cuts_the_stream_and_the_seat_forfeits() -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server)
            request = await first_card_request(raw)
            await raw.decide(request.request_id, card="J" * 1_000_000)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                while await raw.read() is not None:
                    pass
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            final = await result
            assert seat_faults(final) == {"disconnected": 1}
            assert final.places is not None and final.places[0] == 4
            # The record says the stream broke (the referee cannot tell a refused message from a reset), not that the bot
            # half-closed it: that would send its author looking for a bug of theirs that is not there.
            (forfeit,) = [line for line in final.record if line.get("seat") == 0 and line.get("status") == "disconnected"]
            assert forfeit["detail"] == texts.STREAM_BROKE
            await asyncio.gather(*polite)
            await raw.close()
            await still_serving(server)

    run(scenario())


def test_a_flood_of_unsolicited_messages_forfeits_at_max_faults() -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server)
            await raw.open()
            await raw.hello()
            notices: list[pb.FaultNotice] = []
            endings: list[pb.MatchEnded] = []

            async def listen() -> None:
                with contextlib.suppress(grpc.RpcError):
                    while (message := await raw.read()) is not None:
                        if message.WhichOneof("payload") == "fault_notice":
                            notices.append(message.fault_notice)
                        elif message.WhichOneof("payload") == "match_ended":
                            endings.append(message.match_ended)

            listener = asyncio.ensure_future(listen())
            flood = pb.PlayRequest(hello=pb.Hello(protocol_version="1", bot_name="again"))
            for _ in range(500):
                try:
                    await raw.send(flood)
                except (grpc.RpcError, asyncio.InvalidStateError):
                    break  # the referee closed the stream
            final = await result
            assert seat_faults(final) == {"malformed": 3}  # max_faults, then forfeit
            assert final.places is not None and final.places[0] == 4
            await listener
            assert [n.faults for n in notices] == [1, 2, 3] and notices[-1].forfeited
            assert [e.status for e in endings] == ["finished"]  # the forfeited seat hears the end too
            await asyncio.gather(*polite)
            await still_serving(server)

    run(scenario())


def test_a_stream_that_never_says_hello_is_dropped_and_the_seat_forfeits() -> None:
    async def scenario() -> None:
        async with referee() as server:
            clock = TimeControl(move_ms=400, bank_ms=300, startup_ms=700)
            _host, raw, result, polite = await match_with_raw_seat(server, time_control=clock)
            await raw.open()
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await raw.read(timeout=5)
            assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            final = await result
            assert seat_faults(final) == {"timeout": 1}
            assert final.places is not None and final.places[0] == 4 and final.status == "finished"
            await asyncio.gather(*polite)
            await still_serving(server)

    run(scenario())


@pytest.mark.parametrize(
    ("metadata", "code"),
    [
        ((), grpc.StatusCode.UNAUTHENTICATED),
        ((("authorization", "Bearer wrong-token"),), grpc.StatusCode.UNAUTHENTICATED),
        ((("authorization", "Basic abc"),), grpc.StatusCode.UNAUTHENTICATED),
        ((("authorization", "Bearer "),), grpc.StatusCode.UNAUTHENTICATED),
    ],
)
def test_missing_or_wrong_token_is_unauthenticated_and_takes_no_seat(metadata: tuple[tuple[str, str], ...], code: grpc.StatusCode) -> None:
    async def scenario() -> None:
        async with referee() as server:
            host, raw, result, polite = await match_with_raw_seat(server)
            intruder = RawSeat(server.address, None)
            await intruder.open(metadata=metadata)
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await intruder.hello()  # the referee may refuse before this is even written
                await intruder.read()
            assert caught.value.code() == code
            assert host.conns[0] is None
            # The rightful bot still gets its seat and the match is played.
            await raw.open()
            await raw.hello()
            await raw.play_politely()
            assert (await result).faults == [{}, {}, {}, {}]
            await asyncio.gather(*polite)
            await intruder.close()

    run(scenario())


def test_a_second_stream_for_a_connected_seat_is_refused() -> None:
    async def scenario() -> None:
        async with referee() as server:
            host, raw, result, polite = await match_with_raw_seat(server)
            await raw.open()
            await raw.hello()
            await raw.next_payload("welcome")
            twin = RawSeat(server.address, host.tokens[0])
            await twin.open()
            await twin.hello()
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await twin.read()
            assert caught.value.code() == grpc.StatusCode.ALREADY_EXISTS
            await raw.play_politely()
            assert (await result).status == "finished"
            await asyncio.gather(*polite)

    run(scenario())


@pytest.mark.parametrize(
    ("first", "code", "words"),
    [
        (
            pb.PlayRequest(hello=pb.Hello(protocol_version="2", bot_name="future")),
            grpc.StatusCode.FAILED_PRECONDITION,
            "'2' is not supported",
        ),
        (pb.PlayRequest(hello=pb.Hello(protocol_version="", bot_name="blank")), grpc.StatusCode.FAILED_PRECONDITION, "not supported"),
        (pb.PlayRequest(decision=pb.Decision(request_id=1, card="JS")), grpc.StatusCode.INVALID_ARGUMENT, "must be a Hello"),
        (pb.PlayRequest(hello=pb.Hello(protocol_version="1", bot_name="")), grpc.StatusCode.INVALID_ARGUMENT, "bot_name"),
        (pb.PlayRequest(hello=pb.Hello(protocol_version="1", bot_name="x" * 65)), grpc.StatusCode.INVALID_ARGUMENT, "bot_name"),
        (pb.PlayRequest(hello=pb.Hello(protocol_version="1", bot_name="bad\nname")), grpc.StatusCode.INVALID_ARGUMENT, "bot_name"),
    ],
)
def test_a_bad_hello_is_refused_with_a_clear_status(first: pb.PlayRequest, code: grpc.StatusCode, words: str) -> None:
    async def scenario() -> None:
        async with referee() as server:
            host, raw, result, polite = await match_with_raw_seat(server)
            await raw.open()
            await raw.send(first)
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await raw.read()
            assert caught.value.code() == code and words in caught.value.details()
            # The seat is still free: the bot may come back and play properly.
            retry = RawSeat(server.address, host.tokens[0])
            await retry.open()
            await retry.hello()
            await retry.play_politely()
            assert (await result).status == "finished"
            await asyncio.gather(*polite)

    run(scenario())


def test_forfeit_policy_forfeits_at_the_first_fault() -> None:
    async def scenario() -> None:
        async with referee() as server:
            rules = preset("classic", fault_policy="forfeit")
            _host, raw, result, polite = await match_with_raw_seat(server, rules=rules)
            request = await first_card_request(raw)
            await raw.decide(request.request_id, card="ZZ")
            notice = (await raw.expect("fault_notice")).fault_notice
            assert notice.forfeited and notice.fault == pb.FAULT_MALFORMED
            ended = await raw.read()  # the match ends at once, and the forfeited seat hears it too
            assert ended is not None and ended.WhichOneof("payload") == "match_ended" and ended.match_ended.status == "finished"
            assert await raw.read() is None  # then the stream closes
            final = await result
            assert final.places is not None and final.places[0] == 4
            await asyncio.gather(*polite)

    run(scenario())


def test_max_faults_illegal_cards_forfeit_on_the_last_one() -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server)
            request = await first_card_request(raw)
            notices = []
            for _ in range(3):
                await raw.decide(request.request_id, card="XX")
                message = await raw.expect("fault_notice")
                notices.append(message.fault_notice)
                if notices[-1].forfeited:
                    break
                request = (await raw.expect("decision_request")).decision_request
            assert [n.faults for n in notices] == [1, 2, 3]
            assert [n.forfeited for n in notices] == [False, False, True]
            final = await result
            assert seat_faults(final) == {"malformed": 3} and final.places is not None and final.places[0] == 4
            assert replay_lines(final.record).divergence is None
            await asyncio.gather(*polite)

    run(scenario())


CRASHER = textwrap.dedent(
    """
    import os
    from polignac.bot import Bot, run

    class Crasher(Bot):
        name = "crasher"
        plays = 0

        def play(self, view):
            self.plays += 1
            if self.plays == 3:
                os._exit(3)
            return view.legal[0]

    run(Crasher())
    """
)


def test_a_process_that_crashes_mid_hand_is_crashed_and_forfeits(tmp_path: Path) -> None:
    script = tmp_path / "crasher.py"
    script.write_text(CRASHER)
    bots = [resolve_bot(str(script)), resolve_bot("heuristic"), resolve_bot("cautious"), resolve_bot("random")]
    result, _stderrs = run(
        run_local_match(bots, preset("classic"), 5, TimeControl(2000, 2000, 10_000), record_path=tmp_path / "r.jsonl", trusted=True)
    )
    assert result.faults[0] == {"crashed": 1}, result.faults
    assert result.status == "finished" and result.places is not None and result.places[0] == 4
    assert replay_lines(result.record).divergence is None


def test_a_bot_process_that_cannot_start_forfeits_quickly(tmp_path: Path) -> None:
    script = tmp_path / "broken.py"
    script.write_text("raise SystemExit('this bot is broken')\n")
    bots = [resolve_bot(str(script)), resolve_bot("heuristic"), resolve_bot("cautious"), resolve_bot("random")]
    result, stderrs = run(run_local_match(bots, preset("classic"), 5, TimeControl(2000, 2000, 20_000), trusted=True))
    assert result.faults[0] == {"crashed": 1}
    assert "this bot is broken" in stderrs[0]


def test_python_used_by_bot_processes_is_this_interpreter() -> None:
    spec = resolve_bot("sample_bots/random")
    assert spec.host_command()[0] == sys.executable and spec.path.name == "random"
