"""The ladder and an executor: matches of uploaded versions go to it, matches with a remote bot stay on the league's referee."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from polignac_arena.executors import ClusterLost, LocalExecutor, MatchJob, PlayedMatch, local_node_name
from polignac_arena.seats import SeatKind
from tests.league.test_ladder_loop import league
from tests.referee.helpers import run


@dataclass
class RecordingExecutor:
    """Plays matches here, as a cluster node named ``elsewhere`` would, and keeps the jobs it was handed."""

    kind: str = "recording"
    jobs: list[MatchJob] = field(default_factory=list)
    local: LocalExecutor = field(default_factory=LocalExecutor)

    async def start(self) -> None:
        """Nothing to start."""

    async def play(self, job: MatchJob, record_path: Path | None = None) -> PlayedMatch:
        self.jobs.append(job)
        played = await self.local.play(job, record_path)
        return replace(played, node="elsewhere")

    async def close(self) -> None:
        """Nothing to close."""


@pytest.mark.slow  # several matches of real processes
def test_uploaded_only_matches_go_to_the_executor_and_remote_ones_stay_here(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with league(tmp_path) as lg:
            lg.online.add("far@1.0")
            executor = RecordingExecutor()
            ladder = lg.ladder(executor=executor, record_dir=tmp_path / "records")
            running = asyncio.ensure_future(ladder.run())
            await lg.until(lambda: len(lg.recorded) >= 5 and bool(executor.jobs) and bool(lg.offered))
            await ladder.drain(30)
            await running
            await asyncio.gather(*lg.bots)
            fixtures = {f.index: f for f in lg.store.arena.fixtures(lg.tournament_id)}
            results = lg.store.arena.list_results(lg.tournament_id)
            assert len(results) == len(fixtures) and all(r.status == "finished" for r in results)
            sent = {job.match_id for job in executor.jobs}
            for result in results:
                remote = "far@1.0" in fixtures[result.idx].seats
                assert (result.match_id in sent) is not remote, result
                assert result.node == (local_node_name() if remote else "elsewhere")
            for job in executor.jobs:  # as the league's file says, the bots in seat order
                index = next(r.idx for r in results if r.match_id == job.match_id)
                folders = {"alpha@1": "heuristic@1.1", "beta@1": "random@1.1", "gamma@1": "cautious@1.1"}
                assert [bot.label for bot in job.bots] == [folders[label] for label in fixtures[index].seats]
                assert job.seat_kind is SeatKind.PROCESS and job.trusted and job.seed == fixtures[index].seed
                assert (tmp_path / "records" / f"{job.match_id}.jsonl").exists()

    run(scenario(), timeout=120)


@dataclass
class LostCluster:
    """An executor whose cluster's head is gone: every match fails as the Ray executor then fails it."""

    kind: str = "lost"
    jobs: list[MatchJob] = field(default_factory=list)

    async def start(self) -> None:
        """Nothing to start."""

    async def play(self, job: MatchJob, record_path: Path | None = None) -> PlayedMatch:
        self.jobs.append(job)
        await asyncio.sleep(0)
        raise ClusterLost("10.0.0.5:6379", "its port has not answered for 3 s")

    async def close(self) -> None:
        """Nothing to close."""


def test_a_lost_cluster_stops_the_ladder_instead_of_voiding_match_after_match(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with league(tmp_path) as lg:
            executor = LostCluster()
            ladder = lg.ladder(executor=executor, record_dir=tmp_path / "records")
            with pytest.raises(ClusterLost, match=r"head at 10\.0\.0\.5:6379 is gone"):
                await asyncio.wait_for(ladder.run(), 30)
            assert 1 <= len(executor.jobs) <= lg.config.parallel, "no new match once the cluster is known lost"
            results = lg.store.arena.list_results(lg.tournament_id, attempts=True)
            assert all(r.status == "aborted" for r in results), results  # not the matches' fault: no error on their record
            assert ladder.running == []

    run(scenario(), timeout=60)
