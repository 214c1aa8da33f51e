"""The local harness rules on faults as the referee does: a bot author's local result is the referee's.

A faulty bot plays the same seed against the same opponents twice: in-process with
:func:`polignac.bot.play_local`, and through a real referee (``run_local_match`` with
``inprocess`` seats).  Under both fault policies, with ``max_faults`` reached or not, its place,
its total and its number of faults must agree.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from polignac import CARDS, Card, Ruleset, preset
from polignac.bot import Bot, play_local
from polignac.bots import CautiousBot, HeuristicBot, RandomBot
from polignac.view import PlayerView
from polignac_arena.referee import TimeControl
from polignac_arena.runner import run_local_match
from polignac_arena.seats.inprocess import InProcessLauncher
from polignac_arena.submission import builtin_submission
from tests.aio import run_sync


class Faulty(Bot):
    """Plays the lowest legal card, but every ``every``-th decision it plays what ``wrong`` gives instead."""

    name = "faulty"

    def __init__(self, wrong: Callable[[PlayerView], object], every: int = 4) -> None:
        self.wrong = wrong
        self.every = every
        self.decisions = 0

    def play(self, view: PlayerView) -> Card:
        self.decisions += 1
        if self.decisions % self.every == 0:
            return self.wrong(view)  # type: ignore[return-value]  # a fault on purpose
        return min(view.legal_cards, key=lambda c: (view.rules.strength[c.index], c.suit))


def not_held(view: PlayerView) -> Card:
    return next(c for c in CARDS if c not in view.legal)


def crash(view: PlayerView) -> Card:
    raise RuntimeError("boom")


FAULTS: dict[str, Callable[[PlayerView], object]] = {"illegal": not_held, "malformed": lambda view: "Z9", "crash": crash}
RULES: dict[str, Ruleset] = {  # 1 point a revoke: enough faults happen before the limit
    "penalty-max-faults-3": preset("classic", limit=10, revoke_points=1),
    "penalty-never-forfeits": preset("classic", limit=10, revoke_points=1, max_faults=1000),
    "forfeit": preset("classic", limit=10, revoke_points=1, fault_policy="forfeit"),
}


def opponents() -> list[Bot]:
    return [CautiousBot(), HeuristicBot(), RandomBot(11)]


def referee_result(bot: Bot, rules: Ruleset, seed: int) -> tuple[int, int, int]:
    """The bot's place, total and number of faults in a real referee match, bot in seat 0."""
    launcher = InProcessLauncher(dict(enumerate([bot, *opponents()])))
    subs = [builtin_submission(name) for name in ("random", "cautious", "heuristic", "random")]
    clock = TimeControl(move_ms=10_000, bank_ms=10_000, startup_ms=20_000)
    result, _ = run_sync(run_local_match(subs, rules, seed, clock, seat_kind="inprocess", launcher=launcher))
    assert result.status == "finished" and result.places is not None, result.status
    return result.places[0], result.totals[0], sum(result.faults[0].values())


@pytest.mark.parametrize("rules_name", sorted(RULES))
@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("seed", [3, 8])
def test_play_local_gives_the_referees_result(rules_name: str, fault: str, seed: int) -> None:
    rules = RULES[rules_name]
    local = play_local(Faulty(FAULTS[fault]), opponents=opponents(), rules=rules, matches=1, seed=seed)
    place, total, faults = referee_result(Faulty(FAULTS[fault]), rules, seed)
    assert (local.places[0], local.totals[0], len(local.faults)) == (place, total, faults)
    expected_faults = {"crash": 1, "forfeit": 1}.get(fault if fault == "crash" else rules_name.split("-")[0])
    if expected_faults is not None:
        assert faults == expected_faults and place == 4 and "forfeits" in local.faults[-1]
    elif rules_name == "penalty-max-faults-3":
        assert faults == 3 and place == 4 and "forfeits (max_faults)" in local.faults[-1]
    else:
        assert faults > 3 and "forfeits" not in "".join(local.faults)
