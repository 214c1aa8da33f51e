"""The PettingZoo environment: PettingZoo's own API and seed tests at every table, and the engine's game exactly."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

from polignac import Match, PolignacError, preset
from polignac.bots import HeuristicBot
from polignac.envs.encoding import action_of, decision_of, encode
from tests.research.common import EVERY_TABLE, EVERY_TABLE_IDS, need_pettingzoo

need_pettingzoo()

from pettingzoo.test import api_test, seed_test  # noqa: E402  # after the skip
from pettingzoo.utils.wrappers import TerminateIllegalWrapper  # noqa: E402  # after the skip

from polignac.envs.pettingzoo import IllegalAction, env, raw_env  # noqa: E402  # after the skip


@pytest.mark.parametrize("episode", ["hand", "match"])
@pytest.mark.parametrize(("name", "players"), EVERY_TABLE, ids=EVERY_TABLE_IDS)
def test_pettingzoo_api_and_seed_tests_pass(name: str, players: int, episode: str) -> None:
    with warnings.catch_warnings():
        # Two advice-level warnings PettingZoo gives every environment with masked dict observations
        # not on its own list (its classic card games get them too); nothing else is tolerated.
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message="Observation is not a NumPy array")
        warnings.filterwarnings("ignore", message="Observation space for each agent probably should be")
        api_test(env(rules=name, players=players, episode=episode), num_cycles=300)
        seed_test(lambda: env(rules=name, players=players, episode=episode), num_cycles=200)


def play_through(table: raw_env, rng: random.Random) -> list[tuple[int, list[int], float]]:
    """Random legal actions to the end: (seat, legal actions, reward of the acting agent) at every step."""
    steps = []
    for agent in table.agent_iter():
        observation, reward, terminated, truncated, _ = table.last()
        if terminated or truncated:
            table.step(None)
            continue
        legal = [int(a) for a in np.flatnonzero(observation["action_mask"])]
        steps.append((int(agent.split("_")[1]), legal, reward))
        table.step(rng.choice(legal))
    return steps


@pytest.mark.parametrize(("name", "players"), EVERY_TABLE, ids=EVERY_TABLE_IDS)
def test_a_match_episode_is_the_engines_match_with_the_same_deal_and_actions(name: str, players: int) -> None:
    table = raw_env(rules=name, players=players, episode="match")
    table.reset(seed=players, options={"match_seed": 1000 + players, "first_dealer": 1})
    rng = random.Random(players)
    engine = Match(preset(name, players=players), 1000 + players, first_dealer=1)
    rewards = dict.fromkeys(table.possible_agents, 0.0)
    while table.agents:
        agent = table.agent_selection
        observation, _, terminated, truncated, _ = table.last()
        if terminated or truncated:
            table.step(None)
            continue
        seat = engine.to_act
        assert seat is not None and agent == f"player_{seat}"
        legal = sorted(action_of(d) for d in engine.legal_decisions())
        assert [int(a) for a in np.flatnonzero(observation["action_mask"])] == legal  # the legal set at every step
        assert np.array_equal(observation["observation"], encode(engine.view(seat)))
        tricks_before = len(engine.tricks)
        action = rng.choice(legal)
        table.step(action)
        engine.apply(decision_of(action))
        for other, reward in table.rewards.items():
            rewards[other] += reward
        if engine.tricks and len(engine.tricks) > tricks_before:
            assert table.match.tricks[-1].winner == engine.tricks[-1].winner  # the trick winners
    assert table.match.places == engine.places and table.match.totals == engine.totals
    assert table.match.hand_results == engine.hand_results  # every hand's scores and their parts
    assert table.match.events == engine.events  # every deal, decision and trick won, in order
    against = engine.rules.against
    assert rewards == {f"player_{s}": float(-against * engine.totals[s]) for s in range(players)}


@pytest.mark.parametrize(("name", "players"), EVERY_TABLE, ids=EVERY_TABLE_IDS)
def test_rewards_are_the_hand_scores_higher_is_better(name: str, players: int) -> None:
    table = raw_env(rules=name, players=players)
    table.reset(seed=7)
    gathered = dict.fromkeys(table.possible_agents, 0.0)
    while table.agents:
        agent = table.agent_selection
        _, reward, terminated, truncated, _ = table.last()
        if terminated or truncated:
            gathered[agent] = reward
            table.step(None)
            continue
        observation = table.observe(agent)
        table.step(int(np.flatnonzero(observation["action_mask"])[0]))
    result = table.match.hand_results[0]
    against = table.rules.against
    assert gathered == {f"player_{s}": float(-against * result.scores[s]) for s in range(players)}


def test_a_hand_episode_ends_with_the_hand_and_shows_its_last_trick() -> None:
    table = raw_env(rules="no-contracts", render_mode="ansi")
    table.reset(seed=3)
    steps = play_through(table, random.Random(1))
    assert len(steps) == 32 and not table.agents
    final = table.view("player_0")
    assert final.phase.value == "over" and len(final.tricks) == 8 and final.hand == () and final.legal == ()
    assert final.totals == table.match.hand_results[0].totals
    text = table.render()
    assert isinstance(text, str) and "hand 1" in text and "total" in text


def test_arena_bots_play_agents_through_their_views() -> None:
    table = env(rules="classic", players=3)
    table.reset(seed=5)
    bot = HeuristicBot()
    for agent in table.agent_iter():
        _, _, terminated, truncated, _ = table.last()
        table.step(None if terminated or truncated else action_of(bot.decide(table.unwrapped.view(agent))))
    assert not table.agents


def test_an_illegal_action_is_refused_and_changes_nothing() -> None:
    table = raw_env(rules="classic")
    table.reset(seed=2)
    agent = table.agent_selection
    before = table.observe(agent)
    for bad in (0 if not before["action_mask"][0] else 31, 55, -1, "JS", 2.5):
        with pytest.raises(IllegalAction, match=agent):
            table.step(bad)  # type: ignore[arg-type]  # not an action, on purpose
    assert table.agent_selection == agent and np.array_equal(table.observe(agent)["observation"], before["observation"])
    # The illegal-move policy is a wrapper's: PettingZoo's own ends the episode with a penalty.
    wrapped = TerminateIllegalWrapper(raw_env(rules="classic"), illegal_reward=-1)
    wrapped.reset(seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the wrapper says so with a warning
        wrapped.step(54)  # general is off in classic
    assert all(wrapped.terminations.values())


def test_bad_construction_is_a_clear_error() -> None:
    with pytest.raises(PolignacError, match="unknown ruleset 'nope'"):
        raw_env(rules="nope")
    with pytest.raises(PolignacError, match="players"):
        raw_env(rules="knaves", players=4)
    with pytest.raises(ValueError, match="episode must be one of hand, match"):
        raw_env(episode="season")
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(render_mode="rgb_array")
    with pytest.raises(PolignacError, match="has not been reset"):
        raw_env().view("player_0")
    assert raw_env(rules=preset("classic"), limit=10).rules.limit == 10


def test_reset_seeds_replay_the_same_deals() -> None:
    first, second = raw_env(), raw_env()
    first.reset(seed=11)
    second.reset(seed=11)
    assert first.match.seed == second.match.seed and first.match.dealer == second.match.dealer
    first.reset()
    second.reset()
    assert first.match.seed == second.match.seed  # the environment's generator goes on alike
