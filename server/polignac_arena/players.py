"""Built-in players for local play, and a loop that plays a whole match in-process.

A player here is anything with ``decide(view) -> Decision``: it sees only its own
:class:`polignac.PlayerView`, never the match state.  The random player draws from its own
``random.Random``, seeded from the match seed and its seat, so a local match is a pure
function of (ruleset, seed).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol

from polignac import Decision, Match, PlayerView, PolignacError, Ruleset

__all__ = ["Player", "RandomPlayer", "play_local", "random_players"]


class Player(Protocol):
    """Something that takes a seat: given what it may know, it returns a legal decision."""

    def decide(self, view: PlayerView) -> Decision:
        """The decision for ``view.seat``, one of ``view.legal``."""
        ...


class RandomPlayer:
    """Picks uniformly among the legal decisions (the auction included)."""

    def __init__(self, seed: int | str) -> None:
        self._rng = random.Random(seed)

    def decide(self, view: PlayerView) -> Decision:
        """A uniformly random legal decision."""
        # Only random() is promised to stay the same across Python versions for a given
        # seed (choice() and randrange() are not), so the pick is made from it directly.
        return view.legal[int(self._rng.random() * len(view.legal))]


def random_players(seed: int, players: int) -> list[RandomPlayer]:
    """One :class:`RandomPlayer` per seat, each seeded from the match seed and its seat."""
    # A str seed is hashed (SHA-512) by random.Random, so neighbouring seeds and seats
    # give unrelated streams, and the same text gives the same stream on every version.
    return [RandomPlayer(f"polignac-random-player/{seed}/{seat}") for seat in range(players)]


def play_local(rules: Ruleset, seed: int, players: Sequence[Player]) -> Match:
    """Play a whole match in-process, ``players[seat]`` deciding for each seat; return it finished."""
    if len(players) != rules.players:
        raise PolignacError(f"the ruleset seats {rules.players} players, got {len(players)}")
    match = Match(rules, seed)
    while (seat := match.to_act) is not None:
        match.apply(players[seat].decide(match.view(seat)))
    return match
