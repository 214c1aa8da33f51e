"""What every executor shares: the match it is handed, the result it hands back, and its settings.

An executor plays matches somewhere and returns their results; it never touches the store.
The tournament runner and the league's ladder hand it :class:`MatchJob` values and write what
comes back (:class:`PlayedMatch`) to the store themselves, in schedule order, so where a match
was played changes nothing of its record or of the ratings.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from polignac import Ruleset
from polignac_arena.games import Game
from polignac_arena.seats.base import SeatLimits
from polignac_arena.settings import EXECUTOR_KINDS, ExecutorKind, ExecutorSettings, SeatKind, TimeControl
from polignac_arena.submission import Submission

if TYPE_CHECKING:  # the referee brings grpc, which reading a tournament file does not need
    from polignac_arena.referee import MatchResult

__all__ = [
    "EXECUTOR_KINDS",
    "ClusterLost",
    "Executor",
    "ExecutorError",
    "ExecutorKind",
    "ExecutorSettings",
    "MatchJob",
    "NodeWait",
    "PlayedMatch",
    "WaitHook",
    "local_node_name",
]


class ExecutorError(RuntimeError):
    """An executor that cannot start or cannot play a match (not a bot's fault): the match is retried on --resume."""


class ClusterLost(ExecutorError):
    """The cluster itself is gone (its head): not one match's failure but the end of the run; --resume finishes it later."""

    def __init__(self, address: str, reason: str) -> None:
        self.address = address
        super().__init__(f"the Ray cluster's head at {address} is gone: {reason}")


@dataclass(frozen=True)
class NodeWait:
    """No worker node of the cluster can take a match while matches wait for one; ``over`` once one can again."""

    waiting: int
    """The matches handed to the cluster and not yet back."""
    seconds: float
    """How long the wait has lasted (in all, once ``over``)."""
    over: bool = False

    @property
    def begins(self) -> bool:
        """Whether this is the first word of a wait (the later ones repeat it with new figures)."""
        return not self.over and self.seconds == 0

    def __str__(self) -> str:
        if self.over:
            return f"a Ray worker node is back after {self.seconds:.0f} s without one: the waiting matches go on"
        matches = "match" if self.waiting == 1 else "matches"
        return f"no Ray worker node is alive: {self.waiting} {matches} waiting for a node (for {self.seconds:.0f} s)"


WaitHook = Callable[[NodeWait], None]
"""Told when a wait for a worker node starts, about once a second while it lasts, and once when it is over."""


@dataclass(frozen=True)
class MatchJob:
    """One match, described by values alone: an executor may play it on another machine."""

    bots: tuple[Submission, ...]
    rules: Ruleset
    seed: int
    time_control: TimeControl
    game: Game
    seat_kind: SeatKind
    trusted: bool
    limits: SeatLimits
    match_id: str


@dataclass(frozen=True)
class PlayedMatch:
    """A match's result and the node that played it."""

    result: MatchResult
    node: str
    builds: tuple[str, ...] = ()
    """The builds the node ran for this match, one line each (a submission is built once per node and seat kind)."""


class Executor(Protocol):
    """Plays matches; :meth:`start` before the first, :meth:`close` after the last."""

    kind: ExecutorKind

    async def start(self) -> None:
        """Connect to where matches run; raises :class:`ExecutorError` with what to do when it cannot."""

    async def play(self, job: MatchJob, record_path: Path | None = None) -> PlayedMatch:
        """Play ``job`` to its end and return its result (its record written to ``record_path`` when given).

        Raises :class:`ExecutorError` (or the seat layer's errors) when the match cannot be
        played; cancelled, the match is stopped wherever it runs.
        """

    async def close(self) -> None:
        """Let go of what :meth:`start` took."""


def local_node_name() -> str:
    """This machine's name, as results played here name their node."""
    return socket.gethostname() or "local"
