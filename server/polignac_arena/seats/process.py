"""``process`` seats: the bot as a local subprocess.

Without a sandbox the bot runs with the arena's own rights, so that is allowed only when
the tournament says its bots are trusted, and it says so loudly.  When bubblewrap is
usable, ``process`` seats are sandboxed instead (:mod:`polignac_arena.seats.sandbox`,
which builds on :class:`LocalProcess` and :func:`std_pipes` here).

Either way the bot is started by the trampoline (:mod:`.trampoline`), which stays as its
monitor: it passes the first ``stderr_bytes`` of the bot's stderr to the arena and drops the
rest itself, so a bot that floods its stderr costs the arena's event loop nothing after that.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

from polignac_arena.seats.base import BuildLimits, BuildResult, SeatContext, SeatError, SeatKind, SeatLauncher, SeatLimits, SeatProcess
from polignac_arena.seats.builds import BUILD_OUTPUT_DRAIN_BYTES_PER_S, WRAPPER_SOURCE, build_command, build_skipped, finish_build
from polignac_arena.seats.bwrap import Plan, spawn
from polignac_arena.submission import Submission

__all__ = ["LocalProcess", "ProcessLauncher", "keep_stderr", "std_pipes"]

log = logging.getLogger(__name__)

NOTE_ROOM: Final = 256
"""Bytes kept past a seat's stderr cap for the monitor's closing line (how much it dropped)."""


async def keep_stderr(stream: asyncio.StreamReader, into: bytearray, cap: int) -> int:
    """Read a stream to its end, keeping at most ``cap`` bytes (and a closing note); the bytes dropped here.

    The trampoline sends no more than that; past it (a stream from elsewhere) big reads keep the cost low.
    """
    dropped = 0
    while True:
        room = cap + NOTE_ROOM - len(into)
        chunk = await stream.read(1 << 16 if room > 0 else 1 << 20)
        if not chunk:
            return dropped
        if room > 0:
            into.extend(chunk[:room])
        dropped += max(0, len(chunk) - max(room, 0))


def std_pipes(transport: str) -> tuple[int, int]:
    """The bot's stdin and stdout: pipes for a ``stdio`` bot (the arena bridges them), else nothing."""
    if transport == "stdio":
        return asyncio.subprocess.PIPE, asyncio.subprocess.PIPE
    return asyncio.subprocess.DEVNULL, asyncio.subprocess.DEVNULL


class LocalProcess(SeatProcess):
    """A bot process in its own process group (and session): the whole group is killed at the end."""

    def __init__(self, process: asyncio.subprocess.Process, stderr_cap: int) -> None:
        self.process = process
        self.stdin = process.stdin
        self.stdout = process.stdout
        self._stderr = bytearray()
        self._stderr_cap = stderr_cap
        assert process.stderr is not None
        self._reader = asyncio.ensure_future(keep_stderr(process.stderr, self._stderr, stderr_cap))
        self._stopped = False

    async def wait(self) -> int | None:
        return await self.process.wait()

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def stderr_bytes(self) -> bytearray:
        return self._stderr

    def stderr_text(self) -> str:
        text = self._stderr.decode("utf-8", "replace")
        if self._reader.done() and not self._reader.cancelled() and self._reader.exception() is None and self._reader.result():
            text += f"\n[arena] {self._reader.result()} more bytes not kept (the cap is {self._stderr_cap} bytes)\n"
        return text

    async def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        # The whole group, even if the bot itself has exited: whatever it started goes too.
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, sig)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), 1.0)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._reader, 1.0)


class ProcessLauncher(SeatLauncher):
    """Unsandboxed subprocesses, for trusted bots only: ``process`` seats where the sandbox cannot run."""

    kind = SeatKind.PROCESS

    def __init__(self, sandbox_missing: str = "bubblewrap (bwrap) is not installed: apt-get install bubblewrap") -> None:
        self.sandbox_missing = sandbox_missing
        """Why the sandbox cannot run here (:meth:`SandboxLauncher.unavailable`): what a refusal names."""

    def unavailable(self) -> str | None:
        return None

    def refusal(self, trusted: bool, what: str = "process seats") -> str | None:
        if trusted:
            return None
        return (
            f"{what} without the sandbox would run with the arena's own rights, and the sandbox cannot run here"
            f" ({self.sandbox_missing}): fix that, or mark the bots as trusted (--trusted, or trusted = true in [seats])"
        )

    async def start(self, context: SeatContext) -> SeatProcess:
        refusal = self.refusal(context.trusted)
        if refusal is not None:
            raise SeatError(refusal)
        sub = context.submission
        env = {**os.environ, **context.bot_environment(f"unix:{context.referee_socket}")}
        stdin, stdout = std_pipes(sub.transport)
        limits = context.limits
        plan = Plan(
            argv=list(sub.host_command()), env=env, pass_fds=[], uid=None, staging=None,
            stderr_cap=limits.stderr_bytes, stderr_drain=limits.stderr_drain_bytes_per_s,
        )  # fmt: skip
        cwd = sub.path if not sub.builtin else context.workdir
        process = await spawn(plan, stdin, stdout, f"{sub.label}: {' '.join(sub.host_command())}", cwd=cwd)
        log.warning("seat %s: %s runs UNSANDBOXED (its bots are trusted)", context.seat, sub.label)
        return LocalProcess(process, context.limits.stderr_bytes)

    async def build(
        self, submission: Submission, limits: SeatLimits, *, timeout_s: float, trusted: bool = False, caps: BuildLimits | None = None
    ) -> BuildResult:
        """For trusted bots only: the build step on the host, with the arena's rights, in a copy of the folder."""
        caps = caps or BuildLimits()
        skipped = build_skipped(submission, lambda: self.refusal(trusted, "build steps"))
        if skipped is not None:
            return skipped
        started = time.monotonic()
        workdir = Path(tempfile.mkdtemp(prefix="polignac-build-"))
        (workdir / "bot").mkdir()
        env = {
            "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(workdir),
            "TMPDIR": str(workdir),
            "LANG": "C.UTF-8",
        }
        command = build_command(
            sys.executable, submission.build, source=str(submission.path), dest=str(workdir / "bot"), wrapper=str(WRAPPER_SOURCE)
        )
        plan = Plan(
            argv=command, env=env, pass_fds=[], uid=None, staging=None,
            stderr_cap=caps.output_bytes, stderr_drain=BUILD_OUTPUT_DRAIN_BYTES_PER_S,
        )  # fmt: skip
        try:
            label = f"the build of {submission.label}"
            process = await spawn(plan, asyncio.subprocess.DEVNULL, asyncio.subprocess.PIPE, label, cwd=workdir)
        except SeatError as exc:
            shutil.rmtree(workdir, ignore_errors=True)
            return BuildResult(False, None, "", time.monotonic() - started, str(exc))
        log.warning("the build of %s runs UNSANDBOXED (the bots are trusted)", submission.label)
        try:
            seat = LocalProcess(process, caps.output_bytes)
            return await finish_build(seat, submission, caps, timeout_s, started, memory_kills=lambda: 0)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
