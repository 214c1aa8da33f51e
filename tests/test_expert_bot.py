"""The expert bot: legal everywhere, its auction, its clock, its reproducibility, its registration."""

from __future__ import annotations

import dataclasses
import random
import time
from pathlib import Path

import pytest

from polignac import PRESETS, Match, preset
from polignac.bot.base import MatchInfo
from polignac.bots import BUILTIN_BOTS, ExpertBot, builtin_bot, search
from polignac.cards import Card, parse_cards
from polignac.playout import Playout
from polignac.values import Contract, Phase
from polignac.view import PlayerView
from polignac_arena.games import Game, check_seating
from polignac_arena.referee import TimeControl
from polignac_arena.replay import replay_lines
from polignac_arena.runner import resolve_bot, run_local_match
from polignac_arena.store import Store
from polignac_arena.submission import builtin_submission, load_submission
from polignac_arena.tournament.config import load_config
from polignac_arena.tournament.runner import resolve_entrants
from tests.referee.helpers import run

ROOT = Path(__file__).resolve().parents[1]
TABLES = [(name, players) for name, rules in PRESETS.items() for players in rules.table_sizes()]


def views_at_random(rules_name: str, players: int, seed: int, count: int) -> list[PlayerView]:
    """The views of the seat to act at ``count`` decisions picked at random from a random match."""
    match = Match(preset(rules_name, players=players, general=PRESETS[rules_name].capot), seed)
    rnd = random.Random(seed)
    views: list[PlayerView] = []
    while not match.is_over and len(views) < count:
        seat = match.to_act
        assert seat is not None
        if rnd.random() < 0.3 or match.phase is Phase.AUCTION:
            views.append(match.view(seat))
        match.apply(rnd.choice(match.legal_decisions()))
    return views


@pytest.mark.parametrize(("rules_name", "players"), TABLES, ids=[f"{n}-{p}" for n, p in TABLES])
def test_every_decision_is_legal_in_every_game_and_table_size(rules_name: str, players: int) -> None:
    bot = ExpertBot(seed=1, playouts=24)
    for view in views_at_random(rules_name, players, seed=players, count=12):
        assert bot.decide(view) in view.legal


def test_the_rollouts_play_legal_hands_that_score_as_the_engine_does() -> None:
    rnd = random.Random(3)
    for rules_name, players in TABLES:
        for view in views_at_random(rules_name, players, seed=5, count=3):
            start = Playout.from_view(view, rnd)
            for rollout in (search.random_rollout, search.duck_rollout, search.contract_rollout):
                playout = start.copy()
                scores = rollout(playout, rnd.random)
                assert playout.is_over and len(scores) == players
                taken = 0
                for mask in playout.taken:
                    assert not taken & mask
                    taken |= mask
                assert not any(playout.hands)


def test_equivalent_cards_are_searched_once_and_the_weakest_is_kept() -> None:
    match = Match(preset("classic"), 1)
    view = dataclasses.replace(match.view(0), phase=Phase.PLAY, hand=tuple(parse_cards("KS QS 9S 7S KH TH 9H 8H")))
    view = dataclasses.replace(view, legal=view.hand)
    # K Q of spades and 10 9 8 of hearts are runs (no unseen card between); the J of hearts has points.
    assert [str(c) for c in search.distinct_cards(view)] == ["7S", "9S", "QS", "8H", "KH"]


def auction_view(hand: str, general: bool) -> PlayerView:
    """Eldest hand's view in the auction of a 4-player classic match, holding ``hand``."""
    match = Match(preset("classic", general=general), 1)
    assert match.phase is Phase.AUCTION and match.to_act == 0
    return dataclasses.replace(match.view(0), hand=tuple(sorted(parse_cards(hand), key=lambda c: c.index)))


@pytest.mark.parametrize("general", [False, True])
def test_the_auction_declares_with_a_hand_that_cannot_lose_a_trick_and_passes_otherwise(general: bool) -> None:
    strong = auction_view("KS QS JS AS KH QH JH AH", general)
    weak = auction_view("7S 9S KS 8H JH 7D QD 8C", general)
    bot = ExpertBot(seed=2, playouts=120)
    assert bot.decide(strong) is (Contract.GENERAL if general else Contract.CAPOT)
    assert bot.decide(weak) is Contract.PASS


def test_without_a_budget_the_clock_decides_and_stops_well_within_move_ms() -> None:
    bot = ExpertBot(seed=3)
    rules = preset("classic")
    bot.on_match_start(MatchInfo("m", 0, rules, ("a", "b", "c", "d"), 100, 1000, 1000))
    for view in views_at_random("classic", 4, seed=9, count=10):
        begin = time.perf_counter()
        assert bot.decide(view) in view.legal
        assert time.perf_counter() - begin < 0.095  # it stops searching at 60 % of move_ms


def test_a_seed_and_a_playout_budget_make_the_same_decisions() -> None:
    def decisions() -> list[Card | Contract]:
        bots = [ExpertBot(seed=7 + seat, playouts=40) for seat in range(3)]
        match = Match(preset("classic", players=3, limit=6), 11)
        made = []
        while not match.is_over:
            seat = match.to_act
            assert seat is not None
            decision = bots[seat].decide(match.view(seat))
            made.append(decision)
            match.apply(decision)
        return made

    assert decisions() == decisions()


def test_the_referee_path_at_100_ms_a_move_has_no_timeouts_and_replays_alike() -> None:
    """The sample submission and the built-in, each in its sandbox, at 100 ms a move; then a seeded, budgeted rerun."""
    bots = [resolve_bot(str(ROOT / "sample_bots" / "expert")), resolve_bot("expert"), resolve_bot("heuristic"), resolve_bot("cautious")]
    clock = TimeControl(move_ms=100, bank_ms=1000, startup_ms=15_000)
    result, stderrs = run(run_local_match(bots, preset("classic", limit=5), 3, clock, trusted=True), timeout=120)
    assert result.status == "finished", (result, stderrs)
    assert result.faults == [{}, {}, {}, {}], stderrs
    assert result.names[:2] == ("expert", "expert")
    assert replay_lines(result.record).divergence is None


def test_two_runs_of_a_seeded_budgeted_match_give_identical_records(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLIGNAC_EXPERT_PLAYOUTS", "30")
    bots = [resolve_bot("expert"), resolve_bot("expert"), resolve_bot("heuristic")]
    clock = TimeControl(move_ms=5000, bank_ms=1000, startup_ms=15_000)

    def decisions() -> list[object]:
        result, _ = run(run_local_match(bots, preset("classic", players=3, limit=5), 21, clock, seat_kind="inprocess"), timeout=120)
        assert result.status == "finished"
        return [(e["seat"], e["action"]) for e in result.record if e["type"] == "action"]

    first = decisions()
    assert first and first == decisions()


def test_the_expert_is_registered_as_a_built_in_and_a_sample_submission() -> None:
    assert BUILTIN_BOTS["expert"] is ExpertBot
    assert isinstance(builtin_bot("expert", 1), ExpertBot)
    submission = builtin_submission("expert")
    assert submission.command == ("python", "-m", "polignac.bots", "expert")
    sample = load_submission(ROOT / "sample_bots" / "expert")
    assert sample.name == "expert" and sample.games == tuple(PRESETS)


def test_bad_options_are_refused_naming_the_value(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="0"):
        ExpertBot(playouts=0)
    with pytest.raises(ValueError, match="'greedy'"):
        ExpertBot(rollout="greedy")
    monkeypatch.setenv("POLIGNAC_EXPERT_PLAYOUTS", "lots")
    assert ExpertBot().playouts is None  # not a number: the clock decides


@pytest.mark.parametrize("game", ["classic", "knaves", "bassadewitz"])
def test_the_expert_tournament_files_play_duplicate_deals_at_100_ms_against_the_heuristic(game: str, tmp_path: Path) -> None:
    path = ROOT / "tournaments" / ("expert.toml" if game == "classic" else f"expert-{game}.toml")
    config = load_config(path)
    assert config.game == Game(game) and config.format == "duplicate"
    assert config.time.move_ms == 100
    assert {"expert", "heuristic"} <= set(config.entrants) and len(config.entrants) == config.table_size
    with Store(tmp_path / "arena.db") as store:
        check_seating(resolve_entrants(config, store).values(), config.game)
