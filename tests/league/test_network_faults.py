"""Remote bots on a real network, through a proxy that freezes, resets and delays their connections.

Each test runs twice: the bot under test on the Python SDK, and on the Node doc client
written from docs/protocol.md alone (tests/doc_client).  The other bots at its table are SDK
bots on clean paths.  Each checks that the bot that comes back within the grace finishes its
match with no fault, that one that does not forfeits within grace + the documented
detection time, that no other seat loses anything, and that the record says what happened.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

import polignac.bot.league as league_sdk
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.bot import Bot, MatchOutcome
from polignac.bot.stream import Conversation, converse
from polignac_arena.league.config import load_league_config
from polignac_arena.league.play import AWAY_AFTER_RESTART
from tests.league.remote_harness import NodeModules, RemoteBot, RemoteLeague, node_modules, record_lines, remote_league, seat_of
from tests.referee.helpers import run

CLIENTS = ["sdk", "node"]
DETECTION_S = 5.0
"""docs/protocol.md, "Timings": the referee finds a dead path within 2 s + 3 s."""
MARGIN_S = 5.0
"""Room for a loaded machine in timing assertions."""


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> NodeModules:
    return node_modules(tmp_path_factory)


def _modules(kind: str, request: pytest.FixtureRequest) -> NodeModules | None:
    return request.getfixturevalue("modules") if kind == "node" else None


@pytest.mark.parametrize("kind", CLIENTS)
def test_a_reset_mid_match_is_survived_without_a_fault(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    modules = _modules(kind, request)

    async def scenario() -> None:
        async with remote_league(tmp_path) as league:
            # The banner says how each address is served: this league has no [tls].
            assert (league.server.web_security, league.server.grpc_security) == ("plaintext: loopback only",) * 2
            fillers = [await league.sdk(f"filler{i}") for i in range(2)]
            bot = await league.client(kind, "tested", modules)
            assignment = await bot.event("assignment")
            match_id = assignment["match_id"]
            await bot.decisions(4, match_id)
            assert bot.proxy.reset() >= 1
            ended = await bot.event("match_ended", match_id=match_id)
            result = await league.final(match_id)
            assert result.status == "finished", result
            seat = seat_of(result, "tested")
            assert result.faults[seat] == {}, "no fault for the seat that came back"
            assert all(faults == {} for faults in result.faults), "no other seat lost anything"
            assert [line["type"] for line in record_lines(result, "away", seat) + record_lines(result, "back", seat)] == ["away", "back"]
            assert ended is not None
            for filler in fillers:
                assert filler.seen("match_ended", match_id=match_id)

    run(scenario(), timeout=120)


@pytest.mark.parametrize("kind", CLIENTS)
def test_a_freeze_of_3_s_mid_match_is_survived_without_a_fault(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    modules = _modules(kind, request)

    async def scenario() -> None:
        async with remote_league(tmp_path) as league:
            for i in range(2):
                await league.sdk(f"filler{i}")
            bot = await league.client(kind, "tested", modules)
            match_id = (await bot.event("assignment"))["match_id"]
            await bot.decisions(4, match_id)
            bot.proxy.freeze()
            await asyncio.sleep(3)  # the fault itself: three seconds in which nothing crosses this bot's path
            bot.proxy.thaw()
            await bot.event("match_ended", match_id=match_id)
            result = await league.final(match_id)
            assert result.status == "finished"
            assert all(faults == {} for faults in result.faults), f"a short freeze costs nobody anything: {result.faults}"
            seat = seat_of(result, "tested")
            # Whether the freeze outlasted a ping's answer or not, the seat is back if it was away.
            assert len(record_lines(result, "away", seat)) == len(record_lines(result, "back", seat))

    run(scenario(), timeout=120)


@pytest.mark.parametrize("kind", CLIENTS)
def test_a_freeze_longer_than_the_grace_forfeits_within_grace_and_detection(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    modules = _modules(kind, request)
    grace_s = 4.0

    async def scenario() -> None:
        async with remote_league(tmp_path, grace_s=grace_s) as league:
            fillers = [await league.sdk(f"filler{i}") for i in range(2)]
            bot = await league.client(kind, "tested", modules)
            match_id = (await bot.event("assignment"))["match_id"]
            await bot.decisions(4, match_id)
            frozen_at = time.monotonic()
            bot.proxy.freeze()
            within = grace_s + DETECTION_S + MARGIN_S
            forfeits = [await filler.event("forfeited", match_id=match_id, timeout_s=within) for filler in fillers]
            seen_after = min(event["at"] for event in forfeits) - frozen_at
            assert seen_after <= within, seen_after
            bot.proxy.thaw()
            result = await league.final(match_id)
            seat = seat_of(result, "tested")
            assert {event["seat"] for event in forfeits} == {seat}
            assert result.status == "finished" and result.places is not None and result.places[seat] == 3
            assert result.faults[seat].get("disconnected") == 1
            others = [faults for s, faults in enumerate(result.faults) if s != seat]
            assert all(faults == {} for faults in others), "no other seat lost anything"
            (forfeit,) = [line for line in result.record or [] if line.get("seat") == seat and line.get("status") == "disconnected"]
            assert f"did not come back within {grace_s:g} s" in str(forfeit["detail"])
            assert len(record_lines(result, "away", seat)) == 1 and record_lines(result, "back", seat) == []
            # The bot does not play on: it gives up the seat (by its own clock, or told that the seat forfeited).
            await bot.event("gave_up", match_id=match_id)
            assert not bot.seen("match_ended", match_id=match_id) or kind == "sdk"

    run(scenario(), timeout=150)


@pytest.mark.parametrize("kind", CLIENTS)
def test_a_reattach_racing_the_stream_the_league_still_holds_takes_the_seat(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    modules = _modules(kind, request)

    async def scenario() -> None:
        async with remote_league(tmp_path) as league:
            for i in range(2):
                await league.sdk(f"filler{i}")
            bot = await league.client(kind, "tested", modules)
            match_id = (await bot.event("assignment"))["match_id"]
            await bot.decisions(4, match_id)
            # The client's end is reset; the league's end still holds a connection that carries nothing and never closes,
            # as after a NAT timeout: the client is back long before the league finds its old stream dead.
            assert bot.proxy.reset("client") >= 1
            await bot.event("match_ended", match_id=match_id)
            result = await league.final(match_id)
            seat = seat_of(result, "tested")
            assert result.status == "finished" and all(faults == {} for faults in result.faults), result.faults
            away = record_lines(result, "away", seat)
            assert any("replaced the one the referee held" in line["detail"] for line in away), away
            assert len(record_lines(result, "back", seat)) == len(away)

    run(scenario(), timeout=120)


async def league_left_nothing(league: RemoteLeague, match_id: str) -> None:
    """No result and no record file for ``match_id`` (the ladder dropped the offer as it paused the bot that left it)."""
    assert await asyncio.to_thread(league.result, match_id) is None
    records = load_league_config(league.config).data / "records"
    assert not (records / f"{match_id}.jsonl").exists()


@pytest.mark.parametrize("kind", CLIENTS)
def test_a_declined_assignment_costs_the_others_nothing(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    modules = _modules(kind, request)

    async def scenario() -> None:
        async with remote_league(tmp_path) as league:
            filler = await league.sdk("filler")
            tested = await league.client(kind, "tested", modules)
            await filler.event("online")
            await tested.event("online")
            decliner = await league.client(kind, "decliner", modules, "--decline", decline="this bot declines on purpose")
            match_id = (await tested.event("assignment"))["match_id"]
            for bot in (tested, filler):
                withdrawn = await bot.event("withdrawn", match_id=match_id)
                assert "declined its seat or did not answer" in withdrawn["reason"] and "decliner@1.0" in withdrawn["reason"]
            paused = await decliner.event("paused")
            assert f"match {match_id} declined or not answered: no match is offered for 30 s" in paused["reason"]
            # An offer nobody played is no match: nothing public is left of it (issue 24: joining and declining adds
            # nothing to the match list), the Withdrawn above says why.
            await league_left_nothing(league, match_id)
            for bot in (tested, filler, decliner):
                assert not bot.seen("welcome", match_id=match_id) and not bot.seen("decision", match_id=match_id), "no clock started"
            # A Play stream the bot that accepted had opened ends with the reason (if the Withdrawn did not stop it first).
            for gave_up in tested.seen("gave_up", match_id=match_id):
                assert "called off" in (gave_up.get("text") or gave_up.get("details") or "") or gave_up.get("code") == "CANCELLED"

    run(scenario(), timeout=120)


@pytest.mark.parametrize("kind", CLIENTS)
def test_an_assignment_never_answered_costs_the_others_nothing(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    modules = _modules(kind, request)
    reply_ms = 3000

    async def scenario() -> None:
        async with remote_league(tmp_path, reply_ms=reply_ms) as league:
            silent: RemoteBot
            if kind == "sdk":
                # The SDK answers every assignment: here the network swallows it (a path that went dead just before).
                silent = await league.sdk("silent")
                await silent.event("online")
                silent.proxy.freeze()
                deadline_s = DETECTION_S
            else:
                assert modules is not None
                silent = await league.node("silent", modules, "--ignore-assignments")
                await silent.event("online")
                deadline_s = reply_ms / 1000
            filler = await league.sdk("filler")
            tested = await league.client(kind, "tested", modules)
            assignment = await tested.event("assignment")
            match_id = assignment["match_id"]
            for bot in (tested, filler):
                withdrawn = await bot.event("withdrawn", match_id=match_id, timeout_s=deadline_s + MARGIN_S)
                assert withdrawn["at"] - assignment["at"] <= deadline_s + MARGIN_S
                assert "silent@1.0" in withdrawn["reason"]
            silent.proxy.thaw()
            # Taken offline, the silent bot joins again and hears why it is left out.
            paused = await silent.event("paused")
            assert f"match {match_id} declined or not answered" in paused["reason"]
            await league_left_nothing(league, match_id)
            for bot in (tested, filler):
                assert not bot.seen("decision", match_id=match_id)

    run(scenario(), timeout=120)


class _HalfClosing:
    """A Play call that half-closes after it has written ``after`` decisions (the SDK never does so itself)."""

    def __init__(self, call: object, after: int) -> None:
        self._call = call
        self._left = after

    def __getattr__(self, name: str) -> object:
        return getattr(self._call, name)

    async def write(self, message: pb.PlayRequest) -> None:
        if self._left <= 0:
            return  # a client that half-closed writes nothing more
        await self._call.write(message)  # type: ignore[attr-defined]  # a stream-stream call, typed as any call
        if message.WhichOneof("message") == "decision":
            self._left -= 1
            if self._left == 0:
                await self._call.done_writing()  # type: ignore[attr-defined]  # a stream-stream call, typed as any call


@pytest.mark.parametrize("kind", CLIENTS)
def test_a_half_close_mid_match_is_away_and_back_without_a_fault(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    modules = _modules(kind, request)
    if kind == "sdk":
        halves: list[int] = []

        async def half_closing(bot: Bot, call: object, state: Conversation | None = None) -> MatchOutcome:
            if bot.name == "tested":
                halves.append(1)  # its first stream half-closes; the one it comes back on does not
            return await converse(bot, _HalfClosing(call, 5) if halves == [1] and bot.name == "tested" else call, state)

        monkeypatch.setattr(league_sdk, "converse", half_closing)

    async def scenario() -> None:
        async with remote_league(tmp_path) as league:
            for i in range(2):
                await league.sdk(f"filler{i}")
            bot = await league.client(kind, "tested", modules, "--half-close-at", "5")
            match_id = (await bot.event("assignment"))["match_id"]
            await bot.event("match_ended", match_id=match_id)
            result = await league.final(match_id)
            seat = seat_of(result, "tested")
            assert result.status == "finished" and all(faults == {} for faults in result.faults), result.faults
            (away,) = record_lines(result, "away", seat)
            assert "closed its side of the stream (a half-close)" in away["detail"]
            assert len(record_lines(result, "back", seat)) == 1
            if kind == "node":
                ended = await bot.event("stream_end", match_id=match_id, code="UNAVAILABLE")
                assert ended["details"].startswith(f"seat {seat} closed its side of the stream (a half-close) before the match ended")

    run(scenario(), timeout=120)


@pytest.mark.parametrize("kill", [False, True], ids=["sigterm", "kill-9"])
@pytest.mark.parametrize("kind", CLIENTS)
def test_a_restart_of_the_league_loses_no_match_and_leaves_nothing_running(
    kind: str, kill: bool, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    modules = _modules(kind, request)

    async def scenario() -> None:
        async with remote_league(tmp_path) as league:
            fillers = [await league.sdk(f"filler{i}") for i in range(2)]
            bot = await league.client(kind, "tested", modules)
            first = (await bot.event("assignment"))["match_id"]
            await bot.decisions(3, first)
            journals = league.folder / "league-data" / "journals"
            assert [p.name for p in journals.iterdir()] == [f"{first}.journal"], "the running match keeps a journal"
            await league.restart(kill=kill)
            # The restarted league plays the match on from its journal: every bot comes back to its seat with its
            # seat token and finishes the match, with no fault.
            await bot.event("match_ended", match_id=first)
            played = await league.final(first)
            assert played.status == "finished" and played.places is not None, played
            assert all(faults == {} for faults in played.faults), played.faults
            (resumed,) = record_lines(played, "resumed")
            assert resumed["detail"] == "the league server stopped during this match; it resumed it from its journal" and resumed["at"]
            lines = played.record or []
            after = lines[lines.index(resumed) :]
            for seat in range(len(played.seats)):
                kinds = [line["type"] for line in after if line.get("seat") == seat and line["type"] in ("away", "back")]
                assert kinds == ["away", "back"], f"seat {seat} is away after the restart, then back: {kinds}"
                (away,) = [line for line in after if line["type"] == "away" and line["seat"] == seat]
                assert str(away["detail"]).startswith(AWAY_AFTER_RESTART)
            assert len(record_lines(played, "header")) == 1 and len(record_lines(played, "result")) == 1
            for filler in fillers:
                assert filler.seen("match_ended", match_id=first)
            # Counted once: one final result for the fixture, and its journal is gone once the result is stored.
            assert league.result_rows(first) == [("finished", 1)]
            await bot.wait_for("the journal removed", lambda: not any(journals.iterdir()) or None, timeout_s=10)
            # And the ladder plays on.
            after_restart = await bot.wait_for("a next match", lambda: [e for e in bot.seen("assignment") if e["match_id"] != first])
            await bot.event("match_ended", match_id=after_restart[0]["match_id"])

    run(scenario(), timeout=240)
