"""The expert bot's batched engine (``engine="batched"``): legal, reproducible, refused when unknown."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import pytest

from polignac import Match, preset
from polignac.bot.base import MatchInfo
from polignac.bots import ExpertBot, HeuristicBot
from polignac.bots import batched as batched_engine
from polignac.cards import Card
from polignac.values import Contract


def play_match(seed: int) -> list[Card | Contract]:
    """A 4-player classic match of one batched expert (seat 0) and three heuristics, with a playout budget."""
    expert = ExpertBot(seed=seed, playouts=96, engine="batched")
    heuristic = HeuristicBot()
    match = Match(preset("classic", limit=6), seed)
    made: list[Card | Contract] = []
    while not match.is_over:
        seat = match.to_act
        assert seat is not None
        view = match.view(seat)
        decision = expert.decide(view) if seat == 0 else heuristic.decide(view)
        assert decision in view.legal
        made.append(decision)
        match.apply(decision)
    return made


def test_batched_decisions_are_legal_searched_in_rounds_and_reproducible(monkeypatch: pytest.MonkeyPatch) -> None:
    rounds: list[int] = []
    real = batched_engine.round_costs

    def counted(*args: Any, **kwargs: Any) -> dict[int, list[float]]:
        out = real(*args, **kwargs)  # the engine's own arguments, passed through
        rounds.append(len(next(iter(out.values()))))
        return out

    monkeypatch.setattr(batched_engine, "round_costs", counted)
    first = play_match(4)
    assert rounds and max(rounds) > 1, "the card play went through the batched engine"
    assert first == play_match(4)


def test_on_the_clock_it_stops_well_within_move_ms() -> None:
    """The first decision included: numpy and the tables load in ``on_match_start``, off the clock.

    Counted in CPU time: what is tested is that the search stops at its share of ``move_ms``,
    not how long other work on a shared machine keeps this one waiting (the scalar engine's
    test and the referee tests check the wall clock).
    """
    rules = preset("classic", limit=4)
    expert = ExpertBot(seed=5, engine="batched")
    expert.on_match_start(MatchInfo("m", 0, rules, ("a", "b", "c", "d"), 100, 1000, 1000))
    heuristic = HeuristicBot()
    match = Match(rules, 5)
    slowest = 0.0
    while not match.is_over:
        seat = match.to_act
        assert seat is not None
        view = match.view(seat)
        begin = time.process_time()
        decision = expert.decide(view) if seat == 0 else heuristic.decide(view)
        if seat == 0:
            slowest = max(slowest, time.process_time() - begin)
        match.apply(decision)
    assert slowest < 0.095, f"{slowest * 1000:.0f} ms"  # it stops searching at 60 % of move_ms


def test_an_unknown_engine_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="'gpu'"):
        ExpertBot(engine="gpu")


def test_importing_the_expert_does_not_import_numpy() -> None:
    code = "import sys, polignac.bots.expert; assert 'numpy' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
