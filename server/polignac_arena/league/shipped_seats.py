"""The uploaded seats of a match refereed on a Ray node: each version prepared from the node's cache, not the league's folder.

A referee on a node has none of the league's folders, so the league ships each uploaded seat's
version as the Ray executor ships a submission (:class:`~polignac_arena.executors.shipping.Shipper`:
its archive's SHA-256 and a handle to the bytes, in :attr:`PlayOrder.shipped
<polignac_arena.league.referee_orders.PlayOrder.shipped>`), and the node prepares it as it
prepares an executor's match (:func:`~polignac_arena.executors.node.prepare_bot`: fetched and
unpacked once per node, built once per seat kind).  Every seat is prepared before anyone is
offered a seat, so a build does not eat into a seat's start-up allowance.  A version that cannot
be prepared on the node costs its seat only: its start fails, and the match forfeits it as
crashed, as a seat that cannot start anywhere.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from polignac_arena.executors.node import prepare_bot
from polignac_arena.league.referee_orders import PlayOrder
from polignac_arena.seats import BuildLimits, BuildResult, SeatContext, SeatError, SeatLauncher, SeatLimits, SeatProcess
from polignac_arena.submission import Submission

__all__ = ["ShippedSeats", "shipped_seats"]

log = logging.getLogger(__name__)


class ShippedSeats(SeatLauncher):
    """``inner``'s seats, each uploaded seat started from its version prepared here (or failing with why it could not be)."""

    def __init__(self, inner: SeatLauncher, prepared: dict[int, Submission | str]) -> None:
        self.kind = inner.kind
        self._inner = inner
        self._prepared = prepared

    def unavailable(self) -> str | None:
        return self._inner.unavailable()

    def refusal(self, trusted: bool) -> str | None:
        return self._inner.refusal(trusted)

    def refuses(self, submission: Submission, trusted: bool) -> str | None:
        return self._inner.refuses(submission, trusted)

    async def start(self, context: SeatContext) -> SeatProcess:
        prepared = self._prepared.get(context.seat)
        if isinstance(prepared, str):
            raise SeatError(prepared)  # the seat forfeits as crashed, as one that cannot start
        if prepared is not None:
            context = replace(context, submission=prepared)
        return await self._inner.start(context)

    async def build(
        self, submission: Submission, limits: SeatLimits, *, timeout_s: float, trusted: bool = False, caps: BuildLimits | None = None
    ) -> BuildResult:
        return await self._inner.build(submission, limits, timeout_s=timeout_s, trusted=trusted, caps=caps)


async def shipped_seats(order: PlayOrder, launcher: SeatLauncher, fetch: Callable[[object], bytes], node: str) -> SeatLauncher:
    """``launcher`` for ``order``: as it is when nothing was shipped, else one that starts each shipped seat from its version
    prepared on this node (``fetch`` turns a shipped archive's handle into its bytes)."""
    if not order.shipped:
        return launcher
    prepared: dict[int, Submission | str] = {}
    for seat, bot in enumerate(order.shipped):
        if bot is None:
            continue
        try:
            prepared[seat] = await prepare_bot(bot, fetch, launcher.kind, order.limits, order.trusted, node)
        except Exception as exc:  # whatever stops a version here costs its seat, never the referee
            label = order.fixture.seats[seat].label
            log.warning("match %s: seat %d (%s) cannot be prepared on node %s: %s", order.match_id, seat, label, node, exc)
            prepared[seat] = f"{label} cannot be prepared on node {node}: {exc}"
    return ShippedSeats(launcher, prepared)
