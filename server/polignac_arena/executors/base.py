"""What every executor shares: the match it is handed, the result it hands back, and its settings.

An executor plays matches somewhere and returns their results; it never touches the store.
The tournament runner and the league's ladder hand it :class:`MatchJob` values and write what
comes back (:class:`PlayedMatch`) to the store themselves, in schedule order, so where a match
was played changes nothing of its record or of the ratings.
"""

from __future__ import annotations

import socket
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

__all__ = ["EXECUTOR_KINDS", "Executor", "ExecutorError", "ExecutorKind", "ExecutorSettings", "MatchJob", "PlayedMatch", "local_node_name"]


class ExecutorError(RuntimeError):
    """An executor that cannot start or cannot play a match (not a bot's fault): the match is retried on --resume."""


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
