"""Which games a bot plays (``bot.toml``'s ``games``), which game a ruleset is, and who may sit at it.

A game is a named preset (``polignac rules`` lists them).  A ruleset is the game its
``name`` names when that is a preset, else the preset it starts from (a tournament's
``variant``, default ``classic``): settings such as ``limit``, ``players``, the trick order
or the penalty cards change within a game, and the bots read them from the ruleset they are
sent.  A ruleset that changes what makes one game another (the pack, trumps, the direction
of scoring or the hand score) from its preset is a custom game, which no ``bot.toml`` can
declare: only the built-in bots play it.

A bot without ``games`` plays the 32-card French games (:data:`polignac.rules.FRENCH_32_GAMES`);
the built-in bots play every game.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, Protocol

from polignac import PRESETS, Ruleset
from polignac.rules import FRENCH_32_GAMES

__all__ = ["DEFAULT_GAMES", "KNOWN_GAMES", "Game", "GameRefused", "GamesError", "Seatable", "check_seating", "game_of", "parse_games"]

KNOWN_GAMES: Final[tuple[str, ...]] = tuple(PRESETS)
"""The games a ``bot.toml`` may name: the presets."""
DEFAULT_GAMES: Final[tuple[str, ...]] = FRENCH_32_GAMES
"""What a bot plays when its ``bot.toml`` does not say."""
KIND_SETTINGS: Final = ("pack", "trumps", "direction", "hand_score")
"""Settings that make a ruleset another game than its preset: a bot written for one would misplay the other."""


class GamesError(ValueError):
    """A ``games`` value that is not a list of known game names."""


class GameRefused(ValueError):
    """A bot seated in a game it does not declare; the message names the bot and the game."""


@dataclass(frozen=True, slots=True)
class Game:
    """The game a ruleset is: a preset, or a custom game that starts from one."""

    preset: str
    changed: tuple[str, ...] = ()
    """The settings (of :data:`KIND_SETTINGS`) that differ from the preset's, with their values: ``pack = 52``."""

    @property
    def custom(self) -> bool:
        """True when the ruleset changes what makes the preset's game."""
        return bool(self.changed)

    def __str__(self) -> str:
        if not self.changed:
            return self.preset
        return f"a custom game from {self.preset!r} ({', '.join(self.changed)})"


def game_of(rules: Ruleset, variant: str | None = None) -> Game:
    """The game ``rules`` is: its ``name`` if that is a preset, else ``variant`` (default ``classic``).

    >>> from polignac import preset
    >>> str(game_of(preset("knaves", limit=10)))
    'knaves'
    >>> str(game_of(preset("classic", pack=52, trick_order="ace-high", tiebreak="play-on")))
    "a custom game from 'classic' (pack = 52)"
    """
    start = variant if variant is not None and variant in PRESETS else "classic"
    name = rules.name if rules.name in PRESETS else start
    base = PRESETS[name]
    changed = tuple(f"{key} = {_text(getattr(rules, key))}" for key in KIND_SETTINGS if getattr(rules, key) != getattr(base, key))
    return Game(name, changed)


def _text(value: object) -> str:
    return value.value if isinstance(value, StrEnum) else str(value)


def parse_games(value: object) -> tuple[str, ...]:
    """``bot.toml``'s ``games``: a non-empty list of known game names, each once; raises :class:`GamesError`."""
    example = 'such as ["classic", "knaves"]'
    if not isinstance(value, list) or not value:
        raise GamesError(f"must be a non-empty list of game names {example}, got {value!r}")
    seen: list[str] = []
    for item in value:
        if not isinstance(item, str) or item not in PRESETS:
            raise GamesError(f"unknown game {item!r}; known games: {', '.join(KNOWN_GAMES)}")
        if item in seen:
            raise GamesError(f"game {item!r} is listed twice")
        seen.append(item)
    return tuple(seen)


class Seatable(Protocol):
    """What :func:`check_seating` reads of a bot (a :class:`~polignac_arena.submission.Submission`)."""

    @property
    def label(self) -> str: ...

    @property
    def games(self) -> tuple[str, ...]: ...

    @property
    def builtin(self) -> bool: ...


def check_seating(bots: Iterable[Seatable], game: Game) -> None:
    """Refuse a table where a bot would play a game it does not declare.

    Built-in bots play every game, custom ones included.  Raises :class:`GameRefused` naming
    every refused bot (once) and the game.
    """
    problems: list[str] = []
    seen: set[str] = set()
    for bot in bots:
        label, games = bot.label, bot.games
        if bot.builtin or label in seen:
            continue
        seen.add(label)
        if game.custom:
            problems.append(
                f"bot {label!r} cannot play {game}: a game that changes {', '.join(s.split(' =')[0] for s in game.changed)}"
                f" is no game a bot.toml can declare; only the built-in bots play it"
            )
        elif game.preset not in games:
            problems.append(
                f"bot {label!r} does not play {game.preset!r}: it declares games = [{', '.join(map(repr, games))}]"
                f" (add {game.preset!r} to 'games' in its bot.toml if it plays it)"
            )
    if problems:
        raise GameRefused("; ".join(problems))
