"""What every seat kind provides: start a bot for one seat, watch it, and remove it without trace."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from pathlib import Path

from polignac_arena.settings import SeatKind, Transport
from polignac_arena.submission import ResourceRequest, Submission

__all__ = ["BuildLimits", "BuildResult", "SeatContext", "SeatError", "SeatKind", "SeatLauncher", "SeatLimits", "SeatProcess"]


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
    stderr_drain_bytes_per_s: int = 64 * 1024
    """Past ``stderr_bytes``, how fast the seat's stderr is still read (and dropped): a bot that writes faster
    waits in its writes instead of keeping anyone busy."""

    def granted(self, request: ResourceRequest) -> SeatLimits:
        """These caps lowered to what the submission asks for, never raised."""
        return replace(
            self,
            memory_mb=min(self.memory_mb, request.memory_mb or self.memory_mb),
            cpus=min(self.cpus, request.cpus or self.cpus),
            pids=min(self.pids, request.pids or self.pids),
        )


@dataclass(frozen=True)
class BuildLimits:
    """What a build step may use besides the seat's own caps (memory, CPU and processes are the seat's)."""

    disk_mb: int = 256
    """The writable build folder (a tmpfs: what is written there also counts as the build's memory); as big
    as a submission may be (:data:`polignac_arena.folders.MAX_BYTES`)."""
    output_bytes: int = 64 * 1024
    """The build's stdout and stderr kept for the report (the rest is dropped)."""
    result_bytes: int = 300 << 20
    """The build folder handed back to the arena, as a tar stream."""
    result_files: int = 20_000
    """Files, folders and links in that build folder."""


@dataclass(frozen=True)
class BuildResult:
    """How a submission's build step went: one line (``reason``) and its output for the report."""

    ok: bool
    """It exited 0 in time and its results were installed in the submission folder."""
    exit_status: int | None
    """The build command's exit status (negative: killed by that signal); None when it did not end by itself."""
    output: str
    """What it wrote on stdout and stderr, up to ``BuildLimits.output_bytes`` (bot-written text: not filtered)."""
    seconds: float
    reason: str
    """One line for the operator: ``exited 0``, ``timed out after 300 s``, ``refused: ...``."""
    installed: tuple[str, ...] = ()
    """Files (relative paths) the build added or changed in the submission folder."""
    outcome: str | None = None
    """``reason`` without the build command (the author's own, from a private ``bot.toml``): what others may be shown.
    None when ``reason`` names no command."""

    @property
    def public_reason(self) -> str:
        return self.reason if self.outcome is None else self.outcome


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

    @property
    def reaches_referee(self) -> bool:
        """Whether the bot itself talks to the referee: a ``stdio`` bot does not (the arena's bridge does),
        so it gets neither the socket nor the address and token."""
        return self.submission.transport is not Transport.STDIO

    def bot_environment(self, address: str) -> dict[str, str]:
        """The only environment variables a bot gets from the arena."""
        env = {"POLIGNAC_ADDRESS": address, "POLIGNAC_TOKEN": self.token} if self.reaches_referee else {}
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

    def stderr_bytes(self) -> bytes | bytearray:
        """The bytes of stderr kept so far, growing as the bot writes (empty for a seat with no stderr of its own)."""
        return b""

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

    def refuses(self, submission: Submission, trusted: bool) -> str | None:
        """Why this launcher will not seat ``submission`` (one line naming it), or None: checked before a match starts."""
        return None

    @abstractmethod
    async def start(self, context: SeatContext) -> SeatProcess:
        """Start the bot of ``context``; raises :class:`SeatError` with a clear reason."""

    async def build(
        self, submission: Submission, limits: SeatLimits, *, timeout_s: float, trusted: bool = False, caps: BuildLimits | None = None
    ) -> BuildResult:
        """Run ``submission.build`` in the same sandbox as this kind's bots, then install its results in the folder.

        The build gets the seat's memory, CPU and process caps, no network, an environment made from
        scratch, ``timeout_s`` of wall-clock time (then it is killed with everything it started), a
        disk cap and capped output (``caps``).  It works on a copy of the folder; what it made or
        changed there comes back to the arena, which installs it in the submission folder without
        following links and never lets it change ``bot.toml`` (see docs/builds.md).  Never raises
        for a failing build: the result says why.
        """
        return BuildResult(False, None, "", 0.0, f"refused: {self.kind} seats do not run build steps")
