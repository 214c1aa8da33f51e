"""Where matches are played: on this machine (``local``, the default) or on a Ray cluster (``ray``).

The tournament runner and the league's ladder hand an executor :class:`MatchJob` values and get
:class:`PlayedMatch` values back; the store stays with them (docs/cluster.md).
"""

from __future__ import annotations

from polignac_arena.executors.base import (
    EXECUTOR_KINDS,
    ClusterLost,
    Executor,
    ExecutorError,
    ExecutorSettings,
    MatchJob,
    NodeWait,
    PlayedMatch,
    WaitHook,
    local_node_name,
)
from polignac_arena.executors.local import LocalExecutor
from polignac_arena.settings import ExecutorKind

__all__ = [
    "EXECUTOR_KINDS",
    "ClusterLost",
    "Executor",
    "ExecutorError",
    "ExecutorSettings",
    "LocalExecutor",
    "MatchJob",
    "NodeWait",
    "PlayedMatch",
    "WaitHook",
    "executor_for",
    "local_node_name",
]


def executor_for(settings: ExecutorSettings, *, on_wait: WaitHook | None = None) -> Executor:
    """A new executor as ``settings`` say (not started); the Ray one is imported only when asked for.

    ``on_wait``: told while no node of a cluster can take a match (default: the log).
    """
    if settings.kind is ExecutorKind.RAY:
        from polignac_arena.executors.ray_cluster import RayExecutor  # Ray is an optional extra

        return RayExecutor(settings.address, cpus_per_match=settings.cpus_per_match, on_wait=on_wait)
    return LocalExecutor()
