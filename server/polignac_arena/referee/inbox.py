"""The host's inbox: everything seats send and everything from outside, in order, for the host's one task."""

from __future__ import annotations

import asyncio
import collections
import time
from typing import Any

__all__ = ["Inbox", "InboxItem"]

# Inbox items: (seat, kind, payload).  Kinds: "joined", "message" ((message, read at, conn)),
# "undecodable" ((reason, conn)), "closed" (the bot half-closed its stream), "gone" (the stream
# broke), "exited", "abort", "back" (an away seat reattached), "replaced" (a new stream took the
# seat from one the referee held), "grace_over" (made by _next_item when an away seat's grace runs out).
InboxItem = tuple[int, str, Any]


class Inbox:
    """A FIFO read by one task: what asyncio.Queue plus asyncio.timeout did, for one future and one timer."""

    def __init__(self) -> None:
        self._items: collections.deque[InboxItem] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: InboxItem) -> None:
        self._items.append(item)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def get_until(self, deadline: float) -> InboxItem | None:
        """The next item, or None once ``time.monotonic()`` has reached ``deadline``.

        The timer is set relative to now rather than on the loop's clock (which need not be
        ``time.monotonic``: uvloop's counts whole milliseconds), and a wake-up that comes
        early is checked against ``time.monotonic()`` and waited out: a bot is never timed
        out before its time.
        """
        while not self._items:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            timer = loop.call_later(remaining, _wake, waiter)
            try:
                await waiter
            finally:
                timer.cancel()
                self._waiter = None
        return self._items.popleft()


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
