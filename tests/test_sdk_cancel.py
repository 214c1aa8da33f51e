"""A retry loop ends when its task is cancelled, even where the cancellation came back as another error."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from polignac.bot.stream import raise_if_cancelled
from tests.aio import run_sync


async def _retrying(tries: list[int]) -> None:
    """A loop like the lobby's: each try's error is caught and the next try follows."""
    while True:
        tries.append(1)
        with contextlib.suppress(asyncio.CancelledError):  # as a gRPC call can turn a cancellation into an error it retries on
            await asyncio.sleep(30)
        raise_if_cancelled()


def test_a_cancelled_retry_loop_ends_instead_of_trying_again() -> None:
    async def scenario() -> list[int]:
        tries: list[int] = []
        task = asyncio.ensure_future(_retrying(tries))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, timeout=30)
        return tries

    assert run_sync(scenario(), timeout=60) == [1]


def test_outside_a_cancellation_it_does_nothing() -> None:
    async def scenario() -> None:
        raise_if_cancelled()

    run_sync(scenario(), timeout=60)
