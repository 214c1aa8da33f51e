"""The ladder loop: matches kept running, results stored once each, reruns first, pause, drain, restart."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.bot import MatchOutcome, run_async
from polignac.bots import builtin_bot
from polignac_arena.league.config import LeagueConfig, parse_league_config
from polignac_arena.league.entrants import Entrant, LeagueFixture
from polignac_arena.league.interrupted import INTERRUPTED
from polignac_arena.league.ladder import Ladder
from polignac_arena.league.store import LeagueLimits, LeagueStore, Version
from polignac_arena.referee import RefereeServer
from polignac_arena.referee.record import read_record
from polignac_arena.replay import replay_lines
from polignac_arena.seats.process import ProcessLauncher
from polignac_arena.statuses import MatchStatus
from polignac_arena.submission import Submission, load_submission
from tests.referee.helpers import RawSeat, run

ROOT = Path(__file__).resolve().parents[2]
LIMITS = LeagueLimits(active_bots=10)
LEAGUE = """
name = "test"
table_size = 3
parallel = 2
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
new_version_matches = 2
"""
FOLDERS = {"alpha@1": "heuristic", "beta@1": "random", "gamma@1": "cautious"}


def prior(inherited: tuple[float, float] | None) -> tuple[float, float]:
    return ((inherited[0] if inherited else 25.0), 25.0 / 3)


@dataclass
class League:
    """A league store with three uploaded bots and one remote bot, a referee, and what the ladder did."""

    config: LeagueConfig
    store: LeagueStore
    tournament_id: int
    server: RefereeServer
    online: set[str] = field(default_factory=set)
    recorded: list[tuple[int, MatchStatus]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    offered: list[tuple[str, str]] = field(default_factory=list)
    released: list[tuple[str, str]] = field(default_factory=list)
    bots: list[asyncio.Future[MatchOutcome]] = field(default_factory=list)

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

    async def polite(self, label: str, seat: int, match_id: str, token: str) -> bool:
        """A remote bot that takes every seat and plays it."""
        self.offered.append((label, match_id))
        self.bots.append(asyncio.ensure_future(run_async(builtin_bot("cautious", seat), self.server.address, token)))
        return True

    def ladder(self, **kwargs: object) -> Ladder:
        options: dict[str, object] = {
            "submission_of": self.submission_of,
            "online": lambda: self.online,
            "assign": self.polite,
            "release": lambda label, match_id: self.released.append((label, match_id)),
            "launcher": ProcessLauncher(),
            "on_recorded": self.on_recorded,
        } | kwargs
        return Ladder(self.store, self.tournament_id, self.config, self.server, **options)  # type: ignore[arg-type]  # keyword options of mixed types, given as one dict


@asynccontextmanager
async def league(tmp_path: Path, parallel: int = 2) -> AsyncIterator[League]:
    config = parse_league_config(LEAGUE.replace("parallel = 2", f"parallel = {parallel}"), tmp_path / "league.toml")
    store = LeagueStore(config.store)
    tournament_id = store.arena.create_tournament(config.name, config.identity(), [])
    store.add_author("ada")
    store.add_author("bob")
    for bot in ("alpha", "beta", "gamma"):
        version, _ = store.add_upload("ada", bot, "0" * 64, LIMITS)
        store.finish_validation(version.id, True, "", tournament_id, prior)
    store.claim_remote("bob", "far", "1.0", LIMITS, prior, tournament_id)
    server = RefereeServer("127.0.0.1:0")
    await server.start()
    try:
        yield League(config, store, tournament_id, server)
    finally:
        await server.stop(grace=0.5)
        store.close()


@pytest.mark.slow  # several matches of real processes
def test_the_ladder_keeps_matches_running_and_stores_each_result_once(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with league(tmp_path) as lg:
            lg.online.add("far@1.0")
            ladder = lg.ladder(record_dir=tmp_path / "records")
            running = asyncio.ensure_future(ladder.run())
            await lg.until(lambda: len(lg.recorded) >= 4)
            await ladder.drain(30)
            await running
            await asyncio.gather(*lg.bots)
            fixtures = lg.store.arena.fixtures(lg.tournament_id)
            results = lg.store.arena.list_results(lg.tournament_id)
            assert len(results) == len(fixtures) >= 4 and all(r.status == "finished" for r in results)
            assert sorted(index for index, _ in lg.recorded) == list(range(len(fixtures)))
            assert lg.store.arena.get_tournament(lg.tournament_id).rating_cursor == len(fixtures)  # type: ignore[union-attr]  # the league's tournament exists
            for fixture in fixtures:
                assert len({label.split("@")[0] for label in fixture.seats}) == 3
            labels = collections.Counter(label for fixture in fixtures for label in fixture.seats)
            assert set(labels) == {"alpha@1", "beta@1", "gamma@1", "far@1.0"}
            assert sorted(lg.released) == sorted(lg.offered) and ladder.running == []
            assert (tmp_path / "records" / f"{results[0].match_id}.jsonl").exists()
            ratings = lg.store.arena.ratings(lg.tournament_id)
            assert all(ratings[label][1] < 25 / 3 for label in labels)

    run(scenario(), timeout=120)


def test_paused_the_ladder_starts_nothing(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with league(tmp_path) as lg:
            lg.store.set_setting("paused", "1")
            ladder = lg.ladder()
            assert ladder.start_due() == 0 and lg.store.arena.fixtures(lg.tournament_id) == []
            lg.store.set_setting("paused", "0")
            # The remote bot is offline: the three uploaded ones, each in two matches at most.
            assert ladder.start_due() == 2 and ladder.start_due() == 0
            assert len(ladder.running) == 2
            await ladder.drain(30)
            assert [status for _, status in lg.recorded] == ["finished", "finished"]

    run(scenario(), timeout=60)


def test_the_notices_of_a_burst_of_joins_make_one_look_for_tables(tmp_path: Path) -> None:
    """Each bot that joins notifies the ladder; a thousand joining at once must not have it read the store a thousand
    times on the loop."""

    async def scenario() -> None:
        async with league(tmp_path) as lg:
            lg.store.set_setting("paused", "1")
            ladder = lg.ladder(poll_s=600.0)
            looks: list[int] = []
            looked = asyncio.Event()
            plain = ladder.start_due

            def counted() -> int:
                looks.append(1)
                looked.set()
                return plain()

            ladder.start_due = counted  # type: ignore[method-assign]  # counts the looks of the real method
            running = asyncio.ensure_future(ladder.run())
            await looked.wait()  # the look at its start
            looked.clear()
            for _ in range(200):  # notices one loop turn apart, as Joins come
                ladder.notify()
                await asyncio.sleep(0)
            await looked.wait()
            looked.clear()
            ladder.notify()  # a later notice is looked at too
            await looked.wait()
            assert 3 <= len(looks) < 20  # one look for the burst (more only if this process was stalled for a while)
            await ladder.drain(5)
            await running

    run(scenario(), timeout=60)


def test_a_rerun_request_is_played_first_with_the_same_seats_and_deal(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with league(tmp_path, parallel=1) as lg:
            lg.online.add("far@1.0")
            ladder = lg.ladder()
            assert ladder.start_due() == 1
            await lg.until(lambda: len(lg.recorded) == 1)
            (first,) = lg.store.arena.list_results(lg.tournament_id)
            request = lg.store.request_rerun(first.match_id)
            assert ladder.start_due() == 1
            await ladder.drain(30)
            await asyncio.gather(*lg.bots)
            original, again = lg.store.arena.fixtures(lg.tournament_id)
            assert again.seats == original.seats and again.seed == original.seed and again.group == {"rerun": request}
            assert lg.store.pending_reruns() == []
            assert [status for _, status in lg.recorded] == ["finished", "finished"]

    run(scenario(), timeout=60)


def test_a_remote_bot_that_declines_leaves_no_match_behind_and_gets_a_rest(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with league(tmp_path) as lg:
            lg.online.add("far@1.0")
            lg.store.set_disabled("gamma", True)  # alpha, beta and far: every table needs far
            offers: list[str] = []

            async def declines(label: str, seat: int, match_id: str, token: str) -> bool:
                offers.append(label)
                return False

            def release(label: str, match_id: str) -> None:
                lg.released.append((label, match_id))
                lg.changed.set()

            paused: list[tuple[str, float, str]] = []
            ladder = lg.ladder(assign=declines, release=release, pause=lambda label, seconds, why: paused.append((label, seconds, why)))
            assert ladder.start_due() == 1, "a remote bot plays one match at a time"
            await lg.until(lambda: bool(lg.released))
            assert offers == ["far@1.0"] and lg.released == [("far@1.0", "test-000000")] and ladder.running == []
            # No match, public or void: the offer was never a fixture (a bot that joins and leaves costs nothing).
            assert lg.recorded == [] and lg.store.arena.list_results(lg.tournament_id) == []
            assert lg.store.arena.fixtures(lg.tournament_id) == []
            assert ladder.start_due() == 0, "the bot that declined is left out for its rest"
            assert paused == [("far@1.0", 30.0, "match test-000000 declined or not answered: no match is offered for 30 s")]
            lg.store.set_disabled("gamma", False)
            assert ladder.start_due() == 2  # two tables of alpha, beta, gamma (an uploaded version plays two at once)
            assert sorted(match for match, _ in ladder.running) == ["test-000000", "test-000001"]  # the free index taken first
            await lg.until(lambda: len(lg.recorded) == 2)
            assert sorted(lg.recorded) == [(0, "finished"), (1, "finished")]
            assert all("far@1.0" not in result.seats for result in lg.store.arena.list_results(lg.tournament_id))
            assert lg.store.arena.get_tournament(lg.tournament_id).rating_cursor == 2  # type: ignore[union-attr]  # the league's tournament exists

    run(scenario(), timeout=120)


def test_a_drain_past_its_deadline_aborts_the_match_and_stops_its_seats(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with league(tmp_path) as lg:
            lg.online.add("far@1.0")
            asked = asyncio.Event()
            stalled: list[asyncio.Future[pb.PlayResponse | None]] = []

            async def stall(raw: RawSeat) -> pb.PlayResponse | None:
                while True:
                    message = await raw.read(timeout=60)
                    if message is None or message.WhichOneof("payload") == "match_ended":
                        return message
                    if message.WhichOneof("payload") == "decision_request":
                        asked.set()

            async def never_answers(label: str, seat: int, match_id: str, token: str) -> bool:
                raw = RawSeat(lg.server.address, token)
                await raw.open()
                await raw.hello(name="stalled")
                stalled.append(asyncio.ensure_future(stall(raw)))
                return True

            ladder = lg.ladder(assign=never_answers, record_dir=tmp_path / "records")
            lg.store.set_disabled("beta", True)  # alpha, gamma and far, whose seat stalls the match
            assert ladder.start_due() == 1
            await asyncio.wait_for(asked.wait(), 30)
            await ladder.drain(0.2)
            (result,) = lg.store.arena.list_results(lg.tournament_id)
            assert result.status == "aborted" and result.places is None
            stored = lg.store.arena.get_result(result.match_id)
            assert stored is not None and stored.record and stored.record[-1]["status"] == "aborted"
            (ended,) = await asyncio.gather(*stalled)
            assert ended is not None and ended.match_ended.status == "aborted"
            assert lg.server.running_matches == [] and ladder.running == []

    run(scenario(), timeout=60)


def test_a_restarted_ladder_voids_the_matches_a_killed_one_left(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with league(tmp_path) as lg:
            lg.store.schedule(lg.tournament_id, ["alpha@1", "beta@1", "gamma@1"], 1)  # drawn, then the server was killed
            ladder = lg.ladder(record_dir=tmp_path / "records")
            assert ladder.void_interrupted() == [0]
            assert ladder.void_interrupted() == []
            (result,) = lg.store.arena.list_results(lg.tournament_id)
            assert result.status == "aborted" and result.match_id == "test-000000"
            # Its record says what happened: who sat where, and that the server stopped during it.
            stored = lg.store.arena.get_result(result.match_id)
            assert stored is not None and stored.record is not None
            lines: list[dict[str, Any]] = stored.record
            header, ended = lines
            assert [seat["name"] + "@" + seat["version"] for seat in header["seats"]] == ["alpha@1", "beta@1", "gamma@1"]
            assert header["seed"] == 1 and header["match_id"] == "test-000000"
            assert ended["status"] == "aborted" and ended["places"] is None and ended["reason"] == INTERRUPTED
            assert replay_lines(read_record(tmp_path / "records" / "test-000000.jsonl")).divergence is None, "replay verify reads it"
            assert lg.store.arena.get_tournament(lg.tournament_id).rating_cursor == 1  # type: ignore[union-attr]  # the league's tournament exists
            assert ladder.start_due() == 2
            await ladder.drain(30)
            assert [f.index for f in lg.store.arena.fixtures(lg.tournament_id)] == [0, 1, 2]
            assert [status for _, status in lg.recorded] == ["aborted", "finished", "finished"]

    run(scenario(), timeout=60)


def test_a_bot_that_keeps_declining_is_paused_longer_and_an_acceptance_forgives_it(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with league(tmp_path) as lg:
            paused: list[tuple[str, float, str]] = []
            answers = iter([False, False, True, False, False, False])

            async def assign(label: str, seat: int, match_id: str, token: str) -> bool:
                return next(answers)

            ladder = lg.ladder(assign=assign, pause=lambda label, seconds, why: paused.append((label, seconds, why)))
            fixture = LeagueFixture(0, 1, (Entrant("far@1.0", "far"),))
            for number in range(6):
                if not await ladder._hand_out(fixture, 0, f"test-{number:06d}", "token"):
                    ladder._strike("far@1.0", f"test-{number:06d}")
            assert [seconds for _, seconds, _ in paused] == [30.0, 30.0, 30.0, 30.0, 300.0]
            assert paused[-1][2] == (
                "3 assignments in a row declined or not answered (the last: match test-000005): no match is offered for 300 s"
            )

    run(scenario(), timeout=60)
