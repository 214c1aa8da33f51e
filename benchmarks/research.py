"""Environment steps per second: Polignac through PettingZoo and through OpenSpiel, beside OpenSpiel's C++ Hearts.

    python benchmarks/research.py                 # classic, 4 players, about 5 s a measurement; a table
    python benchmarks/research.py --json          # the same, one JSON object on stdout
    python benchmarks/research.py --rules knaves --seconds 10
    python benchmarks/research.py --quick         # smoke run (a fraction of a second a measurement)

Each measurement plays whole episodes (a hand each) with uniformly random legal actions, the
way a learner's rollout loop does, on one thread, and counts steps for a fixed time:

- ``pettingzoo``: the AEC loop over ``polignac.envs.pettingzoo.env`` (``last()``, which builds
  the observation and the action mask, then ``step``); a step is one agent's action.
- ``openspiel``: ``python_polignac`` through pyspiel: at a decision node ``legal_actions()`` and
  ``information_state_tensor()`` (what OpenSpiel's RL environment hands a learner; Hearts has no
  observation tensor), then ``apply_action``; at a chance node ``chance_outcomes()``, then
  ``apply_action``.  A step is one ``apply_action``, the deal's chance steps included;
  ``openspiel_decisions_per_s`` counts the decisions alone.
- ``hearts``: the same loop over OpenSpiel's own C++ ``hearts`` (4 players, its deal and its
  passing of cards included), the yardstick: a game written in C++ that pyspiel drives.

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


def timed(run_episode: Callable[[], tuple[int, int]], seconds: float) -> dict[str, float]:
    """Play episodes for ``seconds``: steps, decisions and episodes per second."""
    steps = decisions = episodes = 0
    start = time.perf_counter()
    stop = start + seconds
    while True:
        s, d = run_episode()
        steps += s
        decisions += d
        episodes += 1
        now = time.perf_counter()
        if now >= stop:
            break
    elapsed = now - start
    return {"steps_per_s": steps / elapsed, "decisions_per_s": decisions / elapsed, "episodes_per_s": episodes / elapsed}


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


def openspiel_episode(game: Any, rng: random.Random) -> Callable[[], tuple[int, int]]:
    def episode() -> tuple[int, int]:
        state = game.new_initial_state()
        steps = decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[int(rng.random() * len(outcomes))][0])
            else:
                legal = state.legal_actions()
                state.information_state_tensor(state.current_player())
                state.apply_action(legal[int(rng.random() * len(legal))])
                decisions += 1
            steps += 1
        return steps, decisions

    return episode


def measure(rules_name: str, players: int, seconds: float) -> dict[str, Any]:
    rules = preset(rules_name, players=players)
    results: dict[str, Any] = {"rules": rules_name, "players": players, "seconds_each": seconds}
    pz = timed(pettingzoo_episode(polignac_env(rules=rules), np.random.default_rng(1)), seconds)
    spiel = timed(openspiel_episode(load_game(rules), random.Random(2)), seconds)
    hearts = timed(openspiel_episode(pyspiel.load_game("hearts"), random.Random(3)), seconds)
    results.update(
        pettingzoo_steps_per_s=pz["steps_per_s"],
        pettingzoo_episodes_per_s=pz["episodes_per_s"],
        openspiel_steps_per_s=spiel["steps_per_s"],
        openspiel_decisions_per_s=spiel["decisions_per_s"],
        openspiel_episodes_per_s=spiel["episodes_per_s"],
        hearts_steps_per_s=hearts["steps_per_s"],
        hearts_decisions_per_s=hearts["decisions_per_s"],
        hearts_episodes_per_s=hearts["episodes_per_s"],
        pettingzoo_vs_hearts_decisions=pz["decisions_per_s"] / hearts["decisions_per_s"],
        openspiel_vs_hearts_steps=spiel["steps_per_s"] / hearts["steps_per_s"],
    )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rules", default="classic", help="the Polignac ruleset (default classic)")
    parser.add_argument("--players", type=int, default=None, help="the table size (default: the ruleset's own)")
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds of play for each measurement (default 5)")
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
        ("PettingZoo polignac", results["pettingzoo_steps_per_s"], results["pettingzoo_steps_per_s"], results["pettingzoo_episodes_per_s"]),
        (
            "OpenSpiel python_polignac",
            results["openspiel_steps_per_s"],
            results["openspiel_decisions_per_s"],
            results["openspiel_episodes_per_s"],
        ),
        ("OpenSpiel hearts (C++)", results["hearts_steps_per_s"], results["hearts_decisions_per_s"], results["hearts_episodes_per_s"]),
    ]
    for name, steps, decisions, episodes in rows:
        print(f"{name:28}{steps:>12,.0f}{decisions:>14,.0f}{episodes:>12,.1f}")
    print(
        f"PettingZoo decisions / Hearts decisions: {results['pettingzoo_vs_hearts_decisions']:.2f};"
        f" OpenSpiel steps / Hearts steps: {results['openspiel_vs_hearts_steps']:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
