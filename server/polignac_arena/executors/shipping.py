"""A run's submission folders as machines receive them: each packed once, its archive put where they fetch it.

Both executors ship a folder so (:class:`Shipper`): the Ray executor puts the archive in Ray's
object store, the local one keeps the bytes; either way a match carries the archive's SHA-256
(:class:`~polignac_arena.executors.node.ShippedBot`) and the machine that plays it builds and
runs its own copy (:mod:`polignac_arena.executors.node`), never the organiser's folder.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from pathlib import Path

from polignac_arena.archive import ArchiveError, pack_folder
from polignac_arena.executors.base import ExecutorError
from polignac_arena.executors.node import SHIPPING_CAPS, ShippedBot
from polignac_arena.submission import Submission

__all__ = ["Shipper"]


class Shipper:
    """Ships submissions for one run; ``put`` turns an archive's bytes into the handle a machine fetches them by."""

    def __init__(self, put: Callable[[bytes], object]) -> None:
        self._put = put
        self._shipped: dict[Path, asyncio.Future[ShippedBot]] = {}

    async def ship(self, bot: Submission) -> ShippedBot:
        """``bot`` as a machine receives it: a built-in by name; a folder packed (in a thread) once per run."""
        if bot.builtin:
            return ShippedBot(builtin=bot.name)
        shipping = self._shipped.get(bot.path)
        if shipping is None:  # the first match to need it packs it; the others wait for the same task
            shipping = self._shipped[bot.path] = asyncio.ensure_future(self._pack(bot))
        try:
            return await asyncio.shield(shipping)
        except ExecutorError:
            self._shipped.pop(bot.path, None)  # a folder fixed meanwhile may be sent next time
            raise

    async def _pack(self, bot: Submission) -> ShippedBot:
        try:
            data = await asyncio.to_thread(pack_folder, bot.path, SHIPPING_CAPS)
        except ArchiveError as exc:
            raise ExecutorError(f"{bot.label} cannot be packed for the machine that plays it: {exc}") from None
        return ShippedBot(sha=hashlib.sha256(data).hexdigest(), archive=self._put(data))

    def close(self) -> None:
        """Forget what was shipped (cancelling what is being packed)."""
        for shipping in self._shipped.values():
            shipping.cancel()
        self._shipped.clear()
