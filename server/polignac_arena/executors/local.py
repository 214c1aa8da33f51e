"""The local executor: each match on this machine, with its own referee and seats (the default).

It plays a match as a Ray node does (:func:`~polignac_arena.executors.node.play_shipped`): each
submission folder is packed once per run, unpacked into this machine's cache by its hash, and
built there once per seat kind in that kind's sandbox, so a tournament gives the same results
here as on a cluster, and the organiser's folders are never built in.
"""

from __future__ import annotations

from pathlib import Path

from polignac_arena.executors.base import MatchJob, PlayedMatch, local_node_name
from polignac_arena.executors.node import play_shipped
from polignac_arena.executors.shipping import Shipper
from polignac_arena.settings import ExecutorKind

__all__ = ["LocalExecutor"]


def _bytes(archive: object) -> bytes:
    assert isinstance(archive, bytes)
    return archive


class LocalExecutor:
    """Plays every match here, as :func:`~polignac_arena.executors.node.play_shipped` does on a node."""

    kind = ExecutorKind.LOCAL

    def __init__(self) -> None:
        self.node = local_node_name()
        self._shipper = Shipper(lambda data: data)

    async def start(self) -> None:
        """Nothing to connect to."""

    async def play(self, job: MatchJob, record_path: Path | None = None) -> PlayedMatch:
        shipped = [await self._shipper.ship(bot) for bot in job.bots]
        return await play_shipped(job, shipped, _bytes, self.node, record_path)

    async def close(self) -> None:
        self._shipper.close()
