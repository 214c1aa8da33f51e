"""The built-in bots ``openspiel:ismcts`` and ``openspiel:random``: OpenSpiel's own agents in the arena.

``openspiel:ismcts`` is OpenSpiel's information-set Monte Carlo tree search
(``open_spiel.python.algorithms.ismcts.ISMCTSBot``, Cowling, Powley and Whitehouse 2011):
one tree over the seat's information sets, a world (the hidden cards) dealt again for every
simulation, UCT to choose, and a uniformly random playout to the end of the hand to value a
new node, the evaluation OpenSpiel's ``RandomRolloutEvaluator`` makes, here played by the
engine's fast playout (:meth:`polignac.envs.hand.HandState.play_out`).  It searches by the
clock as the ``expert`` does: for :data:`THINK_SHARE` of ``move_ms`` a decision
(:data:`NO_CLOCK_MS` when the match has no clock), and then plays the most visited action.

``openspiel:random`` is OpenSpiel's uniform random bot (``pyspiel.make_uniform_random_bot``):
every legal action alike, the auction's declarations included.

Both need the ``research`` extra (OpenSpiel); without it, naming them is a clear error.
"""

from __future__ import annotations

import random
import time
from typing import Final

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from polignac.bot.base import MatchInfo
from polignac.envs.adapters import OpenSpielBot
from polignac.envs.openspiel import PolignacGame, PolignacState

__all__ = ["NO_CLOCK_MS", "THINK_SHARE", "UCT_C", "ClockedISMCTS", "IsmctsBot", "RandomPlayouts", "UniformRandomBot"]

THINK_SHARE: Final = 0.6
"""The share of ``move_ms`` the search runs for: the expert's own (:data:`polignac.bots.expert.THINK_SHARE`)."""
NO_CLOCK_MS: Final = 50
"""How long it searches when the match has no clock (in-process play)."""
UCT_C: Final = 2.0
"""UCT's exploration constant, in points of a hand's score."""


class RandomPlayouts(mcts.Evaluator):
    """OpenSpiel's random-rollout evaluation (one playout, uniform random actions), by the fast playout."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def evaluate(self, state: PolignacState) -> list[float]:
        return state.hand.play_out(self.rng)

    def prior(self, state: PolignacState) -> list[tuple[int, float]]:
        legal = state.legal_actions()
        return [(action, 1.0 / len(legal)) for action in legal]


class ClockedISMCTS(ismcts.ISMCTSBot):
    """OpenSpiel's ISMCTS bot searching until a deadline instead of for a number of simulations."""

    def __init__(self, game: PolignacGame, think_seconds: float, seed: int | None = None, uct_c: float = UCT_C) -> None:
        self.rng = random.Random(seed)
        super().__init__(
            game,
            RandomPlayouts(self.rng),
            uct_c,
            max_simulations=1,
            random_state=np.random.RandomState(self.rng.randrange(2**32)),
            final_policy_type=ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
        )
        self.think_seconds = think_seconds
        self.simulations = 0
        """Simulations of the last search."""
        # Worlds are dealt with this bot's own generator, so that a seeded bot repeats itself.
        self.set_resampler(lambda state, player: state.with_hand(state.hand.resampled(player, self.rng)))

    def run_search(self, state: pyspiel.State) -> list[tuple[int, float]]:
        """The parent's search, with the clock as its budget (at least two simulations: the first only values the root)."""
        stop = time.perf_counter() + self.think_seconds
        self.reset()
        legal_actions = state.legal_actions()
        if len(legal_actions) == 1:
            return [(legal_actions[0], 1.0)]
        self._root_node = self.create_new_node(state)
        self.simulations = 0
        while True:
            self.run_simulation(self.sample_root_state(state))
            self.simulations += 1
            if self.simulations >= 2 and time.perf_counter() >= stop:
                break
        policy: list[tuple[int, float]] = self.get_final_policy(state, self._root_node)
        return policy


class IsmctsBot(OpenSpielBot):
    """``openspiel:ismcts``: :class:`ClockedISMCTS` at the seat, on the clock of the match."""

    def __init__(self, seed: int | None = None, uct_c: float = UCT_C) -> None:
        super().__init__(self._make, name="openspiel:ismcts", version="1.0", seed=seed)
        self.uct_c = uct_c

    def _make(self, game: PolignacGame, seat: int) -> ClockedISMCTS:
        think = (self.move_ms or NO_CLOCK_MS) / 1000 * THINK_SHARE
        return ClockedISMCTS(game, think, seed=self.rng.randrange(2**63), uct_c=self.uct_c)

    def on_match_start(self, info: MatchInfo) -> None:
        self.game = None  # the clock may have changed: the search bot is made again
        super().on_match_start(info)


class UniformRandomBot(OpenSpielBot):
    """``openspiel:random``: OpenSpiel's uniform random bot."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(self._make, name="openspiel:random", version="1.0", seed=seed)

    def _make(self, game: PolignacGame, seat: int) -> pyspiel.Bot:
        return pyspiel.make_uniform_random_bot(seat, self.rng.randrange(2**31))
