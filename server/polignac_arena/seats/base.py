"""What every seat kind provides: start a bot for one seat, watch it, and remove it without trace."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

from polignac_arena.submission import ResourceRequest, Submission

__all__ = ["SeatContext", "SeatError", "SeatKind", "SeatLauncher", "SeatLimits", "SeatProcess"]


class SeatKind(StrEnum):
    """How a bot gets its seat (DESIGN.md, "Running bots")."""

    INPROCESS = "inprocess"
    PROCESS = "process"
    DOCKER = "docker"


class SeatError(RuntimeError):
    """A seat that cannot be started: the reason is for the person running the arena."""


@dataclass(frozen=True)
class SeatLimits:
    """Resource caps of one seat; a submission's requests are granted up to these."""

    memory_mb: int = 512
    cpus: float = 1.0
    pids: int = 64
    cpu_seconds: int = 600
    file_size_mb: int = 16
    open_files: int = 256
    tmpfs_mb: int = 64
    stderr_bytes: int = 64 * 1024

    def granted(self, request: ResourceRequest) -> SeatLimits:
        """These caps lowered to what the submission asks for, never raised."""
        return replace(
            self,
            memory_mb=min(self.memory_mb, request.memory_mb or self.memory_mb),
            cpus=min(self.cpus, request.cpus or self.cpus),
            pids=min(self.pids, request.pids or self.pids),
        )


@dataclass(frozen=True)
class SeatContext:
    """Everything a launcher needs to start one seat."""

    seat: int
    token: str
    submission: Submission
    limits: SeatLimits
    referee_socket: Path
    """The referee's unix socket on this machine; a sandbox mounts it and points POLIGNAC_ADDRESS at it."""
    workdir: Path
    """A private, empty folder for this seat on this machine (its temp dir, logs), removed afterwards."""
    trusted: bool = False
    """The tournament vouches for the bots: a launcher may run them without a sandbox."""
    match_id: str = ""
    bot_seed: int | None = None
    """A seed for the bot's own randomness (POLIGNAC_BOT_SEED), derived one-way from the match seed."""

    def bot_environment(self, address: str) -> dict[str, str]:
        """The only environment variables a bot gets from the arena."""
        env = {"POLIGNAC_ADDRESS": address, "POLIGNAC_TOKEN": self.token}
        if self.bot_seed is not None:
            env["POLIGNAC_BOT_SEED"] = str(self.bot_seed)
        return env


class SeatProcess(ABC):
    """A started seat: its process (or task), its stderr, and for stdio bots its pipes."""

    stdin: asyncio.StreamWriter | None = None
    stdout: asyncio.StreamReader | None = None

    @abstractmethod
    async def wait(self) -> int | None:
        """Wait for the bot to end; its exit status (negative: killed by that signal)."""

    @property
    @abstractmethod
    def returncode(self) -> int | None:
        """The exit status once ended, else None."""

    @abstractmethod
    def stderr_text(self) -> str:
        """What the bot wrote on stderr, up to the seat's cap."""

    @abstractmethod
    async def stop(self) -> None:
        """End the bot and everything it started; safe to call twice."""


class SeatLauncher(ABC):
    """Starts seats of one kind."""

    kind: SeatKind

    @abstractmethod
    def unavailable(self) -> str | None:
        """Why this kind cannot run here (a missing tool, an unreachable daemon), or None."""

    def refusal(self, trusted: bool) -> str | None:
        """Why this launcher will not seat the bots of a tournament that does (not) trust them, or None."""
        return None

    @abstractmethod
    async def start(self, context: SeatContext) -> SeatProcess:
        """Start the bot of ``context``; raises :class:`SeatError` with a clear reason."""
