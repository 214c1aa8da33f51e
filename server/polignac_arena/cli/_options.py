"""Options shared by several commands, and the ruleset they select."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Annotated

import typer

from polignac import PRESETS, Ruleset, preset
from polignac.deal import MAX_SEED
from polignac_arena.cli._errors import fail
from polignac_arena.settings import ExecutorKind, ExecutorSettings

__all__ = [
    "RULESET_NAMES",
    "ExecutorOption",
    "Limit",
    "NoNotes",
    "Players",
    "RayAddress",
    "RulesName",
    "executor_settings",
    "integer",
    "ruleset",
]

NoNotes = Annotated[
    bool,
    typer.Option("--no-notes", help="Hide the bots' own notes (their debug text and stderr per decision), shown after each hand."),
]


def integer(low: int, high: int | None = None, bounds: str | None = None) -> Callable[[str], int]:
    """A parser for an integer option in ``low..high`` whose errors quote what was typed.

    (Typer's own int conversion and ``min``/``max`` checks do not repeat the bad value.)
    """
    allowed = bounds or (f"from {low} to {high}" if high is not None else f"of at least {low}")

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise typer.BadParameter(f"must be an integer {allowed}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise typer.BadParameter(f"must be an integer {allowed}, got {text!r}")
        return value

    return parse


RULESET_NAMES = ", ".join(PRESETS)
_CLASSIC = PRESETS["classic"]

Seed = Annotated[
    int | None,
    typer.Option(
        "--seed",
        "-s",
        parser=integer(0, MAX_SEED, bounds="from 0 to 2**64-1"),
        metavar="N",
        show_default=False,
        help="The match seed, 0 to 2**64-1: the same seed plays the same match (default: random, printed).",
    ),
]
RulesName = Annotated[str, typer.Option("--rules", "-r", help=f"The named ruleset: {RULESET_NAMES}.")]
Players = Annotated[
    int | None,
    typer.Option(
        "--players",
        "-p",
        parser=integer(3, 6),
        metavar="N",
        show_default=False,
        help=f"Seats at the table, 3 to 6 (default: the ruleset's, {_CLASSIC.players}).",
    ),
]
Limit = Annotated[
    int | None,
    typer.Option(
        "--limit",
        "-l",
        parser=integer(1),
        metavar="N",
        show_default=False,
        help=f"The match ends when a total reaches this (default: the ruleset's, {_CLASSIC.limit}).",
    ),
]


def ruleset(name: str, players: int | None = None, limit: int | None = None) -> Ruleset:
    """The named ruleset with the given overrides; raises ``RulesetError`` naming a bad value."""
    changes: dict[str, object] = {}
    if players is not None:
        changes["players"] = players
    if limit is not None:
        changes["limit"] = limit
    return preset(name, **changes)


ExecutorOption = Annotated[
    ExecutorKind | None,
    typer.Option("--executor", help="Where matches run (default: the file's \\[executor] kind, else local).", show_default=False),
]
RayAddress = Annotated[
    str | None,
    typer.Option("--ray-address", metavar="HOST:PORT", help="The Ray cluster's head (with --executor ray; default: RAY_ADDRESS)."),
]


def executor_settings(settings: ExecutorSettings, kind: ExecutorKind | None, address: str | None) -> ExecutorSettings:
    """A file's ``[executor]`` with the command line's ``--executor`` and ``--ray-address`` over it."""
    if kind is not None:
        settings = dataclasses.replace(settings, kind=kind)
    if address is not None:
        if settings.kind is not ExecutorKind.RAY:
            fail('--ray-address goes with --executor ray (or kind = "ray" in the file\'s [executor])')
        settings = dataclasses.replace(settings, address=address)
    return settings
