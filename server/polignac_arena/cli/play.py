"""``polignac play``: a whole match among built-in random players, in-process, hand by hand."""

from __future__ import annotations

import secrets
from typing import Annotated

import typer
from rich.console import Console

from polignac_arena.cli._options import Limit, Players, RulesName, Seed, ruleset
from polignac_arena.players import play_local, random_players
from polignac_arena.render import render_events, standings_table

__all__ = ["play"]


def play(
    players: Players = None,
    rules_name: RulesName = "classic",
    seed: Seed = None,
    limit: Limit = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the final standings.")] = False,
) -> None:
    """Play a match among random players and print it hand by hand, then the standings."""
    rules = ruleset(rules_name, players, limit)
    # A random seed stays short enough to retype; any seed up to 2**64-1 may be given.
    match_seed = secrets.randbits(32) if seed is None else seed
    match = play_local(rules, match_seed, random_players(match_seed, rules.players))
    console = Console(highlight=False)
    if not quiet:
        console.print(f"Polignac, {rules.name} rules, {rules.players} random players, limit {rules.limit}, seed {match_seed}", markup=False)
        if seed is None:
            console.print(f"(a random seed: add --seed {match_seed} to play this match again)", markup=False)
        for line in render_events(match.events, rules):
            console.print(line, markup=False, soft_wrap=True)
        console.print()
    places = match.places
    assert places is not None  # play_local returns a finished match
    # The seed is repeated here so that even a --quiet run can be reproduced.
    console.print(f"Final standings ({rules.name}, {rules.players} players, seed {match_seed})", markup=False)
    console.print(standings_table(places, match.totals, match.forfeited, rules.direction))
