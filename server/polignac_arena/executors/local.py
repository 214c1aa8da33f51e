"""The local executor: each match on this machine, with its own referee and seats (the default)."""

from __future__ import annotations

from pathlib import Path

from polignac_arena.executors.base import MatchJob, PlayedMatch, local_node_name
from polignac_arena.referee import MatchResult
from polignac_arena.runner import run_local_match

__all__ = ["LocalExecutor", "play_here"]


async def play_here(job: MatchJob, record_path: Path | None = None) -> MatchResult:
    """Play ``job`` on this machine, with its own referee and seats (:func:`~polignac_arena.runner.run_local_match`)."""
    result, _ = await run_local_match(
        job.bots,
        job.rules,
        job.seed,
        job.time_control,
        game=job.game,
        seat_kind=job.seat_kind,
        trusted=job.trusted,
        limits=job.limits,
        record_path=record_path,
        match_id=job.match_id,
    )
    return result


class LocalExecutor:
    """Plays every match here, as :func:`polignac_arena.runner.run_local_match` does."""

    kind = "local"

    def __init__(self) -> None:
        self.node = local_node_name()

    async def start(self) -> None:
        """Nothing to connect to."""

    async def play(self, job: MatchJob, record_path: Path | None = None) -> PlayedMatch:
        return PlayedMatch(await play_here(job, record_path), self.node)

    async def close(self) -> None:
        """Nothing to let go of."""
