"""Polignac as a PettingZoo AEC environment, for every ruleset and table size (docs/research.md).

>>> from polignac.envs.pettingzoo import env
>>> table = env(rules="knaves")
>>> table.reset(seed=1, options={"first_dealer": 2})
>>> table.agent_selection, table.observation_space("player_0")["action_mask"].shape
('player_0', (55,))

Agents are ``player_0`` .. ``player_{n-1}``, one per seat.  Each is observed as
``{"observation": float32 vector, "action_mask": int8 vector}``
(:mod:`polignac.envs.encoding`) and acts with one :class:`gymnasium.spaces.Discrete` (55)
action: a card or an auction decision.  The game is the engine's :class:`polignac.Match`.

Rewards: when a hand ends, every seat is rewarded with what that hand added to its match
total, signed so that higher is better: negated in the penalty games (where a lower total is
better), as it is in Knaves.  A tie-break hand among the tied enters no total and so rewards
nothing.  ``episode="hand"`` (the default) ends the episode with the first hand;
``episode="match"`` plays the whole match to the ruleset's limit, tie-breaks included, and
``infos[agent]["places"]`` then holds the final places.

An illegal action raises :class:`IllegalAction`: what to do instead (end the episode with a
penalty, say) is a wrapper's business, such as PettingZoo's ``TerminateIllegalWrapper``.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any, Final, cast

import gymnasium
import numpy as np
import numpy.typing as npt
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from polignac.deal import MAX_SEED
from polignac.engine import Match
from polignac.envs.encoding import ACTIONS, action_mask, decision_of, encode, observation_bounds
from polignac.envs.text import table_text
from polignac.errors import PolignacError
from polignac.events import Event, TrickWon
from polignac.jsontypes import JsonObject
from polignac.rules import Ruleset, cards_each, preset
from polignac.values import Decision, Phase, Trick
from polignac.view import PlayerView

__all__ = ["EPISODES", "IllegalAction", "env", "raw_env"]

EPISODES: Final = ("hand", "match")

Observation = dict[str, npt.NDArray[Any]]


class IllegalAction(ValueError):
    """An action that is not legal for the agent to act now."""


def env(**kwargs: Any) -> OrderEnforcingWrapper[str, Observation, int]:
    """The environment, wrapped as PettingZoo's own environments are (calls in order); arguments as :class:`raw_env`."""
    return OrderEnforcingWrapper(raw_env(**kwargs))


class raw_env(AECEnv[str, Observation, int]):
    """One Polignac table: ``rules`` a preset name or a :class:`polignac.Ruleset`, ``players`` and ``settings`` changing it.

    ``raw_env(rules="classic", players=5, limit=10)`` is five players of classic to 10.
    """

    metadata: JsonObject = {"name": "polignac_v0", "render_modes": ["human", "ansi"], "is_parallelizable": False}  # noqa: RUF012  # PettingZoo's class attribute

    def __init__(
        self,
        rules: str | Ruleset = "classic",
        players: int | None = None,
        episode: str = "hand",
        render_mode: str | None = None,
        **settings: object,
    ) -> None:
        super().__init__()
        if players is not None:
            settings["players"] = players
        if isinstance(rules, Ruleset):
            self.rules = rules.with_changes(**settings) if settings else rules
        elif isinstance(rules, str):
            self.rules = preset(rules, **settings)
        else:
            raise PolignacError(f"rules must be a ruleset name or a Ruleset, got {rules!r}")
        if episode not in EPISODES:
            raise ValueError(f"episode must be one of {', '.join(EPISODES)}, got {episode!r}")
        render_modes = cast("list[str]", self.metadata["render_modes"])  # as the class's metadata lists them
        if render_mode is not None and render_mode not in render_modes:
            raise ValueError(f"render_mode must be one of {', '.join(render_modes)} or None, got {render_mode!r}")
        self.episode = episode
        self.render_mode = render_mode
        n = self.rules.players
        self.possible_agents = [f"player_{seat}" for seat in range(n)]
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        low, high = observation_bounds(n)
        observation = gymnasium.spaces.Dict(
            {
                "observation": gymnasium.spaces.Box(low, high, dtype=np.float32),
                "action_mask": gymnasium.spaces.Box(0, 1, (ACTIONS,), dtype=np.int8),
            }
        )
        self.observation_spaces = {agent: observation for agent in self.possible_agents}
        self.action_spaces: dict[str, gymnasium.spaces.Space[Any]] = {
            agent: gymnasium.spaces.Discrete(ACTIONS) for agent in self.possible_agents
        }
        self._rng = random.Random()
        self._match: Match | None = None
        self._final: list[PlayerView] | None = None  # a finished "hand" episode's last views

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.action_spaces[agent]

    @property
    def match(self) -> Match:
        """The engine's match being played (read it; do not apply decisions to it)."""
        if self._match is None:
            raise PolignacError("the environment has not been reset yet")
        return self._match

    def view(self, agent: str) -> PlayerView:
        """What ``agent``'s seat may know now: an arena bot's ``decide(view)`` can play the agent.

        Once a ``"hand"`` episode is over, the view as the hand ended (the engine has dealt the
        next hand by then, which the episode does not show).
        """
        seat = self._seat[agent]
        if self._final is not None:
            return self._final[seat]
        return self.match.view(seat)

    def reset(self, seed: int | None = None, options: dict[str, int] | None = None) -> None:
        """A new match.  ``seed`` reseeds the environment; ``options`` may pin ``match_seed`` and ``first_dealer``.

        Without them, the match seed and the first dealer are drawn from the environment's
        random generator, so a seeded environment replays the same deals.
        """
        if seed is not None:
            self._rng = random.Random(seed)
        options = options or {}
        n = self.rules.players
        match_seed = options.get("match_seed", self._rng.randrange(MAX_SEED + 1))
        first_dealer = options.get("first_dealer", self._rng.randrange(n))
        self._match = Match(self.rules, match_seed, first_dealer=first_dealer)
        self._final = None
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, object]] = {agent: {} for agent in self.agents}
        self.agent_selection = self._agent_to_act()

    def observe(self, agent: str) -> Observation:
        view = self.view(agent)
        return {"observation": encode(view), "action_mask": action_mask(view)}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)  # None, as PettingZoo asks of a finished agent
            return
        match = self.match
        try:
            if action is None:
                raise ValueError(f"an action is an integer in 0..{ACTIONS - 1}, got None")
            decision = decision_of(action)
        except ValueError as exc:
            raise IllegalAction(f"{agent}: {exc}") from None
        if not match.is_legal(decision):
            raise IllegalAction(f"{agent}: action {action!r} ({decision}) is not legal now; legal: {match.legal_decisions()}")
        hand = match.hand_number
        before = match.totals
        last_card = self.episode == "hand" and _is_last_card(match)
        views = [match.view(seat) for seat in range(self.rules.players)] if last_card else []
        events = match.event_count
        match.apply(decision)
        if last_card:
            self._final = _hand_end_views(views, decision, match.events_since(events), match.hand_results[0].totals)
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        if match.hand_number != hand or match.is_over:
            against = self.rules.against
            for other in self.agents:
                seat = self._seat[other]
                self.rewards[other] = float(-against * (match.totals[seat] - before[seat]))
            if match.is_over or self.episode == "hand":
                places = match.places
                for other in self.agents:
                    self.terminations[other] = True
                    if places is not None:
                        self.infos[other] = {"places": places}
        self._accumulate_rewards()
        if not any(self.terminations.values()):
            self.agent_selection = self._agent_to_act()
        if self.render_mode == "human":
            self.render()

    def _agent_to_act(self) -> str:
        seat = self.match.to_act
        assert seat is not None  # the match is over only once every agent is terminated
        return self.possible_agents[seat]

    def render(self) -> str | None:
        """``ansi``: the table as text (every hand face up); ``human``: the same, printed."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode (raw_env(render_mode='ansi' or 'human'))")
            return None
        n = self.rules.players
        match = self.match
        # A finished hand episode shows its last hand, not the one the engine dealt next.
        shown = self._final[0] if self._final is not None else match.view(0)
        hands = [0] * n if self._final is not None else [match.hand_mask(s) for s in range(n)]
        text = table_text(shown, hands)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""


def _is_last_card(match: Match) -> bool:
    """True when the decision awaited is the last card of the hand."""
    plays_left = len(match.seats) * (cards_each(match.rules, len(match.seats)) - len(match.tricks)) - len(match.current_trick)
    return match.phase is Phase.PLAY and plays_left == 1


def _hand_end_views(views: list[PlayerView], last: Decision, events: list[Event], totals: tuple[int, ...]) -> list[PlayerView]:
    """Each seat's view as the hand ended, from its view before the last card and what that card did."""
    won = next(e for e in events if isinstance(e, TrickWon))
    ended = []
    for view in views:
        plays = (*view.current_trick, (won.seats[-1], last))
        ended.append(
            replace(
                view,
                phase=Phase.OVER,
                to_act=None,
                hand=tuple(c for c in view.hand if c != last),
                tricks=(*view.tricks, Trick(plays, won.winner)),  # type: ignore[arg-type]  # last is a card here
                current_trick=(),
                totals=totals,
                legal=(),
            )
        )
    return ended
