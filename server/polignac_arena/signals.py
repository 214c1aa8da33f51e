"""Long work that a signal stops cleanly: the signal cancels it, so its cleanup runs before the command exits."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine, Iterable
from typing import Any, TypeVar

__all__ = ["Stopped", "until_signal"]

T = TypeVar("T")


class Stopped(Exception):
    """A signal cancelled the work; what it had started was stopped and removed first."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


async def until_signal(work: Coroutine[Any, Any, T], signals: Iterable[int] = (signal.SIGTERM,)) -> T:
    """Await ``work``; any of ``signals`` cancels it and raises :class:`Stopped` once it has unwound.

    Killed by a signal's default action instead, a command would leave what it started behind
    (seats' containers, a build's images).  Outside the main thread signals cannot be handled
    here, and ``work`` simply runs.
    """
    task = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    received: list[int] = []
    handled = list(signals) if threading.current_thread() is threading.main_thread() else []

    def stop(signum: int) -> None:
        received.append(signum)
        task.cancel()

    for signum in handled:
        loop.add_signal_handler(signum, stop, signum)
    try:
        return await task
    except asyncio.CancelledError:
        if received:
            raise Stopped(received[0]) from None
        raise
    finally:
        for signum in handled:
            loop.remove_signal_handler(signum)
