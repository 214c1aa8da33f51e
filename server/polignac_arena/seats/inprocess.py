"""``inprocess`` seats: a Python Bot object in the arena's own process (tests, local play)."""

from __future__ import annotations

import asyncio
import contextlib

from polignac.bot import Bot, run_async
from polignac_arena.seats.base import SeatContext, SeatKind, SeatLauncher, SeatProcess

__all__ = ["InProcessLauncher", "InProcessSeat"]


class InProcessSeat(SeatProcess):
    """A bot running as a task of the arena's event loop."""

    def __init__(self, task: asyncio.Task[object]) -> None:
        self._task = task

    async def wait(self) -> int | None:
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await self._task
        return self.returncode

    @property
    def returncode(self) -> int | None:
        if not self._task.done():
            return None
        return 0 if not self._task.cancelled() and self._task.exception() is None else 1

    def stderr_text(self) -> str:
        if self._task.done() and not self._task.cancelled() and self._task.exception() is not None:
            return repr(self._task.exception())
        return ""

    async def stop(self) -> None:
        self._task.cancel()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await self._task


class InProcessLauncher(SeatLauncher):
    """Seats for Bot objects made by ``factory(submission_name)``; trusted by nature."""

    kind = SeatKind.INPROCESS

    def __init__(self, bots: dict[int, Bot] | None = None) -> None:
        self._bots = bots or {}

    def unavailable(self) -> str | None:
        return None

    async def start(self, context: SeatContext) -> SeatProcess:
        bot = self._bots.get(context.seat)
        if bot is None:
            from polignac.bots import builtin_bot

            bot = builtin_bot(context.submission.name, context.bot_seed)
        task = asyncio.ensure_future(run_async(bot, f"unix:{context.referee_socket}", context.token))
        return InProcessSeat(task)
