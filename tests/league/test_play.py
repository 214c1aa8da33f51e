"""One league match: uploaded versions in launched seats beside remote bots on the referee's address."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest

from polignac import preset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.bot import BotConnectionError, MatchOutcome, run_async
from polignac.bots import builtin_bot
from polignac_arena.league.entrants import Entrant, LeagueFixture
from polignac_arena.league.play import LeagueMatchError, RemoteDeclined, RemoteHandOut, play_league_match
from polignac_arena.league.referee_orders import PlayOrder
from polignac_arena.referee import MatchResult, RefereeServer, TimeControl
from polignac_arena.seats import SeatContext, SeatLauncher, SeatLimits, SeatProcess
from polignac_arena.seats.process import ProcessLauncher
from polignac_arena.submission import load_submission
from tests.referee.helpers import RawSeat, run

ROOT = Path(__file__).resolve().parents[2]
RULES = preset("classic", players=4, limit=4)
CLOCK = TimeControl(move_ms=2000, bank_ms=4000, startup_ms=15_000)
LIMITS = SeatLimits(memory_mb=256, cpu_seconds=60)


def uploaded(folder: str) -> Entrant:
    submission = load_submission(ROOT / "sample_bots" / folder)
    return Entrant(submission.label, submission.name, submission)


REMOTE_A = Entrant("far-a@1", "far-a")
REMOTE_B = Entrant("far-b@2", "far-b")


class Recording(SeatLauncher):
    """A launcher that keeps every seat it starts (to see them stopped)."""

    def __init__(self, inner: SeatLauncher) -> None:
        self.inner = inner
        self.kind = inner.kind
        self.seats: list[SeatProcess] = []

    def unavailable(self) -> str | None:
        return self.inner.unavailable()

    def refusal(self, trusted: bool) -> str | None:
        return self.inner.refusal(trusted)

    async def start(self, context: SeatContext) -> SeatProcess:
        seat = await self.inner.start(context)
        self.seats.append(seat)
        return seat


class Lobby:
    """Remote bots in the test: each seat handed out starts a built-in bot on the referee's address."""

    def __init__(self, server: RefereeServer, answers: dict[int, bool] | None = None) -> None:
        self.server = server
        self.answers = answers or {}
        self.handed: list[tuple[int, str, str]] = []
        self.bots: list[asyncio.Future[MatchOutcome]] = []
        self.withdrawn: list[tuple[int, str, str]] = []

    def withdraw(self, seat: int, match_id: str, reason: str) -> None:
        self.withdrawn.append((seat, match_id, reason))

    async def __call__(self, seat: int, match_id: str, token: str) -> bool:
        self.handed.append((seat, match_id, token))
        if not self.answers.get(seat, True):
            return False
        self.bots.append(asyncio.ensure_future(run_async(builtin_bot("cautious", seat), self.server.address, token)))
        return True


async def started_referee() -> RefereeServer:
    server = RefereeServer("127.0.0.1:0")
    await server.start()
    return server


def play(
    server: RefereeServer, fixture: LeagueFixture, launcher: SeatLauncher, lobby: RemoteHandOut, tmp_path: Path, trusted: bool = True
) -> Coroutine[Any, Any, MatchResult]:
    return play_league_match(
        server,
        PlayOrder(f"league-{fixture.index:05d}", fixture, RULES, CLOCK, LIMITS, trusted, tmp_path / f"{fixture.index}.jsonl", None, 0.0),
        launcher=launcher,
        remote=lobby,
        withdraw=lobby.withdraw if isinstance(lobby, Lobby) else lambda seat, match_id, reason: None,
    )


def result_line(path: Path) -> dict[str, object]:
    line: dict[str, object] = json.loads(path.read_text().splitlines()[-1])
    return line


def test_two_uploaded_and_two_remote_seats_play_a_league_match(tmp_path: Path) -> None:
    fixture = LeagueFixture(7, 11, (uploaded("heuristic"), REMOTE_A, uploaded("python_stdio"), REMOTE_B))
    launcher = Recording(ProcessLauncher())

    async def scenario() -> None:
        server = await started_referee()
        try:
            lobby = Lobby(server)
            result = await play(server, fixture, launcher, lobby, tmp_path)
            outcomes = await asyncio.gather(*lobby.bots)
            assert result.status == "finished" and result.faults == [{}, {}, {}, {}]
            assert result.names == ("heuristic", "cautious", "python-stdio", "cautious")
            assert [(seat, match_id) for seat, match_id, _ in lobby.handed] == [(1, "league-00007"), (3, "league-00007")]
            assert [o.seat for o in outcomes] == [1, 3] and all(o.status == "finished" for o in outcomes)
            assert all(seat.returncode is not None for seat in launcher.seats) and len(launcher.seats) == 2
            assert result_line(tmp_path / "7.jsonl")["status"] == "finished"
            assert server.running_matches == []
        finally:
            await server.stop(grace=0.5)

    run(scenario())


def test_a_remote_bot_that_declines_leaves_nothing_running(tmp_path: Path) -> None:
    fixture = LeagueFixture(3, 5, (uploaded("heuristic"), REMOTE_A, uploaded("random"), REMOTE_B))
    launcher = Recording(ProcessLauncher())

    async def scenario() -> None:
        server = await started_referee()
        try:
            lobby = Lobby(server, answers={3: False})
            with pytest.raises(RemoteDeclined, match=r"seat 3 \('far-b@2'\) declined") as declined:
                await play(server, fixture, launcher, lobby, tmp_path)
            assert declined.value.labels == {3: "far-b@2"}
            assert launcher.seats == [] and server.running_matches == []
            called_off = result_line(tmp_path / "3.jsonl")  # its record says what happened, and nothing was played
            assert called_off["status"] == "aborted" and "called off before it began" in str(called_off["reason"])
            assert [json.loads(line)["type"] for line in (tmp_path / "3.jsonl").read_text().splitlines()] == ["header", "result"]
            # The remote bot that took its seat is told (Withdrawn, on its lobby stream), and its Play stream,
            # never welcomed, ends with the same reason.
            reason = "the remote bot in seat 3 ('far-b@2') declined its seat or did not answer"
            assert lobby.withdrawn == [(1, "league-00003", reason)]
            (accepted,) = await asyncio.gather(*lobby.bots, return_exceptions=True)
            assert isinstance(accepted, BotConnectionError), accepted
            assert (
                str(accepted)
                == f"the referee ended the stream: FAILED_PRECONDITION: match 'league-00003' was called off before it began: {reason}"
            )
        finally:
            await server.stop(grace=0.5)

    run(scenario())


def test_a_match_cancelled_midway_is_aborted_and_stops_every_seat(tmp_path: Path) -> None:
    fixture = LeagueFixture(4, 9, (uploaded("heuristic"), REMOTE_A, uploaded("random"), REMOTE_B))
    launcher = Recording(ProcessLauncher())

    async def scenario() -> None:
        server = await started_referee()
        try:
            asked = asyncio.Event()  # a stalled seat has been asked to decide: the match is under way
            stalled: list[asyncio.Future[pb.PlayResponse | None]] = []

            async def stall(raw: RawSeat) -> pb.PlayResponse | None:
                """Say Hello, never answer; returns MatchEnded's message (None: the stream ended without it)."""
                while True:
                    message = await raw.read(timeout=30)
                    if message is None or message.WhichOneof("payload") == "match_ended":
                        return message
                    if message.WhichOneof("payload") == "decision_request":
                        asked.set()

            async def lobby(seat: int, match_id: str, token: str) -> bool:
                raw = RawSeat(server.address, token)
                await raw.open()
                await raw.hello(name=f"stalled{seat}")
                stalled.append(asyncio.ensure_future(stall(raw)))
                return True

            match = asyncio.ensure_future(play(server, fixture, launcher, lobby, tmp_path))
            under_way = asyncio.ensure_future(asked.wait())
            await asyncio.wait({under_way, match}, return_when=asyncio.FIRST_COMPLETED)
            assert not match.done(), "the match ended without its stalled seats"
            match.cancel()
            with pytest.raises(asyncio.CancelledError):
                await match
            assert len(launcher.seats) == 2 and all(seat.returncode is not None for seat in launcher.seats)
            assert result_line(tmp_path / "4.jsonl")["status"] == "aborted"
            assert server.running_matches == []
            for ended in await asyncio.gather(*stalled):
                assert ended is not None and ended.match_ended.status == "aborted"
        finally:
            await server.stop(grace=0.5)

    run(scenario())


def test_a_match_cancelled_while_remote_bots_are_asked_starts_nothing(tmp_path: Path) -> None:
    fixture = LeagueFixture(5, 9, (uploaded("heuristic"), REMOTE_A, uploaded("random"), REMOTE_B))
    launcher = Recording(ProcessLauncher())

    async def scenario() -> None:
        server = await started_referee()
        try:
            asked = asyncio.Event()

            async def lobby(seat: int, match_id: str, token: str) -> bool:
                asked.set()
                await asyncio.Event().wait()  # the bot never answers
                return True

            match = asyncio.ensure_future(play(server, fixture, launcher, lobby, tmp_path))
            await asked.wait()
            match.cancel()
            with pytest.raises(asyncio.CancelledError):
                await match
            assert launcher.seats == [] and server.running_matches == []
            assert result_line(tmp_path / "5.jsonl")["status"] == "aborted"
        finally:
            await server.stop(grace=0.5)

    run(scenario())


def test_a_seating_the_league_should_not_make_is_refused(tmp_path: Path) -> None:
    async def scenario() -> None:
        server = await started_referee()
        try:
            lobby = Lobby(server)
            short = LeagueFixture(1, 1, (uploaded("heuristic"), REMOTE_A, REMOTE_B))
            with pytest.raises(LeagueMatchError, match="seats 4 players but fixture 1 has 3"):
                await play(server, short, ProcessLauncher(), lobby, tmp_path)
            full = LeagueFixture(2, 1, (uploaded("heuristic"), REMOTE_A, uploaded("random"), REMOTE_B))
            with pytest.raises(LeagueMatchError, match="process seats cannot run league matches here"):
                await play(server, full, ProcessLauncher(), lobby, tmp_path, trusted=False)
            assert lobby.handed == [] and server.running_matches == []
        finally:
            await server.stop(grace=0.5)

    run(scenario())


def test_uploaded_seats_run_in_the_real_sandbox(tmp_path: Path) -> None:
    from polignac_arena.seats.sandbox import SandboxLauncher

    sandbox = SandboxLauncher()
    if sandbox.unavailable() is not None:
        pytest.skip(f"the bubblewrap sandbox is not usable here: {sandbox.unavailable()}")
    launcher = Recording(sandbox)
    fixture = LeagueFixture(8, 13, (REMOTE_A, uploaded("heuristic"), REMOTE_B, uploaded("python_stdio")))

    async def scenario() -> None:
        server = await started_referee()
        try:
            lobby = Lobby(server)
            result = await play(server, fixture, launcher, lobby, tmp_path, trusted=False)
            await asyncio.gather(*lobby.bots)
            assert result.status == "finished" and result.faults == [{}, {}, {}, {}]
            assert result.names == ("cautious", "heuristic", "cautious", "python-stdio")
            assert len(launcher.seats) == 2 and all(seat.returncode is not None for seat in launcher.seats)
        finally:
            await server.stop(grace=0.5)

    run(scenario(), timeout=120)


def test_a_remote_seat_token_is_refused_once_the_match_is_over(tmp_path: Path) -> None:
    fixture = LeagueFixture(9, 3, (uploaded("random"), REMOTE_A, uploaded("random"), REMOTE_B))

    async def scenario() -> None:
        server = await started_referee()
        try:
            lobby = Lobby(server)
            await play(server, fixture, ProcessLauncher(), lobby, tmp_path)
            await asyncio.gather(*lobby.bots)
            raw = RawSeat(server.address, lobby.handed[0][2])
            await raw.open()
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await raw.read()
            assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert refused.value.details() == "match 'league-00009' is over (finished)"
        finally:
            await server.stop(grace=0.5)

    run(scenario())


def test_the_first_decline_calls_the_match_off_without_waiting_for_the_others(tmp_path: Path) -> None:
    fixture = LeagueFixture(6, 5, (REMOTE_A, uploaded("random"), REMOTE_B, uploaded("random")))

    async def scenario() -> None:
        server = await started_referee()
        try:
            withdrawn: list[tuple[int, str, str]] = []
            waiting = asyncio.Event()
            cancelled = asyncio.Event()

            async def lobby(seat: int, match_id: str, token: str) -> bool:
                if seat == 2:
                    return False  # declines at once
                waiting.set()
                try:
                    await asyncio.Event().wait()  # seat 0 never answers
                except asyncio.CancelledError:
                    cancelled.set()
                    raise
                return True

            match = play_league_match(
                server,
                PlayOrder("league-00006", fixture, RULES, CLOCK, LIMITS, True, tmp_path / "6.jsonl", None, 0.0),
                launcher=ProcessLauncher(),
                remote=lobby,
                withdraw=lambda seat, match_id, reason: withdrawn.append((seat, match_id, reason)),
            )
            with pytest.raises(RemoteDeclined, match=r"seat 2 \('far-b@2'\)"):
                await match
            assert waiting.is_set() and cancelled.is_set(), "the silent seat's question is dropped, not waited for"
            assert [(seat, match_id) for seat, match_id, _ in withdrawn] == [(0, "league-00006")]
            assert server.running_matches == []
            assert "seat 2 ('far-b@2') declined its seat" in str(result_line(tmp_path / "6.jsonl")["reason"])
        finally:
            await server.stop(grace=0.5)

    run(scenario(), timeout=20)
