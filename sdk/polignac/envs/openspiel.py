"""Polignac as an OpenSpiel Python game, ``python_polignac``, registered when this module is imported.

>>> import pyspiel
>>> import polignac.envs.openspiel
>>> game = pyspiel.load_game("python_polignac", {"rules": "knaves"})
>>> game.num_players(), game.num_distinct_actions(), game.max_chance_outcomes()
(3, 55, 52)

One episode is one hand: chance nodes deal the cards one at a time (the engine's packets,
from eldest hand; a uniformly random deal), then the auction where the ruleset has one,
then the tricks.  Parameters: ``rules``, a preset name or a whole ruleset (:func:`game_params`
writes any :class:`polignac.Ruleset` as parameters); ``players`` (0: the ruleset's own);
``dealer`` (-1: the last seat, so that seat 0 is eldest hand).  Actions are those of
:mod:`polignac.envs.encoding`.  Returns are the hand's scores as the arena scores them,
signed so that higher is better (negated where lower totals win).

What a player may know (docs/rules.md 9), as OpenSpiel asks for it:

- the observation (tensor and string) is the arena view's encoding, the same vector as the
  PettingZoo environment's (:func:`polignac.envs.encoding.encode`);
- the information state (perfect recall) is the player, the seats, the dealer, the cards
  the player was dealt, the turned card, the auction and every card played in order.

:func:`state_from_view` builds the state an arena seat is in (the hidden cards guessed), which
is how :mod:`polignac.envs.adapters` seats an OpenSpiel bot in the arena.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable, Mapping
from typing import Final

import numpy as np
import numpy.typing as npt
import pyspiel

from polignac.cards import CARDS, cards_in
from polignac.envs.encoding import ACTIONS, CARD_ACTIONS, decision_of, encode, observation_layout
from polignac.envs.hand import HandState, return_bounds
from polignac.errors import PolignacError
from polignac.rules import PRESETS, Ruleset, cards_each, preset
from polignac.values import Contract
from polignac.view import PlayerView

__all__ = ["GAME_NAME", "PolignacGame", "PolignacState", "game_params", "load_game", "state_from_view"]

GAME_NAME: Final = "python_polignac"

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Polignac",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=6,
    min_num_players=3,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"rules": "classic", "players": 0, "dealer": -1},
)
_CONTRACT_CODE: Final = {Contract.PASS: 0, Contract.CAPOT: 1, Contract.GENERAL: 2}
_TEXT: Final = tuple(str(card) for card in CARDS)


def game_params(rules: Ruleset, dealer: int = -1) -> dict[str, str | int]:
    """The game parameters of a hand of ``rules`` (any ruleset, named or not)."""
    for name, base in PRESETS.items():
        if rules.players in base.table_sizes() and rules == preset(name, players=rules.players):
            return {"rules": name, "players": rules.players, "dealer": dealer}
    # A ruleset of its own travels as its table, in base64 so that the game's string form keeps it whole.
    table = json.dumps(rules.to_dict(), separators=(",", ":"), sort_keys=True)
    return {"rules": base64.urlsafe_b64encode(table.encode()).decode().rstrip("="), "players": rules.players, "dealer": dealer}


def load_game(rules: Ruleset, dealer: int = -1) -> PolignacGame:
    """``pyspiel.load_game("python_polignac", game_params(rules))``."""
    game = pyspiel.load_game(GAME_NAME, game_params(rules, dealer))
    assert isinstance(game, PolignacGame)
    return game


def _ruleset(text: object, players: object) -> Ruleset:
    if not isinstance(text, str):
        raise ValueError(f"python_polignac: rules must be a ruleset name or table, got {text!r}")
    try:
        if text in PRESETS:
            rules = PRESETS[text]
        else:
            padded = text + "=" * (-len(text) % 4)
            rules = Ruleset.from_dict(json.loads(base64.urlsafe_b64decode(padded.encode())))
        if players and players != rules.players:
            rules = rules.with_changes(players=players)
    except (PolignacError, ValueError, TypeError) as exc:
        raise ValueError(f"python_polignac: bad rules {text!r} for players={players!r}: {exc}") from None
    return rules


class PolignacGame(pyspiel.Game):
    """The game: one hand of a ruleset at a table of ``players``."""

    def __init__(self, params: Mapping[str, str | int] | None = None) -> None:
        params = {**_GAME_TYPE.parameter_specification, **(params or {})}
        rules = _ruleset(params["rules"], params["players"])
        dealer = params["dealer"]
        if dealer == -1:
            dealer = rules.players - 1
        if type(dealer) is not int or not 0 <= dealer < rules.players:
            raise ValueError(f"python_polignac: dealer must be a seat from 0 to {rules.players - 1} (or -1), got {dealer!r}")
        low, high = return_bounds(rules)
        n = rules.players
        dealt = cards_each(rules, n) * n
        info = pyspiel.GameInfo(
            num_distinct_actions=ACTIONS,
            max_chance_outcomes=CARD_ACTIONS,
            num_players=n,
            min_utility=low,
            max_utility=high,
            max_game_length=dealt + (n if rules.contracts else 0),
        )
        super().__init__(_GAME_TYPE, info, {"rules": params["rules"], "players": n, "dealer": params["dealer"]})
        self.rules = rules
        self.dealer = dealer
        self._dealt = dealt

    def new_initial_state(self) -> PolignacState:
        """A hand about to be dealt."""
        return PolignacState(self)

    def max_chance_nodes_in_history(self) -> int:
        """Every card of the deal is a chance node."""
        return self._dealt

    def make_py_observer(self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: object = None) -> PolignacObserver:
        """An observer of the requested kind (the observation when none is asked for)."""
        return PolignacObserver(self, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class PolignacState(pyspiel.State):
    """A state of the game; ``hand`` is the :class:`polignac.envs.hand.HandState` it wraps."""

    def __init__(self, game: PolignacGame, hand: HandState | None = None) -> None:
        super().__init__(game)
        self.hand = hand if hand is not None else HandState.new(game.rules, game.dealer)

    def current_player(self) -> int:
        hand = self.hand
        if hand.is_over:
            return int(pyspiel.PlayerId.TERMINAL)
        if hand.is_chance:
            return int(pyspiel.PlayerId.CHANCE)
        return hand.to_act

    def _legal_actions(self, player: int) -> list[int]:
        return self.hand.legal_actions() if player == self.hand.to_act else []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        outcomes = self.hand.chance_outcomes()
        p = 1.0 / len(outcomes)
        return [(card, p) for card in outcomes]

    def _apply_action(self, action: int) -> None:
        self.hand.apply(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {CARDS[action]}"
        return str(decision_of(action))

    def is_terminal(self) -> bool:
        return self.hand.is_over

    def returns(self) -> list[float]:
        return self.hand.returns()

    def resample_from_infostate(self, player_id: int, probability_sampler: Callable[[], float]) -> PolignacState:
        """A state ``player_id`` cannot tell from this one: the cards it does not see dealt again."""
        rng = random.Random(int(probability_sampler() * 2**53) << 53 | int(probability_sampler() * 2**53))
        return self.with_hand(self.hand.resampled(player_id, rng))

    def with_hand(self, hand: HandState) -> PolignacState:
        """A new state of this game holding ``hand`` (its history starts there)."""
        state: PolignacState = self.get_game().new_initial_state()
        state.hand = hand
        return state

    def view(self, player: int) -> PlayerView:
        """What ``player`` may know, as the arena shows it: an arena bot's ``decide(view)`` can play here."""
        return self.hand.view(player)

    def __str__(self) -> str:
        hand = self.hand
        lines = [f"dealer {hand.dealer}, seats {' '.join(map(str, hand.seats))}"]
        for seat in hand.seats:
            lines.append(f"seat {seat}: dealt {_cards(hand.dealt[seat])}; holds {_cards(hand.hand_mask(seat))}")
        if hand.turned is not None:
            lines.append(f"turned {hand.turned}")
        if hand.auction:
            lines.append("auction " + " ".join(f"{s}:{c.value}" for s, c in hand.auction))
        if hand.sequence:
            lines.append("plays " + " ".join([_TEXT[i] for i in hand.sequence]))
        return "\n".join(lines)


def _cards(mask: int) -> str:
    return " ".join(_TEXT[card.index] for card in cards_in(mask)) or "-"


def state_from_view(game: PolignacGame, view: PlayerView, rng: random.Random) -> PolignacState:
    """The state ``view``'s seat is in: the cards it cannot see dealt at random, consistently with what it saw.

    ``game`` must be of ``view.rules`` (:func:`load_game`).  A tie-break hand among fewer seats
    and the referee's fault points are kept; the state's history starts here.
    """
    if view.rules != game.rules:
        raise PolignacError(f"the view is of rules {view.rules.name!r} for {view.rules.players}, the game of another ruleset")
    state = game.new_initial_state()
    state.hand = HandState.from_view(view, rng)
    return state


class PolignacObserver:
    """OpenSpiel's observer (the ``PyObserver`` interface): tensors and strings of what a player may know."""

    def __init__(self, game: PolignacGame, iig_obs_type: pyspiel.IIGObservationType, params: object) -> None:
        if params:
            raise ValueError(f"python_polignac observers take no parameters, got {params!r}")
        self.rules = game.rules
        n = game.rules.players
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        self.public = bool(iig_obs_type.public_info)
        self.private = iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER
        pieces: list[tuple[str, tuple[int, ...]]] = []
        if self.perfect_recall:
            pieces.append(("player", (n,)))
            if self.private:
                pieces.append(("dealt", (52,)))
            if self.public:
                pieces += [("seated", (n,)), ("dealer", (n,)), ("turned", (52,)), ("auction", (n, 3)), ("plays", (self.rules.pack, 52))]
        else:
            self._layout = observation_layout(n)
            self._scratch = np.zeros(max(s.stop for s, _ in self._layout.values()), dtype=np.float32)
            pieces += [(name, shape) for name, (_, shape) in self._layout.items() if (self.private if name == "hand" else self.public)]
        self.tensor: npt.NDArray[np.float32] = np.zeros(sum(int(np.prod(shape)) for _, shape in pieces), dtype=np.float32)
        self.dict: dict[str, npt.NDArray[np.float32]] = {}
        offset = 0
        for name, shape in pieces:
            size = int(np.prod(shape))
            self.dict[name] = self.tensor[offset : offset + size].reshape(shape)
            offset += size
        self._whole = self.private and self.public and not self.perfect_recall

    def set_from(self, state: PolignacState, player: int) -> None:
        """Write ``player``'s observation of ``state`` into :attr:`tensor` (and so :attr:`dict`)."""
        hand = state.hand
        if not self.perfect_recall:
            if self._whole:
                encode(hand.view(player), out=self.tensor)
                return
            full = encode(hand.view(player), out=self._scratch)
            for name, piece in self.dict.items():
                piece.flat[:] = full[self._layout[name][0]]
            return
        self.tensor.fill(0.0)
        pieces = self.dict
        pieces["player"][player] = 1.0
        if "dealt" in pieces:
            for card in cards_in(hand.dealt[player]):
                pieces["dealt"][card.index] = 1.0
        if "seated" in pieces:
            for seat in hand.seats:
                pieces["seated"][seat] = 1.0
            pieces["dealer"][hand.dealer] = 1.0
            if hand.turned is not None:
                pieces["turned"][hand.turned.index] = 1.0
            for seat, contract in hand.auction:
                pieces["auction"][seat, _CONTRACT_CODE[contract]] = 1.0
            plays = pieces["plays"]
            for k, index in enumerate(hand.sequence):
                plays[k, index] = 1.0

    def string_from(self, state: PolignacState, player: int) -> str:
        """``player``'s observation of ``state`` as text."""
        hand = state.hand
        view = None if self.perfect_recall else hand.view(player)
        parts = [f"p{player}"]
        if self.private:
            parts.append(f"dealt {_cards(hand.dealt[player])}" if view is None else f"hand {' '.join(map(str, view.hand)) or '-'}")
        if self.public:
            parts.append(f"seats {''.join(map(str, hand.seats))} dealer {hand.dealer}" if view is None else f"dealer {view.dealer}")
            if hand.turned is not None:
                parts.append(f"turned {hand.turned}")
            parts.extend(_recall_text(hand) if view is None else _view_text(view))
        return " | ".join(parts)


def _recall_text(hand: HandState) -> list[str]:
    """With perfect recall, the public part after the turned card: every declaration and card, in order."""
    return [
        "auction " + (" ".join(c.value for _, c in hand.auction) or "-"),
        "plays " + (" ".join([_TEXT[i] for i in hand.sequence]) or "-"),
    ]


def _view_text(view: PlayerView) -> list[str]:
    """Without it, the public part after the turned card: the auction, who played and won what, the trick, totals."""
    parts = []
    if view.auction:
        parts.append("auction " + " ".join(f"{s}:{c.value}" for s, c in view.auction))
    won = dict.fromkeys(view.seats, 0)
    played: dict[int, list[str]] = {s: [] for s in view.seats}
    for trick in view.tricks:
        won[trick.winner] += 1
        for seat, card in trick.plays:
            played[seat].append(str(card))
    parts.append("played " + " ".join(f"{s}:{','.join(played[s]) or '-'}" for s in view.seats))
    parts.append("won " + " ".join(f"{s}:{won[s]}" for s in view.seats))
    parts.append("trick " + (" ".join(f"{s}:{c}" for s, c in view.current_trick) or "-"))
    parts.append("totals " + " ".join(map(str, view.totals)))
    return parts


pyspiel.register_game(_GAME_TYPE, PolignacGame)
