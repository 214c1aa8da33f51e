"""Long work that a signal stops cleanly: the signal cancels it, so its cleanup runs before the command exits."""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import os
import signal
import sys
import threading
from collections.abc import Coroutine, Iterable
from typing import Final, TypeVar

__all__ = ["Stopped", "until_signal"]

T = TypeVar("T")


class Stopped(Exception):
    """A signal cancelled the work; what it had started was stopped and removed first."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


PATIENCE_S: Final = 30.0
"""How long the work may take to unwind after a signal before the process ends regardless."""


def _give_up(loop: asyncio.AbstractEventLoop, signum: int, patience_s: float, exit_code: int | None, message: str | None) -> None:
    """The work did not stop: show where every thread and task is, then end the process as the command would have."""
    name = signal.Signals(signum).name
    print(f"polignac: {name} received, but the work did not stop within {patience_s:g} s; where each thread was:", file=sys.stderr)
    faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
    with contextlib.suppress(Exception):  # read from another thread: a best effort, for the bug report
        for task in asyncio.all_tasks(loop):
            task.print_stack(limit=20, file=sys.stderr)
    print(f"polignac: error: {message or f'stopped by {name}'}", file=sys.stderr, flush=True)
    os._exit(128 + signum if exit_code is None else exit_code)


async def until_signal(
    work: Coroutine[object, object, T],
    signals: Iterable[int] = (signal.SIGTERM,),
    *,
    patience_s: float = PATIENCE_S,
    exit_code: int | None = None,
    exit_message: str | None = None,
) -> T:
    """Await ``work``; any of ``signals`` cancels it and raises :class:`Stopped` once it has unwound.

    Killed by a signal's default action instead, a command would leave what it started behind
    (seats' containers, a build's images).  Work that has not unwound ``patience_s`` seconds
    after the signal is a bug: rather than hang, the process prints every thread's stack and
    ends with ``exit_code`` (default ``128 + signal``) after ``exit_message``.  Outside the main
    thread signals cannot be handled here, and ``work`` simply runs.
    """
    task = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    received: list[int] = []
    handled = list(signals) if threading.current_thread() is threading.main_thread() else []
    watchdog: list[threading.Timer] = []

    def stop(signum: int) -> None:
        received.append(signum)
        task.cancel()
        if not watchdog:
            timer = threading.Timer(patience_s, _give_up, (loop, signum, patience_s, exit_code, exit_message))
            timer.daemon = True
            timer.start()
            watchdog.append(timer)

    for signum in handled:
        loop.add_signal_handler(signum, stop, signum)
    try:
        return await task
    except asyncio.CancelledError:
        if received:
            raise Stopped(received[0]) from None
        raise
    finally:
        for timer in watchdog:
            timer.cancel()
        for signum in handled:
            loop.remove_signal_handler(signum)
