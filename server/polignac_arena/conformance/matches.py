"""One scripted match of the conformance report: the bot under test in seat 0, built-in bots in the others.

The bot runs in a seat of the kind being checked (its launcher); the others are built-in bots
in-process, which cost nothing to start, so the report can afford a match per game and table
size.  A :class:`Scenario` may also make one opponent forfeit at its first decision (the others
then tie, and play a tie-break hand), add a later version's fields to every message the bot
receives (:mod:`.probe`), or put the bot behind the relay of ``polignac league connect`` and
cut its stream to the referee at its n-th request (the relay reattaches, the referee asks the
pending request again).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from polignac import Card, Contract, PlayerView, Ruleset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.bot import Bot
from polignac.bot.league import ChannelSecurity
from polignac.bots import builtin_bot
from polignac_arena.conformance.probe import add_future_fields, add_future_keys
from polignac_arena.conformance.proxy import CuttableProxy
from polignac_arena.league.relay import SeatRelay
from polignac_arena.match_folder import match_folder
from polignac_arena.match_seats import MatchSeats, finish_shielded
from polignac_arena.referee import MatchHost, MatchResult, RefereeServer, TimeControl
from polignac_arena.runner import bot_seed
from polignac_arena.seats import SeatLauncher, SeatLimits
from polignac_arena.seats.inprocess import InProcessLauncher
from polignac_arena.submission import Submission, builtin_submission

__all__ = ["OPPONENTS", "Observer", "Played", "Scenario", "play_scenario"]

OPPONENTS = ("heuristic", "cautious", "random")
"""The built-in bots in seats 1, 2, ... (in turn)."""
REATTACH_GRACE_S = 10.0
"""How long the bot's seat may be away after the cut (a league's default)."""
Observer = Callable[[int, pb.PlayResponse], None]
"""Told of every message the referee sends, with its seat, as it is sent (benchmarks/kits.py times the bot with it)."""


class Forfeiter(Bot):
    """An opponent that crashes at its first decision: the match goes on without it."""

    name = "forfeiter"

    def declare(self, view: PlayerView) -> Contract:
        raise RuntimeError("this opponent forfeits on purpose (a scripted situation of the conformance report)")

    def play(self, view: PlayerView) -> Card:
        raise RuntimeError("this opponent forfeits on purpose (a scripted situation of the conformance report)")


@dataclass(frozen=True)
class Scenario:
    """A scripted match: its rules, seed and clock, and what the referee does to the bot beyond a plain match."""

    rules: Ruleset
    seed: int
    clock: TimeControl
    forfeit_seat: int | None = None
    """An opponent's seat that forfeits at its first decision."""
    future_fields: bool = False
    """Add a later protocol version's fields and messages to everything the bot receives."""
    cut_at_request: int | None = None
    """Play through the league's relay and cut the bot's stream to the referee at its n-th request."""


@dataclass
class Played:
    """How a scenario's match went, and what the bot wrote on stderr."""

    result: MatchResult
    stderr: str
    cuts: int = 0
    """How often the bot's stream to the referee was cut (the reattach scenario: once)."""
    launched_at: float = 0.0
    """``time.monotonic()`` when the bot's seat began to start."""


async def play_scenario(
    submission: Submission,
    scenario: Scenario,
    launcher: SeatLauncher,
    *,
    limits: SeatLimits,
    trusted: bool,
    observe: Observer | None = None,
) -> Played:
    """Play ``scenario`` with ``submission`` in seat 0, started by ``launcher``; everything started is stopped at the end.

    ``observe`` is told of every message the referee sends (after the scenario's own changes to it).
    """
    players = scenario.rules.players
    names = [OPPONENTS[(seat - 1) % len(OPPONENTS)] for seat in range(1, players)]
    bots: dict[int, Bot] = {seat: builtin_bot(name, bot_seed(scenario.seed, seat)) for seat, name in enumerate(names, start=1)}
    if scenario.forfeit_seat is not None:
        bots[scenario.forfeit_seat] = Forfeiter()
    reattach = scenario.cut_at_request is not None
    with match_folder() as root:
        seats = MatchSeats(root, players)
        sockets = [seats.socket(seat) for seat in range(players)]
        server = RefereeServer("127.0.0.1:0" if reattach else None)
        proxy: CuttableProxy | None = None
        relay: SeatRelay | None = None

        async def clean_up() -> None:
            await seats.stop()
            if relay is not None:
                await relay.stop()
            if proxy is not None:
                await proxy.stop()
            await server.stop(grace=1)

        try:
            await server.start()
            # A bot behind the relay takes its seat on the referee's TCP address (through the proxy), as a remote bot does.
            own_sockets = [None if reattach and seat == 0 else path for seat, path in enumerate(sockets)]
            host = await server.create_seated_match(
                scenario.rules, scenario.seed, scenario.clock, sockets=own_sockets, exit_status=seats.exit_status,
                match_id=f"conformance-{secrets.token_hex(4)}",
            )  # fmt: skip
            token = host.tokens[0]
            if reattach:
                host.allow_reattach(0, REATTACH_GRACE_S)
                proxy = CuttableProxy(server.address)
                await proxy.start()
                relay = SeatRelay(proxy.address, host.tokens[0], ChannelSecurity(), REATTACH_GRACE_S)
                await relay.start(sockets[0])
                sockets[0].chmod(0o666)  # the sandboxed bot runs as a user of its own; the relay's token guards the socket
                token = relay.local_token
            _watch(host, scenario, proxy, observe)
            opponents = InProcessLauncher(bots)
            for seat, name in enumerate(names, start=1):
                await seats.start(server, host, opponents, seat, builtin_submission(name), limits=limits, trusted=True, bot_seed=0)
            launched_at = time.monotonic()
            await seats.start(
                server, host, launcher, 0, submission, limits=limits, trusted=trusted, bot_seed=bot_seed(scenario.seed, 0), token=token,
                lines_hook=add_future_keys if scenario.future_fields else None,
            )  # fmt: skip
            result = await server.run_match(host)
            cuts = proxy.cuts if proxy is not None else 0  # before the proxy stops (which cuts what is left)
        finally:
            await finish_shielded(clean_up())
        return Played(result, seats.stderr()[0], cuts, launched_at)


def _watch(host: MatchHost, scenario: Scenario, proxy: CuttableProxy | None, observe: Observer | None) -> None:
    """What the referee does to seat 0's messages: later fields added, the stream cut at the n-th request."""
    requests = 0

    def on_message_sent(seat: int, message: pb.PlayResponse) -> None:
        if seat == 0:
            seat_zero(message)
        if observe is not None:
            observe(seat, message)

    def seat_zero(message: pb.PlayResponse) -> None:
        nonlocal requests
        if scenario.future_fields:
            add_future_fields(message)
        if proxy is not None and message.WhichOneof("payload") == "decision_request":
            requests += 1
            if requests == scenario.cut_at_request:
                asyncio.get_running_loop().call_soon(proxy.cut)

    host.on_message_sent = on_message_sent
