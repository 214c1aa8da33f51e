"""Environment steps per second: Polignac through PettingZoo and through OpenSpiel, beside OpenSpiel's C++ Hearts.

    python benchmarks/research.py                 # classic, 4 players, five measurements of 3 s; a table
    python benchmarks/research.py --json          # the same, one JSON object on stdout
    python benchmarks/research.py --rules knaves --seconds 10
    python benchmarks/research.py --quick         # smoke run (a fraction of a second a measurement)

Each measurement plays whole episodes (a hand each) with uniformly random legal actions, the
way a learner's rollout loop does, on one thread, and counts steps for a fixed time, in five
blocks taken in turn with the others':

- ``pettingzoo``: the AEC loop over ``polignac.envs.pettingzoo.env`` (``last()``, which builds
  the observation and the action mask, then ``step``); a step is one agent's action.
- ``openspiel``: ``python_polignac`` through pyspiel: at a decision node ``legal_actions()`` and
  ``information_state_tensor()`` (what OpenSpiel's RL environment hands a learner; Hearts has no
  observation tensor), then ``apply_action``; at a chance node ``chance_outcomes()``, then
  ``apply_action``.  A step is one ``apply_action``, the deal's chance steps included;
  ``openspiel_decisions_per_s`` counts the decisions alone.
- ``hearts``: the same loop over OpenSpiel's own C++ ``hearts`` (4 players, its deal and its
  passing of cards included), the yardstick: a game written in C++ that pyspiel drives.
- ``openspiel_bare`` and ``hearts_bare``: the same two loops without the tensor, the game alone
  (Hearts' information state is 5,088 floats, Polignac's 1,792 for 4 players: copying it out is
  much of a step).

The ratios set each Polignac figure beside Hearts'.  Needs the research extra (PettingZoo, OpenSpiel).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel

from polignac import preset
from polignac.envs.openspiel import load_game
from polignac.envs.pettingzoo import env as polignac_env

ROUNDS = 5
"""Each measurement is played in this many blocks, the three environments in turn."""


class Meter:
    """Steps, decisions and episodes of one environment over its blocks of play."""

    def __init__(self, run_episode: Callable[[], tuple[int, int]]) -> None:
        self.run_episode = run_episode
        self.steps = self.decisions = self.episodes = 0
        self.elapsed = 0.0

    def play(self, seconds: float) -> None:
        """Play whole episodes for ``seconds`` (the last one finished)."""
        start = time.perf_counter()
        stop = start + seconds
        while True:
            steps, decisions = self.run_episode()
            self.steps += steps
            self.decisions += decisions
            self.episodes += 1
            now = time.perf_counter()
            if now >= stop:
                break
        self.elapsed += now - start

    def rates(self) -> dict[str, float]:
        return {name: getattr(self, name) / self.elapsed for name in ("steps", "decisions", "episodes")}


def pettingzoo_episode(table: Any, rng: np.random.Generator) -> Callable[[], tuple[int, int]]:
    def episode() -> tuple[int, int]:
        table.reset(seed=int(rng.integers(2**31)))
        steps = 0
        for _agent in table.agent_iter():
            observation, _, terminated, truncated, _ = table.last()
            if terminated or truncated:
                table.step(None)
                continue
            table.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
            steps += 1
        return steps, steps

    return episode


def openspiel_episode(game: Any, rng: random.Random, tensor: bool) -> Callable[[], tuple[int, int]]:
    def episode() -> tuple[int, int]:
        state = game.new_initial_state()
        steps = decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[int(rng.random() * len(outcomes))][0])
            else:
                legal = state.legal_actions()
                if tensor:
                    state.information_state_tensor(state.current_player())
                state.apply_action(legal[int(rng.random() * len(legal))])
                decisions += 1
            steps += 1
        return steps, decisions

    return episode


def measure(rules_name: str, players: int, seconds: float) -> dict[str, Any]:
    rules = preset(rules_name, players=players)
    results: dict[str, Any] = {"rules": rules_name, "players": players, "seconds_each": seconds}
    meters = {
        "pettingzoo": Meter(pettingzoo_episode(polignac_env(rules=rules), np.random.default_rng(1))),
        "openspiel": Meter(openspiel_episode(load_game(rules), random.Random(2), tensor=True)),
        "hearts": Meter(openspiel_episode(pyspiel.load_game("hearts"), random.Random(3), tensor=True)),
        "openspiel_bare": Meter(openspiel_episode(load_game(rules), random.Random(4), tensor=False)),
        "hearts_bare": Meter(openspiel_episode(pyspiel.load_game("hearts"), random.Random(5), tensor=False)),
    }
    # Short blocks in turn, so that a change in the machine's load weighs on the three alike.
    for _ in range(ROUNDS):
        for meter in meters.values():
            meter.play(seconds / ROUNDS)
    pz, spiel, hearts, spiel_bare, hearts_bare = (meters[name].rates() for name in meters)
    results.update(
        pettingzoo_steps_per_s=pz["steps"],
        pettingzoo_episodes_per_s=pz["episodes"],
        openspiel_steps_per_s=spiel["steps"],
        openspiel_decisions_per_s=spiel["decisions"],
        openspiel_episodes_per_s=spiel["episodes"],
        hearts_steps_per_s=hearts["steps"],
        hearts_decisions_per_s=hearts["decisions"],
        hearts_episodes_per_s=hearts["episodes"],
        openspiel_bare_steps_per_s=spiel_bare["steps"],
        hearts_bare_steps_per_s=hearts_bare["steps"],
        pettingzoo_vs_hearts_decisions=pz["decisions"] / hearts["decisions"],
        openspiel_vs_hearts_steps=spiel["steps"] / hearts["steps"],
        openspiel_vs_hearts_bare_steps=spiel_bare["steps"] / hearts_bare["steps"],
    )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rules", default="classic", help="the Polignac ruleset (default classic)")
    parser.add_argument("--players", type=int, default=None, help="the table size (default: the ruleset's own)")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds of play for each measurement (default 3)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 0.3 s a measurement")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args(argv)
    players = args.players or preset(args.rules).players
    results = measure(args.rules, players, 0.3 if args.quick else args.seconds)
    if args.json:
        print(json.dumps(results))
        return 0
    print(f"Random play, one thread, {results['seconds_each']} s each: {args.rules} for {players} against OpenSpiel's C++ hearts")
    print(f"{'':28}{'steps/s':>12}{'decisions/s':>14}{'episodes/s':>12}")
    rows = [
        ("PettingZoo polignac", "pettingzoo_steps_per_s", "pettingzoo_steps_per_s", "pettingzoo_episodes_per_s"),
        ("OpenSpiel python_polignac", "openspiel_steps_per_s", "openspiel_decisions_per_s", "openspiel_episodes_per_s"),
        ("OpenSpiel hearts (C++)", "hearts_steps_per_s", "hearts_decisions_per_s", "hearts_episodes_per_s"),
        ("  python_polignac, bare", "openspiel_bare_steps_per_s", None, None),
        ("  hearts (C++), bare", "hearts_bare_steps_per_s", None, None),
    ]
    for name, steps, decisions, episodes in rows:
        line = f"{name:28}{results[steps]:>12,.0f}"
        if decisions is not None and episodes is not None:
            line += f"{results[decisions]:>14,.0f}{results[episodes]:>12,.1f}"
        print(line)
    print(
        f"PettingZoo decisions / Hearts decisions: {results['pettingzoo_vs_hearts_decisions']:.2f};"
        f" OpenSpiel steps / Hearts steps: {results['openspiel_vs_hearts_steps']:.2f}"
        f" (bare: {results['openspiel_vs_hearts_bare_steps']:.2f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
