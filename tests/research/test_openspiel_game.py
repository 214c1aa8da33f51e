"""The OpenSpiel game: OpenSpiel's own checks at every table, what each player may know, and the engine's game exactly."""

from __future__ import annotations

import random
import unittest

import numpy as np
import pytest

from polignac import Contract, Match, Ruleset, preset
from polignac.envs.encoding import action_of, decision_of, encode
from polignac.events import TrickWon
from tests.research.common import EVERY_TABLE, EVERY_TABLE_IDS, need_openspiel

need_openspiel()

import pyspiel  # noqa: E402  # after the skip
from open_spiel.integration_tests import api_test  # noqa: E402  # after the skip
from open_spiel.python.observation import make_observation  # noqa: E402  # after the skip
from open_spiel.python.tests import games_sim_test  # noqa: E402  # after the skip

from polignac.envs.openspiel import GAME_NAME, PolignacState, game_params, load_game, state_from_view  # noqa: E402  # after the skip


def game_of(name: str, players: int) -> pyspiel.Game:
    return pyspiel.load_game(GAME_NAME, {"rules": name, "players": players})


def random_states(game: pyspiel.Game, count: int, seed: int) -> list[PolignacState]:
    """States along random playthroughs, chance and decision nodes and the end alike."""
    rng = random.Random(seed)
    states: list[PolignacState] = []
    while len(states) < count:
        state = game.new_initial_state()
        while not state.is_terminal():
            if rng.random() < 0.1:
                states.append(state.clone())
            if state.is_chance_node():
                state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
            else:
                state.apply_action(rng.choice(state.legal_actions()))
        states.append(state)
    return states[:count]


@pytest.mark.parametrize(("name", "players"), EVERY_TABLE, ids=EVERY_TABLE_IDS)
def test_openspiel_random_simulation_with_serialization(name: str, players: int) -> None:
    game = game_of(name, players)
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)
    games_sim_test.GamesSimTest().sim_game(game)  # pickling of the game and states, clones along the way


@pytest.mark.parametrize(("name", "players"), EVERY_TABLE, ids=EVERY_TABLE_IDS)
def test_openspiel_api_checks_on_decision_states(name: str, players: int) -> None:
    """OpenSpiel's partial-tree API tests, given states from the whole hand (its own sampler stops in the deal)."""
    game = game_of(name, players)
    states = random_states(game, 120, seed=players)

    class Checks(api_test.EnforceAPIOnPartialTreeBase):
        @classmethod
        def setUpClass(cls) -> None:
            cls.game, cls.game_name, cls.game_type, cls.some_states = game, GAME_NAME, game.get_type(), states

    result = unittest.TextTestRunner(stream=open("/dev/null", "w"), verbosity=0).run(  # noqa: SIM115  # closed with the runner
        unittest.defaultTestLoader.loadTestsFromTestCase(Checks)
    )
    assert result.testsRun >= 5 and result.wasSuccessful(), result.failures + result.errors


def replay_with_deal(game: pyspiel.Game, dealt: list[int], actions: list[int]) -> pyspiel.State:
    """A state reached through real actions: ``dealt[seat]`` dealt in the game's deal order, then ``actions``."""
    state = game.new_initial_state()
    left = {seat: sorted(i for i in range(52) if mask >> i & 1) for seat, mask in enumerate(dealt)}
    for seat in state.hand.deal_order:
        state.apply_action(left[seat].pop())
    for action in actions:
        state.apply_action(action)
    return state


def own_sequence(final: pyspiel.State, player: int) -> list[tuple[str, int]]:
    """``player``'s information states and actions along ``final``'s history, in order."""
    walk = final.get_game().new_initial_state()
    seen = []
    for h in final.full_history():
        if walk.current_player() == player:
            seen.append((walk.information_state_string(player), h.action))
        walk.apply_action(h.action)
    return seen


@pytest.mark.parametrize(("name", "players"), EVERY_TABLE, ids=EVERY_TABLE_IDS)
def test_information_states_hide_what_a_player_cannot_see_and_have_perfect_recall(name: str, players: int) -> None:
    """Dealing again the cards a player cannot see changes none of its information or observation, and OpenSpiel's
    perfect-recall condition holds between the two histories: the same own information states and actions, in order."""
    game = game_of(name, players)
    observation = make_observation(game)
    info_state = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    changed = 0
    for state in random_states(game, 40, seed=100 + players):
        if state.is_chance_node() or state.is_terminal():
            continue
        player = state.current_player()
        other = state.resample_from_infostate(player, sampler)
        for seat in range(players):
            if seat != player:
                changed += other.hand.dealt[seat] != state.hand.dealt[seat]
        assert other.information_state_string(player) == state.information_state_string(player)
        assert other.information_state_tensor(player) == state.information_state_tensor(player)
        assert other.observation_string(player) == state.observation_string(player)
        assert other.observation_tensor(player) == state.observation_tensor(player)
        assert other.legal_actions() == state.legal_actions()
        # The other history, played for real from its own deal: OpenSpiel's perfect-recall condition.
        decisions = [h.action for h in state.full_history() if h.player != pyspiel.PlayerId.CHANCE]
        replayed = replay_with_deal(game, other.hand.dealt, decisions)
        assert replayed.information_state_string(player) == state.information_state_string(player)

        assert own_sequence(replayed, player) == own_sequence(state, player)
        info_state.set_from(state, player)
        assert sorted(np.flatnonzero(info_state.dict["dealt"])) == sorted(i for i in range(52) if state.hand.dealt[player] >> i & 1)
        observation.set_from(state, player)
        assert np.array_equal(observation.tensor, encode(state.view(player)))  # the PettingZoo agent's vector
    assert changed > 0  # the hidden cards were really dealt again


@pytest.mark.parametrize(("name", "players"), EVERY_TABLE, ids=EVERY_TABLE_IDS)
def test_players_never_share_an_information_state(name: str, players: int) -> None:
    game = game_of(name, players)
    for state in random_states(game, 20, seed=players):
        if state.is_chance_node():
            continue
        strings = {state.information_state_string(p) for p in range(players)}
        tensors = {tuple(state.information_state_tensor(p)) for p in range(players)}
        assert len(strings) == len(tensors) == players


@pytest.mark.parametrize(("name", "players"), EVERY_TABLE, ids=EVERY_TABLE_IDS)
def test_a_hand_is_the_engines_hand_with_the_same_deal_and_actions(name: str, players: int) -> None:
    """Legal sets at every step, every trick's winner, and the scores: the engine's, for several hands each."""
    rules = preset(name, players=players)
    game = game_of(name, players)
    rng = random.Random(players)
    for seed in range(4):
        engine = Match(rules, seed)
        dealt = [engine.hand_mask(s) for s in range(players)]
        state = replay_with_deal(game, dealt, [])
        assert state.hand.turned == engine.turned
        winners = []
        while not state.is_terminal():
            assert state.current_player() == engine.to_act
            legal = sorted(action_of(d) for d in engine.legal_decisions())
            assert state.legal_actions() == legal
            action = rng.choice(legal)
            state.apply_action(action)
            events = engine.event_count
            engine.apply(decision_of(action))
            winners += [e.winner for e in engine.events_since(events) if isinstance(e, TrickWon)]
        assert [t.winner for t in state.hand.tricks] == winners
        result = engine.hand_results[0]
        assert state.returns() == [float(-rules.against * s) for s in result.scores]
        assert game.min_utility() <= min(state.returns()) and max(state.returns()) <= game.max_utility()


def test_any_ruleset_is_a_game_and_round_trips_through_the_game_string() -> None:
    custom = preset("classic", players=5, limit=10, general=True, contract_points=3)
    params = game_params(custom)
    assert params["rules"] not in ("classic",) and params["players"] == 5
    game = load_game(custom)
    assert game.rules == custom and game.num_players() == 5
    again = pyspiel.load_game(str(game))
    assert again.rules == custom
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    assert [decision_of(a) for a in state.legal_actions()] == [Contract.PASS, Contract.CAPOT, Contract.GENERAL]
    assert game_params(preset("knaves")) == {"rules": "knaves", "players": 3, "dealer": -1}
    assert game_params(preset("bassadewitz", players=5))["rules"] == "bassadewitz"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"rules": "nope"}, "bad rules 'nope'"),
        ({"rules": "knaves", "players": 4}, "players"),
        ({"rules": "classic", "dealer": 4}, "dealer must be a seat from 0 to 3"),
        ({"rules": "eyJ4IjoxfQ"}, "unknown rules setting 'x'"),  # {"x":1}
        ({"rules": "WzFd"}, "rules must be a table"),  # [1]
        ({"rules": "!!"}, "bad rules"),
    ],
)
def test_bad_parameters_are_a_clear_error(params: dict[str, object], message: str) -> None:
    with pytest.raises(Exception, match=message):
        pyspiel.load_game(GAME_NAME, params)


def test_a_tiebreak_hand_with_fault_points_is_played_from_the_view() -> None:
    """The arena's state of a seat: two tied seats of four, contracts off, a revoke's points kept in the scores."""
    rules = preset("classic", tiebreak_hands=1)
    for seed in range(100):  # seats 2 and 3 are past the limit: seats 0 and 1 tie for first when hand 1 leaves them equal
        match = Match(rules, seed=seed, start_totals=[0, 0, 30, 30])
        while not match.is_over and not match.is_tiebreak:
            match.apply(match.legal_decisions()[-1])
        if match.is_tiebreak:
            break
    assert match.is_tiebreak and match.to_act is not None
    match.add_penalty(match.to_act, 5, "revoke")
    game = load_game(rules)
    view = match.view(match.to_act)
    state = state_from_view(game, view, random.Random(2))
    assert state.hand.seats == match.seats and len(match.seats) == 2
    assert state.legal_actions() == sorted(action_of(d) for d in view.legal)
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
    penalised = view.seat
    assert state.returns()[penalised] <= -5 and all(state.returns()[s] == 0 for s in range(4) if s not in match.seats)
    with pytest.raises(Exception, match="the game of another ruleset"):
        state_from_view(load_game(Ruleset()), view, random.Random(2))
