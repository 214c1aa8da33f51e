"""Agents of the research frameworks seated as arena bots (docs/research.md).

- :class:`PolicyBot`: any PettingZoo-style policy, a function from an observation vector
  and an action mask (:mod:`polignac.envs.encoding`, the environment's own arrays) to an
  action number.
- :class:`OpenSpielBot`: any OpenSpiel bot (``pyspiel.Bot``), made for the ``python_polignac``
  game of the match's rules by ``make_bot(game, seat)``; at each decision it is handed the
  state the seat is in, the cards it cannot see dealt at random consistently with its view
  (:func:`polignac.envs.openspiel.state_from_view`).

Both are :class:`polignac.bot.Bot` objects: ``play_local`` and ``check_bot`` try them,
``polignac.bot.run(bot)`` connects them to a referee, and a submission folder whose
``bot.py`` does that runs them in the sandbox.

>>> import numpy as np
>>> from polignac.bot import play_local
>>> first_legal = PolicyBot(lambda observation, mask: int(np.flatnonzero(mask)[0]), name="first-legal")
>>> len(play_local(first_legal, matches=1, seed=3).places)
1
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from polignac.bot.base import Bot, MatchInfo
from polignac.envs.encoding import action_mask, decision_of, encode
from polignac.errors import IllegalDecision
from polignac.values import Decision
from polignac.view import PlayerView

if TYPE_CHECKING:
    import pyspiel

    from polignac.envs.openspiel import PolignacGame
    from polignac.rules import Ruleset

__all__ = ["OpenSpielBot", "Policy", "PolicyBot"]

Policy = Callable[[npt.NDArray[np.float32], npt.NDArray[np.int8]], int]
"""``policy(observation, action_mask) -> action``: the arrays a PettingZoo agent of this game is given."""


class PolicyBot(Bot):
    """A policy of the PettingZoo environment playing as an arena bot.

    An action the mask does not allow raises :class:`polignac.errors.IllegalDecision` naming
    it: the referee then counts the seat as crashed, so a policy should sample within the mask.
    """

    def __init__(self, policy: Policy, name: str = "policy", version: str = "1") -> None:
        self.policy = policy
        self.name = name
        self.version = version

    def decide(self, view: PlayerView) -> Decision:
        mask = action_mask(view)
        action = self.policy(encode(view), mask)
        decision = decision_of(action)
        if not 0 <= int(action) < len(mask) or not mask[int(action)]:
            raise IllegalDecision(f"the policy chose action {action!r} ({decision}), which the action mask does not allow")
        return decision


class OpenSpielBot(Bot):
    """An OpenSpiel bot playing as an arena bot; ``make_bot(game, seat)`` makes it once the seat is known.

    ``seed`` (or ``POLIGNAC_BOT_SEED`` under the arena) seeds the guesses at the hidden cards.
    """

    def __init__(
        self, make_bot: Callable[[PolignacGame, int], pyspiel.Bot], name: str = "openspiel", version: str = "1", seed: int | None = None
    ) -> None:
        if seed is None and os.environ.get("POLIGNAC_BOT_SEED", "").isdigit():
            seed = int(os.environ["POLIGNAC_BOT_SEED"])
        self.make_bot = make_bot
        self.name = name
        self.version = version
        self.rng = random.Random(seed)
        self.move_ms = 0
        self.game: PolignacGame | None = None
        self.bot: pyspiel.Bot = None  # made for the first match
        self._seat = -1

    def on_match_start(self, info: MatchInfo) -> None:
        self.move_ms = info.move_ms
        self._prepare(info.rules, info.seat)

    def _prepare(self, rules: Ruleset, seat: int) -> None:
        from polignac.envs.openspiel import load_game  # pyspiel is loaded with the first match

        if self.game is None or self.game.rules != rules or self._seat != seat:
            self.game = load_game(rules)
            self._seat = seat
            self.bot = self.make_bot(self.game, seat)

    def decide(self, view: PlayerView) -> Decision:
        if len(view.legal) == 1:
            return view.legal[0]
        from polignac.envs.openspiel import state_from_view

        self._prepare(view.rules, view.seat)
        assert self.game is not None
        state = state_from_view(self.game, view, self.rng)
        return decision_of(int(self.bot.step(state)))
