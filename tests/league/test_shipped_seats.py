"""Uploaded seats of a match refereed on a Ray node, prepared from the node's cache (no Ray here: ``fetch`` is the bytes).

A version shipped by hash is unpacked once into the node's cache and its seat starts from
there, never from the league's folder; a version that cannot be prepared on the node
forfeits its seat as crashed, and the match is played on by the others.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest

from polignac_arena.archive import pack_folder
from polignac_arena.executors.node import CACHE_ENV, SHIPPING_CAPS, ShippedBot
from polignac_arena.league.entrants import LeagueFixture
from polignac_arena.league.play import play_league_match
from polignac_arena.league.referee_orders import PlayOrder
from polignac_arena.league.shipped_seats import shipped_seats
from polignac_arena.seats import SeatContext, SeatProcess
from polignac_arena.seats.process import ProcessLauncher
from tests.league.test_play import CLOCK, LIMITS, REMOTE_A, REMOTE_B, RULES, Lobby, Recording, started_referee, uploaded
from tests.referee.helpers import run


class Contexts(Recording):
    """Keeps the context of every seat it starts."""

    def __init__(self) -> None:
        super().__init__(ProcessLauncher())
        self.contexts: list[SeatContext] = []

    async def start(self, context: SeatContext) -> SeatProcess:
        self.contexts.append(context)
        return await super().start(context)


def test_shipped_seats_start_from_the_node_cache_and_one_that_cannot_be_prepared_forfeits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(cache))
    good, bad = uploaded("heuristic"), uploaded("python_stdio")
    assert good.submission is not None and bad.submission is not None
    data = pack_folder(good.submission.path, SHIPPING_CAPS)
    sha = hashlib.sha256(data).hexdigest()
    archives = {"good": data, "bad": b"not the archive its hash names"}
    fetched: list[object] = []

    def fetch(handle: object) -> bytes:
        fetched.append(handle)
        return archives[str(handle)]

    shipped = (ShippedBot(sha=sha, archive="good"), None, ShippedBot(sha="0" * 64, archive="bad"), None)
    fixture = LeagueFixture(3, 5, (good, REMOTE_A, bad, REMOTE_B))
    order = PlayOrder("league-00003", fixture, RULES, CLOCK, LIMITS, True, tmp_path / "3.jsonl", None, 0.0, shipped)
    inner = Contexts()

    async def scenario() -> None:
        server = await started_referee()
        try:
            lobby = Lobby(server)
            launcher = await shipped_seats(order, inner, fetch, "node-t")
            result = await play_league_match(server, order, launcher=launcher, remote=lobby, withdraw=lobby.withdraw)
            await asyncio.gather(*lobby.bots)
            assert result.status == "finished"
            assert result.faults[0] == {} and result.faults[2].get("crashed") == 1, result.faults
            await shipped_seats(order, inner, fetch, "node-t")  # the next match: the cache has it
        finally:
            await server.stop(grace=0.5)

    run(scenario(), timeout=60)
    assert [context.seat for context in inner.contexts] == [0], "the seat that could not be prepared never started"
    started = inner.contexts[0].submission.path
    assert started == cache / "versions" / sha, started
    assert fetched.count("good") == 1, "fetched once: the next match found it in the node's cache"

