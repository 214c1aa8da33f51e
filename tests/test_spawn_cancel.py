"""A seat's start cancelled after its process exists (SIGTERM while seats start) leaves nothing behind."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from polignac_arena.seats.bwrap import Plan, spawn
from tests.aio import run_sync


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_a_start_cancelled_while_waiting_for_the_report_kills_and_reaps_its_process(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[int] = []

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        made = asyncio.Event()
        real_exec = asyncio.create_subprocess_exec

        async def noting_exec(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
            process = await real_exec(*args, **kwargs)
            started.append(process.pid)
            return process

        real_connect = loop.connect_read_pipe

        async def never_connects(*args: Any) -> object:
            if not started:  # asyncio's own pipes of the process being made
                return await real_connect(*args)
            made.set()
            await asyncio.Event().wait()  # the trampoline's report never arrives
            raise AssertionError("unreachable")

        monkeypatch.setattr(asyncio, "create_subprocess_exec", noting_exec)
        monkeypatch.setattr(loop, "connect_read_pipe", never_connects)
        try:
            sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
            plan = Plan(argv=sleeper, env=dict(os.environ), pass_fds=[], uid=None, staging=None)
            task = asyncio.ensure_future(spawn(plan, asyncio.subprocess.DEVNULL, asyncio.subprocess.DEVNULL, "a sleeper"))
            await asyncio.wait_for(made.wait(), 60)
            task.cancel()
            done, _ = await asyncio.wait({task}, timeout=60)
            assert task in done and task.cancelled()
        finally:
            monkeypatch.undo()

    run_sync(scenario())
    assert started, "the process was made"
    assert not _alive(started[0]), "the cancelled start killed and reaped its process"


def test_a_match_cancelled_while_a_seat_starts_stops_the_seat_that_started_all_the_same() -> None:
    """SIGTERM cancels the match while a seat's start is finishing (its container already running):
    the start is cancelled and waited for, and a seat it made regardless is stopped."""
    from polignac_arena import match_seats

    class Seat:
        stopped = False

        async def stop(self) -> None:
            Seat.stopped = True

    class Server:
        stopping = asyncio.Event()

    async def scenario() -> None:
        begun = asyncio.Event()

        async def start_that_finishes_regardless() -> Seat:
            begun.set()
            # The daemon had already started it: the start returns its seat all the same.
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.Event().wait()
            return Seat()

        match = asyncio.ensure_future(match_seats._start_unless_stopped(Server(), start_that_finishes_regardless()))  # type: ignore[arg-type]  # stand-ins for the server and its seat
        await begun.wait()
        match.cancel()
        done, _ = await asyncio.wait({match}, timeout=30)
        assert match in done and match.cancelled()

    run_sync(scenario())
    assert Seat.stopped, "the seat that started as the match was cancelled is still running"
