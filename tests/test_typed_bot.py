"""A bot author's typed code: ``legal_cards`` and ``legal_contracts`` give one type each, no ``# type: ignore``."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from polignac import Card, Contract, Match, Phase, preset
from polignac.view import PlayerView
from tests.test_quality import run_tool
from tests.test_wire import round_trip

BUILTIN_BOTS = Path(__file__).resolve().parents[1] / "sdk" / "polignac" / "bots"

TYPED_BOT = '''\
"""A bot written for mypy --strict: every decision has its own type."""

from __future__ import annotations

from polignac import Card, Contract, PlayerView
from polignac.bot import Bot


class Typed(Bot):
    name = "typed"

    def declare(self, view: PlayerView) -> Contract:
        return Contract.GENERAL if Contract.GENERAL in view.legal_contracts else Contract.PASS

    def play(self, view: PlayerView) -> Card:
        strength = view.rules.strength
        return min(view.legal_cards, key=lambda card: strength[card.index])
'''


def views_to_act(rules_name: str, seed: int) -> list[PlayerView]:
    """The view of the seat to act at every decision of a one-hand match, random play."""
    match = Match(preset(rules_name, limit=1), seed)
    rnd = random.Random(seed)
    views = []
    while not match.is_over:
        seat = match.to_act
        assert seat is not None
        views.append(match.view(seat))
        match.apply(rnd.choice(match.legal_decisions()))
    return views


@pytest.mark.parametrize("rules_name", ["classic", "slobberhannes"])
def test_legal_cards_and_contracts_split_legal_by_phase_on_both_sides_of_the_wire(rules_name: str) -> None:
    phases = set()
    for engine_view in views_to_act(rules_name, 3):
        for view in (engine_view, round_trip(engine_view)):
            phases.add(view.phase)
            if view.phase is Phase.AUCTION:
                assert view.legal_cards == () and view.legal_contracts == view.legal
                assert all(isinstance(c, Contract) for c in view.legal_contracts)
            else:
                assert view.legal_contracts == () and view.legal_cards == view.legal
                assert all(isinstance(c, Card) for c in view.legal_cards)
    assert Phase.PLAY in phases


def test_a_typed_bot_passes_mypy_strict_without_ignores(tmp_path: Path) -> None:
    bot = tmp_path / "typed_bot.py"
    bot.write_text(TYPED_BOT)
    done = run_tool("mypy", "--strict", "--no-incremental", "--follow-imports=silent", str(bot))
    assert done.returncode == 0, f"mypy --strict on a typed bot:\n{done.stdout}{done.stderr}"


def test_the_built_in_bots_need_no_type_ignores() -> None:
    for path in sorted(BUILTIN_BOTS.glob("*.py")):
        assert "type: ignore" not in path.read_text(), f"{path.name} still needs a '# type: ignore'"
