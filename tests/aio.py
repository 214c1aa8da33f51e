"""Running a coroutine to the end from a test's synchronous code, whatever already holds the thread's event loop.

``asyncio.run`` refuses to start when the calling thread runs a loop, and whether it does can depend on what pytest set
up first: Playwright's sync API, for one, keeps a loop running in the main thread while a browser is open. Fixtures and
helpers therefore call :func:`run_sync`, which runs the coroutine in a thread of its own when it must.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run ``coro`` in a new event loop and return its result; ``timeout`` seconds at most when given."""

    async def capped() -> T:
        async with asyncio.timeout(timeout):
            return await coro

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(capped())
    results: list[T] = []
    errors: list[BaseException] = []

    def in_a_fresh_thread() -> None:
        try:
            results.append(asyncio.run(capped()))
        except BaseException as error:  # handed to the caller's thread, raised there
            errors.append(error)

    worker = threading.Thread(target=in_a_fresh_thread, name="run_sync")
    worker.start()
    worker.join()
    if errors:
        raise errors[0]
    return results[0]
