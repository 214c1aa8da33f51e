"""Seats started ahead: the next match's sandboxes start while a match plays, and go without a trace when it is called off."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from polignac import preset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac_arena.league.config import LeagueConfig, parse_league_config
from polignac_arena.league.entrants import Entrant, LeagueFixture
from polignac_arena.league.ladder import Ladder
from polignac_arena.league.seats_ahead import SeatsAhead
from polignac_arena.league.store import LeagueLimits, LeagueStore, Version
from polignac_arena.referee import MatchHost, MatchResult, RefereeServer, TimeControl
from polignac_arena.referee.record import read_record
from polignac_arena.replay import replay_lines
from polignac_arena.seats import SeatContext, SeatError, SeatLauncher, SeatProcess, launcher_for
from polignac_arena.seats.sandbox import SandboxProcess
from polignac_arena.seats.uids import processes_of_uid
from polignac_arena.settings import SeatKind
from polignac_arena.statuses import MatchStatus
from polignac_arena.submission import Submission, load_submission
from polignac_arena.tournament.config import ConfigError
from tests.referee.helpers import run

ROOT = Path(__file__).resolve().parents[2]
LIMITS = LeagueLimits(active_bots=10)
LEAGUE = """
name = "test"
table_size = 3
parallel = 1
seed = 5
[rules]
limit = 4
[time]
move_ms = 2000
bank_ms = 4000
startup_ms = 15000
[seats]
trusted = true
[ladder]
new_version_matches = 0
seats_ahead = {ahead}
"""
FOLDERS = {"alpha@1": "heuristic", "alpha@2": "heuristic", "beta@1": "random", "gamma@1": "cautious"}


def prior(inherited: tuple[float, float] | None) -> tuple[float, float]:
    return ((inherited[0] if inherited else 25.0), 25.0 / 3)


class Recording(SeatLauncher):
    """The machine's ``process`` launcher (bubblewrap when usable), keeping every seat it starts and when."""

    def __init__(self) -> None:
        self.inner = launcher_for(SeatKind.PROCESS)
        self.kind = self.inner.kind
        self.seats: list[tuple[SeatContext, SeatProcess, float]] = []
        self.started = asyncio.Event()
        self.fail: set[tuple[str, int]] = set()
        """(match id, seat) of the seats that cannot start."""

    def unavailable(self) -> str | None:
        return self.inner.unavailable()

    def refusal(self, trusted: bool) -> str | None:
        return self.inner.refusal(trusted)

    async def start(self, context: SeatContext) -> SeatProcess:
        at = time.monotonic()
        if (context.match_id, context.seat) in self.fail:
            raise SeatError(f"seat {context.seat} cannot start (the test says so)")
        seat = await self.inner.start(context)
        self.seats.append((context, seat, at))
        self.started.set()
        return seat

    def of(self, match_id: str) -> list[tuple[SeatContext, SeatProcess, float]]:
        return [entry for entry in self.seats if entry[0].match_id == match_id]

    async def until_started(self, match_id: str, seats: int) -> None:
        while len(self.of(match_id)) < seats:
            self.started.clear()
            await self.started.wait()


class TimedServer(RefereeServer):
    """A referee that notes, by match, when its first decision request and its MatchEnded went out; a match in ``hold``
    waits for its event before it runs (its seats started)."""

    def __init__(self) -> None:
        super().__init__("127.0.0.1:0")
        self.first_request: dict[str, float] = {}
        self.ended: dict[str, float] = {}
        self.hold: dict[str, asyncio.Event] = {}

    async def run_match(self, host: MatchHost) -> MatchResult:
        if host.match_id in self.hold:
            await self.hold[host.match_id].wait()

        def sent(seat: int, message: pb.PlayResponse) -> None:
            payload = message.WhichOneof("payload")
            if payload == "decision_request":
                self.first_request.setdefault(host.match_id, time.monotonic())
            elif payload == "match_ended":
                self.ended.setdefault(host.match_id, time.monotonic())

        host.on_message_sent = sent
        return await super().run_match(host)


@dataclass
class League:
    config: LeagueConfig
    store: LeagueStore
    tournament_id: int
    server: TimedServer
    launcher: Recording
    recorded: list[tuple[int, MatchStatus]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def submission_of(self, version: Version) -> Submission | None:
        folder = FOLDERS.get(version.label)
        return None if folder is None else load_submission(ROOT / "sample_bots" / folder)

    def on_recorded(self, index: int, status: MatchStatus) -> None:
        self.recorded.append((index, status))
        self.changed.set()

    async def until(self, done: Callable[[], bool]) -> None:
        while not done():
            self.changed.clear()
            await self.changed.wait()

    def ladder(self, tmp_path: Path) -> Ladder:
        return Ladder(
            self.store,
            self.tournament_id,
            self.config,
            self.server,
            submission_of=self.submission_of,
            launcher=self.launcher,
            record_dir=tmp_path / "records",
            on_recorded=self.on_recorded,
        )


@asynccontextmanager
async def league(tmp_path: Path, ahead: int = 1) -> AsyncIterator[League]:
    """Three uploaded bots at tables of three, one table at a time: each version may play two matches at once, so
    while one match plays the next one's seats may start."""
    config = parse_league_config(LEAGUE.format(ahead=ahead), tmp_path / "league.toml")
    store = LeagueStore(config.store)
    tournament_id = store.arena.create_tournament(config.name, config.identity(), [])
    store.add_author("ada")
    for bot in ("alpha", "beta", "gamma"):
        version, _ = store.add_upload("ada", bot, "0" * 64, LIMITS)
        store.finish_validation(version.id, True, "", tournament_id, prior)
    server = TimedServer()
    await server.start()
    try:
        yield League(config, store, tournament_id, server, Recording())
    finally:
        await server.stop(grace=0.5)
        store.close()


def processes_of(token: str) -> list[int]:
    """The processes on this machine whose environment holds a seat's token (a bot, or anything it started)."""
    found = []
    needle = f"POLIGNAC_TOKEN={token}".encode()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                environ = Path(entry.path, "environ").read_bytes()
            except OSError:
                continue  # gone, or not ours to read
            if needle in environ.split(b"\0"):
                found.append(int(entry.name))
    return found


def assert_gone(seats: list[tuple[SeatContext, SeatProcess, float]]) -> None:
    """Nothing of these seats is left: no process, no uid's process, no cgroup, no work folder."""
    assert seats
    for context, process, _ in seats:
        assert process.returncode is not None, f"seat {context.seat} of {context.match_id} still runs"
        assert processes_of(context.token) == [], f"a process of seat {context.seat} of {context.match_id} outlived it"
        if isinstance(process, SandboxProcess):
            assert process.uid is None or processes_of_uid(process.uid) == []
            assert not any(folder.exists() for folder in process.cgroup_dirs)
        assert not context.workdir.exists() and not context.workdir.parent.exists(), "its match folder was not removed"


@pytest.mark.parametrize("ahead", [1, 0])
def test_the_next_matches_seats_start_while_a_match_plays(tmp_path: Path, ahead: int) -> None:
    """Seated ahead, the next match's bots start before the match before it ends (and not with ``seats_ahead = 0``); the
    results are what they always are: finished, rated in order, with records that replay."""

    async def scenario() -> None:
        async with league(tmp_path, ahead) as lg:
            ladder = lg.ladder(tmp_path)
            running = asyncio.ensure_future(ladder.run())
            await lg.until(lambda: len(lg.recorded) >= 2)
            await ladder.drain(30)
            await running
            first, second = "test-000000", "test-000001"
            starts = [at for _, _, at in lg.launcher.of(second)]
            assert len(starts) == 3
            if ahead:
                assert max(starts) < lg.server.ended[first], "the second match's seats started once the first had ended"
            else:
                assert min(starts) > lg.server.ended[first], "a seat started before a table was free"
            assert lg.server.first_request[second] > lg.server.ended[first]
            fixtures = lg.store.arena.fixtures(lg.tournament_id)
            results = lg.store.arena.list_results(lg.tournament_id)
            assert [f.index for f in fixtures] == list(range(len(fixtures))) and len(results) == len(fixtures) >= 2
            assert all(r.status == "finished" and r.places is not None for r in results)
            assert lg.store.arena.get_tournament(lg.tournament_id).rating_cursor == len(fixtures)  # type: ignore[union-attr]  # the league's tournament exists
            ratings = lg.store.arena.ratings(lg.tournament_id)
            assert sorted(ratings) == ["alpha@1", "beta@1", "gamma@1"] and all(sigma < 25 / 3 for _, sigma in ratings.values())
            for result in results:
                assert replay_lines(read_record(tmp_path / "records" / f"{result.match_id}.jsonl")).divergence is None
            assert ladder.running == [] and ladder.seated_ahead == [] and lg.server.running_matches == []
            assert_gone(lg.launcher.seats)
            counts = [
                line for line in ladder.metrics.page().decode().splitlines() if line.startswith("polignac_table_refill_seconds_count")
            ]
            assert counts == [f"polignac_table_refill_seconds_count {len(results) - 1}.0"], "each table refill is timed"

    run(scenario(), timeout=60)


@pytest.mark.parametrize("leaves", ["retired", "disabled", "paused"])
def test_a_match_seated_ahead_that_can_no_longer_be_played_is_not_and_its_sandboxes_go(tmp_path: Path, leaves: str) -> None:
    """A version of it retired by a new one, or its bot disabled, or the league paused: the match seated ahead is called
    off (the match that plays goes on)."""

    async def scenario() -> None:
        async with league(tmp_path) as lg:
            lg.server.hold["test-000000"] = asyncio.Event()  # the table plays on until the end of the test
            ladder = lg.ladder(tmp_path)
            assert ladder.start_due() == 1
            [(ahead_id, labels)] = ladder.seated_ahead
            assert ahead_id == "test-000001" and "alpha@1" in labels
            [waiting] = [match.task for match in ladder._ahead if match.task is not None]
            await lg.launcher.until_started(ahead_id, 3)
            if leaves == "retired":
                version, _ = lg.store.add_upload("ada", "alpha", "1" * 64, LIMITS)
                lg.store.finish_validation(version.id, True, "", lg.tournament_id, prior)  # alpha@2 retires alpha@1
            elif leaves == "disabled":
                lg.store.set_disabled("alpha", True)
            else:
                lg.store.set_setting("paused", "1")
            assert ladder.start_due() == 0  # the table still plays: nothing starts, the match seated ahead is called off
            await waiting
            assert all(match_id != ahead_id for match_id, _ in ladder.seated_ahead)
            assert [host.match_id for host in lg.server.running_matches] == ["test-000000"]
            assert_gone(lg.launcher.of(ahead_id))
            assert not (tmp_path / "records" / f"{ahead_id}.jsonl").exists()
            lg.server.hold["test-000000"].set()
            await ladder.drain(30)
            # Nothing public of it: no fixture, no result; the match that was playing finished as ever.
            assert [f.index for f in lg.store.arena.fixtures(lg.tournament_id)] == [0]
            assert [(r.match_id, r.status) for r in lg.store.arena.list_results(lg.tournament_id)] == [("test-000000", "finished")]
            assert lg.recorded == [(0, "finished")]
            assert_gone(lg.launcher.seats)

    run(scenario(), timeout=60)


def test_a_seat_that_cannot_start_ahead_forfeits_as_at_any_start(tmp_path: Path) -> None:
    """Not the league's doing: the match is played in its turn and recorded, the seat forfeiting as crashed."""

    async def scenario() -> None:
        async with league(tmp_path) as lg:
            lg.launcher.fail = {("test-000001", 0)}
            ladder = lg.ladder(tmp_path)
            running = asyncio.ensure_future(ladder.run())
            await lg.until(lambda: len(lg.recorded) >= 2)
            await ladder.drain(30)
            await running
            result = lg.store.arena.get_result("test-000001")
            assert result is not None and result.status == "finished" and result.places is not None
            assert result.faults[0].get("crashed") == 1 and result.faults[1:] == ({}, {})
            assert lg.server.first_request["test-000001"] > lg.server.ended["test-000000"]
            assert_gone(lg.launcher.seats)

    run(scenario(), timeout=60)


@pytest.mark.parametrize("how", ["drain", "cancel"])
def test_a_league_stopped_with_seats_started_ahead_leaves_no_process(tmp_path: Path, how: str) -> None:
    async def scenario() -> None:
        async with league(tmp_path) as lg:
            ladder = lg.ladder(tmp_path)
            running = asyncio.ensure_future(ladder.run())
            await lg.launcher.until_started("test-000001", 3)
            assert ladder.seated_ahead, "no match waits with its seats started"
            if how == "drain":
                await ladder.drain(0.1)
                await running
            else:
                running.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await running
            assert ladder.running == [] and ladder.seated_ahead == [] and lg.server.running_matches == []
            assert_gone(lg.launcher.seats)
            # The match cut short is void (no journal kept here); a match that waited left nothing.
            played = {r.match_id for r in lg.store.arena.list_results(lg.tournament_id)}
            assert len(lg.store.arena.fixtures(lg.tournament_id)) == len(played)
            assert all(status in ("finished", "aborted") for _, status in lg.recorded)

    run(scenario(), timeout=60)


def test_a_seat_started_ahead_has_its_startup_allowance_from_its_start_not_from_its_turn(tmp_path: Path) -> None:
    """Seats that started ``startup_ms`` ago and never said Hello time out as the match begins: their wait for a table
    gave them no more time than a match that starts with its seats would."""

    async def scenario() -> None:
        server = RefereeServer(None)
        await server.start()
        try:
            rules = preset("classic", players=3, limit=4)
            sockets = []
            for seat in range(3):
                (tmp_path / f"seat{seat}").mkdir()
                sockets.append(tmp_path / f"seat{seat}" / "referee.sock")
            host = await server.create_seated_match(rules, 1, TimeControl(move_ms=1000, bank_ms=0, startup_ms=30_000), sockets=sockets)
            host.seats_started = time.monotonic() - 31  # started 31 s ago, for an allowance of 30 s
            result = await asyncio.wait_for(server.run_match(host), 10)  # far less than the 30 s a fresh allowance gives
            timeouts = [line for line in result.record if "did not connect and say Hello within 30000 ms" in str(line.get("detail"))]
            # Seats 0 and 1 time out at once, and the match is over: seat 2 is the last one left.
            assert [line["seat"] for line in timeouts] == [0, 1] and result.status is MatchStatus.FINISHED
        finally:
            await server.stop(grace=0.5)

    run(scenario(), timeout=30)


def test_seats_ahead_is_a_bounded_setting_and_never_passes_one_match_a_table(tmp_path: Path) -> None:
    assert parse_league_config("", tmp_path / "league.toml").seats_ahead == 1
    assert parse_league_config("[ladder]\nseats_ahead = 0\n", tmp_path / "league.toml").seats_ahead == 0
    with pytest.raises(ConfigError, match=r"ladder.seats_ahead"):
        parse_league_config("[ladder]\nseats_ahead = 65\n", tmp_path / "league.toml")
    ahead = SeatsAhead(4)
    assert ahead.has_room(parallel=2) and not SeatsAhead(0).has_room(parallel=2)

    async def fill() -> None:
        fixture = LeagueFixture(0, 1, (Entrant("alpha@1", "alpha"),))
        ahead.add(fixture, "test-000000")
        ahead.add(fixture, "test-000001")

    run(fill(), timeout=10)
    assert len(ahead) == 2 and not ahead.has_room(parallel=2) and ahead.has_room(parallel=3)
