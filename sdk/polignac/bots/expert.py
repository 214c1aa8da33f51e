"""The expert bot: Perfect Information Monte Carlo search (PIMC) over determinized deals.

For each decision it deals the hidden cards again and again, consistently with its view
(:func:`polignac.playout.sample_hands`: every seat's card count, the suits it showed out
of, the cards played, the turned trump), and on each deal plays every legal decision out
to the end of the hand (:mod:`polignac.bots.search`).  It keeps the decision whose
average outcome is best, judged as the match judges a hand: its own score against the
mean of the others' (lower or higher is better as the ruleset says), so that a contract
that makes every opponent pay 5 counts as the gain it is.  The auction is decided by the
same simulations: declaring is played out with both sides playing to win the tricks.
Options clearly worse than the best, deal by deal, are dropped as the deals come in.

Time: it stops at :data:`THINK_SHARE` of ``move_ms`` (:class:`~polignac.bot.base.MatchInfo`)
measured from the start of the decision, after at least one deal.  Reproducible: given
``playouts`` (or ``POLIGNAC_EXPERT_PLAYOUTS``), a budget of playouts per decision, and a
seed (``POLIGNAC_BOT_SEED`` under the arena), it makes the same decisions whatever the
machine's speed, as long as the budget fits in the clock (it still stops at
:data:`HARD_SHARE` of ``move_ms``).  With ``engine="batched"`` the card play is searched
in rounds of many deals at once (:mod:`polignac.bots.batched`, numpy) instead of one deal
at a time.  docs/writing-a-search-bot.md walks through it.
"""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Sequence
from typing import Final, TypeVar

from polignac.bot.base import Bot, MatchInfo
from polignac.bots import search
from polignac.cards import Card
from polignac.rules import Ruleset
from polignac.values import Contract
from polignac.view import PlayerView

__all__ = ["HARD_SHARE", "NO_CLOCK_MS", "THINK_SHARE", "ExpertBot"]

THINK_SHARE: Final = 0.6
"""The share of ``move_ms`` the bot searches for: the rest is the margin for the reply, the wire and a slow machine."""
HARD_SHARE: Final = 0.85
"""With a playout budget, the share of ``move_ms`` after which it stops anyway."""
NO_CLOCK_MS: Final = 50
"""How long it thinks when the match has no clock (``move_ms`` 0: in-process play)."""
PRUNE_AFTER: Final = 8
"""Rounds (deals) before an option may be dropped from the search."""
PRUNE_EVERY: Final = 4
PRUNE_Z: Final = 3.0
"""An option is dropped when it trails the best by this many standard errors, deal by deal."""
ROLLOUTS: Final = ("auto", "random", "duck", "take")
ENGINES: Final = ("scalar", "batched")
"""How the card play is searched: one deal at a time in Python, or rounds of deals at once (numpy)."""
BATCH_DEALS: Final = 64
"""Deals the first round of the batched engine plays out per option (every round, with a playout budget)."""
MAX_BATCH_DEALS: Final = 256
"""The most deals of a later round, grown while the clock allows."""

D = TypeVar("D", Card, Contract)


def _env_int(name: str) -> int | None:
    text = os.environ.get(name, "")
    return int(text) if text.isdigit() else None


class ExpertBot(Bot):
    """Searches each decision by determinized playouts within its time or playout budget."""

    name = "expert"
    version = "1.0"

    def __init__(self, seed: int | None = None, playouts: int | None = None, rollout: str = "auto", engine: str = "scalar") -> None:
        # Under the arena, POLIGNAC_BOT_SEED makes the bot's choices repeatable.
        if seed is None:
            seed = _env_int("POLIGNAC_BOT_SEED")
        if playouts is None:
            playouts = _env_int("POLIGNAC_EXPERT_PLAYOUTS")
        if playouts is not None and playouts < 1:
            raise ValueError(f"playouts must be at least 1, got {playouts!r}")
        if rollout not in ROLLOUTS:
            raise ValueError(f"unknown rollout {rollout!r}; choose one of {', '.join(ROLLOUTS)}")
        if engine not in ENGINES:
            raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
        self.rng = random.Random(seed)
        self.playouts = playouts
        self.rollout = rollout
        self.engine = engine
        self.move_ms = 0

    def on_match_start(self, info: MatchInfo) -> None:
        self.move_ms = info.move_ms
        if self.engine == "batched":
            # Loading numpy and building the tables takes a few moves' time: not on the clock.
            from polignac.bots.batched import warm_up

            warm_up(info.rules)

    def declare(self, view: PlayerView) -> Contract:
        legal = view.legal_contracts
        if len(legal) == 1:
            return legal[0]
        return self._search(view, legal)

    def play(self, view: PlayerView) -> Card:
        options = search.distinct_cards(view)
        if len(options) == 1:
            return options[0]
        return self._search(view, options)

    # -- search ---------------------------------------------------------------------------

    def _search(self, view: PlayerView, options: Sequence[D]) -> D:
        """The option with the best mean outcome over deals played out, within the budget."""
        begin = time.perf_counter()
        if self.playouts:
            # The budget decides; a clock, if any, only stops a budget that does not fit in it.
            stop = begin + self.move_ms / 1000 * HARD_SHARE if self.move_ms else math.inf
        else:
            stop = begin + (self.move_ms or NO_CLOCK_MS) / 1000 * THINK_SHARE
        rng = self.rng
        starts = [search.start_after(view, option, rng) for option in options]
        rollouts = [self._rollout_for(start.contract != 0, view.rules) for start in starts]
        # costs[i][r]: option i's outcome on round r's deal (lower is better).
        costs: list[list[float]] = [[] for _ in options]
        alive = list(range(len(options)))
        used = 0
        # The duck policy is the one the batch engine plays; other rollouts stay scalar.
        batched = self.engine == "batched" and all(r is search.duck_rollout for r in rollouts)
        count = BATCH_DEALS
        while True:
            round_begin = time.perf_counter()
            if batched:
                # numpy is loaded here, on first use, so that ``import polignac`` stays light.
                from polignac.bots.batched import round_costs

                if self.playouts:
                    count = max(1, min(BATCH_DEALS, (self.playouts - used) // len(alive)))
                for i, more in round_costs(view, starts, alive, rng, count).items():
                    costs[i].extend(more)
                used += count * len(alive)
            else:
                for i, more in search.round_costs(view, starts, alive, rng, rollouts).items():
                    costs[i].extend(more)
                used += len(alive)
            rounds = len(costs[alive[0]])
            if rounds >= PRUNE_AFTER and (batched or rounds % PRUNE_EVERY == 0):
                alive = _survivors(costs, alive)
            now = time.perf_counter()
            if len(alive) == 1 or (self.playouts and used >= self.playouts) or now >= stop:
                break
            if batched and not self.playouts and 4 * (now - round_begin) <= stop - now:
                # A round's cost is mostly per call, not per deal: double the deals while a
                # round twice as long (and the pruning after it) fits twice in the time left.
                count = min(2 * count, MAX_BATCH_DEALS)
        best = min(alive, key=lambda i: sum(costs[i]))
        return options[best]

    def _rollout_for(self, contract: bool, rules: Ruleset) -> search.Rollout:
        if contract:
            return search.contract_rollout
        if self.rollout == "auto":
            return search.take_rollout if search.tricks_wanted(rules) else search.duck_rollout
        return {"random": search.random_rollout, "duck": search.duck_rollout, "take": search.take_rollout}[self.rollout]


def _survivors(costs: list[list[float]], alive: list[int]) -> list[int]:
    """The options of ``alive`` not clearly worse than the best so far.

    Every option was played out on the same deals, so each is compared with the best by
    the differences deal by deal: the luck of the deal cancels and the test is sharp.
    """
    best = min(alive, key=lambda i: sum(costs[i]))
    top = costs[best]
    n = len(top)
    kept = []
    for i in alive:
        diffs = [a - b for a, b in zip(costs[i], top, strict=True)]
        mean = sum(diffs) / n
        var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
        if i == best or mean <= PRUNE_Z * (var / n) ** 0.5:
            kept.append(i)
    return kept
