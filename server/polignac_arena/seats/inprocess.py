"""``inprocess`` seats: a bot in the arena's own process (tests, local play).

A built-in bot (``builtin:NAME``, a submission whose ``builtin`` is set) is the SDK's bot of
that name; a submission folder is always its own code, never a built-in bot that shares its
name: a trusted folder's Python bot is run from the folder (:mod:`.folder_bot`), anything
else is refused (:meth:`InProcessLauncher.refuses`).
"""

from __future__ import annotations

import asyncio
import contextlib
import traceback

from polignac.bot import Bot, run_async
from polignac_arena.seats.base import BuildLimits, BuildResult, SeatContext, SeatError, SeatKind, SeatLauncher, SeatLimits, SeatProcess
from polignac_arena.seats.folder_bot import folder_refusal, load_folder_bot
from polignac_arena.submission import Submission

__all__ = ["InProcessLauncher", "InProcessSeat"]


class InProcessSeat(SeatProcess):
    """A bot running as a task of the arena's event loop; the task's result is the seat's exit status."""

    def __init__(self, task: asyncio.Task[int], output: str = "") -> None:
        self._task = task
        self._output = output

    async def wait(self) -> int | None:
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await self._task
        return self.returncode

    @property
    def returncode(self) -> int | None:
        if not self._task.done():
            return None
        if self._task.cancelled() or self._task.exception() is not None:
            return 1
        return self._task.result()

    def stderr_text(self) -> str:
        if self._task.done() and not self._task.cancelled() and (error := self._task.exception()) is not None:
            return self._output + "".join(traceback.format_exception(error))
        return self._output

    async def stop(self) -> None:
        self._task.cancel()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await self._task


async def _play(bot: Bot, address: str, token: str) -> int:
    await run_async(bot, address, token)
    return 0


async def _ended(status: int) -> int:
    return status


class InProcessLauncher(SeatLauncher):
    """Seats for Bot objects: ``bots[seat]`` when given (tests), else the submission's bot (see the module docstring)."""

    kind = SeatKind.INPROCESS

    def __init__(self, bots: dict[int, Bot] | None = None) -> None:
        self._bots = bots or {}

    def unavailable(self) -> str | None:
        return None

    def refuses(self, submission: Submission, trusted: bool) -> str | None:
        return folder_refusal(submission, trusted)

    async def start(self, context: SeatContext) -> SeatProcess:
        address = f"unix:{context.referee_socket}"
        bot = self._bots.get(context.seat)
        submission = context.submission
        if bot is None and submission.builtin:
            from polignac.bots import builtin_bot

            bot = builtin_bot(submission.name, context.bot_seed)
        output = ""
        if bot is None:
            refusal = folder_refusal(submission, context.trusted)
            if refusal is not None:
                raise SeatError(refusal)
            loaded = load_folder_bot(submission, context.bot_environment(address))
            if loaded.bot is None:
                return InProcessSeat(asyncio.ensure_future(_ended(loaded.exit_status)), loaded.output)
            bot, output = loaded.bot, loaded.output
        return InProcessSeat(asyncio.ensure_future(_play(bot, address, context.token)), output)

    async def build(
        self, submission: Submission, limits: SeatLimits, *, timeout_s: float, trusted: bool = False, caps: BuildLimits | None = None
    ) -> BuildResult:
        """As the bot itself runs: on the host, with the arena's rights, for trusted bots only (:class:`ProcessLauncher`)."""
        from polignac_arena.seats.process import ProcessLauncher

        if not trusted:
            return BuildResult(False, None, "", 0.0, f"refused: {folder_refusal(submission, trusted)}")
        return await ProcessLauncher().build(submission, limits, timeout_s=timeout_s, trusted=True, caps=caps)
